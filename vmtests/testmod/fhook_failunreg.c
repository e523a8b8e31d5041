// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_failunreg.ko: fault injection for the guest tests only.  While
 * /sys/module/fhook_failunreg/parameters/fail is N > 0, the next N calls of
 * ftrace's unregister functions (after the first `skip` ones) return
 * -ENODEV without unregistering anything, as they do after ftrace_kill():
 * the ops stays registered and its callbacks keep running.
 *
 * kernel/trace/ is not traceable, so these are int3 kprobes; the
 * pre-handler sends the call to a function that only returns -ENODEV
 * (how bpf_override_return() skips a function).  A post-handler keeps the
 * kprobes from being jump-optimized: an optimized kprobe cannot change
 * the instruction pointer.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>

static int fail;
module_param(fail, int, 0644);
MODULE_PARM_DESC(fail, "calls of unregister_ftrace_*() still to fail");
static int skip;
module_param(skip, int, 0644);
MODULE_PARM_DESC(skip, "calls to let through before those that fail");

static atomic_t failed = ATOMIC_INIT(0);

/* Runs in place of the unregister function and returns to its caller. */
static noinline int fhook_failunreg_enodev(void)
{
	return -ENODEV;
}

static int fhook_failunreg_pre(struct kprobe *kp, struct pt_regs *regs)
{
	int left = READ_ONCE(fail), pass = READ_ONCE(skip);

	if (left <= 0)
		return 0;
	if (pass > 0 && cmpxchg(&skip, pass, pass - 1) == pass)
		return 0;
	if (cmpxchg(&fail, left, left - 1) != left)
		return 0;
	atomic_inc(&failed);
	instruction_pointer_set(regs, (unsigned long)fhook_failunreg_enodev);
	return 1;	/* no single-step: go on at the instruction pointer */
}

static void fhook_failunreg_post(struct kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
}

static struct kprobe fhook_failunreg_kps[] = {
	{ .symbol_name = "unregister_ftrace_function" },
	{ .symbol_name = "unregister_ftrace_direct" },
	{ .symbol_name = "unregister_ftrace_direct_multi" },
};

static int __init fhook_failunreg_init(void)
{
	int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(fhook_failunreg_kps); i++) {
		struct kprobe *kp = &fhook_failunreg_kps[i];

		kp->pre_handler = fhook_failunreg_pre;
		kp->post_handler = fhook_failunreg_post;
		if (register_kprobe(kp) == 0)
			n++;
		else
			kp->symbol_name = NULL;
	}
	pr_info("%d unregister functions can fail\n", n);
	return n ? 0 : -ENOENT;
}

static void __exit fhook_failunreg_exit(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(fhook_failunreg_kps); i++)
		if (fhook_failunreg_kps[i].symbol_name)
			unregister_kprobe(&fhook_failunreg_kps[i]);
	pr_info("%d calls failed\n", atomic_read(&failed));
}

module_init(fhook_failunreg_init);
module_exit(fhook_failunreg_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook guest tests: make ftrace's unregister fail");
