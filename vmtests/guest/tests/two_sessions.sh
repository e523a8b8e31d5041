# two_sessions: two fhook trace sessions at once on overlapping probes
# (vfs_read, and vfs_read+vfs_write), each exact for its own command.
. /fhook/lib.sh

load_fhook
fhook trace vfs_read -- fhook-workload -d 5000 read 1000 > $D/a.out 2> $D/a.err &
A=$!
fhook trace vfs_read vfs_write -- fhook-workload -d 5000 rw 700 > $D/b.out 2> $D/b.err &
B=$!
# both sessions armed at the same time: two ftrace_ops on vfs_read
wait_for 15 grep -q '^vfs_read (2)' $T/enabled_functions && both=yes || both=no
log "enabled_functions while both run: $(grep '^vfs_' $T/enabled_functions | tr '\n' ';')"
wait $A
ra=$?
wait $B
rb=$?
sed 's/^/# a: /' $D/a.err
sed 's/^/# b: /' $D/b.err
expect_eq "$ra" 0 "session A exit code"
expect_eq "$rb" 0 "session B exit code"
[ "$both" = yes ] || fail "never saw both sessions' ops on vfs_read in enabled_functions"

summary $D/a
expect_eq "$L" 0 "session A lost events"
summary $D/b
expect_eq "$L" 0 "session B lost events"
a=$(count_func $D/a.out vfs_read)
expect_eq "$(count_events $D/a.out)" "$a" "session A: events other than vfs_read"
br=$(count_func $D/b.out vfs_read) bw=$(count_func $D/b.out vfs_write)
expect_eq "$(npids $D/a.out)" 1 "session A pids"
expect_eq "$(npids $D/b.out)" 1 "session B pids"

tracefs_ref $D/ra vfs_read 0 fhook-workload read 1000
tracefs_ref $D/rb 'vfs_read vfs_write' 0 fhook-workload rw 700
ra=$(count_func $D/ra vfs_read) rbr=$(count_func $D/rb vfs_read) rbw=$(count_func $D/rb vfs_write)
log "A: vfs_read $a (tracefs $ra); B: vfs_read $br (tracefs $rbr) vfs_write $bw (tracefs $rbw)"
expect_eq "$a" "$ra" "session A vfs_read vs tracefs"
expect_eq "$br" "$rbr" "session B vfs_read vs tracefs"
expect_eq "$bw" "$rbw" "session B vfs_write vs tracefs"
pass "A=$a B=$br+$bw"
