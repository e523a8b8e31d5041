# failed_unregister: when ftrace refuses to unregister an ops (as after
# ftrace_kill(): -ENODEV while its call sites still call in; here made to
# happen by fhook_failunreg.ko), fhook keeps everything the ops' callbacks
# reach and the module, instead of freeing it under them (a use-after-free:
# KASAN on the debug kernel): a khook API hook whose module goes, a call
# graph one of whose ops stays, a function probe whose session closes.  Leaves fhook loaded and its ops attached (/tmp/expect-dirty):
# the last test of its boot.
. /fhook/lib.sh

load_fhook
insmod /fhook/fhook_failunreg.ko || fail "insmod fhook_failunreg.ko"
FU=/sys/module/fhook_failunreg/parameters

# 1. a hook of the khook API (the deny_open example) whose unregister
# fails as its module goes: kept with fhook, its calls go straight to the
# function (the module's replacement is gone), nothing freed under ftrace
echo secret > $D/denied
insmod /fhook/fhook_deny_open.ko path=$D/denied || fail "insmod fhook_deny_open.ko"
! cat $D/denied > /dev/null 2>&1 || fail "fhook_deny_open did not deny its path"
echo 1 > $FU/fail
rmmod fhook_deny_open || fail "rmmod fhook_deny_open"
echo 0 > $FU/fail
dmesg | grep -q 'fhook_deny_open: do_sys_openat2.*unregistering the hook failed.*kept' ||
	fail "no 'kept' line for the hook: $(dmesg | grep fhook_deny_open | tail -n 3)"
for i in $(seq 100); do cat $D/denied > /dev/null || fail "open $i after the stuck hook"; done
expect_same "$(cat $D/denied)" secret "the once-denied file, read through the stuck hook's ops"

# 2. a call graph whose entry ops unregisters but whose "every other
# function" ops does not: the session keeps the probe that embeds it
fhook graph --depth 2 vfs_read > /dev/null 2> $D/gerr &
G=$!
wait_for 30 grep -q '^vfs_read' $T/enabled_functions || fail "graph: vfs_read not attached: $(cat $D/gerr)"
echo 1 > $FU/skip
echo 1 > $FU/fail
kill -INT $G
wait $G
log "fhook graph exit status $?"
echo 0 > $FU/fail
echo 0 > $FU/skip
expect_eq "$(dmesg | grep -c 'fhook: session kept')" 1 "sessions kept after the graph's partial unregister"
for i in $(seq 100); do dd if=/etc/passwd of=/dev/null bs=64 2>/dev/null; done

# 3. a function probe whose ops never unregisters
fhook trace vfs_read > /dev/null 2> $D/err &
F=$!
wait_for 30 grep -q '^vfs_read' $T/enabled_functions || fail "vfs_read not attached: $(cat $D/err)"
# every unregister fails, as after ftrace_kill(): STOP's and close's
echo 100 > $FU/fail
kill -INT $F
wait $F
log "fhook exit status $?"
echo 0 > $FU/fail
rmmod fhook_failunreg
dmesg | grep -q ' [1-9][0-9]* calls failed' || fail "the unregister did not fail"
expect_eq "$(dmesg | grep -c 'fhook: session kept')" 2 "sessions kept"
grep -q '^vfs_read' $T/enabled_functions || fail "the stuck ops is not attached any more"
# the kept probe's callback runs on every read: into memory still owned
for i in $(seq 200); do dd if=/etc/passwd of=/dev/null bs=64 2>/dev/null; done
touch /tmp/expect-dirty
rmmod fhook 2> /dev/null && fail "fhook unloaded although a session had to be kept"
pass "a stuck khook, a graph's stuck ops, a stuck function probe: each kept, 200 reads through them"
