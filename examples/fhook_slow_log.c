// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_slow_log: log the calls of a function that take longer than a
 * threshold, with their first arguments and return value.
 *
 *	insmod fhook_slow_log.ko func=hrtimer_nanosleep threshold_us=100000
 *	sleep 0.3
 *	dmesg | tail -1
 *	  fhook_slow_log: sleep[123] hrtimer_nanosleep(0x11e1a300, 0x1, 0x1) = 0 took 300 ms
 *
 * It only looks: entry and exit handlers, no replacement.  The entry
 * handler keeps the start time and the arguments in the call's data
 * (from entry to exit, per call, no allocation); the exit handler sees
 * the return value.  Handlers run with preemption off: no sleeping.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>

#include <fhook/khook.h>

static char *func = "hrtimer_nanosleep";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "the function to watch (\"name\" or \"module:name\")");

static ulong threshold_us = 100000;
module_param(threshold_us, ulong, 0644);
MODULE_PARM_DESC(threshold_us, "log calls at least this long (microseconds)");

/* what the entry handler hands to the exit handler, per call */
struct call {
	u64 start;
	unsigned long args[3];
};

static int slow_entry(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	struct call *c = data;
	int i;

	c->start = ktime_get_ns();
	for (i = 0; i < ARRAY_SIZE(c->args); i++)
		c->args[i] = fhook_khook_arg(regs, i);
	return 0;	/* 0: run the exit handler for this call */
}

static void slow_exit(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	struct call *c = data;
	u64 ns = ktime_get_ns() - c->start;

	if (ns < threshold_us * NSEC_PER_USEC)
		return;
	pr_info("%s[%d] %s(%#lx, %#lx, %#lx) = %ld took %llu ms\n", current->comm,
		task_pid_nr(current), hook->name, c->args[0], c->args[1], c->args[2],
		(long)fhook_khook_retval(regs), ns / NSEC_PER_MSEC);
}

static struct fhook_khook hooks[] = {
	FHOOK_KHOOK_OBSERVE(NULL, slow_entry, slow_exit, sizeof(struct call)),
};

static int __init slow_log_init(void)
{
	hooks[0].name = func;
	return fhook_khook_install(hooks, ARRAY_SIZE(hooks));
}

static void __exit slow_log_exit(void)
{
	fhook_khook_remove(hooks, ARRAY_SIZE(hooks));
}

module_init(slow_log_init);
module_exit(slow_log_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook example: log slow calls of a function with their arguments");
