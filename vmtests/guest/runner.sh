# shellcheck shell=sh
# The guest test runner, sourced by /init (so it runs as pid 1).
#
# For each test in $TESTS (the tests of this boot's group): run
# /fhook/tests/<name>.sh under busybox timeout (its tests.list timeout times
# $SLOW) with its output in /tmp/logs/<name>.log, then clean up (kill every
# other process, reset tracefs, unload fhook and the test module) and print
#
#   FHOOK-LOG-BEGIN <name> / log lines / FHOOK-LOG-END <name>  (not PASS, or VERBOSE=1)
#   FHOOK-KMSG-BEGIN <name> / kernel messages / FHOOK-KMSG-END <name>
#   FHOOK-RESULT <name> PASS|FAIL|SKIP <seconds>s <detail>
#
# The KMSG section holds every kernel message (all levels) logged from the
# start of the test to the end of its cleanup; run.sh fails the test if
# anything bad is in it.  The boot's own messages come first, as the
# section "boot".
#
# A test that crashes, hangs or exits without a verdict gets a FAIL line.
# A test that leaves the system dirty (module not unloadable, ftrace ops
# still attached) fails too, so that the next test starts clean.
#
# On kernels with kmemleak, the runner clears its report before the first
# test and adds a result "kmemleak_<group>" after the last one.

T=/sys/kernel/tracing

KMEMLEAK=/sys/kernel/debug/kmemleak

# seconds allowed for each test, from /fhook/tests.list, times $SLOW
test_timeout() {
	awk -v t="$1" -v k="${SLOW:-1}" '$1 == t { print $2 * k; found = 1 } END { if (!found) print 120 * k }' /fhook/tests.list
}

# kmsg_section NAME SEQ: the kernel messages since SEQ, for run.sh
kmsg_section() {
	echo "FHOOK-KMSG-BEGIN $1"
	fhook-kmsg since "$2"
	echo "FHOOK-KMSG-END $1"
}

# Every process except pid 1, its forked subshells (same cmdline), kernel
# threads (empty cmdline) and zombies.
user_procs() {
	for _d in /proc/[0-9]*; do
		[ "$_d" = /proc/1 ] && continue
		[ -s "$_d/cmdline" ] || continue
		read -r _stat < "$_d/stat" 2>/dev/null || continue
		_st=${_stat##*) }
		case ${_st%% *} in Z | X) continue ;; esac
		cmp -s "$_d/cmdline" /proc/1/cmdline && continue
		echo "${_d#/proc/}"
	done
}

# Kill everything the test left behind; print what was wrong, one line per
# problem.  Must run in pid 1 itself (not in a $(...) subshell): kill -1
# spares only the caller and init.
guest_cleanup() {
	kill -9 -1 2>/dev/null
	_n=50
	while [ -n "$(user_procs)" ] && [ $_n -gt 0 ]; do
		sleep 0.1
		_n=$((_n - 1))
	done
	[ -z "$(user_procs)" ] || echo "processes survived SIGKILL: $(user_procs | tr '\n' ' ')"
	{
		echo 0 > $T/tracing_on
		echo nop > $T/current_tracer
		echo > $T/set_ftrace_filter
		echo > $T/set_ftrace_notrace
		echo > $T/set_ftrace_pid
		[ -e $T/set_ftrace_notrace_pid ] && echo > $T/set_ftrace_notrace_pid
		echo 0 > $T/options/function-fork
		echo > $T/trace
		echo 1 > $T/tracing_on
	} 2>/dev/null
	for _l in /dev/loop[0-9]*; do
		[ -b "$_l" ] && losetup -d "$_l" 2>/dev/null
	done
	# A closed session can hold the module a little longer: the last fput
	# of a killed process, a removed hook's RCU-tasks grace periods
	# (docs/hooks.md).  Seconds under KASAN; a reference kept for good
	# is still reported.
	# a test that must leave fhook stuck says so (failed_unregister)
	if [ -e /tmp/expect-dirty ]; then
		rm -rf /tmp/t
		return
	fi
	if grep -q '^fhook ' /proc/modules; then
		_n=$((100 * ${SLOW:-1}))
		while ! rmmod fhook 2> /tmp/rmmod.err && [ $_n -gt 0 ]; do
			sleep 0.1
			_n=$((_n - 1))
		done
		if grep -q '^fhook ' /proc/modules; then
			head -n 1 /tmp/rmmod.err | sed 's/^/rmmod fhook (retried 10 s x SLOW): /'
			echo "fhook.ko could not be unloaded"
		fi
	fi
	grep -q '^fhook_testmod ' /proc/modules && rmmod fhook_testmod 2>/dev/null
	if [ -n "$MODTEST_MOD" ] && [ -s /fhook/mods/order ]; then
		for _m in $(awk '{ sub(/\.ko$/, "", $1); print $1 }' /fhook/mods/order | tac); do
			grep -q "^$_m " /proc/modules && rmmod "$_m" 2>/dev/null
		done
	fi
	if grep -q . $T/enabled_functions; then
		echo "ftrace ops still attached: $(head -n 3 $T/enabled_functions | tr '\n' ' ')"
	fi
	rm -rf /tmp/t
}

