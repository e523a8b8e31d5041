# two_sessions_close: sessions K and T trace vfs_read+vfs_write system-wide
# (they stream two light loads); session S traces vfs_read of one workload.
# While S's workload is in the middle of its reads, K is killed (SIGKILL)
# and then T is closed (SIGTERM: it drains and prints its summary).  S
# still sees exactly the workload's reads (its own count, which it prints,
# plus the fixed overhead of the program, measured with tracefs), loses
# nothing, and its summary adds up.
. /fhook/lib.sh

N=2000
load_fhook
tracefs_ref $D/ref vfs_read 0 fhook-workload read $N
extra=$(($(count_func $D/ref vfs_read) - N))
log "fhook-workload read $N: $extra vfs_read besides its own reads"
fhook-workload load 100000 0 &
# (one load on the slow debug kernel: K and T format every event it makes)
[ "$(pick 2 1)" = 2 ] && fhook-workload load 100000 1 &

# the number of ftrace ops on vfs_read, from "vfs_read (N) ..."
ops() { sed -n 's/^vfs_read (\([0-9]*\)).*/\1/p' $T/enabled_functions; }
# (a function, so that wait_for reads enabled_functions on every try)
ops_are() { test "$(ops)" = "$1"; }

fhook trace vfs_read vfs_write > $D/k.out 2> $D/k.err &
K=$!
fhook trace vfs_read vfs_write > $D/t.out 2> $D/t.err &
TT=$!
wait_for 60 ops_are 2 || fail "sessions K and T never both armed: $(cat $D/k.err $D/t.err)"
fhook trace -b 4096 vfs_read -- fhook-workload -s $D/sync read $N > $D/s.out 2> $D/s.err &
S=$!
wait_for 60 test -e $D/sync || fail "the workload of session S never reached its middle: $(cat $D/s.err)"
expect_eq "$(ops)" 3 "ftrace ops on vfs_read with K, T and S armed"
sleep 0.5
klines=$(wc -l < $D/k.out)
kill -KILL $K
{ wait $K; } 2> /dev/null
krc=$?
wait_for 10 ops_are 2 || fail "SIGKILL: session K's ops still attached: $(grep '^vfs_' $T/enabled_functions | tr '\n' ' ')"
sleep 0.5
kill -TERM $TT
wait $TT
trc=$?
wait_for 10 ops_are 1 || fail "SIGTERM: session T's ops still attached: $(grep '^vfs_' $T/enabled_functions | tr '\n' ' ')"
sleep 0.5
rm $D/sync
wait $S
rc=$?
sed 's/^/# S: /' $D/s.err
sed 's/^/# T: /' $D/t.err
expect_eq "$rc" 0 "session S exit code"
expect_eq "$krc" 137 "session K exit code (SIGKILL)"
expect_eq "$trc" 0 "session T exit code (SIGTERM)"
[ "$klines" -gt 0 ] || fail "session K had not streamed anything before the kill"
reads=$(sed -n 's/^reads //p' $D/s.err)
[ -n "$reads" ] || fail "no 'reads N' from the workload"
summary $D/t
expect_eq "$(count_events $D/t.out)" "$E" "session T (closed by SIGTERM): event lines vs its summary"
tev=$E
summary $D/s
expect_eq "$L" 0 "session S lost events"
n=$(count_func $D/s.out vfs_read)
expect_eq "$(count_events $D/s.out)" "$E" "session S event lines vs summary"
expect_eq "$n" "$((reads + extra))" "session S vfs_read vs the workload's $reads reads + $extra"
expect_eq "$(npids $D/s.out)" 1 "session S pids"
pass "S=$n/$((reads + extra)) K=$klines(killed) T=$tev(closed)"
