# abi_abuse: fhook-abitest feeds bad input to /dev/fhook through the raw
# ABI (errnos, limits, mmap rules, privileges) and runs one real session,
# then attacks it as a CAP_PERFMON-only user (--observer); afterwards the
# CLI still traces exactly.
. /fhook/lib.sh

load_fhook
fhook-abitest > $D/abi.out 2>&1
rc=$?
cat $D/abi.out
echo "# failed checks:"
grep '^not ok\|^Bail' $D/abi.out
total=$(grep -c '^ok ' $D/abi.out) bad=$(grep -c '^not ok ' $D/abi.out)
[ "$rc" = 0 ] || fail "fhook-abitest exit $rc, $bad of $((total + bad)) checks failed: $(grep -m1 '^not ok\|^Bail' $D/abi.out)"

# The observer's attacks (fhook-abitest --observer) from a process with
# CAP_PERFMON only (and CAP_SYSLOG, to read /proc/kallsyms' addresses),
# uid 1000, inside a memory cgroup of its own: forged ring tails, hist
# keys past the data, latency and trace-around on functions that may never
# return, sessions and glob probes until refused, charged memory.
mount -t cgroup2 none /sys/fs/cgroup 2> /dev/null
CG=/sys/fs/cgroup/fhook-observer
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2> /dev/null; then
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control
	mkdir -p $CG
fi
mode=$(stat -c %a /dev/fhook)
chmod 0666 /dev/fhook
log "the observer's attacks"
sh -c "[ -d $CG ] && echo \$\$ > $CG/cgroup.procs; exec fhook-capexec 1000 1000 - perfmon,syslog -- fhook-abitest --observer" > $D/obs.out 2>&1
orc=$?
# the CLI names the per-user limit: one session allowed, a second refused
log "max_user_sessions=1 through the CLI"
MU=/sys/module/fhook/parameters/max_user_sessions
old_max=$(cat $MU)
echo 1 > $MU
fhook-capexec 1000 1000 - perfmon,syslog -- fhook trace vfs_read > /dev/null 2> $D/one.err &
P=$!
wait_for 30 sh -c "fhook status 2>/dev/null | grep -qx 'sessions: 1'" || fail "the first session did not open: $(cat $D/one.err)"
fhook-capexec 1000 1000 - perfmon,syslog -- fhook trace vfs_read --duration 1 > /dev/null 2> $D/two.err
expect_eq "$?" 1 "a second session past max_user_sessions=1: exit code"
expect_eq "$(wc -l < $D/two.err)" 1 "its error lines"
grep -q 'max_user_sessions' $D/two.err || fail "the error does not name the limit: $(cat $D/two.err)"
kill -INT $P
wait $P
echo "$old_max" > $MU
# one user's whole share of around slots and of fhook's memory leaves
# another user its own (before 2026-12-03 one user could take them all):
# uid 1000 holds its share (fhook-abitest --hold-share), then uid 1001
# takes its whole share too; uid 1000's 32 MiB rings are refused with one
# line naming the share
log "two users' shares"
fhook-capexec 1000 1000 - perfmon,syslog -- fhook-abitest --hold-share > $D/hold1000.out 2>&1 &
H0=$!
wait_for 60 grep -q '^# holding' $D/hold1000.out || fail "uid 1000 did not take its share: $(cat $D/hold1000.out)"
fhook-capexec 1001 1001 - perfmon,syslog -- fhook-abitest --hold-share > $D/hold1001.out 2>&1 &
H1=$!
wait_for 60 grep -q '^# holding' $D/hold1001.out || fail "uid 1001 did not take its share: $(cat $D/hold1001.out)"
log "uid 1000 $(grep '^# holding' $D/hold1000.out), uid 1001 $(grep '^# holding' $D/hold1001.out)"
fhook-capexec 1000 1000 - perfmon,syslog -- fhook trace -b 32768 vfs_read --duration 1 \
	> /dev/null 2> $D/ring1000.err
rc=$?
kill $H0 $H1
wait $H0 $H1
for u in 1000 1001; do
	grep -q '^not ok' $D/hold$u.out && fail "uid $u holding its share: $(grep -m1 '^not ok' $D/hold$u.out)"
done
expect_eq "$rc" 1 "uid 1000's rings past its share: exit code"
expect_eq "$(wc -l < $D/ring1000.err)" 1 "its error lines"
grep -q 'max_user_mem_pct' $D/ring1000.err || fail "the error does not name the memory share: $(cat $D/ring1000.err)"
chmod "$mode" /dev/fhook
cat $D/obs.out
obs=$(grep -c '^ok ' $D/obs.out) obad=$(grep -c '^not ok ' $D/obs.out)
[ "$orc" = 0 ] || fail "fhook-abitest --observer exit $orc, $obad of $((obs + obad)) checks failed: $(grep -m1 '^not ok\|^Bail' $D/obs.out)"
wait_for 30 no_sessions || fail "the observer's sessions outlived it"

run_fhook $D/f trace vfs_read -- fhook-workload read 300
expect_eq "$RC" 0 "fhook trace exit code after the abuse"
n=$(count_func $D/f.out vfs_read)
tracefs_ref $D/ref vfs_read 0 fhook-workload read 300
expect_eq "$n" "$(count_func $D/ref vfs_read)" "vfs_read after the abuse: fhook vs tracefs"
globs=$(sed -n 's/.*glob probes until the user.s share of fhook.s budget is spent: \([0-9]*\) of.*/\1/p' $D/obs.out)
charged=$(sed -n 's/.*memory cgroup: \([0-9]*\) KiB.*/\1/p' $D/obs.out)
around=$(sed -n 's/.*trace-around hooks one user holds: \([0-9]*\),.*/\1/p' $D/obs.out)
log "observer tests' seconds: $(sed -n 's/^# observer test [0-9]*: \(.*\) s$/\1/p' $D/obs.out | tr '\n' ' ')"
pass "$total checks as root, $obs as a CAP_PERFMON user (glob probes before EDQUOT: $globs, pid bitmap charged: ${charged:-?} KiB, around hooks: $around; seconds $(sed -n 's/^# observer test [0-9]*: \(.*\) s$/\1/p' $D/obs.out | tr '\n' '/')); then vfs_read=$n"
