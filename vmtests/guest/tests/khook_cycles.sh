# khook_cycles: 40 load/use/unload cycles (20 on the debug kernel) of
# examples/fhook_deny_open.ko while two tasks open files all the time:
# every cycle refuses the path, nothing oopses, leaks (kmemleak on the
# debug kernel) or stays hooked.
#
# Why 40 and not the 200 it once ran (1.1 s a cycle, 3.7 minutes of CI per
# Debian kernel): what each cycle proves does not need repeating to show.
# The two tasks spend nearly all their time opening, so every removal
# races calls inside do_sys_openat2 (the inflight wait; a task asleep
# inside during rmmod is khook_unload_inside's deterministic case); a leak
# or a hook left armed happens in every cycle and shows after one
# (kmemleak, enabled_functions); a failure in one cycle in 40 is still
# found in CI within a few runs, where 200 only made it one run.
. /fhook/lib.sh

load_fhook
N=${FHOOK_TEST_KHOOK_CYCLES:-$(pick 40 20)}
echo x > $D/denied
fhook-workload spin 100000 0 > /dev/null 2>&1 &
W0=$!
sh -c "while :; do cat /etc/passwd > /dev/null; done" &
W1=$!
i=0
while [ $i -lt "$N" ]; do
	insmod /fhook/fhook_deny_open.ko path=$D/denied || fail "cycle $i: insmod failed"
	if cat $D/denied > /dev/null 2>&1; then
		fail "cycle $i: the path opened"
	fi
	expect_eq "$(cat /sys/module/fhook_deny_open/parameters/denied)" 1 "cycle $i: denied"
	rmmod fhook_deny_open || fail "cycle $i: rmmod failed"
	i=$((i + 1))
done
kill $W0 $W1
wait 2>/dev/null
cat $D/denied > /dev/null || fail "the path is refused after the last cycle"
! grep -q do_sys_openat2 $T/enabled_functions || fail "do_sys_openat2 still hooked"
# (an observing hook let go with a call inside holds fhook until it returns)
wait_for 20 rmmod fhook || fail "rmmod fhook failed"
pass "$N cycles under load"
