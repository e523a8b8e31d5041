# kprobe_fentry: a kprobe at a function's entry runs from fhook's own
# ftrace_ops (no kprobe_ftrace_handler()), saving all the registers only
# when its program reads one ftrace_caller does not save; with --via
# direct, where its program stores argument registers whole (u64, x64), it
# runs from a direct trampoline of fhook's instead (the assembly recorder,
# where the module has it: fhook_fnk_N), with the same events; on a
# module's function it is unhooked when the module goes.  The kernel's
# enabled_functions names the callback on each function, and the counts
# are the workload's: N reads, N hits, N events.  Counting through a
# kprobe (count --via kprobe) stays a kprobe.
. /fhook/lib.sh

N=40
# All of it is about kprobes on ftrace (CONFIG_KPROBES_ON_FTRACE: x86-64's
# Debian kernels): where the kernel has none (arm64) a kprobe at a
# function's entry is a breakpoint, which fhook leaves as it is (explain and
# kprobe_oracle check those).
if ! grep -q ' arch_prepare_kprobe_ftrace$' /proc/kallsyms; then
	[ "$(uname -m)" != x86_64 ] || fail "x86-64 kernel without kprobes on ftrace (no arch_prepare_kprobe_ftrace in /proc/kallsyms)"
	skip "no kprobes on ftrace on this $(uname -m) kernel (no arch_prepare_kprobe_ftrace): entry kprobes are breakpoints, not fhook's ftrace_ops"
fi
load_fhook
tracefs_reset
load_workmod

# line: enabled_functions' line for FUNC (with a direct trampoline's on
# the next line), seen from inside fhook's child
route() {
	run_fhook $D/$1 trace $VIA "$2" -- sh -c "grep -A1 '^$3 ' $T/enabled_functions; fhook-workload read $N"
	expect_eq "$RC" 0 "fhook trace '$2' exit code"
	line=$(grep -A1 "^$3 " $D/$1.out | head -n 2 | tr '\n\t' '  ')
}
# the route's line names fhook's ftrace_ops callback, with the argument
# registers only (no R flag)
on_ops() {
	case "$line" in *fhook_kprobe_fentry_callback*) ;; *) fail "$1 is not fhook's ftrace_ops: '$line'" ;; esac
	case "$line" in *" R "*) fail "$1: argument registers only, but all registers saved: '$line'" ;; esac
}
# fa's events in $D/$1.out: the workload's N reads of 1..7 bytes
fa_events() {
	expect_eq "$(grep -c ': fa: (vfs_read+0x[0-9a-f]*/0x[0-9a-f]*) cnt=[1-7] buf=0x' $D/$1.out)" "$N" \
		"fa events ($2)"
}
# the assembly recorder is x86-64's, not PREEMPT_RT's (kmod/arch/x86/tramp.h)
fnk=
[ "$(uname -m)" = x86_64 ] && ! rt_kernel && fnk=1

# argument registers only: the partial registers, no R flag
VIA=
route a 'p:fa vfs_read cnt=%dx:u64 buf=$arg2:x64' vfs_read
log "vfs_read: $line"
on_ops "vfs_read's kprobe"
fa_events a "the ftrace_ops"

# --via direct, the argument registers stored whole: the assembly
# recorder's direct trampoline (elsewhere the ftrace_ops), the same events
VIA="--via direct"
route ad 'p:fa vfs_read cnt=%dx:u64 buf=$arg2:x64' vfs_read
log "vfs_read --via direct: $line"
if [ -n "$fnk" ]; then
	case "$line" in *fhook_fnk_[0-9]*) ;; *) fail "vfs_read's u64 kprobe is not on fhook's direct trampoline: '$line'" ;; esac
else
	on_ops "vfs_read's kprobe"
fi
fa_events ad "--via direct"

# a field narrower than its register: fhook's ftrace_ops, the same values
route a4 'p:fa vfs_read cnt=%dx:u32 buf=$arg2:x64' vfs_read
log "vfs_read, a u32 field: $line"
on_ops "vfs_read's u32 kprobe"
fa_events a4 "a u32 field"
# both paths print the same events (but the time and the buffers' addresses)
for f in a ad a4; do
	sed -n 's/^.*: fa: \(.*\) buf=0x[0-9a-f]*$/\1/p' $D/$f.out > $D/$f.fields
done
for f in ad a4; do
	cmp -s $D/a.fields $D/$f.fields || {
		diff $D/a.fields $D/$f.fields | head -n 5 | sed 's/^/#   /'
		fail "the events of $f differ from the ftrace_ops kprobe's"
	}
done

# %bx: not saved by ftrace_caller, so FTRACE_OPS_FL_SAVE_REGS (R)
route b 'p:fb vfs_read bx=%bx:x64' vfs_read
log "vfs_read with %bx: $line"
case "$line" in *fhook_kprobe_fentry_callback*" R "*|*" R "*fhook_kprobe_fentry_callback*) ;;
	*) fail "%bx needs every register saved (R): '$line'" ;; esac

# a module's function too; the module unloaded while the probe is armed:
# fhook unhooks it (an ops' filter would keep the address for whatever
# is loaded there next), the session lives on, nothing is left behind.
# (trace names an address when it prints it, as trace_pipe does: a second
# for the flush timer, 100 ms, to hand the events over before the module
# and its symbols go)
run_fhook $D/m trace --via direct 'p:fm fhook_testmod_nop' -- sh -c \
	"grep -A1 '^fhook_testmod_nop ' $T/enabled_functions; echo loop $N > /proc/fhook_testmod_hooks
	 sleep 1; rmmod fhook_testmod; grep -c fhook_testmod $T/enabled_functions; true"
expect_eq "$RC" 0 "fhook trace --via direct on fhook_testmod_nop exit code"
line=$(grep -A1 '^fhook_testmod_nop ' $D/m.out | head -n 2 | tr '\n\t' '  ')
log "fhook_testmod_nop: $line"
want=fhook_kprobe_fentry_callback
[ -n "$fnk" ] && want=fhook_fnk_
case "$line" in *$want*) ;; *) fail "the module function's kprobe is not on $want: '$line'" ;; esac
nr=$(grep -c ': fm: (fhook_testmod_nop+0x[0-9a-f]*/0x[0-9a-f]* \[fhook_testmod\])$' $D/m.out)
[ "$nr" = "$N" ] || sed -n '/: fm: /{p;q}' $D/m.out | sed 's/^/#   first: /'
expect_eq "$nr" "$N" "fm events of the loop"
expect_eq "$(grep -x '[0-9]*' $D/m.out)" 0 "fhook_testmod's functions in enabled_functions after its rmmod"
expect_eq "$(dmesg | grep -c 'module fhook_testmod is going away: the probe on it is gone for good')" 1 \
	"unhook messages"
load_workmod

# counting through a kprobe (count --via kprobe) stays one, to be compared
run_fhook $D/c count --via kprobe vfs_read -- sh -c \
	"grep '^vfs_read ' $T/enabled_functions; fhook-workload read $N"
expect_eq "$RC" 0 "fhook count --via kprobe exit code"
line=$(grep '^vfs_read ' $D/c.out | head -n 1)
case "$line" in *kprobe_ftrace_handler*) ;; *) fail "count --via kprobe is not a kprobe: '$line'" ;; esac
pass "entry kprobes run from fhook's ftrace_ops (R only for %bx)${fnk:+ or, --via direct, its direct trampoline (u64 fields)}, a module's unhooked at its rmmod; count --via kprobe stays a kprobe; $N events each"
