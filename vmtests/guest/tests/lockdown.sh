# lockdown: fhook follows kernel lockdown raised at run time, after the
# module was loaded, with the kernel's own reasons.  Integrity: return
# overrides are refused (they change what the kernel does), kprobes still
# work.  Confidentiality: kprobes and fetch programs that read kernel
# memory are refused too ($arg7 on included: the kernel stack), function
# events and register arguments still work.  Every refusal is
# exit 1 with an error naming lockdown.  Lockdown cannot be lowered: this
# test has a boot of its own.
. /fhook/lib.sh

L=/sys/kernel/security/lockdown
[ -e $L ] || mount -t securityfs none /sys/kernel/security 2>/dev/null
[ -e $L ] || skip "no lockdown LSM in this kernel"
grep -q '\[none\]' $L || fail "lockdown already raised: $(cat $L)"
# modules cannot be loaded once lockdown is up: load them first
insmod "$KO" lab=1 || fail "insmod $KO lab=1"
load_workmod
TH=/proc/fhook_testmod_hooks
echo reset > $TH

# refused: exit 1, one line naming lockdown
refused() {
	_what=$1
	shift
	run_fhook $D/r "$@"
	expect_eq "$RC" 1 "$_what: exit code"
	grep -q 'lockdown' $D/r.err || fail "$_what: the error does not name lockdown: $(cat $D/r.err)"
}

run_fhook $D/ok0 hook --return -12 fhook_testmod_ret -- sh -c "echo ret 5 > $TH"
expect_eq "$RC" 0 "--return before lockdown"
run_fhook $D/kp0 trace 'p:fh/vr vfs_read count=$arg3:u64' -- dd if=/etc/passwd of=/dev/null bs=64
grep -q 'count=' $D/kp0.out || fail "no kprobe events before lockdown"

echo integrity > $L || fail "cannot raise lockdown to integrity"
refused "--return under integrity" hook --return -12 fhook_testmod_ret -- sh -c "echo ret 5 > $TH"
run_fhook $D/kp trace 'p:fh/vr vfs_read count=$arg3:u64' -- dd if=/etc/passwd of=/dev/null bs=64
expect_eq "$RC" 0 "a kprobe under integrity ($(head -n 2 $D/kp.err))"
grep -q 'count=' $D/kp.out || fail "no kprobe events under integrity"
run_fhook $D/doc doctor
expect_eq "$RC" 0 "fhook doctor under integrity, the module loaded"
grep -q '^warn lockdown  *integrity: ' $D/doc.out || fail "fhook doctor: no lockdown warning under integrity"

echo confidentiality > $L || fail "cannot raise lockdown to confidentiality"
refused "a kprobe under confidentiality" trace 'p:fh/vr vfs_read count=$arg3:u64' -- dd if=/etc/passwd of=/dev/null bs=64
refused "a kernel-memory fetch under confidentiality" \
	hook --trace-around fhook_testmod_ret 'x=+0($arg1):u64' -- sh -c "echo ret 5 > $TH"
# $arg7 on are on the kernel stack (x86-64): the same words as $stackN,
# registers no argument is in hold what the caller left;
# through the raw ABI (the CLI stops earlier: tracefs is locked down too)
run_checks $D/args.out fhook-abitest --lockdown-args
run_fhook $D/fn trace fhook_testmod_ret -- sh -c "echo ret 5 > $TH"
expect_eq "$RC" 0 "function events under confidentiality ($(head -n 2 $D/fn.err))"
expect_eq "$(grep -c fhook_testmod_ret $D/fn.out)" 5 "function events under confidentiality"
# fhook doctor's red line when the module is not in: only signed modules
# load now, and indeed insmod of the (unsigned) module fails
rmmod fhook || fail "rmmod fhook under lockdown"
run_fhook $D/doc2 doctor
expect_eq "$RC" 1 "fhook doctor under lockdown without the module"
grep -q '^FAIL module  *not loaded, and lockdown (confidentiality) lets only signed modules in' $D/doc2.out ||
	fail "fhook doctor: $(grep module $D/doc2.out)"
! insmod $KO 2>/dev/null || fail "insmod of an unsigned module under lockdown succeeded"
pass "integrity: --return refused, kprobes work; confidentiality: kprobes, kernel reads refused, function events work"
