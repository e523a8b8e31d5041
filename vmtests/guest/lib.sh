# shellcheck shell=sh
# Helpers for the guest tests: sourced by every vmtests/guest/tests/*.sh.
#
# A test runs as root in a busybox shell, with its stdout+stderr going to its
# log.  It ends with pass/fail/skip (fail also works from a subshell: the
# runner takes the first FAIL written to the result file).  The runner
# (runner.sh) kills leftover processes, resets tracefs and unloads the
# modules afterwards, so tests only clean up what they need mid-test.
#
# Environment from the runner: FHOOK_TEST (name), FHOOK_RESULT_FILE,
# D (a scratch directory for this test), and /fhook/config (REL, ...).

. /fhook/config

T=/sys/kernel/tracing
KO=/fhook/fhook.ko
D=${D:-/tmp/t/$FHOOK_TEST}
mkdir -p "$D"

# log MSG: a line of the test's log, after the guest's uptime (a shell
# builtin reads it: no process), so a log shows where a test's time goes
log() {
	read -r _log_up _log_idle < /proc/uptime
	echo "# [$_log_up] $*"
}

pass() { echo "PASS $*" >> "$FHOOK_RESULT_FILE"; log "PASS $*"; exit 0; }
fail() { echo "FAIL $*" >> "$FHOOK_RESULT_FILE"; log "FAIL $*"; exit 1; }
skip() { echo "SKIP $*" >> "$FHOOK_RESULT_FILE"; log "SKIP $*"; exit 0; }

# expect_eq A B WHAT: fail unless the two integers are equal
expect_eq() {
	[ "$1" -eq "$2" ] 2>/dev/null || fail "$3: $1 != $2"
}

