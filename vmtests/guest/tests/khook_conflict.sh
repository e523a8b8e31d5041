# khook_conflict: one IPMODIFY user per function.  With examples/
# fhook_deny_open.ko holding do_sys_openat2, `fhook hook` on it fails and
# names the module; with `fhook hook` holding it, the module's install
# fails (insmod EBUSY) and the kernel log names fhook's CLI.
. /fhook/lib.sh

load_fhook
insmod /fhook/fhook_deny_open.ko path=$D/denied || fail "insmod fhook_deny_open.ko failed"
if fhook hook --trace-around do_sys_openat2 --duration 1 > $D/cli.out 2> $D/cli.err; then
	fail "fhook hook on a function a module holds succeeded"
fi
log "fhook hook: $(cat $D/cli.err)"
grep -q 'module fhook_deny_open' $D/cli.err || fail "fhook hook does not name the module: $(cat $D/cli.err)"
fhook explain do_sys_openat2 > $D/explain 2>&1 || fail "fhook explain failed: $(cat $D/explain)"
grep -q 'owner: module fhook_deny_open' $D/explain || fail "fhook explain does not name the owner"
rmmod fhook_deny_open || fail "rmmod fhook_deny_open failed"

# the reverse: the CLI holds it
fhook hook --trace-around do_sys_openat2 -q > /dev/null 2>&1 &
H=$!
wait_for 30 grep -q 'do_sys_openat2.* I' $T/enabled_functions || fail "the CLI hook never armed"
dmesg -c > /dev/null
if insmod /fhook/fhook_deny_open.ko path=$D/denied 2> $D/insmod.err; then
	fail "the module installed a hook on a function fhook's CLI holds"
fi
dmesg > $D/dmesg
log "insmod: $(cat $D/insmod.err); kernel: $(grep 'hook 0' $D/dmesg)"
grep -q "hook 0 (do_sys_openat2): fhook's CLI holds it" $D/dmesg || fail "the kernel log does not name fhook's CLI"
kill -INT $H
wait $H
! grep -q '^fhook_deny_open ' /proc/modules || fail "fhook_deny_open loaded after a failed install"
# (an observing hook let go with a call inside holds fhook until it returns)
wait_for 20 rmmod fhook || fail "rmmod fhook failed"
pass "both directions refused, owners named"
