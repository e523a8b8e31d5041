# lockdown_boot: a guest booted with lockdown=integrity (its own group's
# kernel command line).  The kernel lets only signed modules in, so the
# unsigned fhook.ko is refused; fhook doctor says so as its red line (exit
# 1), and a command that needs the module fails with one clear line, not
# a hang or a crash.
. /fhook/lib.sh

L=/sys/kernel/security/lockdown
[ -e $L ] || mount -t securityfs none /sys/kernel/security 2>/dev/null
[ -e $L ] || skip "no lockdown LSM in this kernel"
grep -q 'lockdown=integrity' /proc/cmdline || fail "not booted with lockdown=integrity: $(cat /proc/cmdline)"
grep -q '\[integrity\]' $L || fail "lockdown is not integrity: $(cat $L)"
! insmod "$KO" 2> $D/insmod.err || fail "insmod of the unsigned module succeeded under lockdown=integrity"
log "insmod: $(cat $D/insmod.err)"
run_fhook $D/doc doctor
expect_eq "$RC" 1 "fhook doctor under boot-time lockdown, no module"
grep -q '^warn lockdown  *integrity: ' $D/doc.out || fail "fhook doctor: no lockdown line: $(grep lockdown $D/doc.out)"
grep -q '^FAIL module  *not loaded, and lockdown (integrity) lets only signed modules in' $D/doc.out ||
	fail "fhook doctor: $(grep module $D/doc.out)"
[ "$(grep -c '^FAIL' $D/doc.out)" = 1 ] || fail "fhook doctor: more red lines than the module's: $(grep '^FAIL' $D/doc.out)"
run_fhook $D/tr trace vfs_read -- true
expect_eq "$RC" 1 "fhook trace without the module"
expect_eq "$(wc -l < $D/tr.err)" 1 "fhook trace without the module: lines of error"
grep -q 'not loaded' $D/tr.err || fail "fhook trace: $(cat $D/tr.err)"
pass "lockdown=integrity at boot: insmod refused, doctor's one red line, trace fails cleanly"
