# chrome_export: --format chrome (Chrome trace JSON for Perfetto) carries
# exactly the events the text format does: a trace of vfs_read (the same
# count, one thread track named after the workload), trace-around calls as
# complete events with durations, and a record file reported as Chrome
# JSON; the document's frame is intact (opening, one event per line,
# closing).
. /fhook/lib.sh

TH=/proc/fhook_testmod_hooks
N=300
load_fhook
load_workmod

# frame DOC: the opening and closing lines, every line between an event
frame() {
	[ "$(head -n 1 "$1")" = '{"displayTimeUnit":"ns","traceEvents":[' ] || fail "$1: no opening line: $(head -n 1 "$1")"
	[ "$(tail -n 1 "$1")" = ']}' ] || fail "$1: no closing line: $(tail -n 1 "$1")"
	bad=$(sed '1d;$d' "$1" | grep -vc '^{"ph":"[MiX]",.*"pid":[0-9]*,"tid":[0-9]*.*},\{0,1\}$')
	expect_eq "$bad" 0 "$1: lines that are not one event"
}

run_fhook $D/t trace --format chrome vfs_read -- fhook-workload read $N
expect_eq "$RC" 0 "trace --format chrome exit code"
frame $D/t.out
n=$(grep -c '"ph":"i","s":"t","name":"vfs_read","cat":"function"' $D/t.out)
[ "$n" -ge $N ] || fail "$n vfs_read events for $N reads"
summary $D/t
expect_eq "$n" "$E" "Chrome events vs the summary's events"
expect_eq "$(grep -c '"name":"thread_name".*"args":{"name":"fhook-workload"}' $D/t.out)" 1 "thread name metadata"

echo reset > $TH
run_fhook $D/h hook --trace-around --format chrome fhook_testmod_ret 'i=$arg1:u64' -- sh -c "echo ret 100 > $TH"
expect_eq "$RC" 0 "hook --format chrome exit code"
frame $D/h.out
expect_eq "$(grep -c '"ph":"X","name":"fhook_testmod_ret".*"dur":[0-9]*\.[0-9]*,.*"i":' $D/h.out)" 100 "complete events with a duration and the field"

run_fhook $D/r record -o $D/r.rec vfs_read -- fhook-workload read $N
expect_eq "$RC" 0 "record exit code"
fhook report -q --format chrome $D/r.rec > $D/rep.out 2> $D/rep.err || fail "report --format chrome: $(cat $D/rep.err)"
frame $D/rep.out
fhook report -q $D/r.rec > $D/rep.txt 2>&1
expect_eq "$(grep -c '"name":"vfs_read"' $D/rep.out)" "$(count_func $D/rep.txt vfs_read)" "report: Chrome vs text events"
pass "trace $n events, 100 complete trace-around calls, report"
