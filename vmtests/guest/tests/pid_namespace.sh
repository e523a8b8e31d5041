# pid_namespace: pids given to the module are the caller's.  fhook run
# inside a new pid namespace (a container) traces "-- COMMAND" by the
# pid fork() gave it there, which the module translates to the kernel's
# (before, that namespace-local number selected another task or none).
# And a process whose main thread exits alone (pthread_exit) stays traced
# through its other thread under --pid (before, the leader's exit cleared
# the process's bit).
. /fhook/lib.sh

load_fhook
command -v unshare > /dev/null || skip "no unshare in the guest"
unshare -p -f sh -c "fhook trace vfs_read -- fhook-workload read 20" > $D/ns.out 2> $D/ns.err
rc=$?
sed 's/^/#   /' $D/ns.err | head -n 5
expect_eq "$rc" 0 "fhook trace in a new pid namespace: exit code"
n=$(grep -c 'fhook-workload-[0-9]* .*vfs_read' $D/ns.out)
expect_eq "$n" 20 "vfs_read events of the command run in the namespace"

rm -f $D/go
fhook-workload -s $D/go leader-exit 30 &
W=$!
fhook trace vfs_read --pid $W > $D/le.out 2> $D/le.err &
F=$!
wait_for 30 grep -q '^vfs_read' $T/enabled_functions || fail "not attached: $(cat $D/le.err)"
sleep 1
touch $D/go
wait $W
kill -INT $F
wait $F
n=$(grep -c "fhook-workload-[0-9]* .*vfs_read" $D/le.out)
expect_eq "$n" 30 "reads of the thread left after its leader exited"
pass "namespace: 20/20 events; leader exited early: 30/30 reads of the other thread"
