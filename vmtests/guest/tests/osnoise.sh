# osnoise: fhook osnoise (the kernel's osnoise tracer from the module)
# against the kernel's own interrupt, softirq and scheduler events on the
# same CPU, which see what fhook counts as interference.
#  1. trace on CPU 1 (periods of 200 ms sampled whole) with a CPU hog
#     there: the NMIs, interrupts (irq_handler_entry and the APIC vectors'
#     *_entry), softirqs (none counted on PREEMPT_RT, where they are
#     threads) and switches to other threads the events show inside
#     fhook's periods are fhook's counts (within 2 + 2 %, events within
#     20 us of a period's edge may count either way); each period's
#     noise is the sum of its gaps' records; the hog's time shows up as
#     thread noise (a fifth of the runtime at least: it gets half).
#  2. top and hist: periods and runtime for the time (every period but
#     the last, cut short, sampled at least the runtime), % available in
#     (0, 100]; hist counts the gaps; --stop ends the run by itself with
#     the gap that crossed it; no thread outlives a run.
#  3. errors: bad options, and a CAP_PERFMON-only user (it needs
#     CAP_SYS_ADMIN: its threads take the CPUs' time).
#  4. where the kernel has its own osnoise tracer (Debian's PREEMPT_RT
#     kernel): both at once on the same CPU count the same interrupts per
#     second (within a factor 1.5) and each sees the other as thread noise.
. /fhook/lib.sh

load_fhook
tracefs_reset
fhook-workload spin 600 1 &
HOG=$!
trap 'kill $HOG 2>/dev/null' EXIT

osn_threads() { grep -l '^fhook-osn/' /proc/[0-9]*/comm 2> /dev/null | wc -l; }
no_osn() { [ "$(osn_threads)" = 0 ]; }
# json_num FILE KEY: the first "KEY":N in FILE
json_num() { grep -o "\"$2\":[0-9.]*" "$1" | head -n 1 | cut -d: -f2; }
RT=0
rt_kernel && RT=1

# 1. CPU 1's periods and gaps, with the kernel's events
E=$T/events
echo 8192 > $T/buffer_size_kb
echo mono > $T/trace_clock
for e in irq/irq_handler_entry irq/softirq_entry irq_vectors sched/sched_switch nmi/nmi_handler; do
	[ -e $E/$e/enable ] && echo 1 > $E/$e/enable
done
# (-b: every gap record kept when the reader falls behind on a loaded host:
# 17,000 gaps of a slow kernel are over the default 1 MiB)
run_fhook $D/trace osnoise trace --format json --cpu 1 -d 2 --period 200000 -b 8192 --record $D/trace.fhk
for e in irq/irq_handler_entry irq/softirq_entry irq_vectors sched/sched_switch nmi/nmi_handler; do
	[ -e $E/$e/enable ] && echo 0 > $E/$e/enable
done
expect_eq "$RC" 0 "fhook osnoise trace exit code"
# --record: every period in the file, printed again as the run printed them
fhook report -q --format json $D/trace.fhk > $D/trace.rep 2>&1 || fail "fhook report of osnoise's file: $(head -n 2 $D/trace.rep)"
cmp -s $D/trace.out $D/trace.rep || fail "fhook report of osnoise's file differs: $(diff $D/trace.out $D/trace.rep | head -n 4)"
grep '\[001\]' $T/trace > $D/ref.txt
echo local > $T/trace_clock
no_osn || fail "fhook-osn threads outlived the run: $(osn_threads)"
grep -v '"cpu":1,' $D/trace.out | grep -q . && fail "a record from another CPU than 1: $(grep -v '"cpu":1,' $D/trace.out | head -n 1)"
grep '"event":"period"' $D/trace.out > $D/periods.json
np=$(grep -c . $D/periods.json)
[ "$np" -ge 3 ] || fail "only $np periods of 200 ms in 2 s"
# fhook's periods: "start end nmi irq softirq thread noise runtime"
# (ns), and its gaps: "start duration thread"
sed 's/.*"ts_ns":\([0-9]*\),"seqnum":[0-9]*,"runtime_ns":\([0-9]*\),"noise_ns":\([0-9]*\),"max_single_ns":[0-9]*,"hw":[0-9]*,"nmi":\([0-9]*\),"irq":\([0-9]*\),"softirq":\([0-9]*\),"thread":\([0-9]*\).*/\1 \2 \3 \4 \5 \6 \7/' $D/periods.json |
	awk '{ print $1 - $2, $1, $4, $5, $6, $7, $3, $2 }' > $D/fhook.per
