# hooks: IPMODIFY hooks on fhook_testmod's functions, whose callers count
# what each call returned (the oracle): the lab-mode gate (refused without
# lab=1, which taints the kernel and says so); --return makes exactly the
# chosen calls fail (--nth, --every + --times, an argument filter, only the
# traced command's processes, --probability within bounds) and no others;
# --record prints each injection; --redirect sends every call to a
# function of the same prototype and BTF refuses a mismatch; conflicts are
# explained before arming; killing the controller removes the hook;
# unloading a hooked module unhooks it.
. /fhook/lib.sh

TH=/proc/fhook_testmod_hooks
unload_fhook
load_workmod
tracefs_reset
# ret_field NAME: the number after NAME on the "ret ..." line
ret_field() { sed -n "s/^ret .*$1 \([-0-9]*\).*/\1/p" $TH; }
ret_calls() { echo reset > $TH; run_fhook $D/$1 hook "$@"; }

# lab mode gate
load_fhook
has_feature hook || skip "this kernel's ftrace cannot change a call's registers: no hooks (docs/arm64.md)"
tainted0=$(cat /proc/sys/kernel/tainted)
run_fhook $D/nolab hook --return -12 fhook_testmod_ret -- sh -c "echo ret 10 > $TH"
expect_eq "$RC" 1 "--return without lab mode: exit code"
grep -q 'lab=1' $D/nolab.err || fail "the error does not say how to enable lab mode: $(cat $D/nolab.err)"
expect_eq "$(( tainted0 & 64 ))" 0 "TAINT_USER before lab mode"
unload_fhook
insmod "$KO" lab=1 || fail "insmod $KO lab=1 failed"
wait_for 5 test -c /dev/fhook || fail "/dev/fhook did not appear"
dmesg | grep -q 'fhook: lab mode' || fail "no 'lab mode' line in the kernel log"
expect_eq "$(( $(cat /proc/sys/kernel/tainted) & 64 ))" 64 "TAINT_USER after insmod lab=1"

# --return: only the 3rd call
echo reset > $TH
run_fhook $D/nth hook --return -12 --nth 3 fhook_testmod_ret -- sh -c "echo ret 10 > $TH"
expect_eq "$RC" 0 "--return --nth 3 exit code"
expect_eq "$(ret_field injected)" 1 "--nth 3: injected calls"
expect_eq "$(ret_field last)" -12 "--nth 3: the value injected"
expect_eq "$(ret_field normal)" 9 "--nth 3: normal calls"

# --every 4 --times 2 over 20 calls: calls 4 and 8; --record prints them
echo reset > $TH
run_fhook $D/every hook --return 1000 --every 4 --times 2 --record fhook_testmod_ret 'i=$arg1:u64' \
	-- sh -c "echo ret 20 > $TH"
expect_eq "$(ret_field injected)" 2 "--every 4 --times 2: injected"
expect_eq "$(ret_field normal)" 18 "--every 4 --times 2: normal"
sed 's/^/#   /' $D/every.out
expect_eq "$(grep -c 'fhook_testmod_ret) i=3 injected ret=1000$' $D/every.out)" 1 "record of call 4 (i=3)"
expect_eq "$(grep -c 'fhook_testmod_ret) i=7 injected ret=1000$' $D/every.out)" 1 "record of call 8 (i=7)"
expect_eq "$(wc -l < $D/every.out)" 2 "records printed"

# an argument filter: only i == 5
echo reset > $TH
run_fhook $D/flt hook --return 99 fhook_testmod_ret 'i=$arg1:u64' --filter 'i == 5' \
	-- sh -c "echo ret 10 > $TH"
expect_eq "$(ret_field injected)" 1 "--filter 'i == 5': injected"
expect_eq "$(ret_field last)" 99 "--filter 'i == 5': value"
# where ftrace gives a hook only ftrace_regs (arm64 from 6.2: no
# ftrace_regs_caller), its program may read only what they hold: a
# callee-saved register is refused, and nothing is hooked
if [ "$(uname -m)" = aarch64 ] && ! grep -q ' ftrace_regs_caller$' /proc/kallsyms; then
	echo reset > $TH
	run_fhook $D/x19 hook --return 99 fhook_testmod_ret 'x=%x19:u64' -- sh -c "echo ret 10 > $TH"
	expect_eq "$RC" 1 "a --return hook reading %x19 on ftrace_regs: exit code"
	grep -q "reads a register ftrace does not save on this kernel" $D/x19.err ||
		fail "no reason for the refused %x19: $(cat $D/x19.err)"
	expect_eq "$(ret_field injected)" 0 "calls changed by the refused hook"
fi

# only the command's processes: a concurrent caller outside is untouched
echo reset > $TH
( sleep 1; echo ret 500 > $TH ) &
OUT=$!
run_fhook $D/cmd hook --return -1 fhook_testmod_ret -- sh -c "sleep 2; echo ret 300 > $TH"
wait $OUT
expect_eq "$(ret_field injected)" 300 "only the command's 300 calls injected"
expect_eq "$(ret_field normal)" 500 "the other process's calls are normal"

