// SPDX-License-Identifier: GPL-2.0
/*
 * Arguments from userspace: ioctl structs that start with their own size,
 * and the texts (patterns) and arrays they point to.
 */
#include "fhook.h"

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * Copy an ioctl argument that starts with its own __u32 size.  Older
 * (smaller) layouts are zero-extended, newer ones must have a zero tail
 * (copy_struct_from_user()).  Returns the user's size or -errno.
 */
int fhook_copy_arg_min(void *karg, size_t ksize, size_t minsize, unsigned long uarg)
{
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < minsize)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(karg, ksize, (void __user *)uarg, usize);
	return ret ? ret : usize;
}

/*
 * @n elements of @size bytes at @uptr, in memory charged to the caller's
 * memory cgroup (vmemdup_user() is not: a kept address list stayed outside
 * every cgroup); free with kvfree().
 */
void *fhook_copy_array(u64 uptr, u32 n, size_t size)
{
	void *p = kvmalloc_array(n, size, GFP_KERNEL_ACCOUNT);

	if (!p)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(p, u64_to_user_ptr(uptr), array_size(n, size))) {
		kvfree(p);
		return ERR_PTR(-EFAULT);
	}
	return p;
}

/* A text of @len bytes at @uptr, NUL-terminated; NULL when @len is 0. */
char *fhook_copy_text(u64 uptr, u32 len)
{
	if (!len)
		return NULL;
	if (len > FHOOK_MAX_PATTERN_TEXT)
		return ERR_PTR(-EINVAL);
	return memdup_user_nul(u64_to_user_ptr(uptr), len);
}
