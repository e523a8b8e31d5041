# module_gone: a direct probe and a trace-around hook on fhook_testmod.ko,
# which is unloaded under them, before START or while armed: START fails
# with EIDRM (the probe is gone for good and the kernel log says so), and
# nothing is attached to the module loaded next at the same addresses.
# A glob probe whose glob only matches a notrace function of the module
# (never in ftrace's hash) is not touched by the unload.  While an unload
# is held between its GOING notification and the module's free, probes on
# the module are refused with EAGAIN.
. /fhook/lib.sh

load_fhook
# (its probes are a direct one and a hook: a kernel without direct calls,
# arm64 6.1, has module_gone's checks through hooks in hooks.sh)
has_feature direct || skip "no direct calls on this kernel (docs/arm64.md)"
gone() { dmesg | grep -c 'is going away: the probe on it is gone for good'; }
n0=$(gone)
for when in before after glob; do
	load_workmod
	rm -f $D/go
	fhook-gone $when $D/go > $D/$when.out 2>&1 &
	P=$!
	wait_for 30 grep -q 'added\|armed' $D/$when.out || fail "$when: $(cat $D/$when.out)"
	rmmod fhook_testmod || fail "$when: rmmod fhook_testmod"
	touch $D/go
	wait $P
	rc=$?
	cat $D/$when.out
	[ "$rc" = 0 ] || fail "$when: $(grep -m1 'not ok' $D/$when.out)"
	load_workmod
	grep -q fhook_testmod $T/enabled_functions &&
		fail "$when: attached to the reloaded module: $(cat $T/enabled_functions)"
done

# held between its GOING notification and its free (fhook_linger.ko), a
# module's symbols still resolve: probes on them are refused with EAGAIN
# (the CLI retries, then says so) until it is gone
load_workmod
insmod /fhook/fhook_linger.ko target=fhook_testmod linger_ms=120000 || fail "insmod fhook_linger.ko"
rmmod fhook_testmod &
R=$!
wait_for 10 grep -qx 1 /sys/module/fhook_linger/parameters/lingering || fail "the unload is not held"
run_logged $D/going.out fhook-gone going
echo 1 > /sys/module/fhook_linger/parameters/release
wait $R || fail "rmmod fhook_testmod (held)"
cat $D/going.out
[ "$RC" = 0 ] || fail "fhook-gone going exit $RC: $(grep -m1 '^not ok' $D/going.out)"
rmmod fhook_linger
load_workmod
run_fhook $D/after count --via direct fhook_testmod_target -- true
expect_eq "$RC" 0 "a direct probe on the reloaded module once the old one is freed"

n=$(($(gone) - n0))
[ "$n" = 4 ] || fail "$n 'gone for good' lines in the kernel log, 4 expected"
pass "before START and while armed: EIDRM, nothing re-hooked; a glob probe on notrace matches kept; EAGAIN while going"
