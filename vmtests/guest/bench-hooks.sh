# shellcheck shell=sh
# vmtests/run.sh --bench: the hook benchmark (docs/benchmarks.md).  An
# in-kernel loop (fhook_testmod "loop N") calls the empty noinline
# fhook_testmod_nop() N times; each mechanism hooks it in turn and the
# loop's ns per call is compared with the loop unhooked.  One vCPU: what
# the consumer (fhook reading its rings, cat trace_pipe for ftrace) does
# while the loop runs is part of the figure, for fhook and its peers
# alike; fhook's output goes to /dev/null.  Each figure is the median of
# REPEATS loops.
. /fhook/config
PATH=/fhook/bin:$PATH
T=/sys/kernel/tracing
TH=/proc/fhook_testmod_hooks
F=fhook_testmod_nop
N=${FHOOK_TEST_BENCH_CALLS:-1000000}
R=${FHOOK_TEST_BENCH_REPEATS:-3}
LAST=$(($(nproc) - 1))
base=0

# one loop: ns for N calls
loop_ns() {
	taskset -c 0 sh -c "echo loop $N > $TH"
	sed -n 's/^loop n [0-9]* ns \([0-9]*\)/\1/p' $TH
}

# median of R loops, as ns per call with two decimals (x100 integers)
measure() {
	i=0
	: > /tmp/bench.ns
	while [ $i -lt "$R" ]; do
		loop_ns >> /tmp/bench.ns
		i=$((i + 1))
	done
	sort -n /tmp/bench.ns | awk -v n="$N" '{ v[NR] = $1 } END {
		m = v[int((NR + 1) / 2)]; lo = v[1]; hi = v[NR]
		printf "%d %d %d\n", m * 100 / n, lo * 100 / n, hi * 100 / n }'
}

attached_to() {
	grep -q "^$F " $T/enabled_functions 2>/dev/null ||
		grep -q " $F+0x0" /sys/kernel/debug/kprobes/list 2>/dev/null
}

row() {
	name=$1
	how=$2
	shift 2
	if [ $# -gt 0 ]; then
		taskset -c "$LAST" fhook "$@" > /dev/null 2>/tmp/bench.err &
		pid=$!
		t=0
		while ! attached_to && [ $t -lt 600 ]; do sleep 0.1; t=$((t + 1)); done
		attached_to || { echo "$name: did not attach: $(cat /tmp/bench.err)"; kill $pid; return; }
	fi
	set -- $(measure)
	if [ -n "${pid:-}" ]; then
		kill -INT $pid
		wait $pid
		pid=
	fi
	[ "$name" = none ] && base=$1
	awk -v n="$name" -v h="$how" -v m="$1" -v lo="$2" -v hi="$3" -v b="$base" 'BEGIN {
		printf "%-22s %9.2f %9.2f %9.2f %10.2f  %s\n", n, m / 100, lo / 100, hi / 100,
		       (m - b) / 100, h }'
}

echo "hook benchmark: $(uname -r), $(nproc) vCPUs, $N calls of $F per loop, median of $R loops"
echo "(one vCPU: the consumers' work counts; fhook's output to /dev/null)"
printf "%-22s %9s %9s %9s %10s  %s\n" mechanism ns/call min max overhead how
row none "nothing attached"
echo "$F" > $T/set_ftrace_filter
echo function > $T/current_tracer
echo 1 > $T/tracing_on
taskset -c "$LAST" cat $T/trace_pipe > /dev/null &
TP=$!
row ftrace-function "the kernel's function tracer, trace_pipe read"
kill $TP
wait $TP 2>/dev/null	# the tracer cannot change while trace_pipe is open
echo nop > $T/current_tracer
echo > $T/set_ftrace_filter
pid=
row ops-count "fhook count --via ops (ftrace_ops callback)" count --via ops $F --duration 3600
row direct-count "fhook count --via direct (counting trampoline)" count --via direct $F --duration 3600
row kprobe-count "fhook count --via kprobe" count --via kprobe $F --duration 3600
row ops-record "fhook trace --via ops (ring record)" trace --via ops $F -q --duration 3600
row direct-record "fhook trace --via direct (recording trampoline)" trace --via direct $F -q --duration 3600
row kprobe-record "fhook trace 'p $F' (kprobe record)" trace "p:bench/nop $F" -q --duration 3600
row hook-around "fhook hook --trace-around (IPMODIFY)" hook --trace-around $F -q --duration 3600
