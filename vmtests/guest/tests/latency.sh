# latency: fhook latency's in-module histograms (a direct trampoline that
# runs the body).  Counts equal the calls a workload makes, exactly, on the
# unfiltered path and on the filtered one (a COMMAND among other callers);
# return values and stack arguments reach the callers intact; durations
# agree with the caller's own clock; the kernel's function tracer can share
# the function; vfs_read is timed as often as fhook count counts it; and a
# task sleeping inside keeps the module until it has returned.
. /fhook/lib.sh

TH=/proc/fhook_testmod_hooks
load_fhook
has_feature latency || skip "no latency probes on this kernel (no direct calls: docs/arm64.md)"
load_workmod
tracefs_reset
echo reset > $TH

count_of() { sed -n 's/.*count: \([0-9]*\).*/\1/p' "$1" | head -n 1; }
attached() { wait_for 30 grep -q "^$1 .* D" $T/enabled_functions; }
# ret_calls PREFIX N: time fhook_testmod_ret (every caller) while N calls
# are made, until SIGINT; RC is fhook's exit code
ret_calls() {
	fhook latency fhook_testmod_ret > "$1.out" 2> "$1.err" &
	CTL=$!
	attached fhook_testmod_ret || fail "latency probe not attached: $(cat "$1.err")"
	grep "fhook_testmod_ret" $T/enabled_functions | sed 's/^/#   /'
	echo ret "$2" > $TH
	kill -INT $CTL
	wait $CTL
	RC=$?
}

# 1. unfiltered: every caller, the fast path; return values intact
ret_calls $D/ret 5000
expect_eq "$RC" 0 "fhook latency exit code"
sed 's/^/#   /' $D/ret.out
expect_eq "$(count_of $D/ret.out)" 5000 "calls timed (unfiltered)"
expect_eq "$(sed -n 's/^ret normal \([0-9]*\).*/\1/p' $TH)" 5000 "callers got the real return values"
expect_eq "$(sed -n 's/^ret normal [0-9]* alt [0-9]* injected \([0-9]*\).*/\1/p' $TH)" 0 \
	"calls whose return value changed"

# 2. eight arguments, two on the stack, copied for the body
run_fhook $D/a8 latency fhook_testmod_args8 -- sh -c "echo args8 3000 > $TH"
expect_eq "$RC" 0 "latency args8 exit code"
expect_eq "$(count_of $D/a8.out)" 3000 "args8 calls timed"
expect_eq "$(sed -n 's/^args8 calls \([0-9]*\) bad.*/\1/p' $TH)" 3000 "8-argument calls"
expect_eq "$(sed -n 's/^args8 calls [0-9]* bad \([0-9]*\)/\1/p' $TH)" 0 \
	"8-argument calls with a wrong result"

# 3. filtered: only the COMMAND's calls, while another process calls too
echo reset > $TH
sh -c "while :; do echo ret 200 > $TH; done" &
NOISE=$!
run_fhook $D/flt latency fhook_testmod_ret -- sh -c "echo ret 700 > $TH"
kill $NOISE
wait $NOISE 2>/dev/null
expect_eq "$(count_of $D/flt.out)" 700 "calls timed for the COMMAND only"
noise=$(sed -n 's/^ret normal \([0-9]*\).*/\1/p' $TH)
[ "$noise" -gt 700 ] || fail "the other process made no calls meanwhile ($noise)"
log "other caller's calls meanwhile: $((noise - 700))"

# 3b. a task filter in the kernel: this shell's calls only, or none
for f in "common_pid == $$" 'comm == "nomatch_xyz"'; do
	fhook latency --filter "$f" fhook_testmod_ret > $D/tf.out 2> $D/tf.err &
	CTL=$!
	attached fhook_testmod_ret || fail "filtered probe not attached: $(cat $D/tf.err)"
	echo ret 300 > $TH
	kill -INT $CTL
	wait $CTL
	want=300
	[ "$f" = "common_pid == $$" ] || want=0
	expect_eq "$(count_of $D/tf.out)" $want "calls timed with --filter '$f'"
done

# 4. durations against the caller's clock (testmod times each call)
echo reset > $TH
run_fhook $D/sl latency --format json fhook_testmod_sleep \
	-- sh -c "echo sleep 30 > $TH; echo sleep 60 > $TH; echo sleep 90 > $TH"
cat $D/sl.out | sed 's/^/#   /'
expect_eq "$(sed -n 's/.*"count":\([0-9]*\),"sum_ns".*/\1/p' $D/sl.out)" 3 "sleeps timed"
sum=$(sed -n 's/.*"sum_ns":\([0-9]*\),.*/\1/p' $D/sl.out)
ref=$(sed -n 's/^sleep ns \([0-9]*\)/\1/p' $TH)
log "fhook: $sum ns in the function; the caller's clock: $ref ns around the calls"
[ "$sum" -ge 180000000 ] || fail "3 sleeps of 30+60+90 ms took $sum ns by fhook's clock"
[ "$sum" -le "$ref" ] || fail "fhook's time inside ($sum) exceeds the caller's around ($ref)"
[ $((ref - sum)) -le $((3 * $(pick 1000000 10000000))) ] ||
	fail "fhook's time inside ($sum) is far below the caller's ($ref)"
