# unprivileged: who may do what with /dev/fhook (fhook-privtest).
# Opening: only CAP_SYS_ADMIN or CAP_PERFMON (uid 65534, a 0666 node, uid 0
# without those two: EACCES/EPERM; either one alone: works), and a session
# fd in unprivileged hands (fork + setuid, SCM_RIGHTS, capset, a new user
# namespace) gets EPERM for every ioctl and mmap, and changes nothing.
# Then the per-ioctl policy, row by row, as root, uid 0 with only
# CAP_PERFMON, uid 0 with only CAP_SYS_ADMIN, uid 65534 with only
# CAP_PERFMON and uid 65534 without capabilities holding root's fd:
# observing (rings, function/direct/kprobe/tracepoint/uprobe probes,
# trace-around hooks, filters, START/STOP, STATS, SNAPSHOT, triggers,
# LATENCY, DIRECT_MODIFY, mmap) needs only CAP_PERFMON; RETURN/REDIRECT
# hooks need CAP_SYS_ADMIN and lab mode; READ_TEXT needs CAP_SYS_RAWIO.
# Run twice: with the module loaded normally (RETURN/REDIRECT refused to
# everyone), then with lab=1 (taints the kernel, fine here), where a
# session holding a RETURN hook (armed on fhook_testmod_ret, which nobody
# calls) must refuse every ioctl and mmap to a CAP_PERFMON-only holder.
# The normal module is loaded again at the end.
. /fhook/lib.sh

grep -q '^nobody:x:65534:' /etc/passwd || fail "no user nobody (65534) in the guest"

TOTAL=0
# privtest NAME: run fhook-privtest into $D/NAME.out, fail on any failed
# check; adds its checks to TOTAL
privtest() {
	run_logged "$D/$1.out" fhook-privtest
	cat "$D/$1.out"
	_ok=$(grep -c '^ok ' "$D/$1.out") _bad=$(grep -c '^not ok ' "$D/$1.out")
	[ "$RC" = 0 ] || fail "fhook-privtest ($1 module) exit $RC, $_bad of $((_ok + _bad)) checks failed: $(grep -m1 '^not ok\|^Bail' "$D/$1.out")"
	wait_for 10 detached || fail "enabled_functions not empty after the $1 run: $(cat "$T/enabled_functions")"
	TOTAL=$((TOTAL + _ok))
}

# 1. the module as normally loaded
unload_fhook
load_fhook
log "run 1: fhook loaded normally"
privtest normal
grep -q '^# policy table: lab mode off' "$D/normal.out" ||
	fail "normal module: the program did not see lab mode off"

# 2. lab mode; fhook_testmod gives the RETURN hook a target nobody calls
unload_fhook
load_workmod
insmod "$KO" lab=1 || fail "insmod $KO lab=1 failed (see dmesg)"
wait_for 5 test -c /dev/fhook || fail "/dev/fhook did not appear after insmod lab=1"
log "run 2: fhook loaded with lab=1"
privtest lab
grep -q '^# policy table: lab mode on' "$D/lab.out" ||
	fail "lab=1: the program did not see FHOOK_FEAT_LAB"
grep -q '^ok [0-9]* - root arms a session holding a RETURN hook on fhook_testmod_ret' "$D/lab.out" ||
	fail "lab=1: the RETURN hook session was not armed (fhook_testmod_ret not found?)"

# the normal module again
unload_fhook
load_fhook
pass "$TOTAL checks: open, unprivileged fds, the per-ioctl policy without and with lab=1"
