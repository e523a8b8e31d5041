# kprobe_progs: the module's fetch-program verifier refuses every malformed
# program with EINVAL and the index of the bad instruction; random
# programs (some corrupted) are either refused or armed, and armed ones
# reading wild kernel and user addresses only fault: no oops, no WARN
# (the runner checks the kernel log), records within their bounds.  A
# kprobe of registers only, written straight into the ring, leaves no
# stale byte between its fields after the ring wrapped.
. /fhook/lib.sh

load_fhook
mount | grep -q ' /sys/kernel/debug ' || mount -t debugfs none /sys/kernel/debug
run_checks $D/verify fhook-progtest verify
n=$CHECKS
run_checks $D/holes fhook-progtest holes
SEED=$(date +%s)
log "fuzz seed $SEED (fhook-progtest fuzz N $SEED repeats this run)"
run_checks $D/fuzz fhook-progtest fuzz "${FHOOK_TEST_PROG_FUZZ:-300}" "$SEED"
[ ! -s /sys/kernel/debug/kprobes/list ] ||
	fail "kprobes left registered: $(head -n 3 /sys/kernel/debug/kprobes/list)"
pass "$n verifier checks; register-only kprobe: $(sed -n 's/^ok [0-9]* - register-only kprobe: //p' $D/holes.out); $(sed -n 's/^ok [0-9]* - random programs: //p' $D/fuzz.out)"
