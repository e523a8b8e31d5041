# khook_api: the hook API's contract, with vmtests/khooktest and the
# examples: all-or-none install (a missing function, a conflict inside
# the array), replacements that call their original and a function
# another replacement holds, entry/exit handlers with arguments and return
# values, a stack trace from inside a replacement, an exit handler that
# changes a return value, a slow-call logger.
. /fhook/lib.sh

M=/fhook/fhook_khook_test.ko
PRM=/sys/module/fhook_khook_test/parameters
load_fhook
has_feature hook || skip "this kernel's ftrace cannot change a call's registers: no hooks (docs/arm64.md)"
dmesg -c > /dev/null

# all or none: the second hook names a function that does not exist
if insmod $M mode=missing 2> $D/err; then
	fail "install with a missing function succeeded"
fi
dmesg > $D/dmesg
grep -q 'hook 1 (fhook_no_such_function): no such function' $D/dmesg ||
	fail "no kernel line naming the missing hook: $(tail -n 3 $D/dmesg)"
! grep -q vfs_read $T/enabled_functions || fail "vfs_read left hooked after a failed install"
fhook status > $D/status 2>&1
! grep -q fhook_khook_test $D/status || fail "the ledger keeps a failed install: $(cat $D/status)"
log "$(grep 'no such function' $D/dmesg)"

# a conflict inside one array
dmesg -c > /dev/null
if insmod $M mode=twice 2> $D/err; then
	fail "an array hooking vfs_read twice was installed"
fi
grep -q 'hook 1 (vfs_read): module fhook_khook_test holds it' /dev/kmsg 2>/dev/null ||
	dmesg | grep -q 'hook 1 (vfs_read): module fhook_khook_test holds it' ||
	fail "no kernel line naming the owner: $(dmesg | tail -n 3)"
! grep -q vfs_read $T/enabled_functions || fail "vfs_read left hooked after a conflict"

# nested: vfs_read's original calls rw_verify_area, hooked too
insmod $M mode=nested || fail "insmod mode=nested failed"
fhook-workload read 500 || fail "reads under two replacements failed"
r=$(cat $PRM/read_calls)
v=$(cat $PRM/verify_calls)
[ "$r" -ge 500 ] || fail "vfs_read replacement ran $r times for 500 reads"
[ "$v" -ge 500 ] || fail "rw_verify_area replacement ran $v times (vfs_read's original calls it)"
rmmod fhook_khook_test || fail "rmmod (nested) failed"
log "nested: vfs_read $r, rw_verify_area $v"

# entry and exit handlers: count asked, bytes returned
insmod $M mode=observe || fail "insmod mode=observe failed"
fhook-workload read 300 || fail "reads under observation failed"
expect_eq "$(cat $PRM/entries)" 300 "entry handler calls for fhook-workload's reads"
expect_eq "$(cat $PRM/exits)" 300 "exit handler calls"
expect_eq "$(cat $PRM/bytes)" 300 "bytes returned (1 per read) seen at exit"
rmmod fhook_khook_test || fail "rmmod (observe) failed"

# a module's function by "module:name"; its module goes first: fhook
# removes the hook (the notifier), then the test module unloads cleanly
load_workmod
insmod $M mode=module || fail "insmod mode=module failed"
echo ret 50 > /proc/fhook_testmod_hooks
expect_eq "$(cat $PRM/mod_calls)" 50 "calls of fhook_testmod:fhook_testmod_ret seen"
expect_eq "$(cat $PRM/mod_sum)" 2500 "the sum of their return values (2i+1, i < 50)"
dmesg -c > /dev/null
rmmod fhook_testmod || fail "rmmod fhook_testmod (hooked by another module) failed"
dmesg | grep -q 'fhook_testmod: its function fhook_testmod_ret.*hooked by fhook_khook_test, is going: hook removed' ||
	fail "no kernel line for the hook removed with its function's module: $(dmesg | tail -n 3)"
