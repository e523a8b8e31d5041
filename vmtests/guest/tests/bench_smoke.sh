# bench_smoke: `fhook bench` measures for real and leaves the kernel as it
# found it.  A short read workload under the function tracer with
# trace_pipe, kprobe_events with two fetchargs, fhook's trace, record and
# count: every row has a figure, the record rows'
# consumers used CPU and lost nothing (their rings hold the repeat), and
# afterwards the tracer, filter, buffer size, notrace pids and
# kprobe_events are as before, nothing is attached, no record file is
# left behind.  The figures themselves are docs/benchmarks.md's business.
. /fhook/lib.sh

load_fhook
tracefs_reset
size0=$(cat $T/buffer_size_kb)
log "buffer_size_kb before: $size0"
fhook bench --workload read --calls 5000 --repeats 1 --settle 0.5 \
	--only ftrace-function --only kprobe-events-2args --only fhook-ops-record \
	--only fhook-ops-record-raw --only fhook-ops-count \
	--json $D/b.json > $D/b.txt 2> $D/b.err || fail "fhook bench failed: $(cat $D/b.err)"
sed 's/^/#   /' $D/b.txt
! grep -q 'skipped:' $D/b.txt || fail "a row was skipped: $(grep 'skipped:' $D/b.txt)"
grep -q '"rows": *\[' $D/b.json || fail "no JSON rows in $D/b.json"

# mechanism ns/hit min max overhead consumer lost ...
row() { awk -v n="$1" '$1 == n { print; exit }' $D/b.txt; }
for n in ftrace-function kprobe-events-2args fhook-ops-record fhook-ops-record-raw fhook-ops-count; do
	r=$(row $n)
	[ -n "$r" ] || fail "no row $n"
	set -- $r
	# (not "above the baseline": a count costs less than a short run's noise)
	awk -v t="$2" 'BEGIN { exit !(t > 0) }' || fail "$n: no time per hit ($2)"
done
for n in ftrace-function kprobe-events-2args fhook-ops-record fhook-ops-record-raw; do
	set -- $(row $n)
	awk -v c="$6" 'BEGIN { exit !(c > 0) }' || fail "$n: its consumer used no CPU ($6)"
	[ "$7" = "0.0%" ] || fail "$n: $7 of the events lost"
done

# as it was
[ "$(cat $T/current_tracer)" = nop ] || fail "current_tracer after the bench: $(cat $T/current_tracer)"
expect_eq "$(cat $T/buffer_size_kb)" "$size0" "buffer_size_kb after the bench"
grep -q '^#### all functions enabled ####' $T/set_ftrace_filter ||
	fail "set_ftrace_filter not cleared: $(head -n 3 $T/set_ftrace_filter)"
# (an empty pid list reads "no pid")
for f in set_ftrace_notrace_pid set_event_notrace_pid; do
	c=$(cat $T/$f)
	[ -z "$c" ] || [ "$c" = "no pid" ] || fail "$f left: $c"
done
! grep -q fhookbench $T/kprobe_events || fail "kprobe_events left: $(cat $T/kprobe_events)"
detached || fail "still attached: $(cat $T/enabled_functions)"
[ ! -e /tmp/fhook-bench-record.fhk ] || fail "the record file was left in /tmp"
pass
