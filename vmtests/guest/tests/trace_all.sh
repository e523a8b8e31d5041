# trace_all: "fhook trace '*'" (every traceable function) for 30 s (FHOOK_TEST_TRACE_ALL_SECS) on 4
# vCPUs while two workloads fork, read, write and sleep.  A heartbeat that
# wakes every second must never see a gap over 5 s, the trace must produce
# events, fhook must stop by itself (--duration) and the guest must respond
# afterwards.  FHOOK_TEST_TRACE_ALL_SECS changes the duration.
. /fhook/lib.sh

DUR=${FHOOK_TEST_TRACE_ALL_SECS:-$(pick 30 30)}
load_fhook
nf=$(wc -l < $T/available_filter_functions)
log "$nf traceable functions, $(nproc) CPUs"
fhook-workload mix $((DUR * 3 + 300)) > /dev/null 2> $D/mix1.err &
fhook-workload mix $((DUR * 3 + 300)) > /dev/null 2> $D/mix2.err &
fhook-workload heartbeat $((DUR * 3 + 300)) > $D/hb &
HB=$!
sleep 3
t0=$(uptime_cs)
timeout $((DUR * 4 + 300)) fhook trace '*' --duration "$DUR" -o /dev/null > $D/f.out 2> $D/f.err
RC=$?
secs=$(elapsed_s $t0)
sed 's/^/# fhook: /' $D/f.err | head -n 20
sleep 3
kill $HB
expect_eq "$RC" 0 "fhook trace '*' exit code (124: it did not stop by itself)"
wait_for 30 detached || fail "enabled_functions not empty 30 s after fhook trace '*' ended"
summary $D/f
[ "$E" -gt 0 ] || fail "no events from tracing every function for $DUR s"
# the heartbeat, while fhook ran (and 3 s either side)
awk '$1 == "hb" { if ($4 > m) m = $4; n++ } END { printf "heartbeats %d, longest gap %.1f s\n", n, m }' $D/hb
gap=$(awk '$1 == "hb" && $4 > m { m = $4 } END { printf "%.1f", m }' $D/hb)
nhb=$(grep -c '^hb ' $D/hb)
[ "$nhb" -ge $((DUR / 2)) ] || fail "only $nhb heartbeats in ${secs}s of tracing"
awk -v g="$gap" 'BEGIN { exit !(g <= 5.0) }' || fail "the heartbeat stalled for ${gap}s (> 5 s)"
# still responsive
timeout 30 fhook-workload rw 100 || fail "the guest does not run a command after the trace"
timeout 30 ls / > /dev/null || fail "ls / failed after the trace"
pass "secs=$secs (duration $DUR) functions=$nf events=$E lost=$L hits=$H missed=$M heartbeat_max_gap=${gap}s"
