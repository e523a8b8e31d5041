# hook_around: --trace-around calls the original through fhook's
# trampoline and records entry fields, return value and duration: values
# equal what fhook_testmod computes, 8-argument calls (two on the stack)
# arrive intact; unhooking while 2 vCPUs hammer the function and a task
# sleeps inside it never crashes, and the module stays until the sleeper
# has returned (rmmod refused meanwhile).
. /fhook/lib.sh

TH=/proc/fhook_testmod_hooks
load_fhook
has_feature hook || skip "this kernel's ftrace cannot change a call's registers: no hooks (docs/arm64.md)"
load_workmod
tracefs_reset
echo reset > $TH

run_fhook $D/ar hook --trace-around fhook_testmod_ret 'i=$arg1:u64' -- sh -c "echo ret 100 > $TH"
expect_eq "$RC" 0 "--trace-around exit code"
head -n 3 $D/ar.out | sed 's/^/#   /'
expect_eq "$(wc -l < $D/ar.out)" 100 "trace-around records"
bad=$(sed -n 's/.*fhook_testmod_ret) i=\([0-9]*\) ret=\([0-9]*\) duration=[0-9]*ns$/\1 \2/p' $D/ar.out |
	awk '$2 != 2 * $1 + 1 { n++ } END { print n + 0 }')
expect_eq "$(grep -c 'duration=[0-9]*ns$' $D/ar.out)" 100 "records with a duration"
expect_eq "$bad" 0 "records whose return value is not 2i+1"
expect_eq "$(sed -n 's/^ret normal \([0-9]*\).*/\1/p' $TH)" 100 "the callers got the real values"

# eight arguments, two of them on the stack
run_fhook $D/a8 hook --trace-around fhook_testmod_args8 'a7=$arg7:s64' 'a8=$arg8:s64' \
	-- sh -c "echo args8 1000 > $TH"
expect_eq "$(sed -n 's/^args8 calls \([0-9]*\) bad \([0-9]*\)/\2/p' $TH)" 0 "8-argument calls with a wrong result"
bad=$(sed -n 's/.* a7=\([0-9]*\) a8=\([0-9]*\) ret=\([0-9]*\) .*/\1 \2 \3/p' $D/a8.out |
	awk '$2 != $1 + 1 || $3 != 36 * ($1 - 6) + 168 { n++ } END { print n + 0 }')
expect_eq "$(wc -l < $D/a8.out)" 1000 "args8 records"
expect_eq "$bad" 0 "args8 records with wrong stack arguments or return value"

# unhook under load: two CPUs call fhook_testmod_ret, one task sleeps
# inside fhook_testmod_sleep, the controller is killed
echo reset > $TH
taskset -c 0 sh -c "for i in 1 2 3 4 5 6; do echo ret 20000 > $TH; done" &
H0=$!
taskset -c 1 sh -c "for i in 1 2 3 4 5 6; do echo ret 20000 > $TH; done" &
H1=$!
for round in 1 2 3; do
	fhook hook --trace-around fhook_testmod_ret -q --duration 1 > /dev/null 2>&1 ||
		fail "trace-around under load, round $round"
done
fhook hook --trace-around fhook_testmod_sleep -q > $D/sl.out 2>&1 &
CTL=$!
wait_for 30 grep -q 'fhook_testmod_sleep.* I' $T/enabled_functions || fail "sleep hook not attached"
# (long enough that the sleeper is still inside when rmmod is tried, also
# when the unhook takes seconds: the debug kernel under load)
echo sleep "$(pick 6000 20000)" > $TH &
SLEEPER=$!
sleep 1
kill -9 $CTL
wait $CTL 2>/dev/null
wait_for 10 sh -c "! grep -q fhook_testmod_sleep $T/enabled_functions" || fail "hook outlived its controller"
dmesg | grep -q 'calls still inside the hooked function' || fail "no draining message"
kill -0 $SLEEPER 2>/dev/null || fail "the sleeper returned before rmmod could be tried (test timing: make it sleep longer)"
rmmod fhook 2> $D/rmmod.err && fail "rmmod succeeded while a task sleeps inside a removed hook"
log "rmmod meanwhile: $(cat $D/rmmod.err)"
wait $SLEEPER
wait $H0 $H1
expect_eq "$(sed -n 's/^sleep calls [0-9]* done \([0-9]*\)/\1/p' $TH)" 1 "the sleeper returned its value"
expect_eq "$(sed -n 's/^ret normal \([0-9]*\).*/\1/p' $TH)" 240000 "hammered calls that returned the right value"
wait_for 10 sh -c 'dmesg | grep -q "the last call has left a removed hook"' || fail "the removed hook was not freed"
wait_for 10 rmmod fhook || fail "rmmod fhook after the last call left"
pass "trace-around values and durations; 8 arguments; unhooked under load and with a sleeper inside"
