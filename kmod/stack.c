// SPDX-License-Identifier: GPL-2.0
/*
 * Stack traces recorded with an event (FHOOK_PROBE_F_STACK).  Kernel
 * stacks from the ftrace callback here, from a kprobe's registers by the
 * CPU's unwinder (arch/, fhook_stack_kernel()).  User stacks of uprobes
 * by frame pointers, read with copy_from_user_nofault(): binaries built
 * without frame pointers give the first frame or two only.
 */
#include "fhook.h"

#include <linux/kallsyms.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>

/*
 * A function probe's stack from its ftrace callback: @ip, then its callers
 * from @parent_ip on (the frames of fhook and of the ftrace trampoline
 * dropped; all kept if @parent_ip is not among them).  At most @max
 * entries of @store; returns how many.
 */
notrace unsigned int fhook_stack_func(u64 *store, unsigned int max, unsigned long ip,
				      unsigned long parent_ip)
{
	unsigned int n = fhook_stack_kernel(NULL, store + 1, max - 1), i;

	for (i = 0; i < n && store[1 + i] != parent_ip; i++)
		;
	if (i < n) {
		memmove(store + 1, store + 1 + i, (n - i) * sizeof(u64));
		n -= i;
	}
	store[0] = ip;
	return n + 1;
}

notrace unsigned int fhook_stack_user(struct pt_regs *regs, u64 *store, unsigned int max)
{
	unsigned long fp = frame_pointer(regs), frame[2];
	unsigned int n = 0;

	if (!instruction_pointer(regs))
		return 0;
	store[n++] = instruction_pointer(regs);
	if (!fhook_arch_user_frames(regs))	/* frames of 4-byte words: not walked */
		return n;
	while (n < max && fp && !(fp & 7)) {
		/* frame[0]: the caller's frame pointer, frame[1]: return address */
		if (copy_from_user_nofault(frame, (void __user *)fp, sizeof(frame)))
			break;
		if (!frame[1])
			break;
		store[n++] = frame[1];
		if (frame[0] <= fp)	/* stacks grow down: callers are above */
			break;
		fp = frame[0];
	}
	return n;
}

/*
 * Is @ip where a function starts?  A call returns after a call
 * instruction; a return trampoline (a kretprobe's, function_graph's) is
 * entered at its start: a stack walk cannot look through those.  (Its own
 * frame: the walker's holds no buffer.)
 */
noinline notrace bool fhook_symbol_start(unsigned long ip)
{
	char sym[KSYM_SYMBOL_LEN];

	sprint_symbol(sym, ip);
	return strstr(sym, "+0x0/");
}
