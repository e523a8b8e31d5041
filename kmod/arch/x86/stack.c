// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stacks with x86's ORC unwinder, which needs no locks and works in
 * NMI: from a kprobe's registers (stack_trace_save_regs() is not
 * exported, so its loop is here), or, without registers, from the caller
 * (stack_trace_save(), skipping this function and the ftrace callback).
 */
#include "fhook.h"
#include "tramp.h"

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

/*
 * The frames of the trampolines that run a function's body (around,
 * latency) on current's stack, each given to @fn with its kind: the
 * unwinder finds them where a body returns into its trampoline.  Only
 * return addresses the unwinder follows are looked at, so nothing written
 * on the stack passes for a frame.  None found without ORC.
 */
notrace void fhook_arch_body_frames(void (*fn)(enum fhook_frame_kind_id kind, void *frame,
					       void *arg), void *arg)
{
#ifdef CONFIG_UNWINDER_ORC
	struct unwind_state state;

	BUILD_BUG_ON(ARRAY_SIZE(fhook_body_rets) != FHOOK_FRAME_LAT + 1);
	for (unwind_start(&state, current, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		unsigned long ip = unwind_get_return_address(&state);
		int kind;

		if (!ip)
			break;
		if (state.regs)		/* (an interrupted ip: no call returns there) */
			continue;
		for (kind = 0; kind < ARRAY_SIZE(fhook_body_rets); kind++) {
			/* the return address was in the word below the caller's sp */
			if (ip == fhook_body_rets[kind])
				fn(kind, (void *)(state.sp - 8 + FHOOK_BODY_RET_TO_FRAME), arg);
		}
	}
#endif
}
