// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_fail_comm: make a function fail for one program (error injection).
 *
 *	insmod fhook_fail_comm.ko comm=cat
 *	head /etc/passwd	-> works
 *	cat /etc/passwd		-> "can't open '/etc/passwd': Operation not permitted"
 *
 * An exit handler replaces the return value of security_file_open() (the
 * LSM check every open passes, which returns 0 or -errno) with -EPERM
 * when the calling task's name is `comm`: the kernel then unwinds the
 * open as it does when a security module refuses it.  Choose functions
 * whose callers handle the error you return.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>

#include <fhook/khook.h>

static char *comm = "fhook-victim";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "the task name whose opens fail");

static int err = EPERM;
module_param(err, int, 0644);
MODULE_PARM_DESC(err, "the errno returned (positive)");

static ulong failed;
module_param(failed, ulong, 0444);
MODULE_PARM_DESC(failed, "calls made to fail so far");

static void fail_exit(struct fhook_khook *hook, struct pt_regs *regs, void *data)
{
	if (fhook_khook_retval(regs) || strcmp(current->comm, comm))
		return;
	fhook_khook_set_retval(regs, -err);
	WRITE_ONCE(failed, READ_ONCE(failed) + 1);
}

static struct fhook_khook hooks[] = {
	FHOOK_KHOOK_OBSERVE("security_file_open", NULL, fail_exit, 0),
};

static int __init fail_comm_init(void)
{
	return fhook_khook_install(hooks, ARRAY_SIZE(hooks));
}

static void __exit fail_comm_exit(void)
{
	fhook_khook_remove(hooks, ARRAY_SIZE(hooks));
}

module_init(fail_comm_init);
module_exit(fail_comm_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook example: a function fails for one program");
