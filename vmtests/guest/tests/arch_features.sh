# arch_features: what fhook's port to this CPU lacks is said, not hidden.
# fhook doctor's cpu line names it (x86-64: nothing); on arm64 each command
# that needs what is missing (count --via direct and latency where the
# kernel has no direct calls) is refused with exit 1 and one line saying
# why, nothing is armed, and the kernel stays quiet; hooks work on both
# arm64 kernels (full registers on 6.1, ftrace_regs on 6.12): the hook
# API's deny example changes what the kernel does.  The
# rest of a session works beside it: a function count in the same guest
# is exact.
. /fhook/lib.sh

load_fhook
run_fhook $D/doc doctor
if [ "$(uname -m)" != aarch64 ]; then
	grep -q '^ok   cpu  *x86_64: every fhook feature$' $D/doc.out ||
		fail "doctor's cpu line: $(grep ' cpu ' $D/doc.out)"
	pass "doctor: x86_64 has every feature"
fi
# the port lacks direct and latency probes where the kernel has no direct
# calls (arm64 before 6.4: no ftrace_stub_direct_tramp); hooks change
# registers through full pt_regs (ftrace_regs_caller, before 6.2) or
# ftrace_regs (after), so every arm64 kernel has them
DIRECT=0
grep -q ' ftrace_stub_direct_tramp$' /proc/kallsyms && DIRECT=1
WHY_DIRECT="direct calls (direct counting and recording, latency histograms) need DYNAMIC_FTRACE_WITH_DIRECT_CALLS (arm64 kernels from 6.4)"
if [ $DIRECT = 1 ]; then
	grep -q '^ok   cpu  *arm64: every fhook feature$' $D/doc.out ||
		fail "doctor's cpu line: $(grep ' cpu ' $D/doc.out)"
else
	grep -qF "arm64: $WHY_DIRECT (missing here: direct latency)" $D/doc.out &&
		grep -q '^warn cpu ' $D/doc.out || fail "doctor's cpu line: $(grep ' cpu ' $D/doc.out)"
fi
run_fhook $D/st status
feats=$(sed -n 's/^features: //p' $D/st.out)
for f in hook khook direct latency; do
	case " $feats " in *" $f "*) have=1 ;; *) have=0 ;; esac
	expect_eq "$have" "$(case $f in *hook) echo 1 ;; *) echo $DIRECT ;; esac)" "the module announces $f"
done

# refused before anything is armed, with the reason
refused() {
	local name=$1 why=$2
	shift 2
	run_fhook $D/$name "$@"
	expect_eq "$RC" 1 "fhook $* exit status"
	grep -qF "are not available on this arm64 kernel: $why" $D/$name.err ||
		fail "fhook $*: $(cat $D/$name.err)"
	expect_eq "$(wc -l < $D/$name.err)" 1 "lines of fhook $*'s error"
}
[ $DIRECT = 1 ] || refused direct "$WHY_DIRECT" count --via direct vfs_read -- true
[ $DIRECT = 1 ] || refused latency "$WHY_DIRECT" latency vfs_read -- true
[ -z "$(cat $T/enabled_functions)" ] || fail "functions left patched: $(head -n 3 $T/enabled_functions)"

# a module of the hook API (the around trampoline, its "original") denies
# the open it was told to (on 6.12 the ftrace_ops callback changes pc in
# ftrace_regs; hooks.sh has the RETURN and REDIRECT hooks)
dmesg -c > /dev/null
insmod /fhook/fhook_deny_open.ko path=/etc/passwd || fail "the hook API example did not install: $(dmesg | tail -n 3)"
cat /etc/passwd > $D/cat.out 2> $D/cat.err && fail "the open of /etc/passwd was not denied"
grep -q 'Permission denied' $D/cat.err || fail "cat /etc/passwd: $(cat $D/cat.err)"
cat /etc/group > /dev/null || fail "another open was denied"
rmmod fhook_deny_open || fail "rmmod fhook_deny_open"
cat /etc/passwd > /dev/null || fail "the open is still denied after rmmod"
ABOUT="the hook API denies an open"

# the session's other probes work beside the refusals; where the kernel
# has direct calls, fhook's arm64 direct trampolines count (the fast path,
# nothing filtering; through C, the command's pid filtering) and record,
# each call of the test module's target exactly once
run_fhook $D/c count vfs_read -- fhook-workload read 7
expect_eq "$RC" 0 "fhook count exit status"
n=$(awk 'NR > 1 && $2 == "vfs_read" { print $1 }' $D/c.out)
expect_eq "$n" 7 "vfs_read calls counted"
if [ $DIRECT = 1 ]; then
	load_workmod
	TM=/proc/fhook_testmod
	fhook count --via direct -d 4 fhook_testmod_target > $D/fast.out 2> $D/fast.err &
	P=$!
	wait_for 20 grep -q '^fhook_testmod_target' $T/enabled_functions || fail "no direct probe attached: $(cat $D/fast.err)"
	echo call 700 > $TM
	wait $P
	expect_eq "$?" 0 "count --via direct (fast path) exit status ($(head -n 2 $D/fast.err))"
	expect_same "$(sed -n 2p $D/fast.out | awk '{ print $1, $2 }')" "700 fhook_testmod_target" "the fast path's count"
	run_fhook $D/slow count --via direct fhook_testmod_target -- sh -c "echo call 300 > $TM"
	expect_eq "$RC" 0 "count --via direct (a pid filter: through C) exit status"
	expect_same "$(sed -n 2p $D/slow.out | awk '{ print $1, $2 }')" "300 fhook_testmod_target" "the filtered direct count"
	run_fhook $D/r trace --via direct fhook_testmod_target -- sh -c "echo call 5 > $TM"
	expect_eq "$RC" 0 "fhook trace --via direct exit status ($(head -n 2 $D/r.err))"
	expect_eq "$(grep -c 'fhook_testmod_target' $D/r.out)" 5 "calls recorded through the direct trampoline"
	# the latency trampoline runs the body: every call timed, the
	# module's own count of them the same
	tm_target() { awk '{ n += $4 } END { print n + 0 }' $TM; }
	before=$(tm_target)
	run_fhook $D/lat latency fhook_testmod_target -- sh -c "echo call 200 > $TM"
	expect_eq "$RC" 0 "fhook latency exit status ($(head -n 2 $D/lat.err))"
	expect_eq "$(sed -n 's/.*count: \([0-9]*\).*/\1/p' $D/lat.out | head -n 1)" 200 "calls timed through the latency trampoline"
	expect_eq "$(($(tm_target) - before))" 200 "calls the body made (the module's count)"
	detached || fail "still attached: $(cat $T/enabled_functions)"
fi
pass "doctor names what is missing ($MISSING); what is missing refused with the reason; $ABOUT; direct calls $([ $DIRECT = 1 ] && echo count, record and time || echo refused)"
