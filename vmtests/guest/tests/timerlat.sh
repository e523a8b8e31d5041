# timerlat: fhook timerlat (the kernel's timerlat tracer from the module)
# against the kernel's own timer and scheduler events, which see the same
# timer: hrtimer_start gives its expiry, hrtimer_expire_entry the time the
# timer code took (`now`, read just before it calls fhook's handler), and
# sched_switch to fhook-tlat/1 (mono clock) the time the thread ran.
#  1. trace on CPU 1 at 1 ms with a CPU hog there: as many IRQ measures as
#     the events show firings of fhook's handler (within 2), consecutive
#     activation numbers; each IRQ latency at least the events' (now -
#     expires) and, but for a tenth (a quarter on the debug kernel), at
#     most 200 us more (the handler reads the clock after the timer code
#     and the event; under TCG the other vCPU can run in between), each
#     thread latency at least the events'
#     (switch - expires, whose clock prints whole microseconds: 1 us less
#     allowed), paired by activation number; every firing that finds the
#     thread asleep followed by a switch to it.
#  2. top and hist: the right number of activations for the time, the
#     thread later than the IRQ; --stop ends the run by itself with the
#     measure that crossed it; no thread outlives a run; a CPU taken
#     offline and back while it runs gets a new thread.
#  3. errors: bad options, and a CAP_PERFMON-only user (it needs
#     CAP_SYS_ADMIN: it runs real-time threads).
#  4. where the kernel has its own timerlat tracer (Debian's PREEMPT_RT
#     kernel): both at once on the same CPU give summaries of the same
#     shape and order of magnitude.
. /fhook/lib.sh

load_fhook
tracefs_reset
fhook-workload spin 600 1 &
HOG=$!
trap 'kill $HOG 2>/dev/null; echo 1 > /sys/devices/system/cpu/cpu1/online 2>/dev/null' EXIT

tlat_threads() { grep -l '^fhook-tlat/' /proc/[0-9]*/comm 2> /dev/null | wc -l; }
# json_num FILE KEY: the first "KEY":N in FILE
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -n 1 | cut -d: -f2; }

# 1. every measure on CPU 1, with the kernel's events
E=$T/events
echo 8192 > $T/buffer_size_kb
echo mono > $T/trace_clock
echo 'next_comm == "fhook-tlat/1" || prev_comm == "fhook-tlat/1"' > $E/sched/sched_switch/filter
for e in timer/hrtimer_start timer/hrtimer_expire_entry sched/sched_switch; do
	echo 1 > $E/$e/enable
done
run_fhook $D/trace timerlat trace --format json --cpu 1 -d 2
for e in timer/hrtimer_start timer/hrtimer_expire_entry sched/sched_switch; do
	echo 0 > $E/$e/enable
