# record_report: "fhook record" writes a file whose "fhook report" prints
# the same events "fhook trace" prints (exact vfs_read count, checked
# against tracefs), the same summary, NDJSON with one object per event,
# filters (--cpu, --since/--until) that partition the events, and a clear
# error for a truncated or foreign file; --summary-json agrees with the
# summary.  Also "trace --format json", and
# one run seen by "trace" and "record" at once: report == trace, line for
# line (time stamps aside).
. /fhook/lib.sh

N=500
load_fhook
run_fhook $D/r record -o $D/f.fhk --summary-json $D/r.json 'vfs_read' -- fhook-workload read $N
expect_eq "$RC" 0 "fhook record exit code"
# --summary-json: the numbers of the summary lines, as JSON
sumline=$(sed -n 's/^fhook: events \([0-9]*\) lost \([0-9]*\)$/\1 \2/p' $D/r.err)
[ -n "$sumline" ] || fail "no 'fhook: events N lost M' line: $(cat $D/r.err)"
expect_same "$(sed -n 's/^{"events":\([0-9]*\),"lost":\([0-9]*\),.*/\1 \2/p' $D/r.json)" "$sumline" \
	"--summary-json events and lost vs the summary"
grep -q '"probe":"vfs_read"' $D/r.json || fail "--summary-json has no probe: $(cat $D/r.json)"
grep -q "^fhook: wrote [0-9]* records, [0-9]* bytes to $D/f.fhk" $D/r.err || fail "no 'wrote' line: $(tail -n 1 $D/r.err)"
expect_eq "$(wc -c < $D/r.out)" 0 "record prints no events on stdout"
run_fhook $D/p report $D/f.fhk
expect_eq "$RC" 0 "fhook report exit code"
n=$(count_func $D/p.out vfs_read)
tracefs_ref $D/ref vfs_read 0 fhook-workload read $N
expect_eq "$n" "$(count_func $D/ref vfs_read)" "report: vfs_read events vs tracefs"
expect_eq "$(count_events $D/p.out)" "$n" "report: events other than vfs_read"
# the summary comes from the file: the same lines record printed
grep '^fhook: ' $D/r.err | grep -v '^fhook: wrote' > $D/r.sum
grep '^fhook: ' $D/p.err > $D/p.sum
cmp -s $D/r.sum $D/p.sum || fail "report's summary differs from record's: $(diff $D/r.sum $D/p.sum | head -n 4 | tr '\n' ' ')"
summary $D/p
expect_eq "$E" "$n" "summary events vs report lines"

# NDJSON: one object per event, the same pids and functions
run_fhook $D/j report --format json $D/f.fhk
expect_eq "$RC" 0 "report --format json exit code"
expect_eq "$(grep -c '^{"type":"func",' $D/j.out)" "$n" "json: func objects"
expect_eq "$(grep -c -v '^{.*}$' $D/j.out)" 0 "json: lines that are not one object"
expect_eq "$(grep -c '"func":"vfs_read"' $D/j.out)" "$n" "json: vfs_read objects"

# filters partition the events: per CPU, and before/after a timestamp
c0=$(fhook report -q --cpu 0 $D/f.fhk | wc -l)
c1=$(fhook report -q --cpu 1 $D/f.fhk | wc -l)
expect_eq "$((c0 + c1))" "$n" "report --cpu 0 + --cpu 1"
mid=$(awk -v m=$((n / 2)) 'NR == m { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { sub(":", "", $i); print $i; exit } }' $D/p.out)
[ -n "$mid" ] || fail "no timestamp in the report"
a=$(fhook report -q --until "$mid" $D/f.fhk | wc -l)
b=$(fhook report -q --since "$mid" $D/f.fhk | wc -l)
expect_eq "$((a + b))" "$n" "report --until T + --since T"
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "--since/--until $mid did not split the events ($a, $b)"

# --pid, --comm, --filter and --stat: a recording of two workloads
run_fhook $D/two record -o $D/two.fhk vfs_read vfs_write -- sh -c \
	'fhook-workload read 40 & fhook-workload write 30; wait'
