# shellcheck shell=bash
# Results: one line per test (line), printed in one piece per boot (say),
# tallied per boot, and the kernel messages that fail a test (badness).
# Sourced by vmtests/run.sh, which sets the variables named here.

# Boots run in parallel (--jobs); each one appends its verdicts to its
# $tally file ("PASS name" per result) and prints each report block in one
# piece, under a lock, so that blocks of different boots never interleave.
tally=/dev/null

line() {	# line REL NAME STATUS [DETAIL]
	local rel=$1 name=$2 st=$3 detail=${4:-} dots word
	dots=$(printf '%*s' $((26 - ${#name} > 3 ? 26 - ${#name} : 3)) '' | tr ' ' '.')
	case $st in
	PASS) word=ok ;;
	SKIP) word=SKIP ;;
	*) word=FAIL st=FAIL ;;
	esac
	echo "$st $name${detail:+ $detail}" >> "$tally"
	printf '%-22s %s %s %s%s\n' "$rel" "$name" "$dots" "$word" "${detail:+ $detail}"
}

indent() { sed 's/^/      | /'; }

# say: print stdin in one piece (the other boots wait)
say() {
	local block
	block=$(cat)
	[ -n "$block" ] || return 0
	flock "$vm/.out.lock" printf '%s\n' "$block"
}

# Kernel messages that fail the test during which they appear (and the
# boot, for dmesg_<group>).  KASAN/UBSAN/kmemleak reports, lockdep splats,
# WARN/BUG/oops, RCU stalls, lockups, hung tasks, OOM kills, ftrace bugs.
bad_re='KASAN|UBSAN|BUG:|kernel BUG|WARNING:|Oops|general protection|Call Trace|[Kk]ernel panic'
bad_re+='|possible circular locking|possible recursive locking|inconsistent lock state|INFO: lockdep'
bad_re+='|suspicious RCU usage|self-detected stall|detected stalls|rcu_sched .*stall|soft lockup|hard LOCKUP'
bad_re+='|blocked for more than|kmemleak: .*suspected memory leak|ODEBUG:|oom-killer|Out of memory'
bad_re+='|ftrace bug|ftrace faulted|ftrace failed|list_add corruption|list_del corruption|refcount_t: '

# badness FILE: the first bad kernel line of FILE (empty if none)
badness() { grep -E -m1 "$bad_re" "$1" 2> /dev/null | cut -c1-160; }
