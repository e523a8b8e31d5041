# kprobe_filter: filters evaluated in the module pass exactly the events the
# kernel's own event filter passes (events/GRP/EVENT/filter, same
# expression), and the counts the workload fixes; rejected hits count as
# filtered, not as hits.  A function probe with a task filter (comm) sees
# only that task.
. /fhook/lib.sh

N=70
load_fhook
tracefs_reset
RD='cnt >= 4 && cnt != 6'
OP='path ~ "/tmp/fhk-open-1*" || (fl & 64 && comm == "fhook-workload")'
# (arguments as $argN: any CPU, kprobe_events and fhook alike)
echo 'p:fhkflt/rd vfs_read cnt=$arg3:u64' >> $T/kprobe_events || fail "kprobe_events"
echo 'p:fhkflt/op do_sys_openat2 path=+0($arg2):ustring fl=+0($arg3):x64' >> $T/kprobe_events ||
	fail "kprobe_events"
echo "$RD" > $T/events/fhkflt/rd/filter || fail "tracefs refused filter '$RD'"
echo "$OP" > $T/events/fhkflt/op/filter || fail "tracefs refused filter '$OP'"
echo 1 > $T/events/fhkflt/enable
echo > $T/trace
echo 1 > $T/tracing_on
run_fhook $D/f trace "p:fhkflt/rd vfs_read cnt=\$arg3:u64 if $RD" \
	'p:fhkflt/op do_sys_openat2 path=+0($arg2):ustring fl=+0($arg3):x64' --filter "$OP" \
	-- fhook-workload open $N
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkflt/enable
cp $T/trace $D/ref.raw
echo 0 > $T/events/fhkflt/rd/filter
echo 0 > $T/events/fhkflt/op/filter
echo > $T/kprobe_events
expect_eq "$RC" 0 "fhook trace exit code"

WPID=$(sed -n 's/^ *fhook-workload-\([0-9]*\) .*/\1/p' $D/f.out | head -n 1)
[ -n "$WPID" ] || fail "no event of fhook-workload in fhook's output"
lines() { sed -n "s/^ *[^ ]*-$WPID *\[[0-9]*\] [^ ]* *[0-9.]*: //p" "$1" | sort; }
lines $D/f.out > $D/fhook.n
lines $D/ref.raw > $D/ref.n
# the workload reads I % 7 + 1 bytes: 4, 5 and 7 pass, 3 of every 7
rd=$(grep -c '^rd: ' $D/fhook.n)
expect_eq "$rd" "$((N / 7 * 3))" "rd events passing '$RD'"
# /tmp/fhk-open-1 and -10..-19, or O_CREAT (I % 3 == 0): 11 + 24 - 3
op=$(grep -c '^op: ' $D/fhook.n)
expect_eq "$op" 32 "op events passing the filter"
cmp -s $D/fhook.n $D/ref.n || {
	diff $D/ref.n $D/fhook.n | head -n 10 | sed 's/^/#   /'
	fail "fhook's filtered events differ from tracefs'"
}
# hits count passed events only; the others are filtered
probes_exact $D/f.err 2
h=$(sed -n 's/^fhook: probe 1 hits \([0-9]*\) .*/\1/p' $D/f.err)
expect_eq "$h" "$rd" "probe 1 hits (the workload only: pid filter of the command)"

# fhook stat: the same counts without the events: 30 hits, at least 40 filtered
run_fhook $D/s stat "p:fhkflt/rd vfs_read cnt=\$arg3:u64 if $RD" -- fhook-workload open $N
expect_eq "$RC" 0 "fhook stat exit code"
log "stat: $(cat $D/s.out | tr '\n' '|')"
head -n 1 $D/s.out | grep -q '^probe  *hits  *filtered  *missed  *events  *lost  *definition$' ||
	fail "stat header: $(head -n 1 $D/s.out)"
set -- $(sed -n 2p $D/s.out)
expect_eq "$2" "$rd" "stat hits"
# the workload's other reads, plus other tasks' (the pid filter)
[ "$3" -ge "$((N - rd))" ] || fail "stat filtered $3 < $((N - rd)) (the workload's other reads)"
expect_eq "$5" "$rd" "stat events"
expect_eq "$6" 0 "stat lost"

# a task filter on a function probe
run_fhook $D/g trace vfs_read --filter 'comm == "fhook-workl*" && pid != 1' --duration 4 &
FH=$!
sleep 2
fhook-workload read 100
sh -c 'cat /proc/version > /dev/null'
wait $FH
n=$(grep -c '^ *fhook-workload-[0-9]* .*: vfs_read <-' $D/g.out)
others=$(grep ': vfs_read <-' $D/g.out | grep -vc '^ *fhook-workload-[0-9]* ')
log "vfs_read by fhook-workload: $n, by others: $others"
[ "$n" -ge 100 ] || fail "only $n vfs_read events of fhook-workload (100 reads)"
expect_eq "$others" 0 "events of other tasks"
pass "rd $rd, op $op equal to tracefs' filters; comm filter on a function probe"
