# unprivileged: only CAP_SYS_ADMIN or CAP_PERFMON opens /dev/fhook (uid
# 65534, a 0666 node, uid 0 without those two: EACCES/EPERM; either one
# alone: works), and a session fd in unprivileged hands (fork + setuid,
# SCM_RIGHTS, capset, a new user namespace) gets EPERM for every ioctl and
# mmap, and changes nothing.
. /fhook/lib.sh

load_fhook
grep -q '^nobody:x:65534:' /etc/passwd || fail "no user nobody (65534) in the guest"
run_logged $D/priv.out fhook-privtest
rc=$RC
cat $D/priv.out
total=$(grep -c '^ok ' $D/priv.out) bad=$(grep -c '^not ok ' $D/priv.out)
[ "$rc" = 0 ] || fail "fhook-privtest exit $rc, $bad of $((total + bad)) checks failed: $(grep -m1 '^not ok\|^Bail' $D/priv.out)"
wait_for 10 detached || fail "enabled_functions not empty afterwards"
pass "$total checks$(grep -q 'can read the ring' $D/priv.out && echo '; note: MADV_DOFORK hands the ring to a child')"
