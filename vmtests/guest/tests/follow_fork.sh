# follow_fork: "-- fhook-workload fork 4" traces the command and its 4
# children (5 pids), as many events as the function tracer with
# options/function-fork=1.  A thread that execs hands its pid-filter bit
# to the pid it takes: a process later given its old tid is not traced
# (fhook-execpid).
. /fhook/lib.sh

load_fhook
run_fhook $D/f trace vfs_read -- fhook-workload fork 4
expect_eq "$RC" 0 "fhook trace exit code"
summary $D/f
expect_eq "$L" 0 "lost events"
n=$(count_func $D/f.out vfs_read) p=$(npids $D/f.out)
expect_eq "$(count_events $D/f.out)" "$E" "event lines vs summary events"
tracefs_ref $D/ref vfs_read 1 fhook-workload fork 4
ref=$(count_func $D/ref vfs_read) rp=$(npids $D/ref)
log "fhook $n events from $p pids; tracefs $ref from $rp pids"
expect_eq "$p" 5 "distinct pids"
expect_eq "$n" "$ref" "fhook vs tracefs vfs_read count"
run_checks $D/execpid.out fhook-execpid
pass "events=$n/$ref pids=$p; exec'd thread's old tid not traced"
