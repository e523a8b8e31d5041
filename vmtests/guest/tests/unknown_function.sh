# unknown_function: a pattern that matches nothing is an error naming it,
# in one line on stderr, and leaves nothing armed.
. /fhook/lib.sh

load_fhook
run_fhook $D/a trace no_such_function_xyz
[ "$RC" != 0 ] || fail "fhook trace no_such_function_xyz exited 0"
expect_eq "$(wc -l < $D/a.err)" 1 "lines on stderr"
grep -q 'no_such_function_xyz' $D/a.err || fail "the error does not name the pattern: $(cat $D/a.err)"
rc1=$RC

# a good pattern next to a bad one: the error names the bad one
run_fhook $D/b trace vfs_read 'no_such_*_xyz'
[ "$RC" != 0 ] || fail "fhook trace vfs_read 'no_such_*_xyz' exited 0"
expect_eq "$(wc -l < $D/b.err)" 1 "lines on stderr (two patterns)"
grep -q 'no_such_\*_xyz' $D/b.err || fail "the error does not name 'no_such_*_xyz': $(cat $D/b.err)"

! attached || fail "something is still attached: $(head -n 3 $T/enabled_functions)"
run_fhook $D/st status
grep -qx 'sessions: 0' $D/st.out || fail "a session is still open: $(grep sessions $D/st.out)"
pass "exit $rc1: $(cat $D/a.err)"
