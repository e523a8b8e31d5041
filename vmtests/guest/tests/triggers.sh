# triggers: each trigger action runs on exactly the hits its filter and
# count select, checked against the read sizes the workload fixes
# (fhook-workload open: read I % 7 + 1 bytes, opens before each read).
. /fhook/lib.sh

N=21
RD="p:rd vfs_read cnt=$R3:u64"
load_fhook
cnts() { sed -n 's/.*: rd: (vfs_read+0x[0-9a-f]*\/0x[0-9a-f]*) cnt=\([0-9]*\)$/\1/p' "$1" | tr '\n' ' '; }

# traceoff at the first 4-byte read: that hit is not recorded either
run_fhook $D/a trace "$RD" --trigger 'rd=traceoff:1 if cnt == 4' -- fhook-workload open $N
expect_eq "$RC" 0 "traceoff: exit code"
[ "$(cnts $D/a.out)" = "1 2 3 " ] || fail "traceoff: recorded '$(cnts $D/a.out)', want 1 2 3"

# traceoff at 2, traceon at 5: 1 5 6 7 of every 7
run_fhook $D/b trace "$RD" --trigger 'rd=traceoff if cnt == 2' --trigger 'rd=traceon if cnt == 5' \
	-- fhook-workload open $N
[ "$(cnts $D/b.out)" = "1 5 6 7 1 5 6 7 1 5 6 7 " ] || fail "traceoff/on: recorded '$(cnts $D/b.out)'"

# stacktrace:2 -> the first two events carry a stack
run_fhook $D/c trace "$RD" --trigger 'rd=stacktrace:2' -- fhook-workload open $N
expect_eq "$(grep -c '^ => vfs_read$' $D/c.out)" 2 "stacks from stacktrace:2"
awk '/: rd: / { n++ } /^ => vfs_read$/ && n > 2 { bad = 1 } END { exit bad }' $D/c.out ||
	fail "a stack after the second event"

# disable:op after a 3-byte read, enable:op after a 6-byte read: the two
# opens of iterations I % 7 = 3, 4, 5 are not recorded
run_fhook $D/d trace "$RD" 'p:op do_sys_openat2' --trigger 'rd=disable:op if cnt == 3' \
	--trigger 'rd=enable:op if cnt == 6' -- fhook-workload open $N
nop=$(grep -c ': op: ' $D/d.out)
expect_eq "$nop" "$((2 * (N - 9)))" "op events with op disabled for 3 of every 7 iterations"
expect_eq "$(grep -c ': rd: ' $D/d.out)" "$N" "rd events"

# snapshot:1 on a flight recorder: the rings are printed when it fires
run_fhook $D/e trace --overwrite -b 64 "$RD" --trigger 'rd=snapshot:1 if cnt == 7' \
	-- fhook-workload -d 300 open $N
expect_eq "$RC" 0 "snapshot: exit code"
grep -q '^fhook: snapshot 1 (trigger): 6 records$' $D/e.err ||
	fail "no 'snapshot 1 (trigger): 6 records' on stderr: $(grep snapshot $D/e.err)"
[ "$(cnts $D/e.out | cut -d' ' -f1-6)" = "1 2 3 4 5 6" ] || fail "snapshot printed '$(cnts $D/e.out)'"

# bad triggers
run_fhook $D/x trace "$RD" --trigger 'nope=traceoff'
[ "$RC" = 2 ] && grep -q "no probe 'nope'" $D/x.err || fail "unknown event: $(cat $D/x.err)"
run_fhook $D/y trace "$RD" --trigger 'rd=explode'
[ "$RC" = 2 ] && grep -q "unknown action 'explode'" $D/y.err || fail "unknown action: $(cat $D/y.err)"
pass "traceoff, traceon, stacktrace:N, enable/disable, snapshot exact"
