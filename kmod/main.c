// SPDX-License-Identifier: GPL-2.0
/*
 * fhook: a kernel function tracing and hooking framework.
 *
 * /dev/fhook is a misc device; each open file is an independent session
 * (session.c) whose events leave the kernel through per-CPU rings that
 * userspace mmaps (ring.c).  The fops' .owner pins the module while any
 * session fd or mapping exists, so rmmod is refused cleanly then.
 */
#include "fhook.h"

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>

atomic_t fhook_nr_sessions = ATOMIC_INIT(0);

/*
 * /sys/module/fhook/parameters/abi_version, beside .../version: which
 * fhook can drive this module, readable without opening /dev/fhook
 * (fhook --version, fhook doctor).  Not settable, not even at load time.
 */
static int fhook_abi_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%d\n", FHOOK_ABI_VERSION);
}

static int fhook_abi_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops fhook_abi_ops = {
	.set = fhook_abi_set,
	.get = fhook_abi_get,
};
module_param_cb(abi_version, &fhook_abi_ops, NULL, 0444);
MODULE_PARM_DESC(abi_version, "The ABI of /dev/fhook (read-only)");

static int fhook_open(struct inode *inode, struct file *file)
{
	struct fhook_user *user;
	struct fhook_session *s;
	int ret;

	/*
	 * Checked on open and again on every ioctl and mmap (priv.c): a
	 * privileged process may hand its fd to an unprivileged one (fork +
	 * setuid, SCM_RIGHTS), and the rings carry kernel addresses.
	 */
	ret = fhook_session_may(NULL);
	if (ret)
		return ret;
	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;
	ret = fhook_user_session_get(&user);
	if (ret)
		return ret;
	s = fhook_session_create(user);
	if (!s) {
		fhook_user_session_put(user);
		return -ENOMEM;
	}
	file->private_data = s;
	atomic_inc(&fhook_nr_sessions);
	return 0;
}

/* Runs once the last fd and the last mapping of the session are gone. */
static int fhook_release(struct inode *inode, struct file *file)
{
	struct fhook_session *s = file->private_data;
	struct fhook_user *user = s->user;

	/* (what the session held is given back first) */
	fhook_session_destroy(s);
	fhook_user_session_put(user);
	atomic_dec(&fhook_nr_sessions);
	return 0;
}

static long fhook_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return fhook_session_ioctl(file->private_data, cmd, arg);
}

static int fhook_mmap(struct file *file, struct vm_area_struct *vma)
{
	int ret = fhook_session_may_map(file->private_data);

	if (ret)
		return ret;
	return fhook_rings_mmap(file->private_data, vma);
}

static __poll_t fhook_poll(struct file *file, poll_table *wait)
{
	return fhook_session_poll(file->private_data, file, wait);
}

static const struct file_operations fhook_fops = {
	.owner		= THIS_MODULE,
	.open		= fhook_open,
	.release	= fhook_release,
	.unlocked_ioctl	= fhook_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= fhook_mmap,
	.poll		= fhook_poll,
};

static struct miscdevice fhook_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "fhook",
	.fops	= &fhook_fops,
	.mode	= 0600,
};

static int __init fhook_init(void)
{
	int ret;

	fhook_clock_setup();
	ret = fhook_pidfilter_init();
	if (ret)
		return ret;
	ret = fhook_fetch_init();
	if (ret)
		return ret;
	ret = fhook_frames_init();
	if (ret)
		goto err_fetch;
	fhook_hooks_init();
	fhook_around_init();
	fhook_lat_setup();
	ret = fhook_modwatch_init();
	if (ret)
		goto err_frames;
	ret = fhook_khook_init();
	if (ret)
		goto err_modwatch;
	ret = fhook_tp_setup();
	if (ret)
		goto err_khook;
	fhook_fgraph_setup();
	fhook_wakeup_setup();
	fhook_hwlat_setup();
	fhook_osnoise_setup();
	fhook_irqsoff_setup();
	fhook_cpu_threads_setup();
	ret = misc_register(&fhook_misc);
	if (ret) {
		pr_err("misc_register: %d\n", ret);
		goto err_cpu_threads;
	}
	pr_info("version %s, ABI %d, /dev/%s\n", FHOOK_VERSION, FHOOK_ABI_VERSION,
		fhook_misc.name);
	if (fhook_lab) {
		add_taint(TAINT_USER, LOCKDEP_STILL_OK);
		pr_warn("lab mode: hooks may override function returns and redirect calls; kernel tainted\n");
	}
	return 0;

err_cpu_threads:
	fhook_cpu_threads_exit();
	fhook_irqsoff_exit();
	fhook_tp_teardown();
err_khook:
	fhook_khook_exit();
err_modwatch:
	fhook_modwatch_exit();
err_frames:
	fhook_frames_exit();
err_fetch:
	fhook_fetch_exit();
	return ret;
}

static void __exit fhook_exit(void)
{
	/* no session can exist here: each one holds a module reference */
	misc_deregister(&fhook_misc);
	fhook_fgraph_teardown();
	fhook_cpu_threads_exit();
	fhook_irqsoff_exit();
	fhook_tp_teardown();
	fhook_khook_exit();
	fhook_modwatch_exit();
	fhook_around_exit_module();
	fhook_lat_exit_module();
	fhook_frames_exit();
	fhook_fetch_exit();
}

module_init(fhook_init);
module_exit(fhook_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("fhook developers");
MODULE_DESCRIPTION("fhook: kernel function tracing and hooking");
MODULE_VERSION(FHOOK_VERSION);
