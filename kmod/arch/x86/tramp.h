/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by tramp.S and the C files: trampoline slots and the layout of
 * the trace-around trampoline's stack frame (struct fhook_around_frame,
 * checked against these numbers with BUILD_BUG_ON in around.c).
 */
#ifndef FHOOK_TRAMP_H
#define FHOOK_TRAMP_H

/*
 * Trampolines are per slot: slot N's entry loads N and jumps to the code
 * of its kind, which finds its probe in a table.  Slots are global (all
 * sessions); a direct probe or hook holds one while it exists.
 */
#define FHOOK_NR_SLOTS		64	/* tramp.S lists them: FHOOK_SLOT_LIST */

/*
 * The assembly recorder of function entries (fhook_fnrec_N): it preempts
 * with PREEMPT_DYNAMIC's static call, writes the context as non-RT
 * kernels count it and keeps no frame pointer (ORC unwinds it; fnrec.c,
 * fhook_fnrec_asm_ok()).
 */
#if defined(CONFIG_PREEMPT_DYNAMIC) && defined(CONFIG_HAVE_PREEMPT_DYNAMIC_CALL) && \
	!defined(CONFIG_PREEMPT_RT) && !defined(CONFIG_FRAME_POINTER)
#define FHOOK_ARCH_FNREC_ASM	1
#else
#define FHOOK_ARCH_FNREC_ASM	0
#endif

/* struct fhook_around_frame (fhook.h): a struct pt_regs (168 bytes), then these */
#define FHOOK_AF_SLOT		168
#define FHOOK_AF_TARGET		176
#define FHOOK_AF_STACK		184	/* u64[8]: the caller's stack arguments */
#define FHOOK_AF_SIZE		544
#define FHOOK_AF_SPACE		FHOOK_AF_SIZE	/* what tramp.S takes for it */

/*
 * struct fhook_lat_frame (latency.c): the saved registers (%rdi, %rsi,
 * %rdx, %rcx, %r8, %r9, %rax, %r10), then these
 */
#define FHOOK_LF_NREGS		8
#define FHOOK_LF_DX		16
#define FHOOK_LF_AX		48
#define FHOOK_LF_LAT		64
#define FHOOK_LF_STACK		80	/* u64[8]: the caller's stack arguments */
#define FHOOK_LF_TIMED		144
#define FHOOK_LF_PAD		2	/* words */
#define FHOOK_LF_SIZE		168	/* 8 mod 16: the body's stack as at its entry */
#define FHOOK_LF_SIZE_MOD_16	8

/*
 * Both run the body with a call from right below their frame, under the
 * 8 stack-argument words they push for it: the frame is this far above
 * the slot of the body's return address (fhook_*_body_ret)
 */
#define FHOOK_BODY_RET_TO_FRAME	72

#ifndef __ASSEMBLY__
#include "tramp_tables.h"

/*
 * The around trampoline's frame @f (around.c): the arguments the caller
 * passed on the stack (above the return addresses into the function and
 * its caller), and f->regs completed as the function saw them at its
 * entry @ip (the trampoline saved the argument registers)
 */
static __always_inline const u64 *fhook_arch_around_args(struct fhook_around_frame *f)
{
	return (const u64 *)((unsigned long)f + FHOOK_AF_SIZE + 16);
}

static __always_inline void fhook_arch_around_regs(struct fhook_around_frame *f, unsigned long ip)
{
	f->regs.ip = ip;
	f->regs.sp = (unsigned long)f + FHOOK_AF_SIZE + 8;	/* the return address */
	f->regs.bp = 0;
	f->regs.bx = 0;
	f->regs.r12 = 0;
	f->regs.r13 = 0;
	f->regs.r14 = 0;
	f->regs.r15 = 0;
	f->regs.r11 = 0;
	f->regs.orig_ax = 0;
	f->regs.flags = 0;
	f->regs.cs = 0;
	f->regs.ss = 0;
}
/* where the function of the around frame @f returns: its caller */
static __always_inline unsigned long fhook_arch_around_parent(struct fhook_around_frame *f)
{
	return *(unsigned long *)f->regs.sp;
}

/*
 * Above the latency trampoline's frame @f: %rbp, the return addresses
 * into the function's body (@body) and its caller (@parent), then the
 * caller's stack arguments (returned)
 */
static __always_inline const u64 *fhook_arch_lat_site(void *f, unsigned long *body,
						      unsigned long *parent)
{
	const u64 *above = (const u64 *)((unsigned long)f + FHOOK_LF_SIZE);

	*body = above[1];
	*parent = above[2];
	return above + 3;
}

/*
 * What the assembly recorder (tramp.S, fhook_fnrec_common and
 * fhook_fnk_common) saved, from its %rsp up: the registers it uses, as the
 * function had them at its entry, then the return addresses into the
 * function (its fentry site + 5) and into its caller
 */
struct fhook_fnrec_frame {
	unsigned long r12, bx, r10, r9, r8, di, si, dx, cx, ax;
	unsigned long ret, parent;
};

/*
 * The offset in struct fhook_fnrec_frame of the register at @reg in
 * struct pt_regs, for a kprobe's field (fhook_fnk_ok()); -1: not there.
 * Only those fhook_fnk_c_common also saves (FHOOK_SAVE_ARGS' registers).
 */
static inline int fhook_arch_fnk_slot(unsigned int reg)
{
#define FHOOK_FNK_SLOT(r) { offsetof(struct pt_regs, r), offsetof(struct fhook_fnrec_frame, r) }
	static const struct { u16 reg, slot; } slots[] = {
		FHOOK_FNK_SLOT(di), FHOOK_FNK_SLOT(si), FHOOK_FNK_SLOT(dx),
		FHOOK_FNK_SLOT(cx), FHOOK_FNK_SLOT(r8), FHOOK_FNK_SLOT(r9),
		FHOOK_FNK_SLOT(ax), FHOOK_FNK_SLOT(r10),
	};
#undef FHOOK_FNK_SLOT
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(slots); i++)
		if (slots[i].reg == reg)
			return slots[i].slot;
	return -1;
}
#endif

#endif /* FHOOK_TRAMP_H */