sed -n 's/.*"event":"noise".*"start_ns":\([0-9]*\),"duration_ns":\([0-9]*\),.*"thread":\([0-9]*\),.*/\1 \2 \3/p' $D/trace.out > $D/fhook.gaps
# the events inside a period, by kind: "nmi irq softirq thread", those
# surely inside, then those near an edge as well (the trace prints whole
# microseconds, and its event and fhook's callback are not the same instant)
awk -v edge=20000 -v q=1 '
	FNR == NR { s[NR] = $1; e[NR] = $2; n = NR; next }
	{ ts = -1; for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { sub(/:$/, "", $i); split($i, t, "."); ts = t[1] * 1000000000 + t[2] * 1000; break } }
	ts < 0 { next }
	{ k = 0
	  if (/ nmi_handler:/) k = 1
	  else if (/ irq_handler_entry:/ || / [a-z_]*_entry: vector=/) k = 2
	  else if (/ softirq_entry:/) k = 3
	  else if (/ sched_switch:/ && !/next_comm=fhook-osn\/1 /) k = 4 }
	!k { next }
	# (the first period the event may be in: the periods follow each
	# other and so do the events, so it only moves forward; a scan of
	# every period for each event took 99 s on the debug kernel)
	{ if (ts < last) q = 1
	  last = ts
	  while (q <= n && ts > e[q] + edge) q++
	  if (q > n || ts + 1000 <= s[q] - edge) next
	  maybe[k]++
	  if (ts >= s[q] + edge && ts + 1000 <= e[q] - edge) sure[k]++ }
	END { for (k = 1; k <= 4; k++) printf "%d %d ", sure[k], maybe[k]; print "" }' $D/fhook.per $D/ref.txt > $D/ref.sum
set -- $(awk '{ n += $3; i += $4; s += $5; t += $6 } END { print n + 0, i + 0, s + 0, t + 0 }' $D/fhook.per)
FN=$1 FI=$2 FS=$3 FT=$4
set -- $(cat $D/ref.sum)
KN=$1 KN2=$2 KI=$3 KI2=$4 KS=$5 KS2=$6 KT=$7 KT2=$8
log "in $np periods: fhook counted nmi $FN irq $FI softirq $FS thread $FT; the kernel's events nmi $KN-$KN2 irq $KI-$KI2 softirq $KS-$KS2 thread $KT-$KT2 (inside-near an edge)"
# near F LO HI: F within [LO, HI], give or take 2 + 2 %
near() { awk -v f="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(f >= lo - 2 - lo / 50 && f <= hi + 2 + hi / 50) }'; }
near "$FN" "$KN" "$KN2" || fail "fhook counted $FN NMIs, the events show $KN-$KN2"
near "$FI" "$KI" "$KI2" || fail "fhook counted $FI interrupts, the events show $KI-$KI2"
[ "$KI" -ge "$np" ] || fail "only $KI interrupts in $np periods (the tick alone is more)"
if [ $RT = 1 ]; then
	[ "$FS" = 0 ] || fail "softirqs counted on PREEMPT_RT (they are threads): $FS"
else
	near "$FS" "$KS" "$KS2" || fail "fhook counted $FS softirqs, the events show $KS-$KS2"
fi
near "$FT" "$KT" "$KT2" || fail "fhook counted $FT switches to other threads, the events show $KT-$KT2"
# each period's noise is its gaps' (each recorded)
awk -v q=1 'FNR == NR { s[NR] = $1; e[NR] = $2; noise[NR] = $7; n = NR; next }
	{ if ($1 < last) q = 1
	  last = $1
	  while (q <= n && $1 >= e[q]) q++
	  if (q <= n && $1 >= s[q]) sum[q] += $2 }
	END { for (p = 1; p <= n; p++) if (sum[p] != noise[p]) { print "period " p ": noise " noise[p] ", gaps " sum[p] + 0; exit 1 } }' \
	$D/fhook.per $D/fhook.gaps || fail "a period's noise is not the sum of its gaps"
# the hog's half of CPU 1: gaps with a thread switch, a fifth of the runtime at least
set -- $(awk 'FNR == NR { r += $8; next } $3 > 0 { t += $2 } END { print t + 0, r + 0 }' $D/fhook.per $D/fhook.gaps)
log "thread noise: $1 ns of $2 ns sampled"
[ "$(($1 * 5))" -ge "$2" ] || fail "the CPU hog's time is not thread noise: $1 of $2 ns"
head -n 2 $D/trace.out | sed 's/^/#   /'

# 2. top and hist
run_fhook $D/top osnoise --format json -d 2 --period 100000 --interval 10
expect_eq "$RC" 0 "fhook osnoise top exit code"
tail -n 1 $D/top.out > $D/top.json
log "top: $(cat $D/top.json)"
awk -v s="$(cat $D/top.json)" 'BEGIN {
	n = split(s, c, "\"cpu\":"); if (n < 3) exit 1
	for (i = 2; i <= 3; i++) {
		match(c[i], /"periods":[0-9]+/); p = substr(c[i], RSTART + 10, RLENGTH - 10) + 0
		match(c[i], /"runtime_ns":[0-9]+/); r = substr(c[i], RSTART + 13, RLENGTH - 13) + 0
		match(c[i], /"available_percent":[0-9.]+/); a = substr(c[i], RSTART + 20, RLENGTH - 20) + 0
		# (the last period, cut short by the end of the run, may be shorter)
		if (p < 5 || r < (p - 1) * 100000000 || a <= 0 || a > 100) exit 1
	} }' || fail "top: periods, runtime or % available wrong for 2 s of 100 ms periods on 2 CPUs"
