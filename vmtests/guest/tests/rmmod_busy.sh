# rmmod_busy: rmmod fails while a session is open and the module stays
# loaded; once the session is gone rmmod succeeds.
. /fhook/lib.sh

load_fhook
fhook trace vfs_read > $D/out 2> $D/err &
F=$!
wait_for 10 grep -q '^vfs_read' $T/enabled_functions || fail "fhook trace vfs_read never armed: $(cat $D/err)"
if rmmod fhook 2> $D/rmmod.err; then
	fail "rmmod fhook succeeded with a session open"
fi
log "rmmod refused: $(cat $D/rmmod.err)"
fhook_loaded || fail "fhook left /proc/modules after a failed rmmod"
[ -c /dev/fhook ] || fail "/dev/fhook vanished after a failed rmmod"
kill -0 $F 2>/dev/null || fail "the fhook session died after the failed rmmod"
kill -TERM $F
wait $F
log "fhook exit status $? after SIGTERM"
rmmod fhook || fail "rmmod fhook failed after the session ended"
! fhook_loaded || fail "fhook still loaded"
pass "$(cat $D/rmmod.err)"
