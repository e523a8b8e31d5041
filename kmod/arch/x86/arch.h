/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What fhook needs from a CPU architecture that the kernel's generic
 * accessors (instruction_pointer_set(), regs_set_return_value(),
 * regs_get_kernel_argument(), kernel_stack_pointer(), frame_pointer())
 * do not give: x86-64.  An architecture is a directory beside this one
 * with the same arch.h, its registers (regs.c) and its trampolines
 * (tramp.S, tramp.h), chosen by Kbuild from $(SRCARCH).
 */
#ifndef FHOOK_ARCH_H
#define FHOOK_ARCH_H

#include <linux/bits.h>
#include <linux/ptrace.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <asm/ibt.h>
#include <asm/tsc.h>

#include <fhook_abi.h>

#include "compat.h"

/*
 * FHOOK_REG_* -> offset in struct pt_regs: the registers of fetch programs
 * (%di, %ax, ... as kprobe_events spells them on x86)
 */
extern const u16 fhook_arch_reg_offset[FHOOK_REG_MAX];
/* The FHOOK_REG_* this CPU has, as BIT_ULL(FHOOK_REG_*) */
#define FHOOK_ARCH_REGS		GENMASK_ULL(FHOOK_REG_ORIG_AX, FHOOK_REG_AX)
/* those a fetch may read under lockdown: the argument registers, %sp, %ip */
#define FHOOK_ARCH_ARG_REGS							\
	(BIT_ULL(FHOOK_REG_DI) | BIT_ULL(FHOOK_REG_SI) | BIT_ULL(FHOOK_REG_DX) |	\
	 BIT_ULL(FHOOK_REG_CX) | BIT_ULL(FHOOK_REG_R8) | BIT_ULL(FHOOK_REG_R9) |	\
	 BIT_ULL(FHOOK_REG_SP) | BIT_ULL(FHOOK_REG_IP))
/* $arg1..$argN in registers (di, si, dx, cx, r8, r9); later ones on the stack */
#define FHOOK_REG_ARGS		6
/* an argument that fits the registers left after one went on the stack goes there */
#define FHOOK_ARCH_STACK_AFTER_SPILL	0
/* argument registers the address of a struct returned in memory takes (%rdi) */
#define FHOOK_ARCH_SRET_ARG_REGS	1
/* the largest $argN regs_get_kernel_argument() reads: on the stack past 6 */
#define FHOOK_ARCH_MAX_ARGN	FHOOK_MAX_ARGN
/* FHOOK_REG_* of $arg1..$argFHOOK_REG_ARGS: the calling convention's */
extern const u8 fhook_arch_arg_regs[FHOOK_REG_ARGS];
/*
 * The registers an ftrace_ops callback without FTRACE_OPS_FL_SAVE_REGS
 * gets (ftrace_caller saves the argument registers, %ax, %bp, the stack
 * pointer and ip: fhook_fregs_partial()), as BIT(FHOOK_REG_*)
 */
#define FHOOK_ARCH_PARTIAL_REGS							\
	(BIT_ULL(FHOOK_REG_AX) | BIT_ULL(FHOOK_REG_CX) | BIT_ULL(FHOOK_REG_DX) |	\
	 BIT_ULL(FHOOK_REG_SI) | BIT_ULL(FHOOK_REG_DI) | BIT_ULL(FHOOK_REG_BP) |	\
	 BIT_ULL(FHOOK_REG_SP) | BIT_ULL(FHOOK_REG_R8) | BIT_ULL(FHOOK_REG_R9) |	\
	 BIT_ULL(FHOOK_REG_IP) | BIT_ULL(FHOOK_REG_ORIG_AX))

/* What fhook's x86-64 port lacks (arch/arm64/arch.h): nothing */
#define FHOOK_ARCH_NO_FEATURES	0ULL

/*
 * The entry tracepoints of the interrupt vectors that do not go through
 * irq_handler_entry (irq_vectors.h: the local timer, IPIs, the APIC's
 * own): what the kernel's osnoise_arch_register() attaches to (irq.c).
 */
