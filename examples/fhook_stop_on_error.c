// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_stop_on_error: freeze the kernel's trace buffer when an open fails.
 *
 *	insmod fhook_stop_on_error.ko comm=cat
 *	echo function_graph > /sys/kernel/tracing/current_tracer	(anything)
 *	cat /nonexistent
 *	cat /sys/kernel/tracing/tracing_on	-> 0
 *	cat /sys/kernel/tracing/trace		-> ends with this module's line
 *
 * An exit handler of do_sys_openat2() sees each open's return value.  The
 * first error a task named `comm` gets is written into the trace buffer
 * with trace_printk(), and tracing_off() stops the buffer right there: what
 * led up to the error stays in it instead of being overwritten by what
 * came after (the use tracing_off() was made for; lesson 9 of
 * docs/learn).  `echo 1 > tracing_on` arms it again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>

#include <fhook/khook.h>

static char *comm = "fhook-victim";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "the task name whose first failed open stops the trace");

static ulong stopped;
module_param(stopped, ulong, 0444);
MODULE_PARM_DESC(stopped, "times this module turned the trace buffer off");

static void open_exit(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	long ret = (long)fhook_khook_retval(regs);

	if (ret >= 0 || strcmp(current->comm, comm) || !tracing_is_on())
		return;
	trace_printk("%s: open failed with %ld, tracing off\n", current->comm, ret);
	tracing_off();
	WRITE_ONCE(stopped, READ_ONCE(stopped) + 1);
}

static struct fhook_khook hooks[] = {
	FHOOK_KHOOK_OBSERVE("do_sys_openat2", NULL, open_exit, 0),
};

static int __init stop_on_error_init(void)
{
	return fhook_khook_install(hooks, ARRAY_SIZE(hooks));
}

static void __exit stop_on_error_exit(void)
{
	fhook_khook_remove(hooks, ARRAY_SIZE(hooks));
}

module_init(stop_on_error_init);
module_exit(stop_on_error_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook example: stop the trace buffer at a failed open");
