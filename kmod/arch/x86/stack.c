// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stacks with x86's ORC unwinder, which needs no locks and works in
 * NMI: from a kprobe's registers (stack_trace_save_regs() is not
 * exported, so its loop is here), or, without registers, from the caller
 * (stack_trace_save(), skipping this function and the ftrace callback).
 */
#include "fhook.h"

#include <linux/stacktrace.h>
#include <asm/unwind.h>

notrace unsigned int fhook_stack_kernel(struct pt_regs *regs, u64 *store, unsigned int max)
{
	struct unwind_state state;
	unsigned int n = 0;

	BUILD_BUG_ON(sizeof(unsigned long) != sizeof(u64));
	if (!regs)	/* skip this function and the ftrace callback */
		return stack_trace_save((unsigned long *)store, max, 2);
	store[n++] = instruction_pointer(regs);
	for (unwind_start(&state, current, regs, NULL); !unwind_done(&state) && n < max;
	     unwind_next_frame(&state)) {
		unsigned long addr = unwind_get_return_address(&state);

		if (!addr)
			break;
		store[n++] = addr;
	}
	return n;
}