# --probability 50 over 2000 calls (binomial: sd 22; 800..1200 is 9 sd)
echo reset > $TH
run_fhook $D/prob hook --return 100000 --probability 50 fhook_testmod_ret -- sh -c "echo ret 2000 > $TH"
inj=$(ret_field injected)
log "--probability 50: $inj of 2000"
[ "$inj" -ge 800 ] && [ "$inj" -le 1200 ] || fail "--probability 50 injected $inj of 2000"

# --redirect: every call goes to fhook_testmod_alt (the module has no
# BTF: --force skips the prototype check)
echo reset > $TH
run_fhook $D/redir hook --redirect fhook_testmod_alt --force fhook_testmod_ret \
	-- sh -c "echo ret 10 > $TH"
expect_eq "$RC" 0 "--redirect exit code"
expect_eq "$(ret_field alt)" 10 "redirected calls (returned fhook_testmod_alt's value)"
expect_eq "$(sed -n 's/^alt calls //p' $TH)" 10 "fhook_testmod_alt's own count"
# BTF refuses different prototypes (const char * vs char *)
run_fhook $D/proto hook --redirect vfs_write vfs_read -- true
expect_eq "$RC" 2 "--redirect to a different prototype: exit code"
grep -q 'prototypes differ' $D/proto.err || fail "no prototype message: $(cat $D/proto.err)"
run_fhook $D/self hook --redirect fhook_testmod_ret --force fhook_testmod_ret -- true
expect_eq "$RC" 1 "--redirect to itself: exit code"

# not traceable (notrace): said before anything is armed
run_fhook $D/nt hook --trace-around __schedule -- true
expect_eq "$RC" 1 "hook on a notrace function: exit code"
grep -q 'not in available_filter_functions' $D/nt.err || fail "notrace: $(cat $D/nt.err)"

# conflicts are explained before arming; killing the controller unhooks
fhook hook --trace-around fhook_testmod_ret --duration 60 > $D/bg.out 2> $D/bg.err &
BG=$!
wait_for 30 grep -q 'fhook_testmod_ret.* I' $T/enabled_functions ||
	fail "the trace-around hook did not attach: $(cat $T/enabled_functions) $(cat $D/bg.err)"
run_fhook $D/conf hook --return 1 fhook_testmod_ret -- true
expect_eq "$RC" 1 "a second IPMODIFY hook: exit code"
grep -q 'already has an IPMODIFY user' $D/conf.err || fail "no conflict plan: $(cat $D/conf.err)"
kill -9 $BG
wait $BG 2>/dev/null
wait_for 10 sh -c "! grep -q fhook_testmod_ret $T/enabled_functions" ||
	fail "the hook outlived its killed controller: $(cat $T/enabled_functions)"
echo reset > $TH
echo ret 50 > $TH
expect_eq "$(ret_field normal)" 50 "calls after the kill are normal"
# a direct trampoline on the function: the plan names it (where direct
# calls are: not in fhook's arm64 port)
DIRECT=0
has_feature direct && DIRECT=1
if [ $DIRECT = 1 ]; then
	fhook count --via direct fhook_testmod_ret --duration 60 > $D/bgd.out 2>&1 &
	BG=$!
	wait_for 30 grep -q 'fhook_testmod_ret.* D' $T/enabled_functions || fail "no direct probe"
	run_fhook $D/confd hook --trace-around fhook_testmod_ret -- true
	expect_eq "$RC" 1 "a hook on a function with a direct trampoline: exit code"
	grep -q 'has a direct trampoline' $D/confd.err || fail "no conflict plan: $(cat $D/confd.err)"
	kill -INT $BG
	wait $BG
fi

# a hooked module is unloaded: fhook unhooks it (no stale ftrace filter
# entry for a later module at that address to trip over), the sessions
# live on; reloaded, the module works and nothing warns
fhook hook --trace-around fhook_testmod_ret --duration 60 > $D/mh.out 2>&1 &
MH=$!
MD=
if [ $DIRECT = 1 ]; then
	fhook count --via direct 'fhook_testmod_t*' --duration 60 > $D/md.out 2>&1 &
	MD=$!
fi
wait_for 30 sh -c "grep -q 'fhook_testmod_ret.* I' $T/enabled_functions && { [ $DIRECT = 0 ] || grep -q 'fhook_testmod_target.* D' $T/enabled_functions; }" ||
	fail "hook and direct probe not attached: $(cat $T/enabled_functions)"
rmmod fhook_testmod || fail "rmmod fhook_testmod with fhook's hooks on it"
expect_eq "$(dmesg | grep -c 'is going away: the probe on it is gone for good')" $((1 + DIRECT)) "unhook messages"
grep -q fhook_testmod $T/enabled_functions && fail "left in enabled_functions: $(cat $T/enabled_functions)"
load_workmod
echo reset > $TH
echo ret 10 > $TH
expect_eq "$(ret_field normal)" 10 "the reloaded module's calls"
kill -INT $MH $MD
wait $MH $MD
unload_fhook
pass "lab gate + taint; --return exact (nth, every/times, filter, command, probability); redirect; conflicts; module unload"
