// SPDX-License-Identifier: GPL-2.0
/*
 * FHOOK_IOC_READ_TEXT: kernel text for `fhook explain`, which disassembles
 * it in userspace.  The same policy as /proc/kcore: CAP_SYS_RAWIO and no
 * lockdown; faults are errors, never oopses.  The read must lie inside
 * one kallsyms symbol (a function, or data of the kernel image or a
 * module): never device memory, whose reads can have side effects.
 */
#include "fhook.h"

#include <linux/kallsyms.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/* Is [addr, addr + len) inside the kallsyms symbol containing addr? */
static bool fhook_in_symbol(unsigned long addr, u32 len)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	const char *module;

	if (!fhook_symbol_of(addr, sym, &off, &size, &module))
		return false;
	return off < size && len <= size - off;
}

long fhook_read_text(const struct fhook_read_text *rt)
{
	void *buf;
	long ret;

	/*
	 * (its fields, CAP_SYS_RAWIO and LOCKDOWN_KCORE: its row in ioctl.c)
	 * kernel addresses only: the top half of the address space
	 */
	if (rt->addr < TASK_SIZE_MAX || rt->addr + rt->len < rt->addr ||
	    !fhook_in_symbol(rt->addr, rt->len))
		return -EFAULT;
	buf = kmalloc(rt->len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = 0;
	if (copy_from_kernel_nofault(buf, (const void *)(unsigned long)rt->addr, rt->len))
		ret = -EFAULT;
	else if (copy_to_user(u64_to_user_ptr(rt->buf), buf, rt->len))
		ret = -EFAULT;
	kfree(buf);
	return ret;
}
