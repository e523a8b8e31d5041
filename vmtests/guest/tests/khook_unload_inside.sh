# khook_unload_inside: a task blocked inside the hooked function (an open
# of a FIFO without a writer, inside do_sys_openat2 below the example's
# replacement) while its module is removed: rmmod waits for it, and only
# it (other modules load and unload meanwhile, and FHOOK_IOC_KHOOKS into a
# buffer that faults holds none of them up), the task completes normally,
# the module goes, nothing oopses or leaks.
. /fhook/lib.sh

load_fhook
has_feature hook || skip "this kernel's ftrace cannot change a call's registers: no hooks (docs/arm64.md)"
mkfifo $D/fifo
insmod /fhook/fhook_deny_open.ko path=$D/denied || fail "insmod fhook_deny_open.ko failed"
cat $D/fifo > $D/read.out 2>&1 &
R=$!
wait_for 10 sh -c "fhook status 2>/dev/null | grep do_sys_openat2 | grep -q 'inside=[1-9]'" ||
	fail "the reader never showed inside the hook: $(fhook status 2>&1)"
# the ledger (the hook is on it) read into a buffer that faults until
# released (userfaultfd) holds nothing a module load or unload needs
# (where the kernel has userfaultfd: not the debug kernel's config)
fhook-uffd-khooks /fhook/fhook_testmod.ko > $D/uffd.out 2>&1
RC=$?
[ $RC = 0 ] || [ $RC = 77 ] || fail "KHOOKS into a faulting buffer: $(tail -n 3 $D/uffd.out)"
log "$(tail -n 1 $D/uffd.out)"
rmmod fhook_deny_open 2> $D/rmmod.err &
M=$!
sleep 2
kill -0 $M 2>/dev/null || fail "rmmod returned while a task was inside the hook: $(cat $D/rmmod.err)"
kill -0 $R 2>/dev/null || fail "the reader ended before the FIFO had a writer"
# meanwhile, other modules come and go (the module notifier runs for
# them), a failed insmod included: nothing waits for the hook above
# (before 2026-12-02 they all hung in D state behind its global mutex)
( insmod /fhook/fhook_testmod.ko && rmmod fhook_testmod && ! insmod /fhook/fhook_khook_test.ko mode=missing 2>/dev/null ) > $D/others.out 2>&1 &
O=$!
wait_for 20 sh -c "! kill -0 $O 2>/dev/null" ||
	fail "another module's insmod/rmmod hung while a hook drained: $(cat /proc/$O/stack 2>/dev/null | head -n 5)"
wait $O
expect_eq "$?" 0 "another module loaded and removed, a failed insmod refused, while a hook drained"
log "rmmod waits; writing the FIFO"
echo hello > $D/fifo
wait $R
RC=$?
expect_eq "$RC" 0 "the reader's exit status"
expect_same "$(cat $D/read.out)" hello "what the reader read"
wait $M
expect_eq "$?" 0 "rmmod's exit status ($(cat $D/rmmod.err))"
! grep -q '^fhook_deny_open ' /proc/modules || fail "fhook_deny_open still loaded"

# a module hooking its own unload path (the delete_module syscall) removes
# the hook from inside it: rmmod must not wait for itself (before
# 2026-12-02 it hung for good); the call returns later without the gone
# module's handlers, and fhook is free to go once it has
dmesg -c > /dev/null
insmod /fhook/fhook_khook_test.ko mode=self || fail "insmod fhook_khook_test.ko mode=self"
rmmod fhook_khook_test 2> $D/self.err &
M=$!
wait_for 20 sh -c "! kill -0 $M 2>/dev/null" ||
	fail "rmmod of a module hooking its own unload path hung: $(cat /proc/$M/stack 2>/dev/null | head -n 5)"
wait $M
expect_eq "$?" 0 "rmmod of the self-hooking module ($(cat $D/self.err))"
dmesg | grep -q 'hook: 1 calls still inside the hooked function, freed when they return' ||
	fail "no 'calls still inside ... freed when they return' line: $(dmesg | tail -n 3)"
! grep -q '^fhook_khook_test ' /proc/modules || fail "fhook_khook_test still loaded"

# an observing hook (entry and exit handlers) with a task asleep inside the
# function, removed by its module's exit function (leak=0) or left
# installed (leak=1, the module notifier removes it): its handlers are
# detached (not called again) and the call finishes on its own: rmmod
# returns at once.  Before 2026-12-03 the notifier waited for the sleeper,
# under the notifier chain's rwsem every other module's load and unload
# may need; before 2026-12-05 fhook_khook_remove() did, unkillably (any
# user asleep in a hooked read held the admin's rmmod).
load_workmod
TH=/proc/fhook_testmod_hooks
for leak in 0 1; do
	dmesg -c > /dev/null
	echo reset > $TH
	insmod /fhook/fhook_khook_test.ko mode=sleep leak=$leak || fail "insmod fhook_khook_test.ko mode=sleep leak=$leak"
	echo sleep "$(pick 8000 24000)" > $TH &
	S=$!
	wait_for 10 sh -c "fhook status 2>/dev/null | grep fhook_testmod_sleep | grep -q 'inside=1'" ||
		fail "leak=$leak: the sleeper never showed inside the hook: $(fhook status 2>&1)"
	rmmod fhook_khook_test 2> $D/leak.err &
	M=$!
	wait_for "$(pick 4 12)" sh -c "! kill -0 $M 2>/dev/null" ||
		fail "leak=$leak: rmmod of a module with an observing hook waited for the sleeper inside: $(cat /proc/$M/stack 2>/dev/null | head -n 5)"
	wait $M
	expect_eq "$?" 0 "leak=$leak: rmmod of the module ($(cat $D/leak.err))"
	kill -0 $S 2>/dev/null || fail "leak=$leak: the sleeper returned before the module's rmmod could be timed (make it sleep longer)"
	[ $leak = 0 ] || dmesg | grep -q 'fhook_khook_test left its hook on fhook_testmod_sleep.* installed: removed' ||
		fail "no 'left its hook installed' line: $(dmesg | tail -n 3)"
	wait $S
	expect_eq "$(sed -n 's/^sleep calls [0-9]* done \([0-9]*\)/\1/p' $TH)" 1 "leak=$leak: the sleeper returned its value"
	wait_for 10 sh -c 'dmesg | grep -q "the last call has left a removed hook"' || fail "leak=$leak: the let-go hook was not freed"
done
rmmod fhook_testmod

wait_for 20 sh -c "rmmod fhook 2>/dev/null" || fail "rmmod fhook failed after the removed hooks drained"
pass "rmmod waited for the task inside, other modules did not, a module hooking its own unload path did not wait for itself, observing hooks (removed or left over) were let go without waiting"
