# pid_filter: with two processes doing reads, "-p PID1" only shows PID1's events.
. /fhook/lib.sh

load_fhook
fhook-workload load 600 &
P1=$!
fhook-workload load 600 &
P2=$!
sleep 0.5
run_fhook $D/f trace -p $P1 --duration 2 vfs_read
expect_eq "$RC" 0 "fhook trace exit code"
kill -0 $P1 && kill -0 $P2 || fail "the background workloads ended too early"
kill $P1 $P2
summary $D/f
ev=$(count_events $D/f.out)
[ "$ev" -gt 0 ] || fail "no events from the traced pid $P1"
expect_eq "$(count_events $D/f.out)" "$E" "event lines vs summary events"
pids=$(events $D/f.out | awk '{ print $1 }' | sort -u | tr '\n' ' ')
log "pids seen: $pids (P1=$P1 P2=$P2)"
[ "$pids" = "$P1 " ] || fail "events from pids other than $P1: $pids"
pass "pid=$P1 events=$ev lost=$L"
