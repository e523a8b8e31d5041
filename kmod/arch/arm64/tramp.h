/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's trampolines (tramp.S): the call graphs' return trampoline, the
 * around trampoline of hooks and its "original"s, the direct-call ones
 * (counting, recording, latency) where the kernel has direct calls.
 * Without them their slot tables are there, empty: those probes are
 * refused before any is used (FHOOK_ARCH_NO_FEATURES, arch.h).
 */
#ifndef FHOOK_TRAMP_H
#define FHOOK_TRAMP_H

#define FHOOK_NR_SLOTS		64

/* no assembly recorder of function entries (x86's tramp.h) */
#define FHOOK_ARCH_FNREC_ASM	0

/*
 * struct fhook_around_frame (fhook.h): a struct pt_regs (336 bytes: x0 at
 * 0), then these; the frame takes FHOOK_AF_SPACE bytes (16-aligned)
 */
#define FHOOK_AF_X0		0
#define FHOOK_AF_SLOT		336
#define FHOOK_AF_TARGET		344
#define FHOOK_AF_STACK		352	/* u64[8]: the caller's stack arguments */
#define FHOOK_AF_SIZE		712
#define FHOOK_AF_SPACE		720

/*
 * struct fhook_lat_frame (latency.c): x0..x9 (x9: the return address into
 * the caller), then these; right below the trampoline's frame record,
 * which is right below the callsite's
 */
#define FHOOK_LF_NREGS		10
#define FHOOK_LF_LAT		80
#define FHOOK_LF_STACK		96	/* u64[8]: the caller's stack arguments */
#define FHOOK_LF_TIMED		160
#define FHOOK_LF_PAD		1	/* words */
#define FHOOK_LF_SIZE		176
#define FHOOK_LF_SIZE_MOD_16	0	/* sp stays 16-byte aligned */

#ifndef __ASSEMBLY__
#include "tramp_tables.h"

/*
 * The around trampoline's frame @f (around.c): the caller's stack
 * arguments are above it and its frame record (the stack pointer at the
 * function's entry); f->regs completed as the function saw them at its
 * patch site @ip (the trampoline saved x0..x8; the frame record holds the
 * caller's frame pointer and the return address)
 */
static __always_inline const u64 *fhook_arch_around_args(struct fhook_around_frame *f)
{
	return (const u64 *)((unsigned long)f + FHOOK_AF_SPACE + 16);
}

static __always_inline void fhook_arch_around_regs(struct fhook_around_frame *f, unsigned long ip)
{
	const unsigned long *record = (const unsigned long *)((unsigned long)f + FHOOK_AF_SPACE);
	unsigned long rest = (unsigned long)&f->regs + offsetof(struct pt_regs, orig_x0);

	memset(&f->regs.regs[9], 0, (29 - 9) * sizeof(f->regs.regs[0]));
	/* what follows pstate (its members differ between kernels) */
	memset((void *)rest, 0, sizeof(f->regs) - offsetof(struct pt_regs, orig_x0));
	f->regs.regs[29] = record[0];
	f->regs.regs[30] = record[1];
	f->regs.sp = (unsigned long)(record + 2);
	f->regs.pc = ip;
	f->regs.pstate = PSR_MODE_EL1h;
}

/* where the function of the around frame @f returns: its caller */
static __always_inline unsigned long fhook_arch_around_parent(struct fhook_around_frame *f)
{
	return f->regs.regs[30];
}

/*
 * Above the latency trampoline's frame @f: its frame record (x29, the
 * return address into the function's body: @body), the callsite's (the
 * caller's x29, the return address into it: @parent), then the caller's
 * stack arguments (returned)
 */
static __always_inline const u64 *fhook_arch_lat_site(void *f, unsigned long *body,
						      unsigned long *parent)
{
	const u64 *records = (const u64 *)((unsigned long)f + FHOOK_LF_SIZE);

	*body = records[1];
	*parent = records[3];
	return records + 4;
}

/* no assembly recorder: no kprobe field is written by it */
static inline int fhook_arch_fnk_slot(unsigned int reg)
{
	return -1;
}
#endif

#endif /* FHOOK_TRAMP_H */
