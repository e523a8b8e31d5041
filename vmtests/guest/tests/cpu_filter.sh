# cpu_filter: with load pinned to each CPU, "--cpu 0" only shows [000].
. /fhook/lib.sh

[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
load_fhook
fhook-workload load 600 0 &
L0=$!
fhook-workload load 600 1 &
L1=$!
sleep 0.5

# control: without --cpu, both CPUs produce events
run_fhook $D/c trace vfs_read --duration 1
expect_eq "$RC" 0 "fhook trace (control) exit code"
cpus=$(events $D/c.out | awk '{ print $2 }' | sort -un | tr '\n' ' ')
log "control run: CPUs $cpus"
[ "$cpus" = "0 1 " ] || fail "control run without --cpu saw CPUs '$cpus', expected '0 1 '"

run_fhook $D/f trace --cpu 0 vfs_read --duration 2
expect_eq "$RC" 0 "fhook trace exit code"
summary $D/f
ev=$(count_events $D/f.out)
[ "$ev" -gt 0 ] || fail "no events on CPU 0"
cpus=$(events $D/f.out | awk '{ print $2 }' | sort -un | tr '\n' ' ')
log "--cpu 0 run: CPUs $cpus"
[ "$cpus" = "0 " ] || fail "--cpu 0 saw CPUs $cpus"
expect_eq "$(grep -c ' \[000\] ' $D/f.out)" "$ev" "event lines showing [000]"
kill -0 $L0 && kill -0 $L1 || fail "the background workloads ended too early"
kill $L0 $L1
pass "events=$ev lost=$L"
