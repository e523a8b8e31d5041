# tracepoint: t:SUBSYS:EVENT records the trace event's own entry, decoded
# by the names of its format file, with the same values the kernel's
# tracefs event prints; a filter on the event's fields passes exactly the
# hits the workload fixes.
. /fhook/lib.sh

load_fhook
tracefs_reset
echo 1 > $T/events/sched/sched_process_exec/enable
echo > $T/trace
echo 1 > $T/tracing_on
run_fhook $D/a trace 't:sched:sched_process_exec' -- fhook-workload read 1
echo 0 > $T/tracing_on
echo 0 > $T/events/sched/sched_process_exec/enable
cp $T/trace $D/ref.raw
expect_eq "$RC" 0 "fhook trace exit code"
line=$(grep ': sched_process_exec: ' $D/a.out)
log "fhook: $line"
WPID=$(echo "$line" | sed -n 's/.* pid=\([0-9]*\) .*/\1/p')
[ -n "$WPID" ] || fail "no sched_process_exec event: $(cat $D/a.out)"
echo "$line" | grep -q "filename=\"/fhook/bin/fhook-workload\" pid=$WPID old_pid=$WPID\$" ||
	fail "unexpected fields: $line"
ref=$(grep ": sched_process_exec: filename=/fhook/bin/fhook-workload pid=$WPID old_pid=$WPID\$" $D/ref.raw)
[ -n "$ref" ] || fail "tracefs did not print the same exec: $(grep sched_process_exec $D/ref.raw)"
probes_exact $D/a.err 1

# syscalls:sys_enter_read with a filter on its count field: the workload
# reads I % 7 + 1 bytes, 3 of 21 reads are 3 bytes
if [ -d $T/events/syscalls/sys_enter_read ]; then
	run_fhook $D/b trace 't:syscalls:sys_enter_read if count == 3' -- fhook-workload open 21
	expect_eq "$RC" 0 "fhook trace (syscalls) exit code"
	n=$(grep -c ': sys_enter_read: .* count=3$' $D/b.out)
	expect_eq "$n" 3 "3-byte reads"
	expect_eq "$(grep -c ': sys_enter_read: ' $D/b.out)" 3 "sys_enter_read events"
	sc="3 filtered sys_enter_read"
else
	sc="no syscall events in this kernel"
fi
run_fhook $D/c trace 't:sched:no_such_event'
[ "$RC" = 1 ] && grep -q 'no trace event sched:no_such_event' $D/c.err ||
	fail "unknown event: exit $RC: $(cat $D/c.err)"
pass "exec event equal to tracefs' ($line); $sc"
