# probe_stack: --stack records each event's stack: function probes and
# kprobes start at the probed function and go up through its known callers
# (vfs_read <- ksys_read <- the syscall entry); a kretprobe's starts where
# the function returned to; a uprobe's user stack starts at the probed
# function, named "fhk_target+0x0 (binary)" through libdw, in text and JSON.
# arm64: the syscall entry is invoke_syscall, and a kprobe at a function's
# entry (a BRK, before the function saved its link register) shows no
# caller, as the kernel's own stacks from a kprobe's registers do.
. /fhook/lib.sh

KCALLER="ksys_read "
[ "$(uname -m)" = aarch64 ] && KCALLER=

load_fhook
# stack_of FILE: the " => " lines after the first event line, joined by ' '
stack_of() {
	awk '/^ => / { if (seen) printf "%s ", $2; next } { if (seen) exit; seen = 1 }' "$1"
}

run_fhook $D/f trace --stack vfs_read -- fhook-workload read 5
expect_eq "$RC" 0 "fhook trace --stack exit code"
expect_eq "$(count_func $D/f.out vfs_read)" 5 "vfs_read events"
s=$(stack_of $D/f.out)
log "function probe stack: $s"
case "$s" in "vfs_read ksys_read "*) ;; *) fail "function probe stack '$s' is not vfs_read ksys_read ..." ;; esac
case "$s" in *$SYSENTRY*) ;; *) fail "function probe stack '$s' does not reach $SYSENTRY" ;; esac
nstk=$(grep -c '^ => vfs_read$' $D/f.out)
expect_eq "$nstk" 5 "stacks (one per event)"

run_fhook $D/k trace --stack 'p:kst vfs_read' 'r:krt vfs_read' -- fhook-workload read 5
expect_eq "$RC" 0 "fhook trace --stack (kprobes) exit code"
s=$(stack_of $D/k.out)
log "kprobe stack: $s"
case "$s" in "vfs_read $KCALLER"*$SYSENTRY*) ;; *) fail "kprobe stack '$s'" ;; esac
awk '/: krt: / { getline; print; exit }' $D/k.out > $D/krt.first
log "kretprobe stack starts: $(cat $D/krt.first)"
grep -q '^ => ksys_read$' $D/krt.first || fail "kretprobe stack does not start in ksys_read: $(cat $D/krt.first)"

BIN=/fhook/bin/fhook-utarget
run_fhook $D/u trace --stack "p:ust $BIN:fhk_target" -- $BIN 3
expect_eq "$RC" 0 "fhook trace --stack (uprobe) exit code"
V=$(sed -n 's/.*: ust: (\(0x[0-9a-f]*\)).*/\1/p' $D/u.out | head -n 1)
first=$(awk '/: ust: / { getline; print; exit }' $D/u.out)
log "uprobe at $V, user stack starts with: $first"
# the first frame is the probed function, named from the binary (libdw)
[ -n "$V" ] && [ "$first" = " => fhk_target+0x0 ($BIN)" ] ||
	fail "the user stack starts with '$first', not fhk_target+0x0 ($BIN)"
# and JSON names it the same
run_fhook $D/uj trace --stack --format json "p:ust $BIN:fhk_target" -- $BIN 1
grep -q "\"stack\":\[\"fhk_target+0x0 ($BIN)\"" $D/uj.out || fail "JSON user stack: $(grep -m1 stack $D/uj.out)"
pass "function, kprobe, kretprobe and uprobe stacks start where expected"