# expect_same GOT WANT WHAT: the same string
expect_same() {
	[ "$1" = "$2" ] || fail "$3: '$1' != '$2'"
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds
wait_for() {
	_n=$(($1 * 10))
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# Does fhook say no session is open?
no_sessions() { fhook status 2> /dev/null | grep -qx 'sessions: 0'; }

# Is any ftrace ops attached to any function?  (tracefs files have size 0,
# so test -s cannot tell.)
attached() { grep -q . $T/enabled_functions; }
detached() { ! attached; }

fhook_loaded() { grep -q '^fhook ' /proc/modules; }

load_fhook() {
	fhook_loaded && return 0
	insmod "$KO" || fail "insmod $KO failed (see dmesg)"
	wait_for 5 test -c /dev/fhook || fail "/dev/fhook did not appear after insmod"
}

unload_fhook() {
	fhook_loaded || return 0
	rmmod fhook || fail "rmmod fhook failed"
}

# The module used by the :mod: test (loop, or another one if loop is built
# in): insmod its dependencies and itself from /fhook/mods, in order.
load_testmod() {
	[ -n "$MODTEST_MOD" ] || skip "no loadable test module for :mod: in this kernel"
	grep -q "^$MODTEST_MOD " /proc/modules && return 0
	while read -r _ko _args; do
		# shellcheck disable=SC2086
		insmod "/fhook/mods/$_ko" $_args || fail "insmod /fhook/mods/$_ko failed"
	done < /fhook/mods/order
}

# fhook_testmod.ko: a workload with independent call counts
# (vmtests/testmod), driven through /proc/fhook_testmod.
load_workmod() {
	grep -q '^fhook_testmod ' /proc/modules && return 0
	insmod /fhook/fhook_testmod.ko || fail "insmod fhook_testmod.ko failed (see dmesg)"
}

# Put tracefs back to its boot state.
tracefs_reset() {
	echo 0 > $T/tracing_on
	echo nop > $T/current_tracer
	echo > $T/set_ftrace_filter
	echo > $T/set_ftrace_notrace
	echo > $T/set_ftrace_pid
	[ -e $T/set_ftrace_notrace_pid ] && echo > $T/set_ftrace_notrace_pid
	echo 0 > $T/options/function-fork
	echo > $T/trace
	echo 1 > $T/tracing_on
}

# tracefs_ref OUT FILTER FORK CMD...: the reference side of the comparisons.
# Runs CMD under the kernel's own function tracer, filtered to FILTER
# (set_ftrace_filter syntax; $REF_NOTRACE goes to set_ftrace_notrace) and
# to CMD's pid (set before CMD execs; FORK=1 also follows its children),
# and writes the trace's event lines to OUT.  Fails the test if the trace
# buffer overran.
tracefs_ref() {
	_out=$1 _filter=$2 _fork=$3
	shift 3
	tracefs_reset
	echo 0 > $T/tracing_on
	echo "$_filter" > $T/set_ftrace_filter || fail "tracefs: cannot set filter '$_filter'"
	if [ -n "$REF_NOTRACE" ]; then
		echo "$REF_NOTRACE" > $T/set_ftrace_notrace || fail "tracefs: bad notrace"
	fi
	echo "$_fork" > $T/options/function-fork
	echo > $T/trace
	# shellcheck disable=SC2016
	sh -c 'echo $$ > /sys/kernel/tracing/set_ftrace_pid &&
	       echo function > /sys/kernel/tracing/current_tracer &&
	       echo 1 > /sys/kernel/tracing/tracing_on &&
	       exec "$@"' tracefs-ref "$@"
	_rc=$?
	echo 0 > $T/tracing_on
	cat $T/trace > "$_out"
	tracefs_reset
	[ "$_rc" = 0 ] || fail "reference run of '$*' exited $_rc"
	# "# entries-in-buffer/entries-written: 1000/1000   #P:2"
	_ew=$(sed -n 's|^# entries-in-buffer/entries-written: \([0-9]*\)/\([0-9]*\).*|\1 \2|p' "$_out")
	set -- $_ew
	[ $# = 2 ] && [ "$1" = "$2" ] || fail "tracefs reference lost events (entries-in-buffer/written: $_ew)"
	log "tracefs reference: $(grep -vc '^#' "$_out") events"
}

# events FILE: "pid cpu function" for every event line of a trace in the
# kernel's trace format (the fhook CLI's and tracefs's are the same);
# vmtests/progs/fhook-events.c, whose -t adds the timestamp (busybox awk
# took 15-20 s under TCG to split a 35,000-line trace, it takes under one)
events() { fhook-events "$1"; }

# This CPU's argument registers as kprobe_events spells them ($R1..$R3),
# its instruction pointer, its system call entry, O_LARGEFILE (which the
# kernel adds to every open on 64-bit)
if [ "$(uname -m)" = aarch64 ]; then
	R1=%x0 R2=%x1 R3=%x2 IP=%pc SYSENTRY=invoke_syscall O_LARGEFILE=0x20000
else
	R1=%di R2=%si R3=%dx IP=%ip SYSENTRY=do_syscall_64 O_LARGEFILE=0x8000
fi

# has_feature NAME: the loaded module announces feature NAME (fhook status;
# e.g. direct, which fhook's arm64 port has not)
has_feature() { fhook status 2> /dev/null | sed -n 's/^features: //p' | tr ' ' '\n' | grep -qx "$1"; }

# scrape_metrics PORT OUT [ERR]: GET http://127.0.0.1:PORT/metrics into OUT
# once it answers (50 tries 0.2 s apart, times SLOW: the exporter answers
# 503 while it arms, which took more than 4 s on the debug kernel); ERR:
# the serving fhook's stderr, for the failure (the metrics and export tests)
scrape_metrics() {
	for _i in $(seq $((50 * ${SLOW:-1}))); do
		timeout 2 wget -q -O "$2" "http://127.0.0.1:$1/metrics" 2> $D/wget.err && return 0
		sleep 0.2
	done
	fail "nothing answers on 127.0.0.1:$1: $(cat $D/wget.err) (fhook: $(cat "${3:-/dev/null}"))"
}

# metric FILE SERIES: the sample of SERIES (its name and labels as printed)
metric() { awk -v s="$2" 'index($0, s " ") == 1 { print $2 }' "$1"; }

# count_func FILE FUNC: number of events of FUNC in a trace
count_func() { events "$1" | awk -v f="$2" '$3 == f { n++ } END { print n + 0 }'; }

# count_events FILE: number of event lines
count_events() { events "$1" | wc -l; }

# npids FILE: number of distinct pids among the events
npids() { events "$1" | awk '{ print $1 }' | sort -u | wc -l; }

# lost_sum FILE: sum of the "CPU:n [LOST N EVENTS] (...)" lines
lost_sum() {
	awk '/^CPU:[0-9]+ \[LOST [0-9]+ EVENTS\]/ { sub(/^CPU:[0-9]+ \[LOST /, ""); n += $1 } END { print n + 0 }' "$1"
}

# run_fhook PREFIX ARGS...: fhook ARGS > PREFIX.out 2> PREFIX.err; sets RC.
run_fhook() {
	_p=$1
	shift
	log "\$ fhook $*"
	fhook "$@" > "$_p.out" 2> "$_p.err"
	RC=$?
	log "exit $RC, $(wc -l < "$_p.out") lines on stdout; stderr:"
	sed 's/^/#   /' "$_p.err" | head -n 20
}

# bad_options PREFIX CMD "ARGS"...: each fhook CMD ARGS fails with one line
bad_options() {
	_bp=$1 _bc=$2
	shift 2
	for _ba in "$@"; do
		run_fhook "$_bp" $_bc $_ba
		[ "$RC" != 0 ] || fail "fhook $_bc $_ba: exit 0"
		[ "$(wc -l < "$_bp.err")" = 1 ] || fail "fhook $_bc $_ba: not one line: $(cat "$_bp.err")"
	done
}

# as_perfmon PREFIX ARGS...: fhook ARGS as uid 1000 with CAP_PERFMON only,
# /dev/fhook open to it meanwhile; sets RC
as_perfmon() {
	_pp=$1
	shift
	_pm=$(stat -c %a /dev/fhook)
	chmod 0666 /dev/fhook
	fhook-capexec 1000 1000 - perfmon -- fhook "$@" > "$_pp.out" 2> "$_pp.err"
	RC=$?
	chmod "$_pm" /dev/fhook
	log "as a CAP_PERFMON user: fhook $*: exit $RC, $(head -c 300 "$_pp.err")"
}

# summary PREFIX: parse the summary on PREFIX.err into H (hits), E (events),
# L (lost), M (missed) of the probe line and TE/TL of the total line, and
# check the identities the CLI documents.
summary() {
	_sp=$1
	_s=$(sed -n 's/^fhook: probe [0-9]* hits \([0-9]*\) events \([0-9]*\) lost \([0-9]*\) missed \([0-9]*\).*/\1 \2 \3 \4/p' "$_sp.err")
	[ -n "$_s" ] || fail "no 'fhook: probe N hits H events E lost L missed M' summary line on stderr"
	[ "$(echo "$_s" | wc -l)" = 1 ] || fail "more than one probe summary line (one probe expected)"
	set -- $_s
	H=$1 E=$2 L=$3 M=$4
	_t=$(sed -n 's/^fhook: events \([0-9]*\) lost \([0-9]*\)$/\1 \2/p' "$_sp.err")
	[ -n "$_t" ] || fail "no 'fhook: events E lost L' summary line on stderr"
	set -- $_t
	TE=$1 TL=$2
	log "summary: hits $H events $E lost $L missed $M; total events $TE lost $TL"
	expect_eq "$H" "$((E + L))" "summary: hits != events + lost"
	expect_eq "$TE" "$E" "summary: total events != probe events"
	expect_eq "$TL" "$L" "summary: total lost != probe lost"
}

# functions FILE: the sorted distinct function names of a trace
functions() { events "$1" | awk '{ print $3 }' | sort -u; }

uptime_cs() { sed 's/^\([0-9]*\)\.\([0-9][0-9]\).*/\1\2/' /proc/uptime; }

# ------------------------------------------------------------ stress helpers

# The number of vmalloc/vmap areas allocated by fhook (rings, pid bitmap):
# /proc/vmallocinfo names the caller, "... [fhook]".  0 whenever no session
# exists; only meaningful while the module is loaded.
fhook_vmalloc() { grep -c '\[fhook\]' /proc/vmallocinfo; }

# No kprobe anywhere (fhook has none; nothing else in the guest makes any).
no_kprobes() {
	_kl=/sys/kernel/debug/kprobes/list
	[ ! -e $_kl ] || [ -z "$(cat $_kl)" ]
}

# mem_snapshot: "kernel slab percpu vmalloc free sreclaim" in KiB, after
# dropping the page cache and reclaimable slab:
#   kernel   MemTotal - free - LRU pages (Active + Inactive + Unevictable):
#            every page the kernel holds for itself: slab, page tables,
#            stacks, vmalloc, percpu, modules, and pages from alloc_pages()
#            such as fhook's rings
#   slab     SUnreclaim
#   percpu   Percpu
#   vmalloc  the sum of every area in /proc/vmallocinfo (vmalloc and vmap,
#            guard pages included)
#   free     MemFree plus the pages waiting in the per-CPU free lists
#            (/proc/zoneinfo "count:"), which MemFree does not count
#   sreclaim SReclaimable (what drop_caches could not free: on a KASAN
#            kernel, dentries and inodes held in its quarantine)
mem_snapshot() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	_v=$(awk '!/unpurged/ { b += $2 } END { printf "%d", b / 1024 }' /proc/vmallocinfo)
	_p=$(awk '$1 == "count:" { n += $2 } END { print n * 4 }' /proc/zoneinfo)
	awk -v v="$_v" -v p="$_p" '{ m[$1] = $2 }
		END { f = m["MemFree:"] + p
		      print m["MemTotal:"] - f - m["Active:"] - m["Inactive:"] - m["Unevictable:"],
			    m["SUnreclaim:"], m["Percpu:"], v, f, m["SReclaimable:"] }' /proc/meminfo
}

# Is this a KASAN kernel?  Its quarantine keeps freed slab objects for a
# while (up to 1/32 of the memory), so the slab only ever grows there.
kasan_kernel() {
	[ -n "${_kasan:-}" ] || { grep -q ' __asan_load8$' /proc/kallsyms && _kasan=1 || _kasan=0; }
	[ "$_kasan" = 1 ]
}

# Is this a PREEMPT_RT kernel?
rt_kernel() { uname -v | grep -q PREEMPT_RT; }

# mem_check BEFORE AFTER [NONSLAB SLAB PERCPU VMALLOC]: fail if the kernel's
# memory did not come back: kernel memory outside the slab (SUnreclaim and
# SReclaimable) more than NONSLAB KiB higher (default 2048), SUnreclaim
# more than SLAB (1024), Percpu more than PERCPU (256), vmalloc more than
# VMALLOC (1024).  On a KASAN kernel the slab is not checked (quarantine);
# kmemleak checks every object there.  Sets MEMDELTA to the figures.
mem_check() {
	set -- $1 $2 "${3:-2048}" "${4:-1024}" "${5:-256}" "${6:-1024}"
	# $1-$6 before, $7-$12 after, $13-$16 limits
	_dk=$(($7 - $1)) _ds=$(($8 - $2)) _dp=$(($9 - $3)) _dv=$((${10} - $4)) _df=$((${11} - $5))
	_dr=$((${12} - $6))
	_dn=$((_dk - _ds - _dr))
	MEMDELTA=$(echo "nonslab=+${_dn}k slab=+${_ds}k sreclaim=+${_dr}k percpu=+${_dp}k vmalloc=+${_dv}k free=+${_df}k" | sed 's/+-/-/g')
	log "memory: before $1 $2 $3 $4 $5 $6, after $7 $8 $9 ${10} ${11} ${12} (kernel slab percpu vmalloc free sreclaim, KiB): $MEMDELTA"
	[ "$_dn" -le "${13}" ] || fail "kernel memory outside the slab up $_dn KiB (> ${13}): $MEMDELTA"
	[ "$_dp" -le "${15}" ] || fail "Percpu up $_dp KiB (> ${15}): $MEMDELTA"
	[ "$_dv" -le "${16}" ] || fail "vmalloc up $_dv KiB (> ${16}): $MEMDELTA"
	if kasan_kernel; then
		MEMDELTA="$MEMDELTA(KASAN: slab unchecked)"
	else
		[ "$_ds" -le "${14}" ] || fail "SUnreclaim up $_ds KiB (> ${14}): $MEMDELTA"
	fi
}

# host_stall MS...: ask the host to freeze this guest for MS ms, then let
# it run for the next MS, freeze it again... (vmtests/lib/console.sh:
# stall_guest); it acts a few ms after the line reaches the console.
host_stall() { echo "FHOOK-STALL $*" > /dev/console; }

# pick A B: A on a Debian kernel, B on a slow (debug) kernel, SLOW > 1
pick() { if [ "${SLOW:-1}" -gt 1 ]; then echo "$2"; else echo "$1"; fi; }

# watch_some FUNC...: "--watch FUNC" for each FUNC the kernel can trace:
# a graph below these few functions, not every one (arming every function
# takes 10-20 s a run on a Debian kernel under TCG, a minute on the debug
# kernel)
watch_some() {
	for _sw in "$@"; do
		grep -q "^$_sw\( \|$\)" $T/available_filter_functions && printf -- '--watch %s ' "$_sw"
	done
	return 0
}

# slow_watch FUNC...: watch_some on a slow kernel, nothing (every function
# below) on a Debian kernel
slow_watch() { [ "${SLOW:-1}" -le 1 ] || watch_some "$@"; }

# elapsed_s T0: seconds since uptime_cs T0, one decimal
elapsed_s() { awk -v a="$1" -v b="$(uptime_cs)" 'BEGIN { printf "%.1f", (b - a) / 100 }'; }

# run_logged OUT CMD...: CMD > OUT 2>&1, sets RC.  If the test's timeout
# strikes first, the tail of OUT still reaches the log (and CMD is killed).
run_logged() {
	_rl_out=$1
	shift
	"$@" > "$_rl_out" 2>&1 &
	_rl_pid=$!
	trap 'kill -9 $_rl_pid 2>/dev/null; log "timed out; the last lines of $_rl_out:"; tail -n 40 "$_rl_out"; fail "timed out: $*"' TERM
	wait $_rl_pid
	RC=$?
	trap - TERM
}

# run_checks OUT CMD...: run a program that prints "ok N - ..." /
# "not ok N - ..." lines (fhook-abitest style), show its output, fail on a
# non-zero exit naming the first failed check; sets CHECKS.
run_checks() {
	_rc_out=$1
	shift
	run_logged "$_rc_out" "$@"
	cat "$_rc_out"
	CHECKS=$(grep -c '^ok ' "$_rc_out")
	[ "$RC" = 0 ] || fail "$1 exit $RC: $(grep -m1 '^not ok' "$_rc_out")"
	[ "$CHECKS" -gt 0 ] || fail "$1 ran no check"
}

# probes_exact ERRFILE N: the summary has N probe lines, each with
# hits == events + lost and nothing lost.
probes_exact() {
	_pl=$(grep -c '^fhook: probe [0-9]* hits ' "$1")
	expect_eq "$_pl" "$2" "probe lines in the summary"
	awk '/^fhook: probe [0-9]+ hits / {
		if ($5 != $7 + $9 || $9 != 0) { print "bad: " $0; bad = 1 }
	} END { exit bad }' "$1" || fail "a probe's summary has hits != events + lost, or lost events"
}