done
echo 0 > $E/sched/sched_switch/filter
expect_eq "$RC" 0 "fhook timerlat trace exit code"
grep -E 'function=fhook_tlat_irq|sched_switch:' $T/trace > $D/ref.txt
echo local > $T/trace_clock
[ "$(tlat_threads)" = 0 ] || fail "fhook-tlat threads outlived the run: $(tlat_threads)"
# the kernel's view: firing n's (now - expires), and the thread's
# switch-in after it minus the expiry (ns), by activation number (fhook's
# seqnum: the firings so far; the events were on before fhook started).
# A firing that finds the thread still on the CPU (late, it armed a timer
# already due) has no switch-in: "running n"; one that finds it asleep
# and no switch-in before the next firing: "missed n".
awk '
	function field(name,   i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
	{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { sub(/:$/, "", $i); split($i, t, "."); ts = t[1] * 1000000000 + t[2] * 1000 } }
	/hrtimer_start:/ { ex = field("expires") }
	/hrtimer_expire_entry:/ && ex != "" {
		if (fired) printf "missed %d\n", n
		n++; printf "irq %d %d\n", n, field("now") - ex
		if (on) printf "running %d\n", n; else fired = 1
	}
	/sched_switch:/ && field("prev_comm") == "fhook-tlat/1" { on = 0 }
	/sched_switch:/ && field("next_comm") == "fhook-tlat/1" { on = 1; if (fired) printf "thread %d %d\n", n, ts - ex; fired = 0 }
' $D/ref.txt > $D/ref.lat
# fhook's: "context seqnum latency"
sed -n 's/.*"seqnum":\([0-9]*\),"context":"\([a-z]*\)","latency_ns":\([0-9]*\).*/\2 \1 \3/p' $D/trace.out > $D/fhook.lat
ni=$(grep -c '^irq' $D/fhook.lat) nk=$(grep -c '^irq' $D/ref.lat)
log "IRQ measures: fhook $ni, kernel's hrtimer events $nk; thread: fhook $(grep -c '^thread' $D/fhook.lat), switches after a firing $(grep -c '^thread' $D/ref.lat), firings with the thread still running $(grep -c '^running' $D/ref.lat)"
[ "$ni" -ge 500 ] || fail "only $ni IRQ measures in 2 s at 1 ms"
[ $((ni - nk)) -le 2 ] && [ $((nk - ni)) -le 2 ] || fail "$ni IRQ measures, the kernel fired the handler $nk times"
# activations numbered 1, 2, 3... on the CPU
grep '^irq' $D/fhook.lat | awk '$2 != NR { print "activation " NR " numbered " $2; exit 1 }' || fail "IRQ activations not consecutive"
grep -v '"cpu":1,' $D/trace.out | grep -q . && fail "a measure from another CPU than 1: $(grep -v '"cpu":1,' $D/trace.out | head -n 1)"
# cmp_lat CONTEXT MAX_EXTRA_NS SLACK_NS: fhook's measure minus the
# events' of the same activation; prints "pairs max below above"
cmp_lat() {
	awk -v c="$1" -v extra="$2" -v slack="$3" '
		FNR == NR { if ($1 == c) ref[$2] = $3; next }
		$1 == c && ($2 in ref) { d = $3 - ref[$2]; n++; if (d > m) m = d; if (d < -slack) lo++; if (d > extra) hi++ }
		END { print n + 0, m + 0, lo + 0, hi + 0 }' $D/ref.lat $D/fhook.lat
}
# IRQ: never before the timer code's now (the events' clock and fhook's
# are both ktime_get()); after it by at most 200 us but for a tenth (under
# TCG the other vCPU's time slice can run in between: up to 1 ms, 6 % of
# the measures, seen on the debug kernel), a quarter on the debug kernel,
# where KASAN makes the stretch between the two reads (the event written
# into the kernel's buffer) longer: 240 of 1,359, up to 3.2 ms, once
# (2026-12-06)
set -- $(cmp_lat irq 200000 0)
log "IRQ: $1 pairs, fhook at most $2 ns later than the events' now - expires; $3 earlier, $4 over 200 us later"
[ "$3" = 0 ] || fail "$3 of $1 IRQ latencies below the kernel's (now - expires)"
[ "$(($4 * $(pick 10 4)))" -le "$1" ] || fail "$4 of $1 IRQ latencies over 200 us above the kernel's (now - expires)"
# thread: never before the switch to it (whose time prints whole us)
set -- $(cmp_lat thread 1000000000 1000)
log "thread: $1 pairs, $3 below the switch's time - expires"
# every firing that found the thread asleep switched to it before the
# next (the last one's switch may be cut by the end of the events), and
# fhook has a thread measure for each of those activations
missed=$(grep -c '^missed' $D/ref.lat)
[ "$missed" = 0 ] || fail "$missed firings found fhook-tlat/1 asleep and no switch to it followed: $(grep '^missed' $D/ref.lat | head -n 3 | tr '\n' ' ')"
nsw=$(grep -c '^thread' $D/ref.lat) nrun=$(grep -c '^running' $D/ref.lat)
[ $((nsw + nrun)) -ge $((nk - 1)) ] || fail "of $nk firings $nsw switched to the thread and $nrun found it running"
[ "$1" -ge $((nsw - 2)) ] || fail "only $1 of $nsw activations with a switch have fhook's thread measure"
[ "$3" = 0 ] || fail "$3 of $1 thread latencies below the kernel's switch time - expiry"

# --record, in a run of its own (the file's writing is not in the
# comparison's timing): every measure in the file, printed again as the
# run printed them
run_fhook $D/rec timerlat trace --format json --cpu 0 --record $D/rec.fhk -d 0.5
fhook report -q --format json $D/rec.fhk > $D/rec.rep 2>&1 || fail "fhook report of timerlat's file: $(head -n 2 $D/rec.rep)"
[ -s $D/rec.out ] && cmp -s $D/rec.out $D/rec.rep || fail "fhook report of timerlat's file differs: $(diff $D/rec.out $D/rec.rep | head -n 4)"

# 2. top and hist
run_fhook $D/top timerlat --format json --cpu 0 -d 2 --interval 10
expect_eq "$RC" 0 "fhook timerlat top exit code"
last=$(tail -n 1 $D/top.out)
echo "$last" > $D/top.json
irq_count=$(json_num $D/top.json count)
log "top: $last"
[ "$irq_count" -ge 500 ] && [ "$irq_count" -le 2100 ] || fail "top counted $irq_count activations in 2 s at 1 ms"
awk -v s="$last" 'BEGIN {
	split(s, a, "\"thread\":"); match(a[1], /"avg_ns":[0-9]+/); i = substr(a[1], RSTART + 9, RLENGTH - 9)
	match(a[2], /"avg_ns":[0-9]+/); t = substr(a[2], RSTART + 9, RLENGTH - 9)
	exit !(t + 0 > i + 0) }' || fail "thread average not above the IRQ average: $last"