run_test() {
	_name=$1
	_rf=/tmp/results/$_name
	_log=/tmp/logs/$_name.log
	_tmo=$(test_timeout "$_name")
	: > "$_rf"
	mkdir -p /tmp/t/"$_name"
	_k0=$(fhook-kmsg next)
	echo "FHOOK-BEGIN $_name"
	_t0=$(cut -d' ' -f1 /proc/uptime)
	if [ -f /fhook/tests/"$_name".sh ]; then
		FHOOK_TEST=$_name FHOOK_RESULT_FILE=$_rf D=/tmp/t/$_name \
			timeout "$_tmo" sh /fhook/tests/"$_name".sh > "$_log" 2>&1 < /dev/null
		_rc=$?
	else
		echo "no such test: /fhook/tests/$_name.sh" > "$_log"
		_rc=127
	fi
	_t1=$(cut -d' ' -f1 /proc/uptime)
	guest_cleanup > /tmp/cleanup.out 2>&1
	_dirt=$(cat /tmp/cleanup.out)

	if grep -q '^FAIL' "$_rf"; then
		_res=$(grep -m1 '^FAIL' "$_rf")
	elif grep -q '^SKIP' "$_rf"; then
		_res=$(grep -m1 '^SKIP' "$_rf")
	elif grep -q '^PASS' "$_rf"; then
		_res=$(grep -m1 '^PASS' "$_rf")
	elif [ "$_rc" = 143 ] || [ "$_rc" = 124 ]; then
		_res="FAIL timed out after ${_tmo}s"
	else
		_res="FAIL exited $_rc without a verdict"
	fi
	if [ -n "$_dirt" ]; then
		echo "# cleanup after the test: $_dirt" >> "$_log"
		case $_res in
		PASS*) _res="FAIL cleanup: $(echo "$_dirt" | head -n 1)" ;;
		esac
	fi
	_secs=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%d", b - a + 0.5 }')
	if [ "${_res%% *}" != PASS ] || [ "$VERBOSE" = 1 ]; then
		echo "FHOOK-LOG-BEGIN $_name"
		tail -n "${LOG_LINES:-80}" "$_log"
		echo "FHOOK-LOG-END $_name"
	fi
	kmsg_section "$_name" "$_k0"
	_st=${_res%% *}
	_detail=${_res#"$_st"}
	echo "FHOOK-RESULT $_name $_st ${_secs}s${_detail}"
}

# Before the first test: no background scans (they cost TCG time), and the
# time the tests begin: the report at the end names the objects allocated
# since (kmemleak prints each one's age).  Before 2026-12-07 two scans and
# a clear here forgot what boot allocated: 25 s of every debug boot.
kmemleak_start() {
	[ -w $KMEMLEAK ] || return 0
	echo scan=off > $KMEMLEAK
	KMEMLEAK_T0=$(cut -d' ' -f1 /proc/uptime)
}

# kmemleak_since SECS FILE: the objects of kmemleak's report FILE allocated
# in the last SECS seconds ("unreferenced object ..." blocks, whose
# "(age N.NNNs)" is below; one without an age is kept)
kmemleak_since() {
	awk -v lim="$1" '
		function flush() {
			if (blk != "" && age < lim)
				print blk
			blk = ""
			age = 0
		}
		/^unreferenced object/ { flush(); blk = $0; next }
		{
			blk = blk "\n" $0
			if (match($0, /\(age [0-9.]+s\)/))
				age = substr($0, RSTART + 5, RLENGTH - 7) + 0
		}
		END { flush() }' "$2"
}

# After the last test: scan, wait until everything is 5 s old, scan again;
# the report must have nothing allocated since the tests began.
kmemleak_check() {
	[ -w $KMEMLEAK ] || return 0
	_name=kmemleak_$GROUP
	_k0=$(fhook-kmsg next)
	echo "FHOOK-BEGIN $_name"
	# the lockdown group raised it: debugfs is closed (KASAN and lockdep
	# still report through the kernel log)
	if [ -r /sys/kernel/security/lockdown ] && ! grep -q '\[none\]' /sys/kernel/security/lockdown; then
		kmsg_section "$_name" "$_k0"
		echo "FHOOK-RESULT $_name SKIP 0s kmemleak is not readable under kernel lockdown"
		return 0
	fi
	_t0=$(cut -d' ' -f1 /proc/uptime)
	echo scan > $KMEMLEAK
	sleep 6
	echo scan > $KMEMLEAK
	_t1=$(cut -d' ' -f1 /proc/uptime)
	kmemleak_since "$(awk -v a="$KMEMLEAK_T0" -v b="$_t1" 'BEGIN { print b - a }')" $KMEMLEAK > /tmp/logs/$_name.log 2>&1
	_secs=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%d", b - a + 0.5 }')
	_n=$(grep -c '^unreferenced object' /tmp/logs/$_name.log)
	if [ -s /tmp/logs/$_name.log ]; then
		echo "FHOOK-LOG-BEGIN $_name"
		head -n 200 /tmp/logs/$_name.log
		echo "FHOOK-LOG-END $_name"
		kmsg_section "$_name" "$_k0"
		echo "FHOOK-RESULT $_name FAIL ${_secs}s $_n unreferenced object(s) after the $GROUP tests"
	else
		kmsg_section "$_name" "$_k0"
		echo "FHOOK-RESULT $_name PASS ${_secs}s"
	fi
}

run_suite() {
	mkdir -p /tmp/results /tmp/logs
	kmemleak_start
	kmsg_section boot 0
	for _t in $TESTS; do
		run_test "$_t"
	done
	kmemleak_check
	echo "FHOOK-SUITE-END"
}
