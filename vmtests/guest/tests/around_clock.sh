# around_clock: --trace-around on the clocksource's own read function.  The
# trampoline reads the clock after the body returns; that read calls the
# hooked function again, so it must happen under ftrace's recursion guard
# (before the fix it recursed until the stack overflowed).  Records arrive,
# each with a duration, and the kernel says nothing.  When the current
# clocksource's read function is not traceable (6.12's read_tsc), another
# available one is switched to for the test (hpet, acpi_pm) and back.
# Function events on the same function (an ftrace_ops, the recording
# direct trampoline, an ftrace_ops with stacks): each event fhook writes
# reads the clock, which hits the probe again inside the probe; those
# hits count as missed and never become events, so with clock=mono
# missed >= events (were they recorded, every other event would be one,
# ktime_get_mono_fast_ns its parent, and half as many missed).  With the
# TSC stamps (kmod/clock.h) only a CPU's anchor reads the clocksource,
# every 10 ms: some missed, fewer than the events.
. /fhook/lib.sh

CS=/sys/devices/system/clocksource/clocksource0
read_fn() {
	case $1 in
	tsc) echo read_tsc ;;
	hpet) echo read_hpet ;;
	acpi_pm) echo acpi_pm_read ;;
	kvm-clock) echo kvm_clock_get_cycles ;;
	jiffies) echo jiffies_read ;;
	esac
}
traceable() { [ -n "$1" ] && grep -q "^$1\$" $T/available_filter_functions; }

orig=$(cat $CS/current_clocksource)
cs=$orig
fn=$(read_fn $cs)
if ! traceable "$fn"; then
	for c in $(cat $CS/available_clocksource); do
		f=$(read_fn $c)
		traceable "$f" || continue
		echo $c > $CS/current_clocksource 2> /dev/null || continue
		cs=$c fn=$f
		break
	done
	trap 'echo $orig > $CS/current_clocksource' EXIT
fi
traceable "$fn" || skip "no clocksource with a traceable read function ($(cat $CS/available_clocksource))"
[ "$(cat $CS/current_clocksource)" = "$cs" ] || fail "clocksource $cs not taken"
load_fhook
clock=$(cat /sys/module/fhook/parameters/clock)
run_fhook $D/ck hook --trace-around "$fn" --duration 3
expect_eq "$RC" 0 "fhook hook --trace-around $fn: exit code ($(head -c 300 $D/ck.err))"
n=$(grep -c "$fn.*duration=[0-9]*ns" $D/ck.out)
[ "$n" -gt 0 ] || fail "no trace-around records of $fn in 3 s"

got=
# ops and direct: the recorder of the common case (kmod/fnrec.c); with a
# stack: the full path, under ftrace's recursion lock
for mode in ops direct stack; do
	case $mode in
	stack) args="--via ops --stack" ;;
	*) args="--via $mode" ;;
	esac
	# shellcheck disable=SC2086
	run_fhook $D/f_$mode trace $args "$fn" --duration 2
	expect_eq "$RC" 0 "fhook trace $args $fn: exit code ($(head -c 300 $D/f_$mode.err))"
	e=$(grep -c " $fn <-" $D/f_$mode.out)
	[ "$e" -gt 0 ] || fail "$args: no events of $fn in 2 s"
	# (other callers of ktime_get_mono_fast_ns() exist: a few such events are
	# theirs; fhook's own reads would be one event in two)
	own=$(grep -c " $fn <-ktime_get_mono_fast_ns" $D/f_$mode.out)
	[ $((own * 10)) -lt "$e" ] ||
		fail "$args: fhook's own clock reads became events: $own of $e, e.g. $(grep -m 1 " $fn <-ktime_get_mono_fast_ns" $D/f_$mode.out)"
	m=$(sed -n "s/^fhook: probe 1 hits [0-9]* events [0-9]* lost [0-9]* missed \([0-9]*\): .*/\1/p" $D/f_$mode.err)
	[ -n "$m" ] || fail "$args: no probe summary line: $(cat $D/f_$mode.err)"
	if [ "$clock" = mono ]; then
		[ "$m" -ge "$e" ] || fail "$args: $e events but $m missed (each event's clock read recurses)"
	else
		# the TSC stamps: only an anchor reads the clocksource (every 10 ms a CPU)
		[ "$m" -ge 1 ] && [ "$m" -lt "$e" ] ||
			fail "$args: $e events, $m missed: with the $clock clock only its anchors recurse"
	fi
	got="$got, $args $e events ($own from ktime_get_mono_fast_ns) $m missed"
done
pass "$cs, clock $clock: $n calls of $fn traced around$got"
