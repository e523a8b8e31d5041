# vfs_read_exact: fhook sees exactly the vfs_read calls the kernel's own
# function tracer sees for the same workload, and the summary agrees.
. /fhook/lib.sh

N=1000
load_fhook
run_fhook $D/f trace vfs_read -- fhook-workload read $N
expect_eq "$RC" 0 "fhook trace exit code"
n=$(count_func $D/f.out vfs_read)
all=$(count_events $D/f.out)
expect_eq "$all" "$n" "events other than vfs_read"
summary $D/f
expect_eq "$L" 0 "lost events"
expect_eq "$H" "$n" "summary hits vs event lines"
expect_eq "$E" "$n" "summary events vs event lines"
expect_eq "$(npids $D/f.out)" 1 "distinct pids (the workload only)"

tracefs_ref $D/ref vfs_read 0 fhook-workload read $N
ref=$(count_func $D/ref vfs_read)
log "fhook $n, tracefs $ref"
[ "$n" -ge $N ] || fail "fhook saw $n vfs_read for $N reads"
expect_eq "$n" "$ref" "fhook vs tracefs vfs_read count"
pass "fhook=$n tracefs=$ref hits=$H"
