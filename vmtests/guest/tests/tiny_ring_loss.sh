# tiny_ring_loss: a 4 KiB ring overflows under two busy writers; the loss
# accounting is exact: hits == events + lost, the in-stream LOST lines add
# up to the summary's lost and each one's per-probe breakdown to its count,
# and the event lines to its events.
. /fhook/lib.sh

N=20000
load_fhook
run_fhook $D/f trace -b 4 'vfs_*' -- sh -c "fhook-workload rw $N & fhook-workload rw $N; wait"
expect_eq "$RC" 0 "fhook trace exit code"
summary $D/f
ev=$(count_events $D/f.out)
ls=$(lost_sum $D/f.out)
nl=$(grep -c '^CPU:[0-9]* \[LOST [0-9]* EVENTS\]' $D/f.out)
log "event lines $ev, LOST lines $nl adding up to $ls"
[ "$L" -gt 0 ] || fail "no loss with a 4 KiB ring (hits $H): make the workload heavier"
expect_eq "$ls" "$L" "sum of [LOST N EVENTS] lines vs summary lost"
expect_eq "$ev" "$E" "event lines vs summary events"
[ "$H" -ge $((4 * N)) ] || fail "hits $H < $((4 * N)) for two rw $N"
other=$(grep -v '^CPU:[0-9]* \[LOST [0-9]* EVENTS\]' $D/f.out | grep -cv ' <-')
expect_eq "$other" 0 "output lines that are neither events nor LOST lines"
# every LOST line breaks its count down by probe: "(seq A-B; probe 1: N)"
bad=$(awk '/^CPU:[0-9]+ \[LOST / { n = $3; s = 0; for (i = 1; i <= NF; i++) if ($i == "probe") { v = $(i + 2); gsub(/[^0-9]/, "", v); s += v }; if (s != n) print }' $D/f.out | head -n 3)
[ -z "$bad" ] || fail "LOST lines whose per-probe counts do not add up: $bad"
pass "hits=$H events=$E lost=$L lost_lines=$nl"