run_fhook $D/hist timerlat hist --cpu 0 -d 1 --bucket-size 2
expect_eq "$RC" 0 "fhook timerlat hist exit code"
sed 's/^/#   /' $D/hist.out | head -n 6
sed 's/^/#   /' $D/hist.out | tail -n 5
grep -q '^# Time unit is us, buckets of 2$' $D/hist.out || fail "hist without its unit line"
set -- $(grep '^count:' $D/hist.out)
# (the run may end between the last firing and its thread)
[ "$2" -ge 300 ] && [ "$3" -le "$2" ] && [ "$3" -ge $(($2 - 1)) ] || fail "hist counts: $*"
# --stop: the first thread latency of 1 us or more ends the run
run_fhook $D/stop timerlat trace --thread 1 --cpu 0 -d 30
expect_eq "$RC" 0 "fhook timerlat --thread 1 exit code"
grep -q '^fhook: stopped: thread latency [0-9]* ns on CPU 0' $D/stop.err || fail "no stop note: $(cat $D/stop.err)"
tail -n 1 $D/stop.out | grep -q 'context thread timer_latency .* ns (stop)$' || fail "the last line is not the stop: $(tail -n 1 $D/stop.out)"
grep -q '^# tracer: timerlat$' $D/stop.out || fail "trace without its header"
sed 's/^/#   /' $D/stop.out | tail -n 2
[ "$(tlat_threads)" = 0 ] || fail "fhook-tlat threads outlived a stop"
# a CPU offline and back while every CPU is measured: its thread stops,
# and a new one starts when it is back (activations numbered from 1 again);
# ended a second after the CPU is back (the hotplug itself took seconds
# on the debug kernel: a fixed duration ended before it)
fhook timerlat trace --format json -q -d 120 > $D/hp.out 2> $D/hp.err &
FH=$!
sleep 1
echo 0 > /sys/devices/system/cpu/cpu1/online || fail "CPU 1 would not go offline"
sleep 1
echo 1 > /sys/devices/system/cpu/cpu1/online || fail "CPU 1 would not come back"
sleep 1
kill -INT $FH
wait $FH
expect_eq "$?" 0 "fhook timerlat across a CPU hotplug exit code"
starts0=$(grep -c '"cpu":0,.*"seqnum":1,"context":"irq"' $D/hp.out)
starts1=$(grep -c '"cpu":1,.*"seqnum":1,"context":"irq"' $D/hp.out)
log "across the hotplug: CPU 0's thread started $starts0 time(s), CPU 1's $starts1; $(grep -c '"cpu":1,' $D/hp.out) measures on CPU 1"
[ "$starts0" = 1 ] && [ "$starts1" = 2 ] || fail "CPU 0's thread started $starts0 times, CPU 1's $starts1 (1 and 2 expected)"
no_tlat() { [ "$(tlat_threads)" = 0 ]; }
wait_for 10 no_tlat || fail "fhook-tlat threads outlived the hotplug run"

