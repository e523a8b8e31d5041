# notrace_filter: "'vfs_*' '!vfs_write'" keeps vfs_read (as many as the
# function tracer with set_ftrace_notrace=vfs_write) and drops vfs_write.
. /fhook/lib.sh

N=200
load_fhook
run_fhook $D/f trace 'vfs_*' '!vfs_write' -- fhook-workload rw $N
expect_eq "$RC" 0 "fhook trace exit code"
summary $D/f
expect_eq "$L" 0 "lost events"
r=$(count_func $D/f.out vfs_read) w=$(count_func $D/f.out vfs_write)
expect_eq "$w" 0 "vfs_write events despite !vfs_write"
bad=$(functions $D/f.out | grep -v '^vfs_' | head -n 3 | tr '\n' ' ')
[ -z "$bad" ] || fail "events of functions not matching vfs_*: $bad"

REF_NOTRACE=vfs_write tracefs_ref $D/ref 'vfs_*' 0 fhook-workload rw $N
rr=$(count_func $D/ref vfs_read)
expect_eq "$(count_func $D/ref vfs_write)" 0 "tracefs reference vfs_write with notrace"
[ "$r" -ge $N ] || fail "fhook saw $r vfs_read for rw $N"
expect_eq "$r" "$rr" "vfs_read fhook vs tracefs"
pass "vfs_read=$r/$rr vfs_write=0"
