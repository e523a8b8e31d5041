// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stacks on arm64 by frame records (x29 chains, which Debian's
 * arm64 kernels keep: CONFIG_FRAME_POINTER): from a kprobe's registers
 * (stack_trace_save_regs() is not exported), read with
 * copy_from_kernel_nofault() so a bad record ends the walk instead of
 * faulting, each return address stripped of its pointer authentication
 * code; without registers from the caller (stack_trace_save()).  And the
 * calls in progress on current's stack, for the trampoline frames a task
 * dies or removes a hook inside (frames.c).
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <asm/pointer_auth.h>

/* 6.1 names it ptrauth_strip_insn_pac(), 6.12 per key */
#ifdef ptrauth_strip_kernel_insn_pac
#define fhook_strip_pac(ptr)	ptrauth_strip_kernel_insn_pac(ptr)
#else
#define fhook_strip_pac(ptr)	ptrauth_strip_insn_pac(ptr)
#endif

/*
 * Is a frame record at @fp on the stack @sp is on (a task's or this CPU's
 * IRQ stack: THREAD_SIZE blocks, so aligned) or current's task stack?  A
 * kprobe in code that uses x29 for something else (assembler) must not
 * send the words at any address it holds to the ring.
 */
static notrace bool fhook_record_on_stack(unsigned long fp, unsigned long sp)
{
	unsigned long here = (sp - 1) & ~(THREAD_SIZE - 1);
	unsigned long task = (unsigned long)task_stack_page(current);

	return (fp >= here && fp <= here + THREAD_SIZE - 16) ||
	       (fp >= task && fp <= task + THREAD_SIZE - 16);
}

notrace unsigned int fhook_stack_kernel(struct pt_regs *regs, u64 *store, unsigned int max)
{
	unsigned long fp, sp, record[2];
	unsigned int n = 0;

	if (!regs)	/* skip this function and the ftrace callback */
		return stack_trace_save((unsigned long *)store, max, 2);
	store[n++] = instruction_pointer(regs);
	/* the probed function's own return address may not be saved yet */
	fp = frame_pointer(regs);
	sp = kernel_stack_pointer(regs);
	while (n < max && fp && !(fp & 7) && fhook_record_on_stack(fp, sp)) {
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
 * The calls in progress on current's stack, from the caller's outwards,
 * as arch/x86/stack.c's walk gives them (its comment has the contract),
 * by frame records within current's task stack: @fn(kind, ip, frame,
 * @arg) for each return address, with the around or latency trampoline's
 * frame where a body it runs returns into it (the body's record holds the
 * trampoline's frame pointer; its frame is right below).  Only records are read; the walk ends unsure at a record out of
 * the stack or not above the last, and where a return address a call graph
 * replaced leads nowhere fgraph.c knows or to another return trampoline.
 * Called from task context (exit, a hook's removal): no exception
 * boundary lies between here and the stack's final record.
 */
notrace bool fhook_arch_body_frames(bool (*fn)(int kind, unsigned long ip, void *frame,
					       void *arg), void *arg)
{
	unsigned long low = (unsigned long)task_stack_page(current), high = low + THREAD_SIZE;
	static const unsigned long below[] = {
		[FHOOK_FRAME_AROUND] = FHOOK_AF_SPACE,
		[FHOOK_FRAME_LAT] = FHOOK_LF_SIZE,
	};
	unsigned long fp = (unsigned long)__builtin_frame_address(0), record[2];

	BUILD_BUG_ON(ARRAY_SIZE(fhook_body_rets) != ARRAY_SIZE(below));
	for (;;) {
		void *frame = NULL;
		unsigned long ip;
		int kind;

		if ((fp & 7) || fp < low || fp > high - sizeof(record) ||
		    copy_from_kernel_nofault(record, (void *)fp, sizeof(record)))
			return false;
		ip = fhook_strip_pac(record[1]);
		if (!ip)	/* the final record: the stack's end */
			return true;
		/* a call graph's: the call is found by the frame it links to */
		if (ip == (unsigned long)fhook_graph_return) {
			ip = fhook_fgraph_ret_addr(record[0]);
			if (!ip || fhook_symbol_start(ip))
				return false;
		}
		for (kind = ARRAY_SIZE(fhook_body_rets) - 1; kind >= 0; kind--) {
			if (fhook_body_rets[kind] && ip == fhook_body_rets[kind]) {
				frame = (void *)(record[0] - below[kind]);
				break;
			}
		}
		if (!fn(kind, ip, frame, arg))
			return true;
		if (record[0] <= fp)
			return !record[0];
		fp = record[0];
	}
}