# 3. errors
bad_options $D/bad timerlat "--period 99 -d 1" "--period 1000001 -d 1" "--priority 100 -d 1" "--priority r:5 -d 1" "--stop 0 -d 1" "bogus -d 1" "top --threshold 5 -d 1" "--entries 5 -d 1"
as_perfmon $D/perfmon timerlat -d 1
[ "$RC" != 0 ] || fail "a CAP_PERFMON-only user ran timerlat"
grep -q 'timerlat tracer needs CAP_SYS_ADMIN' $D/perfmon.err || fail "the refusal does not name CAP_SYS_ADMIN: $(cat $D/perfmon.err)"
[ "$(tlat_threads)" = 0 ] || fail "fhook-tlat threads after a refused run"

# 4. the kernel's own timerlat, where this kernel has it, as the reference
if ! grep -qw timerlat $T/available_tracers; then
	pass "fhook timerlat agrees with the hrtimer and sched_switch events ($T/available_tracers has no timerlat)"
fi
# both at once on CPU 1 (the host's load, which decides latencies under
# TCG, is then the same for both; each one's timer and thread cost the
# other a few microseconds)
echo 1 > $T/osnoise/cpus
echo 1000 > $T/osnoise/timerlat_period_us
echo timerlat > $T/current_tracer
run_fhook $D/ref timerlat --format json --cpu 1 -d 2 --interval 10
# (read before the tracer changes: a new tracer empties the buffer)
echo 0 > $T/tracing_on
expect_eq "$RC" 0 "fhook timerlat top exit code (beside the kernel's)"
# count avg max of each context, in ns
awk '/context +irq timer_latency/ { i++; is += $(NF-1); if ($(NF-1) > im) im = $(NF-1) }
	/context +thread timer_latency/ { t++; ts += $(NF-1); if ($(NF-1) > tm) tm = $(NF-1) }
	END { printf "%d %d %d %d %d %d\n", i, i ? is / i : 0, im, t, t ? ts / t : 0, tm }' $T/trace > $D/kernel.sum
grep -m 2 timer_latency $T/trace | sed 's/^/#   /'
echo nop > $T/current_tracer
echo 1 > $T/tracing_on
set -- $(cat $D/kernel.sum)
log "the kernel's timerlat on CPU 1 meanwhile: irq $1 measures avg $2 max $3 ns; thread $4 avg $5 max $6 ns"
KI=$1 KIA=$2 KT=$4 KTA=$5
tail -n 1 $D/ref.out > $D/ref.json
log "fhook: $(cat $D/ref.json)"
FI=$(json_num $D/ref.json count)
FIA=$(grep -o '"avg_ns":[0-9]*' $D/ref.json | head -n 1 | cut -d: -f2)
FTA=$(grep -o '"thread":{"count":[0-9]*,"cur_ns":[0-9]*,"min_ns":[0-9]*,"avg_ns":[0-9]*' $D/ref.json | head -n 1 | sed 's/.*://')
# same shape: activations for at least a quarter of the periods in both
# (under load TCG skips periods), within a factor 3; the thread after
# the IRQ in both; same order of magnitude: averages within a factor 4
# (+ 20 us: a few microseconds each under TCG); the IRQ averages + 2 ms:
# under TCG one run's timer interrupts can all wait for the other vCPU's
# time slice (2026-12-06: the kernel's IRQ average 1,611 us against
# fhook's 281 us, thread averages 1,676 and 1,441 us; part 1 compares
# fhook's IRQ measures with the timer's own events one by one)
awk -v ki="$KI" -v fi="$FI" -v kia="$KIA" -v fia="$FIA" -v kta="$KTA" -v fta="$FTA" 'BEGIN {
	ok = ki > 500 && fi > 500 && fi < 3 * ki && ki < 3 * fi
	ok = ok && kta > kia && fta > fia
	ok = ok && fia <= 4 * kia + 2000000 && kia <= 4 * fia + 2000000
	ok = ok && fta <= 4 * kta + 20000 && kta <= 4 * fta + 20000
	exit !ok }' || fail "fhook (irq $FI avg $FIA, thread avg $FTA ns) and the kernel's timerlat (irq $KI avg $KIA, thread avg $KTA ns) disagree"
pass "fhook timerlat agrees with the hrtimer/sched_switch events and with the kernel's timerlat (irq avg $FIA vs $KIA ns, thread avg $FTA vs $KTA ns)"
