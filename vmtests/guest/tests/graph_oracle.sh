# graph_oracle: fhook graph against the kernel's function_graph tracer
# (set_graph_function, max_graph_depth 6, funcgraph-irqs 0) on the same
# workload, N opens of one file: the calls each tree holds at depths 1, 3
# and 6, with a notrace function and with --watch are the kernel's, cut to
# that depth, without that function and its callees, through the watched
# ones (the paths from the graph function down that most calls have, so
# that a timer softirq in one call does not count); durations nest (no
# call is shorter than one of its children); a sleep lasts its sleep; a
# tiny ring loses records and the tree says so without pairing a return
# across the gap; record --graph / report --graph / --format chrome agree;
# bad input is refused; the module unloads afterwards (no return left on
# the trampoline).
. /fhook/lib.sh

N=$(pick 30 12)
load_fhook
# Arming every function patches some 50,000 call sites: under TCG with
# KASAN that keeps a CPU in text_poke_bp_batch() past the soft lockup
# watchdog's 20 s, with the kernel's own function_graph as with fhook
# (both seen on the debug kernel): give it the longest threshold there.
if [ "${SLOW:-1}" -gt 1 ]; then
	wd=$(cat /proc/sys/kernel/watchdog_thresh)
	trap 'echo $wd > /proc/sys/kernel/watchdog_thresh' EXIT
	echo 60 > /proc/sys/kernel/watchdog_thresh
fi
[ -e $T/max_graph_depth ] || skip "no function_graph tracer in this kernel"

# paths FILE [DEPTH [NOTRACE]]: "count path" for the paths (graph
# function first, '/' between callees) of the workload's calls, and
# "#calls count", from function_graph text with the task column; only the
# first DEPTH levels, NOTRACE and what it calls left out (what
# max_graph_depth and set_graph_notrace leave out of the kernel's tree)
paths() {
	awk -v max="${2:-0}" -v notrace="${3:-}" '
	function flush() { for (p in seen) cnt[p]++; delete seen }
	BEGIN { skip = -1 }
	{
		n = split($0, f, "|")
		if (n < 3) next
		proc = f[1]
		sub(/^ *[0-9]+\) */, "", proc)
		if (proc !~ /^fhook-w-/) next
		t = f[n]
		sub(/^  /, "", t)
		match(t, /^ */)
		d = RLENGTH / 2
		t = substr(t, RLENGTH + 1)
		if (t ~ /^[}\/]/) next
		name = t
		sub(/\(.*/, "", name)
		if (max && d >= max) next
		if (skip >= 0 && d > skip) next
		skip = -1
		if (name == notrace) { skip = d; next }
		if (d == 0) { if (calls) flush(); calls++ }
		stack[d] = name
		path = stack[0]
		for (i = 1; i <= d; i++) path = path "/" stack[i]
		seen[path] = 1
	}
	END { flush(); for (p in cnt) print cnt[p], p; print "#calls", calls + 0 }' "$1"
}

# common FILE [DEPTH [NOTRACE]]: the paths at least 80% of the calls
# have, sorted (all of them in FILE.paths, or FILE.DEPTH.paths).  What a
# stack walk calls below arch_stack_walk is left out: a walk inside a call
# fhook traces stops at its return trampoline (docs/hooks.md), one inside
# a call the kernel traces goes on through return_to_handler (the debug
# kernel's KASAN and kmemleak save a stack at every allocation and free).
common() {
	_paths=$1${2:+.$2$3}.paths
	paths "$@" > "$_paths"
	awk '$1 == "#calls" { c = $2; next } $2 ~ /\/arch_stack_walk\// { next } { n[$2] = $1 }
	     END { for (p in n) if (n[p] * 5 >= c * 4) print p }' "$_paths" | sort
}

# kernel_graph OUT DEPTH: the reference run
kernel_graph() {
	tracefs_reset
	echo 0 > $T/tracing_on
	echo do_sys_openat2 > $T/set_graph_function
	echo "$2" > $T/max_graph_depth
	echo 0 > $T/options/funcgraph-irqs
	echo 1 > $T/options/funcgraph-proc
	echo 4096 > $T/buffer_size_kb
	echo > $T/trace
	echo function_graph > $T/current_tracer
	echo 1 > $T/tracing_on
	fhook-workload reopen $N || fail "reference workload"
	echo 0 > $T/tracing_on
	cat $T/trace > "$1"
	over=$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }')
	echo nop > $T/current_tracer
	echo > $T/set_graph_function
	echo 0 > $T/max_graph_depth
	echo 1 > $T/options/funcgraph-irqs
	echo 0 > $T/options/funcgraph-proc
	echo 1408 > $T/buffer_size_kb
	tracefs_reset
	expect_eq "$over" 0 "function_graph reference overran"
}

