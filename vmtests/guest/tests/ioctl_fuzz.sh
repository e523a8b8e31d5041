# ioctl_fuzz: fhook-fuzz sends 250,000 random and mutated ioctls (all
# nineteen commands; FHOOK_TEST_FUZZ_CALLS=1000000 for the long run) from two
# threads sharing a session that is replaced every 2000 calls, while a
# third forges the session's consumer pages; no call may succeed or fail
# the wrong way (see the program).  Then a real trace is
# still exact, and no session is left.  FHOOK_TEST_FUZZ_SEED replays a run.
. /fhook/lib.sh

load_fhook
# (PREEMPT_RT, in make test-full: no expedited RCU grace periods after
# boot, so every STOP waits for a normal one in its synchronize_rcu(),
# 0.7 s under TCG: 535 calls a second against 13,000 on Debian's 6.12;
# 250,000 calls took 469-600 s there on 2026-12-07)
calls=$(pick 250000 40000)
rt_kernel && calls=60000
run_logged $D/fuzz.out fhook-fuzz -n "${FHOOK_TEST_FUZZ_CALLS:-$calls}" -t "${FHOOK_TEST_FUZZ_THREADS:-2}" -p "${FHOOK_TEST_FUZZ_PROGRESS:-100000}" ${FHOOK_TEST_FUZZ_SEED:+-s $FHOOK_TEST_FUZZ_SEED}
rc=$RC
cat $D/fuzz.out
[ $rc = 0 ] || fail "fhook-fuzz exit $rc: $(grep -m1 'VIOLATION\|Bail\|error' $D/fuzz.out)"
wait_for 10 detached || fail "enabled_functions not empty after fuzzing: $(head -n 2 $T/enabled_functions)"
[ "$(fhook_vmalloc)" = 0 ] || fail "vmalloc areas of fhook left after fuzzing"
run_fhook $D/f trace vfs_read -- fhook-workload read 300
expect_eq "$RC" 0 "fhook trace exit code after fuzzing"
n=$(count_func $D/f.out vfs_read)
tracefs_ref $D/ref vfs_read 0 fhook-workload read 300
expect_eq "$n" "$(count_func $D/ref vfs_read)" "vfs_read after fuzzing: fhook vs tracefs"
run_fhook $D/st status
grep -qx 'sessions: 0' $D/st.out || fail "a session survived: $(grep sessions $D/st.out)"
tails=$(sed -n 's/^forged consumer tails: //p' $D/fuzz.out)
[ "${tails:-0}" -gt 0 ] || fail "no consumer page was forged (no session with rings mapped)"
# "calls N ok K sessions S secs T calls_per_sec R violations V seed X"
set -- $(grep '^calls ' $D/fuzz.out)
pass "calls=$2 ok=$4 sessions=$6 secs=$8 calls/s=${10} seed=${14} tails=$tails"
