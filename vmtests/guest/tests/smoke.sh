# smoke: the harness itself, no fhook needed.  The guest runs the expected
# kernel, busybox and tracefs work, and the tracefs reference used by the
# comparison tests is sane: exact counts, stable across runs, right pids.
. /fhook/lib.sh

[ "$(uname -r)" = "$REL" ] || fail "guest runs $(uname -r), expected $REL"
[ "$(echo a b c | wc -w)" = 3 ] && [ "$(seq 5 | tail -n 1)" = 5 ] || fail "busybox applets broken"
[ "$(nproc)" -ge 2 ] || fail "guest has $(nproc) CPU(s), 2 expected (-smp 2)"
[ -r $T/available_filter_functions ] || fail "tracefs not mounted at $T"
grep -qx vfs_read $T/available_filter_functions || fail "vfs_read is not in available_filter_functions"
! attached || fail "enabled_functions not empty at start"
log "$(wc -l < $T/available_filter_functions) traceable functions"

tracefs_ref $D/r1 vfs_read 0 fhook-workload read 1000
tracefs_ref $D/r2 vfs_read 0 fhook-workload read 1000
a=$(count_func $D/r1 vfs_read) b=$(count_func $D/r2 vfs_read)
log "vfs_read of 'read 1000': $a then $b"
[ "$a" -ge 1000 ] || fail "tracefs counted $a vfs_read for 1000 reads"
expect_eq "$a" "$b" "tracefs count not stable across two runs"
expect_eq "$(npids $D/r1)" 1 "events from more than the workload's pid"
[ "$a" = 1000 ] || log "note: $a vfs_read, not exactly 1000"

tracefs_ref $D/rw 'vfs_read vfs_write' 0 fhook-workload rw 200
r=$(count_func $D/rw vfs_read) w=$(count_func $D/rw vfs_write)
log "'rw 200': vfs_read $r vfs_write $w"
[ "$r" -ge 200 ] && [ "$w" -ge 200 ] || fail "tracefs counted vfs_read $r vfs_write $w for rw 200"

tracefs_ref $D/f1 vfs_read 1 fhook-workload fork 4
tracefs_ref $D/f2 vfs_read 1 fhook-workload fork 4
f1=$(count_func $D/f1 vfs_read) f2=$(count_func $D/f2 vfs_read) p=$(npids $D/f1)
log "'fork 4' with function-fork: $f1 then $f2 vfs_read from $p pids"
[ "$f1" -ge 500 ] || fail "function-fork reference counted $f1 vfs_read for fork 4 (>= 500 expected)"
expect_eq "$f1" "$f2" "function-fork reference not stable"
expect_eq "$p" 5 "function-fork reference: distinct pids"

# the same filter grammar the CLI documents
tracefs_ref $D/g 'vfs_*' 0 fhook-workload rw 200
gr=$(count_func $D/g vfs_read) gw=$(count_func $D/g vfs_write)
expect_eq "$gr" "$r" "'vfs_*' vs 'vfs_read vfs_write': vfs_read"
expect_eq "$gw" "$w" "'vfs_*' vs 'vfs_read vfs_write': vfs_write"
log "'vfs_*' functions: $(functions $D/g | tr '\n' ' ')"
! attached || fail "enabled_functions not empty after tracefs_reset"

# kernel text patching (static keys and calls of tracepoints) must not
# crash the emulator: multi-threaded TCG does (see vmtests/README.md)
for _ in 1 2 3 4 5 6 7 8 9 10; do
	for e in sched/sched_wakeup sched/sched_switch sched/sched_process_fork; do
		echo 1 > $T/events/$e/enable && echo 0 > $T/events/$e/enable ||
			fail "cannot toggle the $e event"
	done
done

pass "read1000=$a/$b rw200=$r/$w fork4=$f1/$f2 pids=$p"