# compare DEPTH NOTRACE TAG: fhook graph's tree against the kernel's
# reference cut to DEPTH, without NOTRACE (the kernel's own max_graph_depth
# and set_graph_notrace leave out the same calls: one reference run, not
# one per depth, each arming every function)
compare() {
	_depth=$1 _notrace=$2 _tag=$3
	set -- --proc --depth "$_depth" --no-irqs
	[ -n "$_notrace" ] && set -- "$@" --notrace "$_notrace"
	run_fhook $D/f$_tag graph "$@" do_sys_openat2 -- fhook-workload reopen $N
	expect_eq "$RC" 0 "fhook graph (depth $_depth) exit code"
	common $D/k.txt "$_depth" "$_notrace" > $D/k$_tag.common
	common $D/f$_tag.out > $D/f$_tag.common
	kc=$(sed -n 's/^#calls //p' $D/k.txt.$_depth$_notrace.paths)
	fc=$(sed -n 's/^#calls //p' $D/f$_tag.out.paths)
	[ "$kc" -ge "$N" ] && [ "$fc" -ge "$N" ] || fail "depth $_depth: calls: kernel $kc, fhook $fc, want $N+"
	if ! cmp -s $D/k$_tag.common $D/f$_tag.common; then
		diff $D/k$_tag.common $D/f$_tag.common | head -n 40
		fail "depth $_depth${_notrace:+ notrace $_notrace}: the call trees differ (< kernel, > fhook)"
	fi
	deepest=$(awk -F/ '{ print NF }' $D/f$_tag.common | sort -n | tail -n 1)
	[ "$_depth" = 0 ] || [ "$deepest" -le "$_depth" ] || fail "depth $_depth: a path $deepest deep"
	log "depth $_depth${_notrace:+ notrace $_notrace}: $(wc -l < $D/f$_tag.common) common paths, deepest $deepest, kernel $kc calls, fhook $fc"
}

kernel_graph $D/k.txt 6
compare 1 "" 1
compare 3 "" 3
compare 6 "" 6
grep -q 'do_sys_openat2/do_filp_open/path_openat/' $D/f6.common || fail "depth 6: no path below path_openat"
compare 4 path_openat n
grep -q 'path_openat' $D/fn.common && fail "notrace path_openat: it is still there"

# --watch (set_ftrace_filter): the two functions on the kernel's path down
# to path_openat, nothing else, every call through them
run_fhook $D/w graph --proc --no-irqs --watch do_filp_open --watch path_openat do_sys_openat2 \
	-- fhook-workload reopen $N
expect_eq "$RC" 0 "fhook graph --watch exit code"
common $D/w.out > $D/w.common
printf '%s\n' do_sys_openat2 do_sys_openat2/do_filp_open do_sys_openat2/do_filp_open/path_openat \
	> $D/w.want
grep -qx 'do_sys_openat2/do_filp_open/path_openat' $D/k6.common ||
	fail "the kernel's tree has no do_sys_openat2/do_filp_open/path_openat"
awk '$1 != "#calls" { print $2 }' $D/w.out.paths | sort > $D/w.all
if ! cmp -s $D/w.want $D/w.all || ! cmp -s $D/w.want $D/w.common; then
	diff $D/w.want $D/w.all | head -n 20
	fail "--watch do_filp_open path_openat: other paths than the kernel's through them (> fhook)"
fi

# durations: each closed call lasts at least as long as each of its children
awk '
{
	n = split($0, f, "|")
	if (n < 3) next
	t = f[n]
	sub(/^  /, "", t)
	match(t, /^ */)
	d = RLENGTH / 2
	t = substr(t, RLENGTH + 1)
	du = f[n - 1]
	gsub(/[^0-9.]/, "", du)
	if (t ~ /\{$/) { child[d] = 0; open[d] = 1; next }
	if (du == "") next
	if (t ~ /^}/ && open[d] && du + 0 < child[d] + 0) { print "short: " $0 " child " child[d]; bad++ }
	if (t ~ /^}/) open[d] = 0
	if (d > 0 && du + 0 > child[d - 1] + 0) child[d - 1] = du
}
END { exit bad > 0 }' $D/f6.out || fail "a call shorter than one of its children"