#define FHOOK_ARCH_NR_IRQ_VECTORS	11
extern const char *const fhook_arch_irq_vectors[FHOOK_ARCH_NR_IRQ_VECTORS];

/* A register of a fetch program */
static __always_inline unsigned long fhook_arch_reg(struct pt_regs *regs, u32 reg)
{
	return *(unsigned long *)((u8 *)regs + fhook_arch_reg_offset[reg]);
}

/* The kernel stack's word @n at @regs (0 past the stack's end) */
static __always_inline unsigned long fhook_arch_kernel_stack_nth(struct pt_regs *regs,
								 unsigned int n)
{
	return regs_get_kernel_stack_nth(regs, n);
}

/*
 * The user stack's word @n at a uprobe's registers (its first stack
 * argument is word 1: word 0 is the return address at a function's entry)
 */
static __always_inline unsigned long fhook_arch_user_stack_word(struct pt_regs *regs,
								unsigned int n)
{
	return regs->sp + 8UL * n;
}

/*
 * Where the return address of a function is at its fentry call (an
 * ftrace_ops callback's registers): what a return trampoline replaces.
 * x86: the top of the stack.
 */
static __always_inline unsigned long *fhook_arch_return_slot(struct ftrace_regs *fregs)
{
	return (unsigned long *)kernel_stack_pointer(fhook_fregs_partial(fregs, NULL));
}

/*
 * A call's identity in a call graph's shadow stack (fgraph.h): at its entry
 * (@fregs) and when it returns through fhook_graph_return with @sp.  x86:
 * the slot of its return address, one word below @sp after the return.
 * Teardown puts back the return addresses still pending there.
 */
#define FHOOK_ARCH_RETURN_ON_STACK	1
static __always_inline unsigned long *fhook_arch_frame_key(struct ftrace_regs *fregs)
{
	return fhook_arch_return_slot(fregs);
}

static __always_inline unsigned long *fhook_arch_exit_key(unsigned long sp)
{
	return (unsigned long *)sp - 1;
}

/* The fentry call of the function at @func: past an ENDBR with IBT */
static inline int fhook_arch_fentry_site(unsigned long func, unsigned long *fentry)
{
	u32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)func, sizeof(insn)))
		return -EFAULT;
	*fentry = is_endbr(insn) ? func + 4 : func;
	return 0;
}

/* __mcount_loc entries are the fentry calls themselves (arm64's are not) */
#define FHOOK_ARCH_CALLSITE_BIAS	0

/* Are the user frames at @regs frame-pointer frames of 8-byte words? */
static __always_inline bool fhook_arch_user_frames(struct pt_regs *regs)
{
	return user_64bit_mode(regs);
}

/*
 * The counter fhook_clock() scales (clock.h): the TSC.  Plain rdtsc, as
 * native_sched_clock() reads it; the anchors bracket the kernel's clock
 * with the ordered read.  Its nominal rate in kHz while the kernel trusts
 * it (not marked unstable: the rule the vDSO applies), else 0.
 */
#define FHOOK_ARCH_CLOCK_COUNTER	1

/*
 * May the assembly recorder of function entries run (tramp.h,
 * FHOOK_ARCH_FNREC_ASM)?  It reads the irq state with pushf: not in a Xen
 * PV guest.
 */
static inline bool fhook_arch_fnrec_asm(void)
{
	return !cpu_feature_enabled(X86_FEATURE_XENPV);
}
#define FHOOK_ARCH_CLOCK_NAME		"tsc"

static __always_inline u64 fhook_arch_clock_counter(void)
{
	return rdtsc();
}

static __always_inline u64 fhook_arch_clock_counter_ordered(void)
{
	return rdtsc_ordered();
}

static inline unsigned int fhook_arch_clock_khz(void)
{
	if (!boot_cpu_has(X86_FEATURE_TSC) || check_tsc_unstable())
		return 0;
	return tsc_khz;
}

#endif /* FHOOK_ARCH_H */
