# no_module: without the module, fhook trace fails with one line that says
# to load fhook.ko, and fhook status says "module: not loaded", exit 1.
. /fhook/lib.sh

! fhook_loaded || rmmod fhook || fail "cannot unload fhook"
[ ! -e /dev/fhook ] || fail "/dev/fhook exists without the module"

run_fhook $D/tr trace vfs_read
[ "$RC" != 0 ] || fail "fhook trace succeeded without the module"
trc=$RC
expect_eq "$(wc -l < $D/tr.err)" 1 "fhook trace: lines on stderr"
grep -q 'fhook\.ko' $D/tr.err || fail "the error does not mention fhook.ko: $(cat $D/tr.err)"
grep -q '^fhook: error: ' $D/tr.err || fail "the error is not of the form 'fhook: error: ...'"
expect_eq "$(wc -c < $D/tr.out)" 0 "fhook trace: bytes on stdout"

run_fhook $D/st status
cat $D/st.out
expect_eq "$RC" 1 "fhook status exit code without the module"
grep -qx 'module: not loaded' $D/st.out || fail "fhook status does not print 'module: not loaded'"
pass "trace exit $trc: $(cat $D/tr.err)"
