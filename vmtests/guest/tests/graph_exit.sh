# graph_exit: tasks that die inside the graph.  A task's stack goes back
# at its last context switch (fhook_graph_on_switch(), a sched_switch
# probe); with a second probe on sched_switch (tracefs' event here) the
# kernel calls both through __traceiter_sched_switch, a traced function
# that returns after that.  Frames pushed there once panicked the kernel
# ("return address ... lost"); a dead task now pushes none.  Ten children
# exit inside do_exit, each drawn open (do_exit never returns), and the
# kernel's own sched_switch events keep coming.
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
unload_fhook
pass "$exits tasks died inside do_exit with a second sched_switch probe ($switches tracefs events)"