run_fhook $D/hist osnoise hist --cpu 0 -d 1 --period 100000
expect_eq "$RC" 0 "fhook osnoise hist exit code"
sed 's/^/#   /' $D/hist.out | head -n 5
sed 's/^/#   /' $D/hist.out | tail -n 5
grep -q '^# Time unit is us, buckets of 1$' $D/hist.out || fail "hist without its unit line"
set -- $(grep '^count:' $D/hist.out)
[ "${2:-0}" -ge 1 ] || fail "hist counted no gap on CPU 0 in 1 s: $*"
# --stop: the first gap of 1 us or more (past the 5 us threshold) ends the run
run_fhook $D/stop osnoise trace --stop 1 --cpu 0 -d 30
expect_eq "$RC" 0 "fhook osnoise --stop 1 exit code"
grep -q '^fhook: stopped: a single noise of [0-9]* ns on CPU 0' $D/stop.err || fail "no stop note: $(cat $D/stop.err)"
tail -n 1 $D/stop.out | grep -q 'sample_threshold: .* (stop)$' || fail "the last line is not the stop: $(tail -n 1 $D/stop.out)"
grep -q '^# tracer: osnoise$' $D/stop.out || fail "trace without its header"
sed 's/^/#   /' $D/stop.out | tail -n 2
wait_for 10 no_osn || fail "fhook-osn threads outlived a stop"

# 3. errors
bad_options $D/bad osnoise "--period 99 -d 1" "--period 10000001 -d 1" "--runtime 99 -d 1" "--period 1000 --runtime 2000 -d 1" "--threshold 0 -d 1" "--priority 100 -d 1" "--priority 1 -d 1" "bogus -d 1" "--entries 5 -d 1"
as_perfmon $D/perfmon osnoise -d 1
[ "$RC" != 0 ] || fail "a CAP_PERFMON-only user ran osnoise"
grep -q 'osnoise tracer needs CAP_SYS_ADMIN' $D/perfmon.err || fail "the refusal does not name CAP_SYS_ADMIN: $(cat $D/perfmon.err)"
no_osn || fail "fhook-osn threads after a refused run"

# 4. the kernel's own osnoise, where this kernel has it, as the reference
if ! grep -qw osnoise $T/available_tracers; then
	pass "fhook osnoise agrees with the irq, softirq, nmi and sched_switch events ($T/available_tracers has no osnoise)"
fi
kill $HOG
# both at once on CPU 1, 100 ms periods sampled whole: the same interrupts
echo 1 > $T/osnoise/cpus
# (the runtime first: a period below the runtime is refused)
echo 100000 > $T/osnoise/runtime_us
echo 100000 > $T/osnoise/period_us
echo osnoise > $T/current_tracer
run_fhook $D/ref osnoise --format json --cpu 1 -d 2 --period 100000 --interval 10
# (read before the tracer changes: a new tracer empties the buffer)
echo 0 > $T/tracing_on
expect_eq "$RC" 0 "fhook osnoise top exit code (beside the kernel's)"
# the kernel's lines: ... RUNTIME NOISE %AVAIL MAX HW NMI IRQ SIRQ THREAD
awk '!/^#/ && $NF ~ /^[0-9]+$/ && NF >= 13 && $(NF-6) ~ /^[0-9]+\.[0-9]+$/ { n++; r += $(NF-8); no += $(NF-7); i += $(NF-2); t += $NF }
	END { printf "%d %d %d %d %d\n", n, r, no, i, t }' $T/trace > $D/kernel.sum
grep -m 2 '\[001\]' $T/trace | sed 's/^/#   /'
echo nop > $T/current_tracer
echo 1 > $T/tracing_on
set -- $(cat $D/kernel.sum)
log "the kernel's osnoise on CPU 1 meanwhile: $1 periods, runtime $2 us, noise $3 us, irq $4, thread $5"
KP=$1 KR=$2 KI=$4 KT=$5
tail -n 1 $D/ref.out > $D/ref.json
log "fhook: $(cat $D/ref.json)"
FR=$(($(json_num $D/ref.json runtime_ns) / 1000))
FI=$(json_num $D/ref.json irq)
FT=$(json_num $D/ref.json thread)
# interrupts per second of runtime within a factor 1.5; the other's
# thread at least once a period in both
awk -v kp="$KP" -v kr="$KR" -v ki="$KI" -v kt="$KT" -v fr="$FR" -v fi="$FI" -v ft="$FT" 'BEGIN {
	if (kp < 5 || kr <= 0 || fr <= 0) exit 1
	k = ki / kr; f = fi / fr
	exit !(f <= 1.5 * k && k <= 1.5 * f && kt >= kp && ft >= kp) }' ||
	fail "fhook (irq $FI, thread $FT in $FR us) and the kernel's osnoise (irq $KI, thread $KT in $KR us) disagree"
pass "fhook osnoise agrees with the kernel's events and with the kernel's osnoise (irq $FI in $FR us vs $KI in $KR us)"
