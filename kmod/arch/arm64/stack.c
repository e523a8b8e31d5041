// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stacks on arm64 by frame records (x29 chains, which Debian's
 * arm64 kernels keep: CONFIG_FRAME_POINTER): from a kprobe's registers
 * (stack_trace_save_regs() is not exported), read with
 * copy_from_kernel_nofault() so a bad record ends the walk instead of
 * faulting, each return address stripped of its pointer authentication
 * code; without registers from the caller (stack_trace_save()).
 */
#include "fhook.h"

#include <linux/stacktrace.h>
#include <asm/pointer_auth.h>

/* 6.1 names it ptrauth_strip_insn_pac(), 6.12 per key */
#ifdef ptrauth_strip_kernel_insn_pac
#define fhook_strip_pac(ptr)	ptrauth_strip_kernel_insn_pac(ptr)
#else
#define fhook_strip_pac(ptr)	ptrauth_strip_insn_pac(ptr)
#endif

notrace unsigned int fhook_stack_kernel(struct pt_regs *regs, u64 *store, unsigned int max)
{
	unsigned long fp, record[2];
	unsigned int n = 0;

	if (!regs)	/* skip this function and the ftrace callback */
		return stack_trace_save((unsigned long *)store, max, 2);
	store[n++] = instruction_pointer(regs);
	/* the probed function's own return address may not be saved yet */
	fp = frame_pointer(regs);
	while (n < max && fp && !(fp & 15)) {
		/* record[0]: the caller's frame pointer, record[1]: return address */
		if (copy_from_kernel_nofault(record, (void *)fp, sizeof(record)))
			break;
		if (!record[1])
			break;
		store[n++] = fhook_strip_pac(record[1]);
		if (record[0] <= fp)	/* stacks grow down: callers are above */
			break;
		fp = record[0];
	}
	return n;
}

/*
 * The calls in progress on current's stack, for the frames of the around
 * and latency trampolines, which arm64 has not: nothing is walked
 */
notrace bool fhook_arch_body_frames(bool (*fn)(int kind, unsigned long ip, void *frame,
					       void *arg), void *arg)
{
	return false;
}