expect_eq "$RC" 0 "record of two workloads exit code"
run_fhook $D/all report -q $D/two.fhk
wpid=$(awk '/ vfs_write <-/ { print $1; exit }' $D/all.out | sed 's/.*-//')
[ -n "$wpid" ] || fail "no vfs_write event: $(head -n 3 $D/all.out)"
run_fhook $D/pid report -q --pid "$wpid" $D/two.fhk
expect_eq "$(events $D/pid.out | awk -v p="$wpid" '$1 != p' | wc -l)" 0 "report --pid $wpid: events of other pids"
expect_eq "$(count_events $D/pid.out)" "$(events $D/all.out | awk -v p="$wpid" '$1 == p' | wc -l)" "report --pid $wpid: its events"
[ "$(count_func $D/pid.out vfs_write)" -ge 30 ] || fail "report --pid: fewer than 30 writes"
run_fhook $D/comm report -q --comm 'fhook-work*' --filter 'common_pid != '"$wpid" $D/two.fhk
expect_eq "$RC" 0 "report --comm --filter exit code"
grep '^ *fhook-workload-' $D/all.out > $D/fw.out
want=$(events $D/fw.out | awk -v p="$wpid" '$1 != p && $3 == "vfs_read"' | wc -l)
[ "$want" -ge 40 ] || fail "fewer than 40 reads of the reader in the whole report: $want"
expect_eq "$(count_func $D/comm.out vfs_read)" "$want" "the reader's reads (--comm, --filter)"
expect_eq "$(count_func $D/comm.out vfs_write)" 0 "no writes from the reader"
run_fhook $D/st report -q --stat $D/two.fhk
expect_eq "$RC" 0 "report --stat exit code"
grep -q "^ *$(count_events $D/all.out)  1 vfs_read vfs_write\$" $D/st.out ||
	fail "--stat events per probe: $(cat $D/st.out)"
grep -q "^ *[0-9]*  fhook-workload-$wpid\$" $D/st.out || fail "--stat per task: $(cat $D/st.out)"
run_fhook $D/bf report -q --filter 'nosuch == 1' $D/two.fhk
expect_eq "$RC" 2 "report --filter with an unknown field: exit code"

# a file cut in the middle: the events up to the cut, then a clear error
size=$(wc -c < $D/f.fhk)
head -c $((size / 2)) $D/f.fhk > $D/cut.fhk
run_fhook $D/c report $D/cut.fhk
expect_eq "$RC" 1 "report of a truncated file: exit code"
grep -q 'truncated' $D/c.err || fail "no 'truncated' in: $(cat $D/c.err)"
[ "$(count_events $D/c.out)" -gt 0 ] || fail "no events before the cut"
# a file that is not a record file
run_fhook $D/x report /proc/version
expect_eq "$RC" 1 "report of /proc/version: exit code"
expect_eq "$(wc -l < $D/x.err)" 1 "report of a foreign file: one error line"

# trace --format json: live NDJSON
run_fhook $D/t trace --format json vfs_read -- fhook-workload read 100
expect_eq "$RC" 0 "trace --format json exit code"
expect_eq "$(grep -c '"func":"vfs_read"' $D/t.out)" "$(count_func $D/ref vfs_read | awk -v n=$N '{ print $1 - n + 100 }')" "trace --format json: vfs_read objects"
run_fhook $D/b trace --format xml vfs_read
expect_eq "$RC" 2 "trace --format xml: usage error"
# the same run seen by "trace" and by "record": two sessions on one
# process that waits on a fifo until both are armed; the report must print
# what trace printed, line for line (but the time stamps: each session
# stamps its own callback, a few ns apart; and the need-resched character:
# an interrupt between the two callbacks can set TIF_NEED_RESCHED)
mkfifo $D/go
sh -c "read x < $D/go; exec fhook-workload read 300" &
W=$!
fhook trace -p $W vfs_read > $D/s1.out 2> $D/s1.err &
S1=$!
fhook record -p $W -o $D/s2.fhk vfs_read > /dev/null 2> $D/s2.err &
S2=$!
wait_for 30 grep -q 'vfs_read.*(2)' $T/enabled_functions || fail "the two sessions did not both arm: $(cat $T/enabled_functions)"
echo go > $D/go
wait $W
sleep 1
kill -INT $S1 $S2
wait $S1 $S2
fhook report $D/s2.fhk > $D/s2.out 2> /dev/null || fail "report of the shared run failed"
strip_ts() { sed 's/ [0-9]*\.[0-9]*: / T: /; s/\(\] .\)./\1?/' "$1"; }
strip_ts $D/s1.out > $D/s1.txt
strip_ts $D/s2.out > $D/s2.txt
same=$(count_func $D/s1.out vfs_read)
[ "$same" -ge 300 ] || fail "the shared run traced $same vfs_read calls, expected >= 300"
cmp -s $D/s1.txt $D/s2.txt || fail "record + report differs from trace for the same run: $(diff $D/s1.txt $D/s2.txt | head -n 4 | tr '\n' ' ')"
pass "events=$n file=${size}B cpu0=$c0 cpu1=$c1 until=$a since=$b; same run: $same lines identical"
