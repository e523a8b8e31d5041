# exit_inside: calls a task never returns from (a kernel thread exits
# inside fhook_testmod_die(), three times) are counted out when the task
# exits: a latency probe and a trace-around hook on the function show
# nobody inside and go with their command, a module's hook on it is
# removed without waiting, and fhook unloads at once after them.  Before
# 2026-12-03 each such call stayed counted inside for good: the probe was
# kept draining and `rmmod fhook` refused until reboot, the module's rmmod
# hung.  The calls are the workload's: "die calls" counts them.  Where the
# kernel gives hooks no full registers (arm64 6.12) the hook parts skip and
# the sleeper of part 5 is inside a second latency probe.
. /fhook/lib.sh

TH=/proc/fhook_testmod_hooks
load_fhook
has_feature latency || skip "no latency probes on this kernel (no direct calls)"
load_workmod
tracefs_reset
dmesg -c > /dev/null

# die N: N threads exit inside the function; wait until fhook has counted
# out all N (one line per exit) and until the workload says N calls began
exits_seen() { dmesg | grep -c 'fhook: fhook-die\[[0-9]*\] exits inside 1 call(s) through'; }
die() {
	_before=$(exits_seen)
	echo reset > $TH
	echo die "$1" > $TH || fail "die $1: $(dmesg | tail -n 3)"
	expect_eq "$(sed -n 's/^die calls \([0-9]*\)/\1/p' $TH)" "$1" "calls of fhook_testmod_die"
	wait_for 30 sh -c "[ \$(dmesg | grep -c 'fhook: fhook-die\[[0-9]*\] exits inside 1 call(s) through') -ge $((_before + $1)) ]" ||
		fail "$1 exits inside the function, $(($(exits_seen) - _before)) counted out: $(dmesg | tail -n 3)"
}

# 1. a latency probe: no call completed, nobody left inside
fhook latency fhook_testmod_die > $D/lat.out 2> $D/lat.err &
CTL=$!
wait_for 30 grep -q '^fhook_testmod_die .* D' $T/enabled_functions || fail "latency probe not attached: $(cat $D/lat.err)"
die 3
kill -INT $CTL
wait $CTL
expect_eq "$?" 0 "fhook latency exit code"
sed 's/^/#   /' $D/lat.out
grep -q 'inside now' $D/lat.out && fail "calls of exited threads still counted inside: $(grep 'inside now' $D/lat.out)"
dmesg | grep -q 'calls still inside the probed function' && fail "the probe was left draining: $(dmesg | grep 'still inside')"

HOOKS=0
has_feature hook && HOOKS=1

# 2. a trace-around hook: the same, its slot freed at once
if [ $HOOKS = 1 ]; then
	fhook hook --trace-around fhook_testmod_die -q > $D/ar.out 2> $D/ar.err &
	CTL=$!
	wait_for 30 grep -q 'fhook_testmod_die.* I' $T/enabled_functions || fail "hook not attached: $(cat $D/ar.err)"
	die 3
	kill -INT $CTL
	wait $CTL
	expect_eq "$?" 0 "fhook hook --trace-around exit code"
	dmesg | grep -q 'calls still inside the hooked function' && fail "the hook was left draining: $(dmesg | grep 'still inside')"

	# 3. a module's hook (the khook API): rmmod returns, its exit handler never ran
	insmod /fhook/fhook_khook_test.ko mode=die || fail "insmod fhook_khook_test.ko mode=die"
	die 2
	P=/sys/module/fhook_khook_test/parameters
	expect_eq "$(cat $P/mod_calls)" 2 "entry handler calls"
	expect_eq "$(cat $P/exits)" 0 "exit handler calls (the function never returned)"
	rmmod fhook_khook_test 2> $D/rmmod.err &
	M=$!
	wait_for 20 sh -c "! kill -0 $M 2>/dev/null" ||
		fail "rmmod of the hooking module waits for calls that never return: $(dmesg | tail -n 2)"
	wait $M
	expect_eq "$?" 0 "rmmod fhook_khook_test ($(cat $D/rmmod.err))"
fi

# 4. a latency probe on the tracepoint's own function (reached once the
# tracepoint has two probes: fhook's and tracefs' event), below do_exit():
# its calls return, none is counted out (issue 41's closing review: each
# exit counted one out, and the probe could be freed with calls inside)
if grep -q '^__traceiter_sched_process_exit$' $T/available_filter_functions; then
	echo 1 > $T/events/sched/sched_process_exit/enable
	_before=$(exits_seen)
	fhook latency __traceiter_sched_process_exit > $D/tp.out 2> $D/tp.err &
	CTL=$!
	wait_for 30 grep -q '^__traceiter_sched_process_exit .* D' $T/enabled_functions ||
		fail "latency probe on __traceiter_sched_process_exit not attached: $(cat $D/tp.err)"
	for i in $(seq 20); do sh -c : ; done
	kill -INT $CTL
	wait $CTL
	expect_eq "$?" 0 "fhook latency __traceiter_sched_process_exit exit code"
	echo 0 > $T/events/sched/sched_process_exit/enable
	n=$(sed -n 's/.*count: \([0-9]*\).*/\1/p' $D/tp.out | head -n 1)
	[ "${n:-0}" -ge 20 ] || fail "calls of the tracepoint timed: ${n:-none} for 20 exits: $(cat $D/tp.out)"
	dmesg | grep 'exits inside' | grep -qv 'fhook-die' &&
		fail "calls below do_exit() counted out: $(dmesg | grep 'exits inside' | grep -v fhook-die | head -n 2)"
	expect_eq "$(exits_seen)" "$_before" "exits counted out meanwhile"
	tp="; the tracepoint's own calls ($n) timed, none counted out"