# a call known to sleep shows its sleep (1 s)
run_fhook $D/s graph --proc --depth 1 do_nanosleep -- sleep 1
expect_eq "$RC" 0 "graph do_nanosleep exit code"
us=$(awk -F'|' 'NF >= 3 { d = $(NF - 1); gsub(/[^0-9.]/, "", d); if (d + 0 > m) m = d + 0 } END { print int(m) }' $D/s.out)
[ "$us" -ge 1000000 ] || fail "do_nanosleep lasted $us us for a 1 s sleep"

# a tiny ring under load: the tree marks the gap, no "}" pairs across it
# (what a read calls on any file, not every function: enough to lose)
below=$(watch_some rw_verify_area security_file_permission read_iter_zero iov_iter_zero \
	__fsnotify_parent fsnotify)
run_fhook $D/l graph --proc --no-irqs --buffer-size 4 $below vfs_read -- fhook-workload read 3000
expect_eq "$RC" 0 "graph with a tiny ring exit code"
summary $D/l
[ "$L" -gt 0 ] || fail "no loss with a 4 KiB ring"
grep -q '^CPU:[0-9]* \[LOST [0-9]* EVENTS\]' $D/l.out || fail "no LOST line in the tree"
awk '
/^CPU:[0-9]+ \[LOST/ { c = $0; sub(/^CPU:/, "", c); sub(/ .*/, "", c); lost[c] = NR; next }
{
	n = split($0, f, "|")
	if (n < 3) next
	c = f[1]; sub(/\).*/, "", c); gsub(/ /, "", c)
	t = f[n]; sub(/^  /, "", t); match(t, /^ */); d = RLENGTH / 2; t = substr(t, RLENGTH + 1)
	if (t ~ /\{$/) opened[c, d] = NR
	if (t == "}" && (lost[c] && opened[c, d] < lost[c])) { print "across the gap: " NR ": " $0; bad++ }
}
END { exit bad > 0 }' $D/l.out || fail "a return paired with an entry from before a loss"

# record --graph, report --graph, report --format chrome
run_fhook $D/r record --graph -o $D/r.rec --no-irqs --depth 4 --watch 'do_filp_open' \
	--watch 'path_*' --watch 'link_path_walk*' do_sys_openat2 -- fhook-workload reopen 10
expect_eq "$RC" 0 "record --graph exit code"
fhook report -q --graph --proc $D/r.rec > $D/rg.out 2> $D/rg.err || fail "report --graph: $(cat $D/rg.err)"
common $D/rg.out > $D/rg.common
[ -s $D/rg.common ] || fail "report --graph drew no tree"
# (not "} /* f unfinished */": a call with no return record, or one whose
# task migrated, its return drawn as "} /* f */" on the other CPU; Chrome
# makes complete events of return records only)
closed=$(awk -F'|' 'NF >= 3 && !/ unfinished \*\/$/ { t = $NF; if (t ~ /^ *}/ || t ~ /\);/) n++ } END { print n + 0 }' $D/rg.out)
fhook report -q --format chrome $D/r.rec > $D/rc.out 2> $D/rc.err || fail "report --format chrome: $(cat $D/rc.err)"
[ "$(tail -n 1 $D/rc.out)" = ']}' ] || fail "chrome document not closed"
x=$(grep -c '"ph":"X",.*"cat":"graph"' $D/rc.out)
expect_eq "$x" "$closed" "Chrome complete events vs closed calls of the tree"

# bad input
run_fhook $D/e1 graph no_such_function_xyz -- true
expect_eq "$RC" 1 "unknown function exit code"
grep -q "no traceable function matches 'no_such_function_xyz'" $D/e1.err || fail "unknown function: $(cat $D/e1.err)"
run_fhook $D/e2 graph --notrace no_such_function_xyz vfs_read -- true
expect_eq "$RC" 1 "unknown --notrace exit code"
grep -q "notrace 'no_such_function_xyz'" $D/e2.err || fail "unknown notrace: $(cat $D/e2.err)"

# no call left on the trampoline: the module goes
unload_fhook
pass "depths 1, 3, 6, notrace and --watch match function_graph ($N calls), durations nest, $us us sleep, loss marked, record/report/chrome agree"
