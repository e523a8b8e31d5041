# khook_cycles: 200 load/use/unload cycles of examples/fhook_deny_open.ko
# while two tasks open files all the time: every cycle refuses the path,
# nothing oopses, leaks (kmemleak on the debug kernel) or stays hooked.
. /fhook/lib.sh

load_fhook
N=$(pick 200 60)
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
rmmod fhook || fail "rmmod fhook failed"
pass "$N cycles under load"
