// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel symbols: the one parser of what sprint_symbol() writes (the
 * exported way to kallsyms, whose lookup functions modules cannot call),
 * and FHOOK_IOC_SYMBOLS, which names the addresses a reader's records
 * carry without the reader generating the whole of /proc/kallsyms.
 */
#include "fhook.h"

#include <linux/kallsyms.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/*
 * The symbol containing @addr: sprint_symbol() writes "name+0xoff/0xsize
 * [module]" into @buf (KSYM_SYMBOL_LEN bytes), cut here into the name,
 * left in @buf, and *@module, which points into @buf ("" for vmlinux).
 * False when no symbol contains @addr (sprint_symbol() then writes the
 * bare address) or kallsyms' range for it does not (a size that wraps).
 */
bool fhook_symbol_of(unsigned long addr, char *buf, unsigned long *off,
		     unsigned long *size, const char **module)
{
	size_t len;
	char *p;

	sprint_symbol(buf, addr);
	*module = "";
	len = strlen(buf);
	if (len && buf[len - 1] == ']') {
		p = strrchr(buf, '[');
		if (p && p > buf && p[-1] == ' ') {
			buf[len - 1] = '\0';
			*module = p + 1;
			p[-1] = '\0';
		}
	}
	p = strrchr(buf, '+');
	if (!p || sscanf(p, "+%lx/%lx", off, size) != 2)
		return false;
	/*
	 * (a module's data past its text gets a size that wraps: kallsyms
	 * ends the last symbol at the text's end)
	 */
	if (*off >= *size || *size - 1 > ULONG_MAX - (addr - *off))
		return false;
	*p = '\0';
	return true;
}

/* FHOOK_IOC_SYMBOLS: @sy checked by its row and handler in ioctl.c */
long fhook_symbols(const struct fhook_symbols *sy)
{
	struct fhook_symbol __user *u = u64_to_user_ptr(sy->entries);
	struct {
		char buf[KSYM_SYMBOL_LEN];
		struct fhook_symbol out;
	} *w;
	long ret = 0;
	u32 i;

	w = kmalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	for (i = 0; i < sy->nr; i++) {
		unsigned long off, size;
		const char *module;
		u64 addr;

		if (get_user(addr, &u[i].addr)) {
			ret = -EFAULT;
			break;
		}
		memset(&w->out, 0, sizeof(w->out));
		w->out.addr = addr;
		if (fhook_symbol_of(addr, w->buf, &off, &size, &module)) {
			w->out.offset = off;
			w->out.size = size;
			/* (cut where too long: -E2BIG, the NUL kept) */
			strscpy(w->out.name, w->buf, sizeof(w->out.name));
			strscpy(w->out.module, module, sizeof(w->out.module));
		}
		if (copy_to_user(&u[i], &w->out, sizeof(w->out))) {
			ret = -EFAULT;
			break;
		}
		cond_resched();
	}
	kfree(w);
	return ret;
}
