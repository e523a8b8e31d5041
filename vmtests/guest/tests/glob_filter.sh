# glob_filter: 'vfs_*' hooks only vfs_* functions, and the vfs_read and
# vfs_write counts equal the function tracer's with the same filter.
. /fhook/lib.sh

N=200
load_fhook
run_fhook $D/f trace 'vfs_*' -- fhook-workload rw $N
expect_eq "$RC" 0 "fhook trace exit code"
summary $D/f
expect_eq "$L" 0 "lost events"
expect_eq "$(count_events $D/f.out)" "$E" "event lines vs summary events"
bad=$(functions $D/f.out | grep -v '^vfs_' | head -n 3 | tr '\n' ' ')
[ -z "$bad" ] || fail "events of functions not matching vfs_*: $bad"
r=$(count_func $D/f.out vfs_read) w=$(count_func $D/f.out vfs_write)
log "fhook functions: $(functions $D/f.out | tr '\n' ' ')"

tracefs_ref $D/ref 'vfs_*' 0 fhook-workload rw $N
rr=$(count_func $D/ref vfs_read) rw=$(count_func $D/ref vfs_write)
log "tracefs functions: $(functions $D/ref | tr '\n' ' ')"
log "vfs_read fhook $r tracefs $rr; vfs_write fhook $w tracefs $rw"
[ "$r" -ge $N ] && [ "$w" -ge $N ] || fail "fhook saw vfs_read $r vfs_write $w for rw $N"
expect_eq "$r" "$rr" "vfs_read fhook vs tracefs"
expect_eq "$w" "$rw" "vfs_write fhook vs tracefs"
pass "vfs_read=$r/$rr vfs_write=$w/$rw functions=$(functions $D/f.out | wc -l)"
