# module_gone: a direct probe and a trace-around hook on fhook_testmod.ko,
# which is unloaded under them, before START or while armed: START fails
# with EIDRM (the probe is gone for good and the kernel log says so), and
# nothing is attached to the module loaded next at the same addresses.
# A glob probe whose glob only matches a notrace function of the module
# (never in ftrace's hash) is not touched by the unload.
. /fhook/lib.sh

load_fhook
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
n=$(($(gone) - n0))
[ "$n" = 4 ] || fail "$n 'gone for good' lines in the kernel log, 4 expected"
pass "before START and while armed: EIDRM, nothing re-hooked; a glob probe on notrace matches kept"
