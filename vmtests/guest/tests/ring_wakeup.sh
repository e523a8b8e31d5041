# ring_wakeup: poll() on the session fd honours wakeup_events (9 pending
# events: not readable, 10: readable) and the flush timer (one event with a
# 60 s flush period is not readable within 1 s; with 50 ms it is).  Then
# the fd is closed while another thread polls and reads the mapped rings:
# the mappings keep the session alive and every record arrives; once they
# are unmapped the probes are gone and rmmod works.
. /fhook/lib.sh

load_fhook
load_workmod
run_checks $D/w.out fhook-ring wakeup
n=$CHECKS
run_checks $D/c.out fhook-ring closerace
wait_for 10 detached || fail "enabled_functions not empty after the last unmap: $(head -n 2 $T/enabled_functions)"
[ "$(fhook_vmalloc)" = 0 ] || fail "vmalloc areas of fhook left"
rmmod fhook || fail "rmmod fhook after the session went away"
pass "$((n + CHECKS)) checks; $(grep 'readable (after' $D/w.out | sed 's/.*(after/flush after/; s/)$//')"
