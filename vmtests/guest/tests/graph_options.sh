# graph_options: what fhook graph adds to the tree.  --retval shows an
# open's file descriptor and a failed open's -ENOENT as funcgraph-retval
# prints them; --args names do_sys_openat2's arguments from BTF (dfd is
# AT_FDCWD, -100); --threshold keeps only calls at least that long, each
# as one "} /* func */" line (tracing_thresh); a kprobe given with -e shows
# up inside the tree as a comment with its fields, at its place (inside
# do_sys_openat2's call); two shadow stacks serve nine tasks; the summary's
# identities hold and the module unloads.  On the debug kernel --threshold
# runs at depth 1 and graph_steal stands for the two stacks.
. /fhook/lib.sh

load_fhook
# (every function patched under TCG and KASAN: see graph_oracle)
if [ "${SLOW:-1}" -gt 1 ]; then
	wd=$(cat /proc/sys/kernel/watchdog_thresh)
	trap 'echo $wd > /proc/sys/kernel/watchdog_thresh' EXIT
	echo 60 > /proc/sys/kernel/watchdog_thresh
fi

run_fhook $D/r graph --retval --depth 1 do_sys_openat2 -- sh -c 'cat /proc/version > /dev/null; cat /nonexistent-fhook 2> /dev/null; true'
expect_eq "$RC" 0 "graph --retval exit code"
summary $D/r
# (a call whose entry and return were on two CPUs, the task having moved
# in between, is drawn as "func() {" ... "} /* func = ret */", as the
# kernel's function_graph draws it)
grep -Eq '(do_sys_openat2\(\); /\* = |} /\* do_sys_openat2 = )0x3 \*/$' $D/r.out ||
	fail "--retval: no open returning fd 3: $(grep -m3 do_sys $D/r.out)"
grep -Eq '(do_sys_openat2\(\); /\* = |} /\* do_sys_openat2 = )-2 \*/$' $D/r.out ||
	fail "--retval: no open failing with -2 (ENOENT)"

if [ -e /sys/kernel/btf/vmlinux ]; then
	run_fhook $D/a graph --args --depth 1 do_sys_openat2 -- head -n 1 /proc/version
	expect_eq "$RC" 0 "graph --args exit code"
	grep -Eq 'do_sys_openat2\(dfd=-100, filename=0x[0-9a-f]+, how=0x[0-9a-f]+\)(;| \{)' $D/a.out ||
		fail "--args: $(grep -m1 do_sys $D/a.out)"
fi

# (below the path of an open, --watch, not every function: arming them all
# takes 10-20 s a run under TCG, which graph_oracle pays; the debug kernel:
# the graph function alone, --depth 1, which arms no other function)
TDEPTH=$(pick "--watch do_filp_open --watch path_openat" "--depth 1")
# shellcheck disable=SC2086
run_fhook $D/t graph --proc $TDEPTH --threshold 50 do_sys_openat2 -- fhook-workload reopen 10
expect_eq "$RC" 0 "graph --threshold exit code"
n=$(awk -F'|' 'NF >= 3 && !/^#/' $D/t.out | wc -l)
# (most opens take more than 50 us under TCG, not all of them)
[ "$n" -ge 1 ] || fail "--threshold 50: no line for 10 opens"
bad=$(awk -F'|' 'NF >= 3 && !/^#/ { d = $(NF - 1); gsub(/[^0-9.]/, "", d); t = $NF
	if (t !~ /^ *} \/\* [A-Za-z_0-9.]+ \*\/$/ || d + 0 < 50) print }' $D/t.out | head -n 3)
[ -z "$bad" ] || fail "--threshold 50: a line that is not a return of 50 us or more: $bad"
# shellcheck disable=SC2086
run_fhook $D/t2 graph $TDEPTH --threshold 10000000 do_sys_openat2 -- fhook-workload reopen 10
expect_eq "$RC" 0 "graph --threshold 10000000 exit code"
n2=$(awk -F'|' 'NF >= 3 && !/^#/' $D/t2.out | wc -l)
expect_eq "$n2" 0 "lines of calls taking 10 s or more"

run_fhook $D/e graph --proc --depth 2 --watch do_filp_open -e 'p:fh/fdi fd_install fd=$arg1:s32' \
	do_sys_openat2 -- fhook-workload reopen 5
expect_eq "$RC" 0 "graph -e exit code"
awk -F'|' '
NF >= 3 && $1 ~ /fhook-w-/ {
	t = $NF
	if (t ~ /^  do_sys_openat2\(\) \{/) inside = 1
	if (t ~ /\/\* fdi: \(fd_install\+0x[0-9a-f]*\/0x[0-9a-f]*\) fd=3 \*\//) { if (!inside) bad = 1; n++ }
	if (t ~ /^  }/) inside = 0
}
END { if (bad || n < 5) { print n " comments, bad " bad; exit 1 } }' $D/e.out || fail "-e kprobe: not inside the tree: $(grep -m3 fdi $D/e.out)"
# two shadow stacks for nine tasks reading at once: idle stacks go from
# task to task (a task between two reads keeps its own until another needs
# it), calls that find none count as missed, nothing breaks (the debug
# kernel: graph_steal's rounds there are these)
if [ "${SLOW:-1}" -gt 1 ]; then
	unload_fhook
	pass "retval, args, threshold (--depth 1), -e comments"
fi
# (what a read of /dev/zero calls: graph_steal draws every function)
# shellcheck disable=SC2046
run_fhook $D/k graph --proc --tasks 2 $(watch_some rw_verify_area security_file_permission \
	read_iter_zero iov_iter_zero __fsnotify_parent fsnotify) vfs_read -- fhook-workload fork 8 300
expect_eq "$RC" 0 "graph --tasks 2 exit code"
summary $D/k
tasks=$(awk -F'|' 'NF >= 3 && $NF ~ /vfs_read\(\)/ { p = $1; sub(/^ *[0-9]+\) */, "", p); print p }' $D/k.out | sort -u | wc -l)
[ "$tasks" -ge 3 ] || fail "--tasks 2: calls of $tasks tasks in the tree, want 3 or more (stacks passed on)"
log "--tasks 2: $tasks tasks traced, $M missed"
unload_fhook
pass "retval, args, threshold, -e comments, 2 stacks for 9 tasks ($tasks traced, $M missed)"
