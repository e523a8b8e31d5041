// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_deny_open: opening one path fails with EACCES.
 *
 *	insmod fhook_deny_open.ko path=/etc/shadow
 *	cat /etc/shadow				-> Permission denied
 *	cat /sys/module/fhook_deny_open/parameters/denied	-> 1
 *
 * The replacement of do_sys_openat2() (every open(2), openat(2) and
 * openat2(2) goes through it) reads the path the caller passed; opening
 * exactly `path` is refused, anything else goes to the original.
 * fhook does the rest: the original does not come back here, and rmmod
 * waits for tasks still inside (an open of a FIFO can block for ever).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <fhook/khook.h>

static char *path = "/nonexistent/fhook-denied";
module_param(path, charp, 0444);
MODULE_PARM_DESC(path, "the path whose opening is refused (exactly as the caller gives it)");

static atomic_long_t denied_count = ATOMIC_LONG_INIT(0);

/* the read-only parameter `denied`: how many opens were refused */
static int denied_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&denied_count));
}

static const struct kernel_param_ops denied_ops = {
	.get = denied_get,
};
module_param_cb(denied, &denied_ops, NULL, 0444);
MODULE_PARM_DESC(denied, "opens refused so far");

struct open_how;

/* set by fhook: calls the original do_sys_openat2() */
static long (*orig_do_sys_openat2)(int dfd, const char __user *filename, struct open_how *how);

/* Same prototype as the function it replaces (fs/open.c). */
static long deny_do_sys_openat2(int dfd, const char __user *filename, struct open_how *how)
{
	char *name;
	long len;

	/* the caller's context: a system call, so the user's memory is there */
	name = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!name)
		return orig_do_sys_openat2(dfd, filename, how);
	len = strncpy_from_user(name, filename, PATH_MAX);
	if (len > 0 && len < PATH_MAX && !strcmp(name, path)) {
		kfree(name);
		atomic_long_inc(&denied_count);
		return -EACCES;
	}
	kfree(name);
	return orig_do_sys_openat2(dfd, filename, how);
}

static struct fhook_khook hooks[] = {
	FHOOK_KHOOK_REPLACE("do_sys_openat2", deny_do_sys_openat2, &orig_do_sys_openat2),
};

static int __init deny_open_init(void)
{
	/* all or none; on failure the kernel log says which hook and why */
	int ret = fhook_khook_install(hooks, ARRAY_SIZE(hooks));

	if (ret)
		return ret;
	pr_info("denying opens of %s\n", path);
	return 0;
}

static void __exit deny_open_exit(void)
{
	/* returns once no task is inside the replacement (or the original) */
	fhook_khook_remove(hooks, ARRAY_SIZE(hooks));
}

module_init(deny_open_init);
module_exit(deny_open_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook example: opening one path fails with EACCES");
