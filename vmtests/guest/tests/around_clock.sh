# around_clock: --trace-around on the clocksource's own read function.  The
# trampoline reads the clock after the body returns; that read calls the
# hooked function again, so it must happen under ftrace's recursion guard
# (before the fix it recursed until the stack overflowed).  Records arrive,
# each with a duration, and the kernel says nothing.
. /fhook/lib.sh

cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
case $cs in
tsc) fn=read_tsc ;;
hpet) fn=read_hpet ;;
acpi_pm) fn=acpi_pm_read ;;
kvm-clock) fn=kvm_clock_get_cycles ;;
jiffies) fn=jiffies_read ;;
*) skip "clocksource $cs: no known read function" ;;
esac
grep -q "^$fn\$" $T/available_filter_functions ||
	skip "clocksource $cs: $fn is not traceable on this kernel"
load_fhook
run_fhook $D/ck hook --trace-around "$fn" --duration 3
expect_eq "$RC" 0 "fhook hook --trace-around $fn: exit code ($(head -c 300 $D/ck.err))"
n=$(grep -c "$fn.*duration=[0-9]*ns" $D/ck.out)
[ "$n" -gt 0 ] || fail "no trace-around records of $fn in 3 s"
pass "$cs: $n calls of $fn traced around"
