# direct_trampolines: fhook's own trampolines through the ftrace direct-call
# API count and record exactly what an ftrace_ops callback and a kprobe
# count on the same workload (fhook_testmod's own count as the oracle);
# recording-trampoline events print like function-probe events, a
# command's only while another task calls the function too; switching
# trampolines (modify_ftrace_direct) and unregistering under load lose no
# call (fhook-direct); a direct trampoline shares its function with the
# kernel's function tracer; a second direct trampoline on the same function
# is refused with a clear message; a count that filters nothing runs on the
# fast counting trampoline and counts two vCPUs' calls exactly; a direct
# probe refused because a hook holds its function arms once the hook is
# gone (a failed register_ftrace_direct() leaves nothing behind).
. /fhook/lib.sh

N=$(pick 20000 5000)
load_fhook
has_feature direct || skip "no direct calls on this kernel (docs/arm64.md)"
load_workmod
tracefs_reset
TM=/proc/fhook_testmod
tm_target() { awk '{ n += $4 } END { print n + 0 }' $TM; }

for via in ops direct kprobe; do
	echo reset > $TM
	run_fhook $D/c_$via count --via $via fhook_testmod_target -- sh -c "echo call $N > $TM"
	expect_eq "$RC" 0 "fhook count --via $via exit code"
	log "$(cat $D/c_$via.out | tr '\n' '|')"
	set -- $(sed -n 2p $D/c_$via.out)
	expect_eq "$1" "$N" "count --via $via hits"
	grep -q "^fhook: probe 1 hits $N filtered 0 missed 0 via $via: fhook_testmod_target\$" $D/c_$via.err ||
		fail "count --via $via: no summary line for $N hits via $via: $(cat $D/c_$via.err)"
	expect_eq "$(tm_target)" "$N" "fhook_testmod's own count (--via $via)"
done
detached || fail "something is still attached after the counts: $(cat $T/enabled_functions)"

# the recording trampoline writes function-probe records
for via in ops direct; do
	run_fhook $D/t_$via trace --via $via fhook_testmod_target -- sh -c "echo call 100 > $TM"
	expect_eq "$RC" 0 "fhook trace --via $via exit code"
	sed -n 's/^ *[^ ]* *\[[0-9]*\] [^ ]* *[0-9.]*: //p' $D/t_$via.out > $D/t_$via.n
	expect_eq "$(wc -l < $D/t_$via.n)" 100 "trace --via $via events"
done
cmp -s $D/t_ops.n $D/t_direct.n || {
	diff $D/t_ops.n $D/t_direct.n | head -n 5 | sed 's/^/#   /'
	fail "--via direct events differ from --via ops events"
}
# the recorder's pid set: another sh calling the function meanwhile is
# not traced (by the assembly recorder's test of the set or, where the
# ring has not named that task, by fhook_fnrec()'s)
( while :; do echo call 50 > $TM; done ) &
bg=$!
run_fhook $D/t_pid trace --via direct fhook_testmod_target -- sh -c "echo call 100 > $TM"
kill $bg; wait $bg 2>/dev/null
expect_eq "$RC" 0 "fhook trace --via direct with a busy other task: exit code"
expect_eq "$(grep -c 'fhook_testmod_target <-' $D/t_pid.out)" 100 \
	"trace --via direct of one command's calls while another task calls too"
# (fhook_testmod_calls() may be inlined into the write handler)
grep -qv '^fhook_testmod_target <-fhook_testmod_[a-z]*$' $D/t_direct.n &&
	fail "unexpected direct event: $(grep -v '^fhook_testmod_target <-fhook_testmod_' $D/t_direct.n | head -n 1)"

# switching trampolines and unregistering under load
echo reset > $TM
run_logged $D/direct.out fhook-direct $(pick 40 10) $(pick 5000 2000)
sed 's/^/#   /' $D/direct.out
expect_eq "$RC" 0 "fhook-direct exit code"

# shared with the kernel's function tracer: the site calls
# ftrace_regs_caller, which returns into our trampoline (ORIG_RAX)
echo fhook_testmod_target > $T/set_ftrace_filter
echo function > $T/current_tracer
echo > $T/trace
echo 1 > $T/tracing_on
echo reset > $TM
run_fhook $D/sh count --via direct fhook_testmod_target -- sh -c "echo call 3000 > $TM"
echo 0 > $T/tracing_on
# (switching the tracer clears the buffer: count first)
ftr=$(grep -c ' fhook_testmod_target <-fhook_testmod_' $T/trace)
echo nop > $T/current_tracer
echo > $T/set_ftrace_filter
set -- $(sed -n 2p $D/sh.out)
expect_eq "$1" 3000 "direct count while the function tracer shares the function"
expect_eq "$ftr" 3000 "the function tracer's events meanwhile"

# a count with no filter at all (every caller) gets the fast counting
# trampoline: its address is what the site calls
echo reset > $TM
fhook count --via direct fhook_testmod_target --duration 120 > $D/bg.out 2> $D/bg.err &
BG=$!
wait_for 30 grep -q 'fhook_testmod_target.* D' $T/enabled_functions ||
	fail "the first direct probe did not attach: $(cat $T/enabled_functions)"
log "enabled_functions: $(cat $T/enabled_functions | tr '\n\t' '| ')"
grep -A1 '^fhook_testmod_target ' $T/enabled_functions | grep -q 'fhook_direct_fast_[0-9]' ||
	fail "a count with no filter is not on the fast trampoline: $(cat $T/enabled_functions)"
# one direct trampoline per function
run_fhook $D/two count --via direct fhook_testmod_target -- true
expect_eq "$RC" 1 "a second direct trampoline on the function: exit code"
grep -q 'already has a direct trampoline' $D/two.err || fail "no clear message: $(cat $D/two.err)"
# the fast path from both vCPUs at once: every call once
taskset -c 0 sh -c "echo call $N > $TM" &
W0=$!
taskset -c 1 sh -c "echo call $N > $TM" &
W1=$!
wait $W0
wait $W1
kill -INT $BG
wait $BG
log "$(tr '\n' '|' < $D/bg.out)"
set -- $(sed -n 2p $D/bg.out)
expect_eq "$1" "$((2 * N))" "fast direct count of two vCPUs' calls"
expect_eq "$(tm_target)" "$((2 * N))" "fhook_testmod's own count (two vCPUs)"
wait_for 10 detached || fail "still attached after the counts: $(cat $T/enabled_functions)"
# a direct probe refused by an IPMODIFY hook leaves nothing in ftrace: it
# arms and counts once the hook is gone (fhook-conflict; where the kernel
# has hooks)
conflict="; no hooks to conflict with"
if has_feature hook; then
	run_checks $D/conflict.out fhook-conflict
	conflict="; a direct probe a hook refused left nothing behind"
fi
pass "ops, direct and kprobe counts equal $N; direct records equal ops records; switches and shared use exact; fast count of 2 vCPUs exact$conflict"
