/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What fhook needs from a CPU architecture that the kernel's generic
 * accessors do not give: arm64 (arch/x86/arch.h has the same names).
 *
 * arm64 patches two instructions at a function's entry (mov x9, x30;
 * bl ftrace_caller, from -fpatchable-function-entry): at the callback the
 * function's return address is the link register ftrace_caller saved and
 * puts back (x30), not a stack word.  The direct-call trampolines exist
 * where the kernel has direct calls, hooks where ftrace gives full
 * registers: FHOOK_ARCH_NO_FEATURES names what the module refuses.
 */
#ifndef FHOOK_ARCH_H
#define FHOOK_ARCH_H

#include <linux/bits.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <asm/insn-def.h>

#include <fhook_abi.h>

#include "compat.h"

/* FHOOK_REG_* -> offset in struct pt_regs (%x0..%x30, %sp, %pc, %pstate) */
extern const u16 fhook_arch_reg_offset[FHOOK_REG_MAX];
/* The FHOOK_REG_* this CPU has, as BIT_ULL(FHOOK_REG_*) */
#define FHOOK_ARCH_REGS							\
	(GENMASK_ULL(FHOOK_REG_PSTATE, FHOOK_REG_X0) | BIT_ULL(FHOOK_REG_SP))
/* those a fetch may read under lockdown: x0..x7, sp, pc */
#define FHOOK_ARCH_ARG_REGS							\
	(GENMASK_ULL(FHOOK_REG_X0 + 7, FHOOK_REG_X0) | BIT_ULL(FHOOK_REG_SP) |		\
	 BIT_ULL(FHOOK_REG_PC))
/* $arg1..$arg8 in x0..x7 */
#define FHOOK_REG_ARGS		8
/* after one argument went on the stack every later one does (AAPCS64 C.13) */
#define FHOOK_ARCH_STACK_AFTER_SPILL	1
/* a struct returned in memory has its address in x8, no argument register */
#define FHOOK_ARCH_SRET_ARG_REGS	0
/* regs_get_kernel_argument() reads no stack on arm64: registers only */
#define FHOOK_ARCH_MAX_ARGN	FHOOK_REG_ARGS
extern const u8 fhook_arch_arg_regs[FHOOK_REG_ARGS];
/*
 * The registers an ftrace_ops callback without FTRACE_OPS_FL_SAVE_REGS
 * gets: x0..x8, the frame pointer, the return address (x30), sp and pc
 * (6.12's struct ftrace_regs; 6.1's ftrace_caller saves x9 too)
 */
#define FHOOK_ARCH_PARTIAL_REGS							\
	(GENMASK_ULL(FHOOK_REG_X0 + 8, FHOOK_REG_X0) | BIT_ULL(FHOOK_REG_X0 + 29) |	\
	 BIT_ULL(FHOOK_REG_X30) | BIT_ULL(FHOOK_REG_SP) | BIT_ULL(FHOOK_REG_PC))

/*
 * arm64 interrupts all go through irq_handler_entry (its IPIs and timer
 * are irq descriptors): no vector tracepoints of its own
 */
#define FHOOK_ARCH_NR_IRQ_VECTORS	0
extern const char *const fhook_arch_irq_vectors[];

/*
 * What fhook's arm64 port does not have: direct and latency probes where
 * the kernel has no direct calls (DYNAMIC_FTRACE_WITH_DIRECT_CALLS: arm64
 * from 6.4); hooks (trace-around, IPMODIFY, the hook API) where ftrace can
 * change no registers (neither DYNAMIC_FTRACE_WITH_REGS, arm64 before 6.2,
 * nor _WITH_ARGS, from 6.2: compat.h's fhook_hook_set_ip()).  Refused
 * with FHOOK_R_ARCH.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
#define FHOOK_ARCH_NO_DIRECT	0
#else
#define FHOOK_ARCH_NO_DIRECT	(FHOOK_FEAT_DIRECT | FHOOK_FEAT_LATENCY)
#endif
#if defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS) || defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#define FHOOK_ARCH_NO_FEATURES	FHOOK_ARCH_NO_DIRECT
#else
#define FHOOK_ARCH_NO_FEATURES	(FHOOK_ARCH_NO_DIRECT | FHOOK_FEAT_HOOK | FHOOK_FEAT_KHOOK)
#endif

static __always_inline unsigned long fhook_arch_reg(struct pt_regs *regs, u32 reg)
{
	return *(unsigned long *)((u8 *)regs + fhook_arch_reg_offset[reg]);
}

/*
 * The kernel stack's word @n at @regs (0 past the stack's end, which is
 * THREAD_SIZE-aligned): arm64 does not export regs_get_kernel_stack_nth()
 */
