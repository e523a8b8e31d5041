# graph_exit: tasks that die inside the graph.  A task's stack goes back
# at its last context switch (fhook_graph_on_switch(), a sched_switch
# probe); with a second probe on sched_switch (tracefs' event here) the
# kernel calls both through __traceiter_sched_switch, a traced function
# that returns after that.  Frames pushed there once panicked the kernel
# ("return address ... lost"); a dead task now pushes none.  Ten children
# exit inside do_exit, each drawn open (do_exit never returns), and the
# kernel's own sched_switch events keep coming.  Then a call still inside
# when the graph ends, with the module removed before it returns.
. /fhook/lib.sh

N=10
load_fhook
tracefs_reset
echo 1 > $T/events/sched/sched_switch/enable
echo 1 > $T/tracing_on
# (the debug kernel: the path from do_exit to the tracepoint's iterator
# and a few functions beside it, not every function)
below=$(slow_watch do_task_dead __schedule __traceiter_sched_switch exit_mm exit_files \
	exit_notify release_task)
run_fhook $D/g graph -D 6 $below do_exit -- sh -c "for i in \$(seq $N); do /bin/true; done"
echo 0 > $T/tracing_on
echo 0 > $T/events/sched/sched_switch/enable
expect_eq "$RC" 0 "fhook graph exit code"
summary $D/g
exits=$(grep -c '| *do_exit() {$' $D/g.out)
log "do_exit entered $exits times, $(grep -c __traceiter_sched_switch $D/g.out) tracepoint iterations drawn"
[ "$exits" -ge "$N" ] || fail "do_exit entered $exits times, want $N or more: $(head -n 5 $D/g.out)"
switches=$(grep -c 'sched_switch:' $T/trace)
[ "$switches" -gt 0 ] || fail "no sched_switch event in tracefs: the second probe was not there"
echo > $T/trace

# a call still inside when the graph ends: its return address is put back
# on the task's stack (fhook_graph_restore()), so the module can go at
# once and the call returns where it came from, not into freed text
load_workmod
TH=/proc/fhook_testmod_hooks
echo reset > $TH
fhook graph -D 1 -q -o $D/in.out fhook_testmod_sleep 2> $D/in.err &
CTL=$!
wait_for 30 attached || fail "graph not attached: $(cat $D/in.err)"
echo sleep "$(pick 6000 20000)" > $TH &
SLEEPER=$!
sleep 1
kill -INT $CTL
wait $CTL
expect_eq "$?" 0 "fhook graph exit code after SIGINT"
kill -0 $SLEEPER 2>/dev/null || fail "the sleeper returned before rmmod could be tried"
wait_for 10 rmmod fhook || fail "rmmod fhook with a task inside a graph that has ended"
grep -q 'fhook_testmod_sleep();' $D/in.out && fail "the unfinished call was drawn as finished"
wait $SLEEPER
expect_eq "$(sed -n 's/^sleep calls [0-9]* done \([0-9]*\)/\1/p' $TH)" 1 "the sleeper returned its value"

# a call whose return address the end cannot put back (x86: a kretprobe
# took it after the graph did; arm64 keeps return addresses in registers):
# the pool stays until it returns, the log names the task inside, another
# call graph is refused meanwhile, and works once the call has returned
load_fhook
echo reset > $TH
arm=$(uname -m)
if [ "$arm" != aarch64 ]; then
	echo 'r:fhkgx/sl fhook_testmod_sleep' > $T/kprobe_events || fail "kprobe_events refused a kretprobe on fhook_testmod_sleep"
	echo 1 > $T/events/fhkgx/sl/enable
fi
dmesg -c > /dev/null
fhook graph -D 1 -q -o $D/dr.out fhook_testmod_sleep 2> $D/dr.err &
CTL=$!
# (the kretprobe's ops was first: the graph's newer callback runs before it)
ops=2-9; [ "$arm" != aarch64 ] || ops=1-9
wait_for 30 sh -c "grep -q '^fhook_testmod_sleep .*([$ops])' $T/enabled_functions" ||
	fail "graph not attached: $(cat $D/dr.err; grep fhook_testmod_sleep $T/enabled_functions)"
echo sleep "$(pick 6000 20000)" > $TH &
SLEEPER=$!
sleep 1
kill -INT $CTL
wait $CTL
expect_eq "$?" 0 "fhook graph exit code after SIGINT (a call it cannot give back inside)"
kill -0 $SLEEPER 2>/dev/null || fail "the sleeper returned before the draining graph could be seen"
wait_for 5 sh -c "dmesg | grep -q 'graph: calls still inside hold the trampoline.*\\[$SLEEPER\\]'" ||
	fail "the log does not name the task inside ($SLEEPER): $(dmesg | grep 'graph:' | tail -n 2)"
run_fhook $D/busy graph -D 1 vfs_read -d 1
[ "$RC" != 0 ] || fail "a second call graph was armed while the first one's pool drained"
grep -q 'another call graph is running, or one that ended still has calls inside' $D/busy.err ||
	fail "the refusal does not say why: $(cat $D/busy.err)"
wait $SLEEPER
expect_eq "$(sed -n 's/^sleep calls [0-9]* done \([0-9]*\)/\1/p' $TH)" 1 "the sleeper returned its value through both return trampolines"
wait_for 10 sh -c "dmesg | grep -q 'graph: the last traced call has returned'" || fail "the pool was not freed after the call returned"
if [ "$arm" != aarch64 ]; then
	echo 0 > $T/events/fhkgx/sl/enable
	echo > $T/kprobe_events
fi
run_fhook $D/again graph -D 1 vfs_read -- cat /etc/hostname
expect_eq "$RC" 0 "a call graph after the pool was freed ($(head -n 1 $D/again.err))"
wait_for 10 rmmod fhook || fail "rmmod fhook after the drained graph"
pass "$exits tasks died inside do_exit with a second sched_switch probe ($switches tracefs events); a call inside at the end returned home after rmmod; one whose return address was taken kept the pool, named ($SLEEPER), until it returned"
