# graph_soft_lockup: issue 48's report, on every kernel in make test-full
# (the debug kernel under TCG is where it happened): after the kernel's
# own function_graph tracer has run in the boot, fhook graph --depth 4
# vfs_read and --depth 3 do_sys_openat2 arm every function (the callees
# go by address, in slices of 2,048 with a reschedule between: before
# 2026-12-02 in one ftrace update, which held a CPU past the soft-lockup
# watchdog's 20 s) and trace a workload that calls them, with the kernel's
# default detectors: no soft lockup, no RCU stall (also checked by the
# runner in the boot's messages), and each graph has the workload's calls.
. /fhook/lib.sh

load_fhook
# (this test's kernel messages only: earlier tests' are theirs)
dmesg_from=$(dmesg | wc -l)
[ -e $T/max_graph_depth ] || skip "no function_graph tracer in this kernel"
t0=$(cut -d' ' -f1 /proc/uptime)
echo do_sys_openat2 > $T/set_graph_function
echo 3 > $T/max_graph_depth
echo function_graph > $T/current_tracer
for i in 1 2 3 4 5; do dd if=/etc/passwd of=/dev/null bs=64 2> /dev/null; done
echo nop > $T/current_tracer
echo > $T/set_graph_function
echo 0 > $T/max_graph_depth
log "the kernel's function_graph armed, ran and disarmed in $(awk -v a=$t0 -v b=$(cut -d' ' -f1 /proc/uptime) 'BEGIN { printf "%.1f", b - a }') s"
figures=""
for spec in "4 vfs_read" "3 do_sys_openat2"; do
	set -- $spec
	t1=$(cut -d' ' -f1 /proc/uptime)
	run_fhook $D/g graph --depth $1 $2 -- sh -c 'for i in 1 2 3 4 5; do dd if=/etc/passwd of=/dev/null bs=64 2> /dev/null; done'
	expect_eq "$RC" 0 "fhook graph --depth $1 $2 exit code"
	secs=$(awk -v a=$t1 -v b=$(cut -d' ' -f1 /proc/uptime) 'BEGIN { printf "%.1f", b - a }')
	calls=$(grep -c "^ *[0-9]) .*$2()" $D/g.out)
	[ "$calls" -gt 0 ] || fail "no call of $2 in the graph: $(head -n 20 $D/g.out)"
	figures="$figures, --depth $1 $2: $calls calls, $secs s"
done
dmesg | tail -n +$((dmesg_from + 1)) > $D/dmesg
grep -q "soft lockup\|rcu_.*stall" $D/dmesg && fail "$(grep -A20 'soft lockup\|rcu_.*stall' $D/dmesg | head -n 30)"
pass "after the kernel's function_graph, no soft lockup or RCU stall$figures"