fi

# 5. exits with forged registers: a CAP_PERFMON user exits with the
# addresses of every byte of the trampolines (and of the call graph's
# return trampoline) in every register it can set, the stack pointer and
# (by jumping there) the instruction pointer, while a latency probe and a
# module's hook (or a latency probe) with a sleeper inside exist.  The walk follows
# return addresses only: nothing is counted out, the sleeper's call
# stays counted inside (issue 41's closing review forged such a frame
# through the first, marker-based walk)
ranges=$(grep '\[fhook\]$' /proc/kallsyms | sort | awk '
	{ if (prev != "" && prev != $1) print prev "-" $1; prev = "" }
	$3 ~ /^fhook_(around_common|lat_common|graph_return)$/ { prev = $1 }')
expect_eq "$(echo "$ranges" | wc -w)" 3 "trampoline ranges found in kallsyms ($ranges)"
_before=$(exits_seen)
echo reset > $TH
if [ $HOOKS = 1 ]; then
	insmod /fhook/fhook_khook_test.ko mode=sleep || fail "insmod fhook_khook_test.ko mode=sleep"
else
	fhook latency fhook_testmod_sleep > $D/sl.out 2> $D/sl.err &
	SL=$!
	wait_for 30 grep -q '^fhook_testmod_sleep .* D' $T/enabled_functions ||
		fail "latency probe on fhook_testmod_sleep not attached: $(cat $D/sl.err)"
fi
# (the debug kernel: 45 s; 24 s ran out there once under CI's two guests,
# before the forged exits were checked)
echo sleep "$(pick 8000 45000)" > $TH &
S=$!
[ $HOOKS = 0 ] || wait_for 10 sh -c "fhook status 2>/dev/null | grep fhook_testmod_sleep | grep -q 'inside=1'" ||
	fail "the sleeper never showed inside the hook: $(fhook status 2>&1)"
fhook latency vfs_read > $D/pm.out 2> $D/pm.err &
CTL=$!
wait_for 30 grep -q '^vfs_read .* D' $T/enabled_functions || fail "latency probe on vfs_read not attached: $(cat $D/pm.err)"
# shellcheck disable=SC2086
fhook-capexec 1000 1000 - perfmon -- fhook-exitregs $ranges > $D/forged.out 2> $D/forged.err ||
	fail "exits with forged registers: $(cat $D/forged.out $D/forged.err)"
kill -INT $CTL
wait $CTL
expect_eq "$?" 0 "fhook latency vfs_read exit code ($(cat $D/pm.err))"
log "forged: $(cat $D/forged.out)"
n=$(sed -n 's/^exits \([0-9]*\) .*/\1/p' $D/forged.out)
[ "${n:-0}" -ge 20 ] || fail "too few forged exits: $(cat $D/forged.out)"
expect_eq "$(exits_seen)" "$_before" "exits counted out meanwhile"
dmesg | grep 'exits inside' | grep -v fhook-die && fail "an exit with forged registers counted a call out"
if [ $HOOKS = 1 ]; then
	fhook status 2>/dev/null | grep fhook_testmod_sleep | grep -q 'inside=1' ||
		fail "the sleeper's call no longer counted inside: $(fhook status 2>&1)"
else
	kill -INT $SL
	wait $SL
	grep -q 'inside now: 1$' $D/sl.out || fail "the sleeper's call no longer counted inside: $(cat $D/sl.out)"
fi
kill -0 $S 2>/dev/null || fail "the sleeper returned before the forged exits were checked (make it sleep longer)"
wait $S
if [ $HOOKS = 1 ]; then
	P=/sys/module/fhook_khook_test/parameters
	expect_eq "$(cat $P/exits)" 1 "exit handler calls (the sleeper's call returned through the hook)"
	rmmod fhook_khook_test || fail "rmmod fhook_khook_test after the sleeper"
	sleeper="a module's hook"
else
	wait_for 20 sh -c "dmesg | grep -q 'the last call has left a removed probe'" ||
		fail "the sleeper's probe not freed after it returned: $(dmesg | tail -n 2)"
	sleeper="a latency probe"
fi

# nothing is left inside anything: fhook goes at once
rmmod fhook 2> $D/rmmod.err || fail "rmmod fhook after calls that never returned: $(cat $D/rmmod.err)"
if [ $HOOKS = 1 ]; then
	what="8 calls whose threads exited inside counted out: latency and trace-around left nothing inside, a module's hook went without waiting"
else
	what="3 calls whose threads exited inside counted out: latency left nothing inside (no hooks here)"
fi
pass "$what$tp; $n exits with forged registers counted nothing out, $sleeper's sleeper still inside; fhook unloaded"
