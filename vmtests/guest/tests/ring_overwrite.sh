# ring_overwrite: flight-recorder rings.  fhook-ring: a 32 KiB overwrite
# ring after N calls holds exactly the newest records (contiguous sequence
# numbers ending at N-1, overwritten == N - kept, the ring full); freeze
# stops recording (hits counted as frozen, no sequence number taken) and
# resume continues.  Then the CLI: "fhook trace --overwrite" prints nothing
# while tracing, a snapshot on SIGUSR2 with the newest events, and the
# rest at the end.
. /fhook/lib.sh

load_fhook
load_workmod
N=20000
run_checks $D/o.out fhook-ring overwrite $N
run_checks $D/s.out fhook-ring snapshot

fhook trace --overwrite -b 32 --format json fhook_testmod_target > $D/t.out 2> $D/t.err &
pid=$!
wait_for 30 attached || fail "fhook trace --overwrite did not arm"
# on CPU 0 only: sequence numbers are per CPU
call0() { taskset 1 sh -c "echo call $1 > /proc/fhook_testmod" || fail "call $1 on CPU 0"; }
call0 $N
sleep 0.5
expect_eq "$(wc -l < $D/t.out)" 0 "lines printed before the snapshot"
kill -USR2 $pid
wait_for 10 grep -q '^fhook: snapshot 1: ' $D/t.err || fail "no snapshot line: $(cat $D/t.err)"
kept=$(grep -c '"type":"func"' $D/t.out)
last=$(tail -n 1 $D/t.out | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
first=$(head -n 1 $D/t.out | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
log "snapshot: $kept events, seq $first..$last"
expect_eq "$last" "$((N - 1))" "snapshot: seq of the newest event"
expect_eq "$first" "$((N - kept))" "snapshot: the kept events are the newest, contiguous"
[ "$kept" -gt 400 ] || fail "a 32 KiB ring kept only $kept events"
call0 10
kill -INT $pid
wait $pid
expect_eq "$?" 0 "fhook trace --overwrite exit code"
total=$(grep -c '"type":"func"' $D/t.out)
expect_eq "$total" "$((kept + 10))" "events after the end: the 10 new ones, once"
expect_eq "$(tail -n 1 $D/t.out | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')" "$((N + 9))" "last seq"
# the summary: hits == events + lost, events are what was printed, lost
# the overwritten ones
summary $D/t
expect_eq "$E" "$total" "summary events vs events printed"
expect_eq "$L" "$((N + 10 - total))" "summary lost vs calls - printed"
run_fhook $D/b trace --overwrite -b 16 fhook_testmod_target
expect_eq "$RC" 2 "--overwrite with a 16 KiB ring: usage error"
pass "overwrite: $(grep '^# kept' $D/o.out | cut -c3-); cli snapshot kept $kept"
