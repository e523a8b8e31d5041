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
 * The calls in progress on current's stack, from the caller's outwards:
 * @fn(kind, ip, frame, @arg) for each return address the unwinder
 * follows, with the frame of the trampoline it returns into where a body
 * the around or latency trampoline runs returns (kind FHOOK_FRAME_*; else
 * FHOOK_FRAME_NONE, frame NULL); @fn says whether to go on.  Nothing
 * written on the stack passes for a frame: only return-address slots are
 * read, and the walk ends where the unwinder is unsure of them (an
 * error; a return address a call graph replaced that fgraph.c does not
 * know, or that is another return trampoline's: a kretprobe's, the
 * kernel's function_graph's, whose callbacks ran before the graph's).
 * Whether the walk saw every frame (the stack's end or @fn's choice).
 * Nothing without ORC.
 */
notrace bool fhook_arch_body_frames(bool (*fn)(int kind, unsigned long ip, void *frame,
					       void *arg), void *arg)
{
#ifdef CONFIG_UNWINDER_ORC
	struct unwind_state state;

	BUILD_BUG_ON(ARRAY_SIZE(fhook_body_rets) != FHOOK_FRAME_LAT + 1);
	for (unwind_start(&state, current, NULL, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		unsigned long ip = unwind_get_return_address(&state);
		void *frame = NULL;
		int kind;

		if (unwind_error(&state))
			return false;
		if (state.regs && user_mode(state.regs))
			break;		/* the stack's end: a user task's */
		if (!ip)
			return false;
		if (state.regs)		/* (an interrupted ip: no call returns there) */
			continue;
		/* the return address was in the word below the caller's sp */
		if (ip == (unsigned long)fhook_graph_return) {
			ip = fhook_fgraph_ret_addr(state.sp - 8);
			if (!ip)
				return false;
			if (fhook_symbol_start(ip))
				return false;
			state.ip = ip;	/* (the unwinder goes on from there) */
		}
		for (kind = ARRAY_SIZE(fhook_body_rets) - 1; kind >= 0; kind--) {
			if (ip == fhook_body_rets[kind]) {
				frame = (void *)(state.sp - 8 + FHOOK_BODY_RET_TO_FRAME);
				break;
			}
		}
		if (!fn(kind, ip, frame, arg))
			break;
	}
	return true;
#else
	return false;
#endif
}
