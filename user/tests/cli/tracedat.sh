#!/usr/bin/env bash
# fhook report --to trace.dat, read back by independent readers: a small
# libtracecmd program (tracedat_reader) and trace-cmd report list the same
# events (CPU, timestamp, pid, event name) as fhook report --format json,
# the lost records where they were; the reader's full text (fields
# included, as the file's formats print them) is kept in
# golden/tracedat.reader.
#   tracedat.sh FHOOK MAKE_RECFILE READER GOLDEN_DIR [--update]
set -euo pipefail
fhook=$1 make_recfile=$2 reader=$3 golden=$4 update=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FHOOK_TRACEFS=/nonexistent
fail() { echo "tracedat: FAIL: $*" >&2; exit 1; }

"$make_recfile" "$tmp/x.rec" lost-mid
"$fhook" report -q --to trace.dat -o "$tmp/x.dat" "$tmp/x.rec"
"$reader" "$tmp/x.dat" > "$tmp/reader.txt"

# "CPU TS PID NAME" of every event, and "lost CPU N" of every gap
"$fhook" report -q --format json "$tmp/x.rec" |
	sed -n 's/^{"type":"\([a-z]*\)","ts":\([0-9]*\),"cpu":\([0-9]*\).*"pid":\([0-9]*\),.*"probe":[0-9]*\(,"event":"[^"]*\/\([^"]*\)"\)\{0,1\}.*/\3 \2 \4 \1 \6/p;
	       s/^{"type":"lost","ts":[0-9]*,"cpu":\([0-9]*\),"lost":\([0-9]*\).*/lost \1 \2/p' |
	awk '$1 == "lost" { print; next } { print $1, $2, $3, ($4 == "func" ? "function" : $5) }' > "$tmp/fhook.txt"
sed -n 's/^CPU:\([0-9]*\) \[LOST \([0-9]*\) EVENTS\]$/lost \1 \2/p;
	s/^\([0-9]*\) \([0-9]*\) .*-\([0-9]*\) \([a-z_0-9]*\): .*/\1 \2 \3 \4/p' "$tmp/reader.txt" > "$tmp/got.txt"
# (the reader merges CPUs by time, fhook report keeps the file's order;
# lost gaps are reported before the next event of their CPU)
sort -k2,2n -k1,1n "$tmp/fhook.txt" | grep -v '^lost' > "$tmp/a"
grep -v '^lost' "$tmp/got.txt" > "$tmp/b"
diff -u "$tmp/a" "$tmp/b" || fail "libtracecmd's events differ from fhook report's"
[ "$(grep '^lost' "$tmp/fhook.txt")" = "$(grep '^lost' "$tmp/got.txt")" ] ||
	fail "lost gaps: fhook '$(grep '^lost' "$tmp/fhook.txt" | tr '\n' ' ')', libtracecmd '$(grep '^lost' "$tmp/got.txt" | tr '\n' ' ')'"
[ "$(wc -l < "$tmp/a")" -ge 8 ] || fail "too few events compared"

if command -v trace-cmd > /dev/null; then
	trace-cmd report -i "$tmp/x.dat" > "$tmp/tc.txt" 2> "$tmp/tc.err" || fail "trace-cmd report: $(cat "$tmp/tc.err")"
	[ "$(grep -c ': ' "$tmp/tc.txt")" = "$(wc -l < "$tmp/a")" ] ||
		fail "trace-cmd report lists $(grep -c ': ' "$tmp/tc.txt") events, fhook report $(wc -l < "$tmp/a")"
	grep -q 'EVENTS DROPPED\]' "$tmp/tc.txt" || fail "trace-cmd report shows no dropped events"
fi

# a call graph: trace-cmd report draws the trees from ftrace's own
# funcgraph_entry/funcgraph_exit formats
"$make_recfile" "$tmp/g.rec" graph
"$fhook" report -q --to trace.dat -o "$tmp/g.dat" "$tmp/g.rec"
if command -v trace-cmd > /dev/null; then
	trace-cmd report -i "$tmp/g.dat" > "$tmp/tg.txt" 2> "$tmp/tg.err" || fail "trace-cmd report (graph): $(cat "$tmp/tg.err")"
	# (trace-cmd makes a leaf of an entry whose return is the next record
	# of all CPUs, not of its own as the kernel does)
	for want in 'funcgraph_entry: .*|  vfs_read() {' 'funcgraph_entry: .*|    ksys_read() {' \
		'funcgraph_exit: .* 0.481 us .*|    }' 'funcgraph_exit: .* 12.905 us .*|  }' \
		'funcgraph_entry: .* 2000.500 us |  vfs_write();' 'funcgraph_entry: .* 0.400 us .*|  vfs_read();'; do
		grep -q "$want" "$tmp/tg.txt" || { cat "$tmp/tg.txt" >&2; fail "trace-cmd report (graph): no '$want'"; }
	done
fi
"$reader" "$tmp/g.dat" | grep -c 'funcgraph_e' > "$tmp/gn" || true
# (11: the leaf held in one record is an entry and an exit)
[ "$(cat "$tmp/gn")" = 11 ] || fail "libtracecmd reads $(cat "$tmp/gn") graph events of 11"

# a wakeup tracer's recording: each report as the kernel's wakeup tracers
# write it, ftrace's wakeup event on the waker's CPU, the calls, its
# context_switch event on the switch's
"$make_recfile" "$tmp/w.rec" wakeup
"$fhook" report -q --to trace.dat -o "$tmp/w.dat" "$tmp/w.rec"
"$reader" "$tmp/w.dat" > "$tmp/w.txt"
want="0 2431445000 fhook-wakeprog-162 wakeup: 162:120:0  + 163:49:0 [001]
0 2431445000 fhook-wakeprog-162 kernel_stack: 	=> try_to_wake_up
1 2431457000 fhook-workload-115 function:  vfs_read <-- ksys_read
1 2431845000 fhook-workload-115 function:  vfs_write <-- ksys_write
1 2432806000 fhook-workload-115 context_switch: 115:120:0  ==> 163:49:0 [001]
1 2432806000 fhook-workload-115 kernel_stack: 	=> __schedule"
[ "$(grep '^[0-9]' "$tmp/w.txt")" = "$want" ] || { cat "$tmp/w.txt" >&2; fail "libtracecmd's wakeup report differs"; }
if command -v trace-cmd > /dev/null; then
	trace-cmd report -i "$tmp/w.dat" > "$tmp/tw.txt" 2> "$tmp/tw.err" || fail "trace-cmd report (wakeup): $(cat "$tmp/tw.err")"
	[ "$(grep -c 'wakeup: \|function: \|context_switch: \|kernel_stack: ' "$tmp/tw.txt")" = 6 ] ||
		{ cat "$tmp/tw.txt" >&2; fail "trace-cmd report (wakeup): not the 6 events"; }
	# (its stack handler: the callers up to the first ULONG_MAX)
	[ "$(grep -A 3 'context_switch: ' "$tmp/tw.txt" | grep -c '^=> ')" = 2 ] ||
		{ cat "$tmp/tw.txt" >&2; fail "trace-cmd report (wakeup): not the switch's 2 frames"; }
fi

# the other latency tracers: ftrace's timerlat, hwlat and osnoise events
# (osnoise:sample_threshold for a noise), an irqsoff section as function
# events at its start and its end and the stack there
for t in timerlat hwlat osnoise irqsoff; do
	"$make_recfile" "$tmp/$t.rec" $t
	"$fhook" report -q --to trace.dat -o "$tmp/$t.dat" "$tmp/$t.rec"
	"$reader" "$tmp/$t.dat" | grep '^[0-9]' > "$tmp/$t.txt"
done
want="1 2431445000 <idle>-0 timerlat: seq:7	context:0	timer_latency:4321
1 2431453000 fhook-timerlat/1-1234 timerlat: seq:7	context:1	timer_latency:12345
1 2431445000 fhook-hwlat-1300 hwlat: cnt:3	ts:0000000002.0431445000	inner:310000000	outer:1200	count:1	nmi-ts:5000	nmi-count:2
1 2431500000 fhook-osn/1-1301 sample_threshold: start 2431460000 duration 40000 ns interference 1
1 2432445000 fhook-osn/1-1301 osnoise: noise:40000	max_sample:40000	hw:0	nmi:0	irq:1	softirq:0	thread:0
1 2433195000 fhook-workload-115 function:  vfs_read <-- ksys_read
1 2433445000 fhook-workload-115 function:  vfs_read <-- ksys_read
1 2433445000 fhook-workload-115 kernel_stack: 	=> vfs_read"
got=$(cat "$tmp/timerlat.txt" "$tmp/hwlat.txt" "$tmp/osnoise.txt" "$tmp/irqsoff.txt")
[ "$got" = "$want" ] || { echo "$got" >&2; fail "libtracecmd's latency tracers' events differ"; }
if command -v trace-cmd > /dev/null; then
	for t in timerlat hwlat osnoise irqsoff; do
		trace-cmd report -i "$tmp/$t.dat" > "$tmp/t$t.txt" 2> "$tmp/t$t.err" ||
			fail "trace-cmd report ($t): $(cat "$tmp/t$t.err")"
	done
	[ "$(grep -c ' timerlat: ' "$tmp/ttimerlat.txt")" = 2 ] || fail "trace-cmd report: not the 2 timerlat events"
	grep -q ' hwlat: *cnt:3	.*inner:310000000	outer:1200' "$tmp/thwlat.txt" || fail "trace-cmd report: no hwlat event"
	grep -q ' osnoise: *noise:40000	' "$tmp/tosnoise.txt" || fail "trace-cmd report: no osnoise event"
	grep -q ' sample_threshold: *start 2431460000 duration 40000 ns' "$tmp/tosnoise.txt" ||
		fail "trace-cmd report: no sample_threshold event"
	[ "$(grep -A 2 'kernel_stack: ' "$tmp/tirqsoff.txt" | grep -c '^=> ')" = 2 ] ||
		{ cat "$tmp/tirqsoff.txt" >&2; fail "trace-cmd report (irqsoff): not the stack's frames"; }
fi

if [ "$update" = --update ]; then
	cp "$tmp/reader.txt" "$golden/tracedat.reader"
else
	diff -u "$golden/tracedat.reader" "$tmp/reader.txt" || fail "the reader's text differs from golden/tracedat.reader"
fi
echo "tracedat: $(wc -l < "$tmp/a") events and the lost gap, a call graph and the latency tracers' reports read back by libtracecmd and trace-cmd"
