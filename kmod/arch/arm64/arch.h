/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What fhook needs from a CPU architecture that the kernel's generic
 * accessors do not give: arm64 (arch/x86/arch.h has the same names).
 *
 * arm64 patches two instructions at a function's entry (mov x9, x30;
 * bl ftrace_caller, from -fpatchable-function-entry): at the callback the
 * function's return address is the link register ftrace_caller saved and
 * puts back (x30), not a stack word.  The trampolines x86 has for direct
 * calls, latency, trace-around and IPMODIFY hooks are not written for
 * arm64 yet: FHOOK_ARCH_NO_FEATURES names what the module refuses.
 */
#ifndef FHOOK_ARCH_H
#define FHOOK_ARCH_H

#include <linux/bits.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <linux/uaccess.h>

#include <fhook_abi.h>

#include "compat.h"

/* FHOOK_REG_* -> offset in struct pt_regs (%x0..%x30, %sp, %pc, %pstate) */
extern const u16 fhook_arch_reg_offset[FHOOK_REG_MAX];
/* The FHOOK_REG_* this CPU has, as BIT_ULL(FHOOK_REG_*) */
#define FHOOK_ARCH_REGS							\
	(GENMASK_ULL(FHOOK_REG_PSTATE, FHOOK_REG_X0) | BIT_ULL(FHOOK_REG_SP))
/* $arg1..$arg8 in x0..x7 */
#define FHOOK_REG_ARGS		8
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
 * What fhook's arm64 port does not have yet (no trampolines for them):
 * direct calls, latency probes, trace-around and IPMODIFY hooks, the hook
 * API; refused with FHOOK_R_ARCH
 */
#define FHOOK_ARCH_NO_FEATURES						\
	(FHOOK_FEAT_DIRECT | FHOOK_FEAT_LATENCY | FHOOK_FEAT_HOOK | FHOOK_FEAT_KHOOK)

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

	if ((addr & ~(THREAD_SIZE - 1)) != (sp & ~(THREAD_SIZE - 1)) ||
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

static __always_inline unsigned long *fhook_arch_exit_key(unsigned long sp)
{
	return (unsigned long *)sp;
}

/* The patch site of the function at @func: hooks are not on arm64 yet */
static inline int fhook_arch_fentry_site(unsigned long func, unsigned long *fentry)
{
	return -EOPNOTSUPP;
}

/* Are the user frames at @regs AArch64 frame records of 8-byte words? */
static __always_inline bool fhook_arch_user_frames(struct pt_regs *regs)
{
	return !compat_user_mode(regs);
}

#endif /* FHOOK_ARCH_H */