fhook status > $D/status 2>&1
grep -q 'module hooks: 0' $D/status || fail "the ledger keeps a hook whose function went: $(cat $D/status)"
rmmod fhook_khook_test || fail "rmmod (module) failed"

# a module that forgets to remove its hooks: fhook removes them as it goes
insmod $M mode=nested leak=1 || fail "insmod mode=nested leak=1 failed"
dmesg -c > /dev/null
rmmod fhook_khook_test || fail "rmmod of a module that left its hooks failed"
dmesg | grep -q 'fhook_khook_test left its hook on vfs_read.* installed: removed' ||
	fail "no kernel line for the hooks left installed: $(dmesg | tail -n 3)"
! grep -q 'vfs_read\|rw_verify_area' $T/enabled_functions || fail "hooks left behind after the module went"
fhook-workload read 10 || fail "reads after the leaking module went"

# a stack trace from inside a replacement unwinds through it
dmesg -c > /dev/null
insmod $M mode=stack || fail "insmod mode=stack failed"
ln -sf /fhook/bin/fhook-workload $D/fhook-stack
$D/fhook-stack read 3 || fail "the stack workload failed"
expect_eq "$(cat $PRM/stacks)" 1 "stack traces printed"
rmmod fhook_khook_test
dmesg | sed -n '/stack from inside a replacement/,/end of stack/p' | sed -n 's/.* frame //p' > $D/stack
sed 's/^/#   /' $D/stack
# ORC (arm64: frame records) unwinds from the replacement through fhook's
# trampoline (which stands in for vfs_read) into its caller and up to the
# system call
order=$(awk -v s=$SYSENTRY '/^test_vfs_read/ { t = NR } /^fhook_around_common/ { a = NR } /^ksys_read/ { k = NR }
	$0 ~ "^" s { d = NR } END { print (t && a > t && k > a && d > k) ? "ok" : "bad" }' $D/stack)
expect_same "$order" ok "the replacement, fhook_around_common, ksys_read, $SYSENTRY in order"

# an exit handler changes a return value (examples/fhook_fail_comm.ko)
insmod /fhook/fhook_fail_comm.ko comm=fhook-victim || fail "insmod fhook_fail_comm.ko failed"
ln -sf /fhook/bin/fhook-workload $D/fhook-victim
if $D/fhook-victim open 3 > $D/victim.out 2>&1; then
	fail "fhook-victim's opens succeeded: $(cat $D/victim.out)"
fi
log "victim: $(head -n 1 $D/victim.out)"
fhook-workload open 3 || fail "another program's opens failed"
[ "$(cat /sys/module/fhook_fail_comm/parameters/failed)" -ge 1 ] || fail "the failed counter did not move"
rmmod fhook_fail_comm || fail "rmmod fhook_fail_comm failed"
$D/fhook-victim open 3 || fail "fhook-victim's opens fail after rmmod"

# the slow-call logger (entry/exit with arguments)
dmesg -c > /dev/null
insmod /fhook/fhook_slow_log.ko func=hrtimer_nanosleep threshold_us=200000 ||
	fail "insmod fhook_slow_log.ko failed"
sleep 0.3
sleep 0.01
sleep 0.4
rmmod fhook_slow_log || fail "rmmod fhook_slow_log failed"
dmesg | grep 'fhook_slow_log:.*hrtimer_nanosleep(' > $D/slow
sed 's/^/#   /' $D/slow
expect_eq "$(grep -c 'sleep\[[0-9]*\] hrtimer_nanosleep(.*) = 0 took' $D/slow)" 2 "slow calls logged (0.3 s and 0.4 s, not 0.01 s)"
# (an observing hook let go with a call inside holds fhook until it returns)
wait_for 20 rmmod fhook || fail "rmmod fhook failed"
pass "all-or-none, nested $r/$v, observe 300/300, stack, retval, slow log"
