#!/usr/bin/env bash
# Guest instructions per symbol, exact (docs/benchmarks.md, "Counting
# instructions per symbol"): runs COMMAND twice in a fresh 1-vCPU guest
# (fhook vm) under `qemu -icount` with the fhook_qemu_prof plugin, with
# $N set to N1 and then to N2, and prints for every kernel symbol (and
# [user] for all of user space) the instructions it ran in the second run
# less those of the first, divided by N2 - N1: the cost of one unit of N
# (one call of a workload loop), boot and setup cancelled out.
#
#   vmtests/profile.sh [--kernel K] [--modules DIR] [--add HOST[:GUEST]]... [--top N] [--blocks SYM] N1 N2 COMMAND
#
# --modules DIR loads DIR's fhook.ko instead of build/kmod/REL's (a
# variant built in another tree: `make kmod KDIR=...` there).
#
# --blocks SYM prints, instead, SYM's translation blocks that ran: their
# offset in SYM and instructions per unit of N (match them with
# `objdump -d` of SYM's object: which paths of a hook cost what).
#
# COMMAND is one shell string run in /root; `prof_syms` in it takes the
# symbol table at that point (call it while what you profile is armed:
# ftrace and BPF trampolines, modules unloaded later); otherwise it is
# taken at the end.  Example, a call graph's cost per traced call:
#
#   vmtests/profile.sh --add build/testmod/REL/fhook_testmod.ko 20000 120000 \
#     'insmod fhook_testmod.ko && fhook record -o /tmp/x --graph --depth 1 \
#        fhook_testmod_nop -- sh -c "echo loop $N > /proc/fhook_testmod_hooks; prof_syms"'
#
# (in the -- sh -c "..." above, $N is expanded by the outer shell;
# prof_syms is a command in PATH.)  Needs `make user` (build/user/fhook and
# build/user/fhook_qemu_prof.so) and the target kernels.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
fhook=${FHOOK_CLI:-$top/build/user/fhook}
plugin=${FHOOK_QEMU_PROF:-$top/build/user/fhook_qemu_prof.so}
kernel=6.12 top_n=40 adds=() blocks='' modules=()

die() { printf 'profile.sh: error: %s\n' "$*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--add) adds+=(--add "$2"); shift 2 ;;
	--modules) modules=(--modules "$2"); shift 2 ;;
	--top) top_n=$2; shift 2 ;;
	--blocks) blocks=$2; shift 2 ;;
	-h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (--help)" ;;
	*) break ;;
	esac
done
[ $# -eq 3 ] || die "usage: vmtests/profile.sh [--kernel K] [--modules DIR] [--add HOST[:GUEST]]... [--top N] [--blocks SYM] N1 N2 COMMAND"
n1=$1 n2=$2 command=$3
[[ $n1 =~ ^[0-9]+$ && $n2 =~ ^[0-9]+$ && $n2 -gt $n1 ]] || die "N1 and N2: numbers, N2 > N1"
[ -x "$fhook" ] || die "$fhook: run make user first"
[ -f "$plugin" ] || die "$plugin: run make user first"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run N: the guest's output in $work/out.N, the counts in $work/prof.N
run() {
	local n=$1
	local script="N=$n; export N
mkdir -p /tmp/prof-bin
printf '#!/bin/sh\ngrep -i \" [tw] \" /proc/kallsyms > /tmp/prof.syms\n' > /tmp/prof-bin/prof_syms
chmod +x /tmp/prof-bin/prof_syms
PATH=/tmp/prof-bin:\$PATH; export PATH
$command
[ -s /tmp/prof.syms ] || prof_syms
echo FHOOK-PROF-SYMS; cat /tmp/prof.syms"
	FHOOK_VM_ACCEL=tcg FHOOK_VM_APPEND="nokaslr tsc=reliable" \
		FHOOK_VM_QEMU_ARGS="-icount shift=0,sleep=off -plugin $plugin,out=$work/prof.$n" \
		"$fhook" vm --kernel "$kernel" --smp 1 --mem 2048 "${modules[@]}" "${adds[@]}" -- "$script" \
		> "$work/out.$n" 2>&1 || { tail -20 "$work/out.$n" >&2; die "the guest run with N=$n failed"; }
	[ -s "$work/prof.$n" ] || die "no counts from the plugin for N=$n"
}

# symbols N: "name count" per symbol of the run ([user] below the kernel)
symbols() {
	local n=$1
	{
		sed -n '/^FHOOK-PROF-SYMS$/,$p' "$work/out.$n" | tr -d '\r' |
			awk 'NF >= 3 && length($1) == 16 { m = NF > 3 ? " " $4 : ""; print $1, 0, $3 m }'
		awk '{ print $1, 1, $2 }' "$work/prof.$n"
	} | LC_ALL=C sort -k1,1 -k2,2n |
		awk '$2 == 0 { sub(/^[^ ]+ 0 /, ""); sym = $0; next }
		     { n[$1 < "0000800000000000" ? "[user]" : (sym == "" ? "[unknown]" : sym)] += $3 }
		     END { for (s in n) print n[s], s }'
}

echo "profile.sh: $kernel, N=$n1 and N=$n2 (two guests)..." >&2
run "$n1" &
p1=$!
run "$n2" &
p2=$!
wait $p1 || exit 2
wait $p2 || exit 2
if [ -n "$blocks" ]; then
	# SYM's address and the next symbol's, from the second run's table
	range=$(sed -n '/^FHOOK-PROF-SYMS$/,$p' "$work/out.$n2" | tr -d '\r' |
		awk 'NF >= 3 && length($1) == 16 { print $1, $3 }' | LC_ALL=C sort -u |
		awk -v s="$blocks" 'found == 1 { print $1; found = 2 } $2 == s && !found { printf "%s ", $1; found = 1 }')
	set -- $range
	[ $# -eq 2 ] || die "symbol '$blocks' is not in the guest's kallsyms"
	awk -v lo="$1" -v hi="$2" -v d=$((n2 - n1)) -v s="$blocks" '
		function hex(h,   i, v) { v = 0; h = substr(h, 9)	# low 32 bits: exact in awk
			for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
		$1 >= lo && $1 < hi { c[$1] += (FILENAME ~ /prof\.'"$n1"'$/ ? -$2 : $2) }
		END { for (a in c) if (c[a] / d >= 0.05 || c[a] / d <= -0.05) {
			printf "%s+0x%x %10.1f\n", s, hex(a) - hex(lo), c[a] / d; t += c[a] / d }
		      printf "%s %10.1f  TOTAL per unit of N\n", s, t > "/dev/stderr" }' \
		"$work/prof.$n1" "$work/prof.$n2" | sort -t+ -k2
	exit 0
fi
symbols "$n1" > "$work/sym.$n1"
symbols "$n2" > "$work/sym.$n2"
awk -v d=$((n2 - n1)) -v top="$top_n" '
	FNR == NR { c = $1; $1 = ""; a[substr($0, 2)] = c; next }
	{ c = $1; $1 = ""; b[substr($0, 2)] = c }
	END {
		for (s in a) if (!(s in b)) b[s] = 0
		for (s in b) { v = (b[s] - a[s]) / d; total += v; if (v >= 0.05 || v <= -0.05) printf "%12.1f  %s\n", v, s }
		printf "%12.1f  TOTAL instructions per unit of N\n", total > "/dev/stderr"
	}' "$work/sym.$n1" "$work/sym.$n2" | sort -k1,1 -g -r | head -n "$top_n"
