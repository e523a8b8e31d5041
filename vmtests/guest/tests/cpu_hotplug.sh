# cpu_hotplug: CPU 1 goes offline and online again 5 times (2 on the debug kernel) while "fhook
# trace vfs_read" and "fhook trace t:syscalls:sys_enter_read" stream a load
# pinned to CPU 1.
# The accounting stays exact (hits == events + lost, the LOST lines add
# up), events from CPU 1 keep arriving after it came back, the tracepoint's
# too (perf counters made for the CPU when it comes online; before, none
# after the first offline), nothing bad is logged, and the probes detach.
. /fhook/lib.sh

ON=/sys/devices/system/cpu/cpu1/online
[ -w $ON ] || skip "CPU 1 cannot be taken offline here"
ROUNDS=$(pick 5 2)
# CPU 1 comes back whatever happens, for the tests after this one
trap 'echo 1 > $ON 2> /dev/null' EXIT
load_fhook
# one light load, pinned to CPU 1 (while CPU 1 is offline it runs on CPU 0)
fhook-workload load 1000 1 &
W=$!
sleep 0.5
fhook trace vfs_read -o $D/f.out > /dev/null 2> $D/f.err &
F=$!
fhook trace t:syscalls:sys_enter_read -o $D/t.out > /dev/null 2> $D/t.err &
FT=$!
wait_for 60 attached || fail "fhook never armed: $(cat $D/f.err)"
# (attached is the function session's; the tracepoint's shows in its output:
# on a loaded debug kernel it may start last)
wait_for 60 test -s $D/t.out || fail "fhook trace t:syscalls:sys_enter_read wrote nothing in 60 s: $(cat $D/t.err)"
sleep 1
i=0
while [ $i -lt $ROUNDS ]; do
	i=$((i + 1))
	echo 0 > $ON || fail "cannot take CPU 1 offline (round $i)"
	sleep 0.5
	echo 1 > $ON || fail "cannot bring CPU 1 online (round $i)"
	# the load lost its affinity: a new one, pinned to CPU 1 again
	kill $W
	fhook-workload load 1000 1 &
	W=$!
	sleep 0.5
done
back=$(cut -d' ' -f1 /proc/uptime)
sleep 1.5
kill -TERM $F $FT
wait $FT
wait $F
rc=$?
kill $W 2> /dev/null
expect_eq "$rc" 0 "fhook trace exit code after SIGTERM"
sed 's/^/# /' $D/f.err
summary $D/f
expect_eq "$(count_events $D/f.out)" "$E" "event lines vs summary events"
expect_eq "$(lost_sum $D/f.out)" "$L" "LOST lines vs summary lost"
# CPU 1's events, and those after it came back: one pass
set -- $(fhook-events -t $D/f.out | awk -v t="$back" '$2 == 1 { n++; if ($4 + 0 > t + 0) l++ } END { print n + 0, l + 0 }')
after=$1 late=$2
[ "$late" -gt 0 ] || fail "no event from CPU 1 after it came back online at ${back}s"
late_tp=$(fhook-events -t $D/t.out | awk -v t="$back" '$2 == 1 && index($3, "sys_read(") == 1 && $4 + 0 > t + 0 { n++ } END { print n + 0 }')
[ "$late_tp" -gt 0 ] || fail "no sys_enter_read event from CPU 1 after it came back online at ${back}s"
wait_for 10 detached || fail "ftrace ops still attached after fhook exited"
pass "rounds=$ROUNDS events=$E lost=$L cpu1_events=$after cpu1_after_online=$late tracepoint=$late_tp"
