# failed_unregister: when ftrace refuses to unregister a probe (as after
# ftrace_kill(): -ENODEV while its call sites still call in; here made to
# happen by fhook_failunreg.ko), closing the session keeps everything the
# probe's callbacks reach (session, rings, counters) and the module,
# instead of freeing it under them (a use-after-free: KASAN on the debug
# kernel).  Leaves fhook loaded and its ops attached (/tmp/expect-dirty):
# the last test of its boot.
. /fhook/lib.sh

load_fhook
insmod /fhook/fhook_failunreg.ko || fail "insmod fhook_failunreg.ko"
fhook trace vfs_read > /dev/null 2> $D/err &
F=$!
wait_for 30 grep -q '^vfs_read' $T/enabled_functions || fail "vfs_read not attached: $(cat $D/err)"
# every unregister fails, as after ftrace_kill(): STOP's and close's
echo 100 > /sys/module/fhook_failunreg/parameters/fail
kill -INT $F
wait $F
log "fhook exit status $?"
echo 0 > /sys/module/fhook_failunreg/parameters/fail
rmmod fhook_failunreg
dmesg | grep -q ' [1-9][0-9]* calls failed' || fail "the unregister did not fail"
dmesg | grep -q 'fhook: session kept' || fail "no 'session kept' in the kernel log"
grep -q '^vfs_read' $T/enabled_functions || fail "the stuck ops is not attached any more"
# the kept probe's callback runs on every read: into memory still owned
for i in $(seq 200); do dd if=/etc/passwd of=/dev/null bs=64 2>/dev/null; done
touch /tmp/expect-dirty
rmmod fhook 2> /dev/null && fail "fhook unloaded although a session had to be kept"
pass "session kept, 200 reads through the stuck callback"
