# ioctl_threads: fhook-ioctlstorm, 20 rounds of 8 threads hammering one
# session fd (START, STOP, STATS, PROBE_ADD, PID_FILTER, CPU_FILTER,
# HANDSHAKE, poll, mmap) while another thread closes it at a random moment
# within 1 s (the threads go on for 100 ms on the closed number) and, in
# half the rounds, a consumer reads the mapped rings.  Every
# call gets a documented result, every session is freed.  Afterwards
# nothing is armed and a real trace is still exact.
. /fhook/lib.sh

ROUNDS=${FHOOK_TEST_ROUNDS:-$(pick 20 10)}
load_fhook
run_logged $D/storm.out fhook-ioctlstorm -r "$ROUNDS" -t 8 -d 1000 ${FHOOK_TEST_SEED:+-s $FHOOK_TEST_SEED}
rc=$RC
cat $D/storm.out
[ $rc = 0 ] || fail "fhook-ioctlstorm exit $rc: $(grep -m1 'unexpected\|not freed\|bad record' $D/storm.out)"
wait_for 10 detached || fail "enabled_functions not empty after the storm: $(head -n 2 $T/enabled_functions)"
[ "$(fhook_vmalloc)" = 0 ] || fail "vmalloc areas of fhook left after the storm"
run_fhook $D/f trace vfs_read -- fhook-workload read 300
expect_eq "$RC" 0 "fhook trace exit code after the storm"
n=$(count_func $D/f.out vfs_read)
tracefs_ref $D/ref vfs_read 0 fhook-workload read 300
expect_eq "$n" "$(count_func $D/ref vfs_read)" "vfs_read after the storm: fhook vs tracefs"
# "calls N live L secs S consumed C bad_records B unexpected U"
set -- $(grep '^calls ' $D/storm.out)
seed=$(sed -n 's/^seed \([0-9]*\).*/\1/p' $D/storm.out)
starts=$(awk '$1 == "START" { print $3 }' $D/storm.out)
pass "rounds=$ROUNDS threads=8 calls=$2 on_live_session=$4 starts=$starts consumed=$8 secs=$6 seed=$seed"
