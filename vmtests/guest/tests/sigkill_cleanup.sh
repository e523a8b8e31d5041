# sigkill_cleanup: SIGKILL a tracing fhook under load; the kernel is left
# with no ftrace ops attached and the module unloads.
. /fhook/lib.sh

load_fhook
fhook-workload spin 600 0 &
S1=$!
fhook-workload spin 600 1 &
S2=$!
t0=$(uptime_cs)
fhook trace 'vfs_*' > /dev/null 2> $D/err &
F=$!
wait_for 30 attached ||
	fail "nothing in enabled_functions 30 s after starting fhook trace 'vfs_*': $(cat $D/err)"
log "armed after $(( $(uptime_cs) - t0 ))0 ms"
sleep 2
armed=$(wc -l < $T/enabled_functions)
log "enabled_functions while tracing: $armed lines"
kill -0 $F 2>/dev/null || fail "fhook trace exited early: $(cat $D/err)"
kill -9 $F
wait $F
log "fhook exit status $? (137 expected)"
kill -9 $S1 $S2 2>/dev/null
wait
if ! wait_for 5 detached; then
	fail "enabled_functions not empty 5 s after SIGKILL: $(head -n 3 $T/enabled_functions | tr '\n' ' ')"
fi
rmmod fhook || fail "rmmod fhook failed after the SIGKILL"
pass "armed=$armed"