static __always_inline unsigned long fhook_arch_kernel_stack_nth(struct pt_regs *regs,
								 unsigned int n)
{
	unsigned long sp = kernel_stack_pointer(regs), addr = sp + 8UL * n, val;

	/* (sp - 1: an empty stack's sp is the end of its block) */
	if ((addr & ~(THREAD_SIZE - 1)) != ((sp - 1) & ~(THREAD_SIZE - 1)) ||
	    copy_from_kernel_nofault(&val, (void *)addr, sizeof(val)))
		return 0;
	return val;
}

/* The user stack's word @n at a uprobe's registers */
static __always_inline unsigned long fhook_arch_user_stack_word(struct pt_regs *regs,
								unsigned int n)
{
	return user_stack_pointer(regs) + 8UL * n;
}

/*
 * Where the return address of a function is at its patch site (an
 * ftrace_ops callback's registers): the link register ftrace_caller saved
 * and restores, what a return trampoline replaces
 */
static __always_inline unsigned long *fhook_arch_return_slot(struct ftrace_regs *fregs)
{
#ifdef FHOOK_HAVE_ARCH_FTRACE_PARTIAL_REGS
	return &arch_ftrace_regs(fregs)->lr;
#else
	return (unsigned long *)&fregs->regs.regs[30];
#endif
}

/*
 * A call's identity in a call graph's shadow stack (fgraph.h): the stack
 * pointer at its entry, which it returns with.  Its return address lives
 * in a register, then wherever the function saves it (signed with PAC):
 * teardown cannot put it back, every pending call comes back through
 * fhook_graph_return (as through the kernel's return_to_handler).
 */
#define FHOOK_ARCH_RETURN_ON_STACK	0
static __always_inline unsigned long *fhook_arch_frame_key(struct ftrace_regs *fregs)
{
#ifdef FHOOK_HAVE_ARCH_FTRACE_PARTIAL_REGS
	return (unsigned long *)arch_ftrace_regs(fregs)->sp;
#else
	return (unsigned long *)fregs->regs.sp;
#endif
}

/*
 * The caller's frame pointer at a call's entry (x29), which the function's
 * frame record will link to: a frame-record walk meeting fhook_graph_return
 * finds the call's real return address by it (fhook_fgraph_ret_addr())
 */
#define FHOOK_ARCH_GRAPH_FP	1
static __always_inline unsigned long fhook_arch_caller_fp(struct ftrace_regs *fregs)
{
#ifdef FHOOK_HAVE_ARCH_FTRACE_PARTIAL_REGS
	return arch_ftrace_regs(fregs)->fp;
#else
	return fregs->regs.regs[29];
#endif
}

static __always_inline unsigned long *fhook_arch_exit_key(unsigned long sp)
{
	return (unsigned long *)sp;
}

/*
 * The patch site of the function at @func, where its ftrace_ops callbacks
 * see it called: the second of the two instructions
 * -fpatchable-function-entry leaves at its entry (the first becomes
 * mov x9, x30), after a BTI landing pad where the kernel has them
 */
static inline int fhook_arch_fentry_site(unsigned long func, unsigned long *fentry)
{
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)func, sizeof(insn)))
		return -EFAULT;
	/* bti, bti c, bti j, bti jc: hint #32, 34, 36, 38 */
	if ((insn & ~0xc0U) == 0xd503241fU)
		func += AARCH64_INSN_SIZE;
	*fentry = func + AARCH64_INSN_SIZE;
	return 0;
}

/*
 * What a module's __mcount_loc entries (mod->ftrace_callsites, as the
 * compiler wrote them) lack to be inside their function: with
 * DYNAMIC_FTRACE_WITH_CALL_OPS (6.12) they point at the two NOPs before
 * it that hold the ops pointer (arm64's ftrace_call_adjust())
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS
#define FHOOK_ARCH_CALLSITE_BIAS	(2 * AARCH64_INSN_SIZE)
#else
#define FHOOK_ARCH_CALLSITE_BIAS	0
#endif

/* Are the user frames at @regs AArch64 frame records of 8-byte words? */
static __always_inline bool fhook_arch_user_frames(struct pt_regs *regs)
{
	return !compat_user_mode(regs);
}

/*
 * No counter for fhook_clock() yet (clock.h): it reads
 * ktime_get_mono_fast_ns().  The generic timer's cntvct_el0 would do where
 * arch_timer_read_counter is the plain counter (no erratum workaround).
 */
#define FHOOK_ARCH_CLOCK_COUNTER	0
#define FHOOK_ARCH_CLOCK_NAME		NULL

/* no assembly recorder of function entries (tramp.h: fnrec.c records in C) */
static inline bool fhook_arch_fnrec_asm(void)
{
	return false;
}

static __always_inline u64 fhook_arch_clock_counter(void)
{
	return 0;
}

static __always_inline u64 fhook_arch_clock_counter_ordered(void)
{
	return 0;
}

static inline unsigned int fhook_arch_clock_khz(void)
{
	return 0;
}

#endif /* FHOOK_ARCH_H */
