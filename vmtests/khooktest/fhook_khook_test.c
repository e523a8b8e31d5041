// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_khook_test: the hook API's guest tests (vmtests/guest/tests/khook_*.sh).
 * Never loaded outside a QEMU guest.
 *
 *   mode=missing   vfs_read observed, then a function that does not exist:
 *                  install fails, vfs_read must be left unhooked
 *   mode=twice     vfs_read twice in one array: the second conflicts
 *   mode=nested    replacements of vfs_read and rw_verify_area (which
 *                  vfs_read's body calls), each calling its original
 *   mode=stack     a replacement of vfs_read that prints the unwinder's
 *                  stack trace once, for a task named fhook-stack
 *   mode=observe   entry and exit handlers on vfs_read: the count of bytes
 *                  asked and returned for tasks named fhook-workload
 *   mode=module    entry and exit handlers on fhook_testmod:fhook_testmod_ret
 *                  (a module's function, by "module:name"): calls and the
 *                  sum of their return values
 *   mode=self      entry and exit handlers on the delete_module syscall: the
 *                  module's own unload path, removed from inside it
 *   mode=die       entry and exit handlers on fhook_testmod_die, which exits
 *                  the thread that calls it (mod_calls, exits)
 *   mode=sleep     entry and exit handlers on fhook_testmod_sleep
 *                  (mod_calls, exits)
 * leak=1: the exit function does not remove the hooks (fhook must)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/string.h>

#include <fhook/khook.h>

static char *mode = "nested";
module_param(mode, charp, 0444);

static bool leak;
module_param(leak, bool, 0444);

static ulong read_calls, verify_calls, stacks, entries, exits, bytes, mod_calls, mod_sum;
module_param(read_calls, ulong, 0444);
module_param(verify_calls, ulong, 0444);
module_param(stacks, ulong, 0444);
module_param(entries, ulong, 0444);
module_param(exits, ulong, 0444);
module_param(bytes, ulong, 0444);
module_param(mod_calls, ulong, 0444);
module_param(mod_sum, ulong, 0444);

#define BUMP(x) WRITE_ONCE(x, READ_ONCE(x) + 1)

static ssize_t (*orig_vfs_read)(struct file *file, char __user *buf, size_t count, loff_t *pos);
static int (*orig_rw_verify_area)(int rw, struct file *file, const loff_t *pos, size_t count);

static ssize_t test_vfs_read(struct file *file, char __user *buf, size_t count, loff_t *pos)
{
	BUMP(read_calls);
	if (!strcmp(mode, "stack") && !strcmp(current->comm, "fhook-stack") &&
	    !READ_ONCE(stacks)) {
		unsigned long entries[32];
		unsigned int i, n = stack_trace_save(entries, ARRAY_SIZE(entries), 0);

		/* the unwinder's frames only (dump_stack() adds guesses, "?") */
		BUMP(stacks);
		pr_info("stack from inside a replacement: %u frames\n", n);
		for (i = 0; i < n; i++)
			pr_info("  frame %pS\n", (void *)entries[i]);
		pr_info("end of stack\n");
	}
	return orig_vfs_read(file, buf, count, pos);
}

static int test_rw_verify_area(int rw, struct file *file, const loff_t *pos, size_t count)
{
	BUMP(verify_calls);
	return orig_rw_verify_area(rw, file, pos, count);
}

static int test_entry(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	if (strcmp(current->comm, "fhook-workload"))
		return 1;	/* no exit handler for this call */
	BUMP(entries);
	*(unsigned long *)data = fhook_khook_arg(regs, 2);	/* count */
	return 0;
}

static void test_exit(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	BUMP(exits);
	if ((long)fhook_khook_retval(regs) == *(unsigned long *)data)
		WRITE_ONCE(bytes, READ_ONCE(bytes) + fhook_khook_retval(regs));
}

static int mod_entry(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	BUMP(mod_calls);
	return 0;
}

static void mod_exit(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	WRITE_ONCE(mod_sum, READ_ONCE(mod_sum) + fhook_khook_retval(regs));
}

/* the syscall wrappers' prefix */
#ifdef CONFIG_ARM64
#define FHOOK_TEST_SYS	"__arm64_sys_"
#else
#define FHOOK_TEST_SYS	"__x64_sys_"
#endif

static struct fhook_khook module_hooks[] = {
	FHOOK_KHOOK_OBSERVE("fhook_testmod:fhook_testmod_ret", mod_entry, mod_exit, 0),
};

static struct fhook_khook missing[] = {
	FHOOK_KHOOK_OBSERVE("vfs_read", test_entry, test_exit, 8),
	FHOOK_KHOOK_REPLACE("fhook_no_such_function", test_vfs_read, NULL),
};

static struct fhook_khook twice[] = {
	FHOOK_KHOOK_REPLACE("vfs_read", test_vfs_read, &orig_vfs_read),
	FHOOK_KHOOK_OBSERVE("vfs_read", test_entry, test_exit, 8),
};

static struct fhook_khook nested[] = {
	FHOOK_KHOOK_REPLACE("vfs_read", test_vfs_read, &orig_vfs_read),
	FHOOK_KHOOK_REPLACE("rw_verify_area", test_rw_verify_area, &orig_rw_verify_area),
};

static struct fhook_khook observe[] = {
	FHOOK_KHOOK_OBSERVE("vfs_read", test_entry, test_exit, 8),
};

static int self_entry(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	BUMP(mod_calls);
	return 0;
}

static void self_exit(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	BUMP(exits);
}

static struct fhook_khook self[] = {
	FHOOK_KHOOK_OBSERVE(FHOOK_TEST_SYS "delete_module", self_entry, self_exit, 0),
};

static struct fhook_khook die[] = {
	FHOOK_KHOOK_OBSERVE("fhook_testmod:fhook_testmod_die", self_entry, self_exit, 0),
};

static struct fhook_khook sleep[] = {
	FHOOK_KHOOK_OBSERVE("fhook_testmod:fhook_testmod_sleep", self_entry, self_exit, 0),
};

static struct fhook_khook *hooks;
static size_t nr;

static int __init khook_test_init(void)
{
	if (!strcmp(mode, "missing")) {
		hooks = missing;
		nr = ARRAY_SIZE(missing);
	} else if (!strcmp(mode, "twice")) {
		hooks = twice;
		nr = ARRAY_SIZE(twice);
	} else if (!strcmp(mode, "nested")) {
		hooks = nested;
		nr = ARRAY_SIZE(nested);
	} else if (!strcmp(mode, "stack")) {
		hooks = nested;
		nr = 1;
	} else if (!strcmp(mode, "observe")) {
		hooks = observe;
		nr = ARRAY_SIZE(observe);
	} else if (!strcmp(mode, "module")) {
		hooks = module_hooks;
		nr = ARRAY_SIZE(module_hooks);
	} else if (!strcmp(mode, "self")) {
		hooks = self;
		nr = ARRAY_SIZE(self);
	} else if (!strcmp(mode, "die")) {
		hooks = die;
		nr = ARRAY_SIZE(die);
	} else if (!strcmp(mode, "sleep")) {
		hooks = sleep;
		nr = ARRAY_SIZE(sleep);
	} else {
		return -EINVAL;
	}
	return fhook_khook_install(hooks, nr);
}

static void __exit khook_test_exit(void)
{
	if (!leak)
		fhook_khook_remove(hooks, nr);
}

module_init(khook_test_init);
module_exit(khook_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook hook API tests (QEMU guests only)");
