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
run_fhook $D/g graph -D 6 do_exit -- sh -c "for i in \$(seq $N); do /bin/true; done"
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
pass "$exits tasks died inside do_exit with a second sched_switch probe ($switches tracefs events); a call inside at the end returned home after rmmod"