# every sleep is in a bucket at or above [2^24, 2^25) ns: 30 ms and more
low=$(sed 's/},{/}\n{/g' $D/sl.out | sed -n 's/.*"lo":\([0-9]*\),"hi".*/\1/p' | sort -n | head -n 1)
[ "$low" -ge 16777216 ] || fail "a sleep of 30 ms or more in a bucket from $low ns"

# 5. the function tracer on the same function: both see every call
echo reset > $TH
echo fhook_testmod_ret > $T/set_ftrace_filter
echo 8192 > $T/buffer_size_kb
echo function > $T/current_tracer
echo > $T/trace
ret_calls $D/sh 2000
expect_eq "$RC" 0 "fhook latency beside the function tracer: exit code"
cat $T/trace > $D/sh.trace	# (changing the tracer empties the buffer)
echo nop > $T/current_tracer
expect_eq "$(count_of $D/sh.out)" 2000 "calls timed beside the function tracer"
expect_eq "$(grep -c 'fhook_testmod_ret <-' $D/sh.trace)" 2000 "calls the function tracer saw"
expect_eq "$(sed -n 's/^ret normal \([0-9]*\).*/\1/p' $TH)" 2000 "return values beside the tracer"
tracefs_reset

# 5b. a kretprobe on the same function takes over the caller's return
# address, which our trampoline returns through: both see every call
echo reset > $TH
echo 'r:fhlat/r fhook_testmod_ret ret=$retval:u64' >> $T/kprobe_events
echo 1 > $T/events/fhlat/r/enable
echo > $T/trace
ret_calls $D/kr 1000
expect_eq "$RC" 0 "fhook latency beside a kretprobe: exit code"
cat $T/trace > $D/kr.trace
echo 0 > $T/events/fhlat/r/enable
echo '-:fhlat/r' >> $T/kprobe_events
expect_eq "$(count_of $D/kr.out)" 1000 "calls timed beside a kretprobe"
expect_eq "$(grep -c 'r: (' $D/kr.trace)" 1000 "returns the kretprobe saw"
expect_eq "$(sed -n 's/^ret normal \([0-9]*\).*/\1/p' $TH)" 1000 "return values beside the kretprobe"

# 6. a kernel function: as many timed calls as fhook count counts
run_fhook $D/vc count vfs_read -- dd if=/dev/zero of=/dev/null bs=1 count=3000
reads=$(awk '$NF == "vfs_read" { print $1 }' $D/vc.out)
run_fhook $D/vl latency vfs_read -- dd if=/dev/zero of=/dev/null bs=1 count=3000
expect_eq "$RC" 0 "latency vfs_read exit code"
[ "${reads:-0}" -ge 3000 ] || fail "fhook count saw ${reads:-no} vfs_read calls: $(cat $D/vc.out)"
expect_eq "$(count_of $D/vl.out)" "$reads" "vfs_read calls timed = counted"

# 7. bad input: one line, non-zero exit, nothing attached
run_fhook $D/e1 latency do_exit
[ "$RC" -ne 0 ] && grep -q "may never return" $D/e1.err || fail "do_exit accepted (exit $RC)"
run_fhook $D/e2 latency no_such_function_xyz
[ "$RC" -ne 0 ] && [ "$(wc -l < $D/e2.err)" -eq 1 ] || fail "unknown function: exit $RC"
run_fhook $D/e3 latency 'p:x vfs_read'
[ "$RC" -ne 0 ] && grep -q "takes functions" $D/e3.err || fail "probe definition accepted"
grep -q "fhook" $T/enabled_functions && fail "something stayed attached: $(cat $T/enabled_functions)"

# 8. removed while a task sleeps inside: the module stays until it returns
echo reset > $TH
fhook latency -q fhook_testmod_sleep > $D/in.out 2>&1 &
CTL=$!
attached fhook_testmod_sleep || fail "sleep probe not attached"
echo sleep "$(pick 6000 20000)" > $TH &
SLEEPER=$!
sleep 1
kill -9 $CTL
wait $CTL 2>/dev/null
wait_for 10 sh -c "! grep -q fhook_testmod_sleep $T/enabled_functions" ||
	fail "latency probe outlived its controller"
dmesg | grep -q 'calls still inside the probed function' || fail "no draining message"
kill -0 $SLEEPER 2>/dev/null || fail "the sleeper returned before rmmod could be tried"
rmmod fhook 2> $D/rmmod.err && fail "rmmod succeeded while a task sleeps inside a removed probe"
log "rmmod meanwhile: $(cat $D/rmmod.err)"
wait $SLEEPER
expect_eq "$(sed -n 's/^sleep calls [0-9]* done \([0-9]*\)/\1/p' $TH)" 1 "the sleeper returned its value"
wait_for 10 sh -c 'dmesg | grep -q "the last call has left a removed probe"' ||
	fail "the removed probe was not freed"
wait_for 10 rmmod fhook || fail "rmmod fhook after the last call left"
pass "exact counts (fast and filtered paths), values, stack arguments, durations vs the caller's clock, beside the function tracer, vfs_read = count, bad input, removal with a sleeper inside"
