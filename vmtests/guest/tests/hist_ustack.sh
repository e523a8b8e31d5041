# hist_ustack: user stacks as histogram keys (ustacktrace), checked
# against programs whose calls are known.  fhook-utarget N's even calls go
# main -> fhk_via_even -> fhk_step -> fhk_target, its odd ones through
# fhk_via_odd (built with frame pointers; at fhk_target's entry a frame
# pointer walk skips fhk_step, whose caller's frame is the current one).
#   - a uprobe's table kept in the module (no event): two stacks, N/2 hits
#     each, named through the probed binary although the process is gone
#     when the table is read; folded stacks end main;fhk_via_*;fhk_target;
#   - the same from a recording (report --hist on uprobe records with
#     --stack);
#   - a kernel function's user stacks: fhook-workload's 5 reads of
#     /dev/zero enter vfs_read from the read() in its own (static) binary,
#     named from the process's mappings, read while it ran;
#   - what cannot be: a kernel probe's user stacks aggregated by fhook
#     itself, a uprobe's kernel stack.
. /fhook/lib.sh

load_fhook
BIN=/fhook/bin/fhook-utarget
N=40
# H and E: hits and events of the one probe of a run's summary (a table
# kept in the module: hits, no events)
hits_events() {
	# shellcheck disable=SC2046
	set -- $(sed -n 's/^fhook: probe [0-9]* hits \([0-9]*\) events \([0-9]*\) lost.*/\1 \2/p' "$1.err")
	H=$1 E=$2
	[ -n "$E" ] || fail "no probe summary line in $1.err"
}
# stacks FILE: one line per entry of a ustacktrace table, its first three
# frames' functions and its hit count: "fhk_target fhk_via_even main 20"
stacks() {
	awk '/^\{ ustacktrace:$/ { n = 0; s = ""; next }
	     /^         / { if (n++ < 3) { f = $1; sub(/\+0x.*/, "", f); s = s f " " } next }
	     /^\} hitcount:/ { print s $3 }' "$1"
}
expect_stacks() {
	stacks "$1" | sort > "$1.stacks"
	printf 'fhk_target fhk_via_even main %d\nfhk_target fhk_via_odd main %d\n' \
		$((N / 2)) $((N / 2)) > "$1.want"
	cmp -s "$1.stacks" "$1.want" ||
		fail "$2: the stacks are not the program's two paths: $(cat "$1.stacks") (full: $(head -c 1500 "$1"))"
}

run_fhook $D/u hist "p:ust $BIN:fhk_target" 'keys=ustacktrace' -- $BIN $N
expect_eq "$RC" 0 "fhook hist (uprobe, ustacktrace) exit code"
hits_events $D/u
expect_eq "$H" $N "hits"
expect_eq "$E" 0 "events (the table is kept in the module)"
expect_stacks $D/u.out "hist"
grep -q "^         fhk_target+0x0 ($BIN)$" $D/u.out || fail "frames are not named with their binary"
grep -q "Entries: 2$" $D/u.out || fail "not two entries: $(grep Entries $D/u.out)"

run_fhook $D/f hist --folded "p:ust $BIN:fhk_target" 'keys=ustacktrace' -- $BIN $N
expect_eq "$RC" 0 "fhook hist --folded exit code"
for via in even odd; do
	grep -q ";main;fhk_via_$via;fhk_target $((N / 2))$" $D/f.out ||
		fail "no folded stack ...;main;fhk_via_$via;fhk_target: $(cat $D/f.out)"
done

run_fhook $D/r record -o $D/r.fhk --stack "p:ust $BIN:fhk_target" -- $BIN $N
expect_eq "$RC" 0 "fhook record --stack exit code"
run_fhook $D/rh report -q --hist 'keys=ustacktrace' $D/r.fhk
expect_eq "$RC" 0 "report --hist keys=ustacktrace exit code"
expect_stacks $D/rh.out "report --hist"

# a kernel function: where the task entered the kernel
run_fhook $D/k hist vfs_read 'keys=ustacktrace' -- fhook-workload -d 500 read 5
expect_eq "$RC" 0 "fhook hist vfs_read keys=ustacktrace exit code"
hits_events $D/k
expect_eq "$E" 0 "vfs_read events (the table is kept in the module)"
# the entry whose stack starts in read() of the workload's binary
awk '/^\{ ustacktrace:$/ { getline; first = $0; next } /^\} hitcount:/ { print $3 " " first }' \
	$D/k.out > $D/k.first
log "first frames: $(cat $D/k.first)"
reads=$(awk '$2 ~ /^(__libc_|__)?read(_nocancel)?\+0x/ && $3 ~ /fhook-workload\)$/ { n += $1 } END { print n + 0 }' $D/k.first)
expect_eq "${reads:-0}" 5 "hits of the stack that starts in the workload's read()"

# refused, with a reason
run_fhook $D/e1 hist vfs_read 'keys=ustacktrace' 'keys=common_pid if common_pid > 1' -- true
[ "$RC" -ne 0 ] && grep -q "ustacktrace: only a table kept in the module" $D/e1.err ||
	fail "user stacks of a kernel probe outside the module: exit $RC, $(cat $D/e1.err)"
run_fhook $D/e2 hist "p:ust $BIN:fhk_target" 'keys=stacktrace' -- $BIN 1
[ "$RC" -ne 0 ] && grep -q "its stack is keys=ustacktrace" $D/e2.err ||
	fail "a uprobe's kernel stack: exit $RC, $(cat $D/e2.err)"
pass "user stacks: a uprobe's two known paths (module, recording, folded), a syscall's entry from its binary"
