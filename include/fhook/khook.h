/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook's hook API for kernel modules (docs/khook.md).
 *
 * A module declares an array of hooks and installs them all or none:
 *
 *	static asmlinkage long (*orig_openat2)(int dfd, const char __user *name,
 *						struct open_how *how);
 *
 *	static asmlinkage long my_openat2(int dfd, const char __user *name,
 *					  struct open_how *how)
 *	{
 *		...
 *		return orig_openat2(dfd, name, how);
 *	}
 *
 *	static struct fhook_khook hooks[] = {
 *		FHOOK_KHOOK_REPLACE("do_sys_openat2", my_openat2, &orig_openat2),
 *	};
 *
 *	init:	ret = fhook_khook_install(hooks, ARRAY_SIZE(hooks));
 *	exit:	fhook_khook_remove(hooks, ARRAY_SIZE(hooks));
 *
 * What fhook does for the module:
 *   - the original, called from the replacement, does not come back to
 *     the hook (it starts after the function's fentry call): no
 *     within_module() or parent-ip test, whoever the caller is;
 *   - fhook_khook_remove() returns only when no task is inside a
 *     replacement, an entry or exit handler, or an original called from
 *     them: the module's text may go right after it;
 *   - a function another IPMODIFY user holds (fhook's CLI, another
 *     module, livepatch) is refused, and the kernel log names the owner;
 *   - replacements are reached without an indirect branch and the
 *     original through a stub with an ENDBR (IBT), in frames ORC unwinds;
 *   - `fhook status` lists every installed hook: function, module, kind,
 *     hits, tasks inside now.
 *
 * Build against fhook's Module.symvers (KBUILD_EXTRA_SYMBOLS), load
 * fhook.ko first: the module then holds a reference on it.
 */
#ifndef _FHOOK_KHOOK_H
#define _FHOOK_KHOOK_H

#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/types.h>

struct fhook_khook;

/*
 * Entry and exit handlers (like fprobe's): @regs holds the arguments as at
 * the function's entry (fhook_khook_arg()), and at exit its return value
 * too (fhook_khook_retval()).  @data is this call's private space,
 * data_size bytes, from entry to exit; an exit handler may change the
 * value returned (fhook_khook_set_retval()).  They run with preemption disabled
 * and must not sleep; a hooked function they call runs without its
 * handlers (it is not recursed into).  An entry handler returning
 * non-zero skips the exit handler of that call.  A call still inside
 * the function when its hook is removed returns without the exit
 * handler: do not take in an entry handler what only the exit handler
 * gives back (a reference, a lock).
 */
typedef int (*fhook_khook_entry_t)(struct fhook_khook *hook, struct pt_regs *regs, void *data);
typedef void (*fhook_khook_exit_t)(struct fhook_khook *hook, struct pt_regs *regs, void *data);

#define FHOOK_KHOOK_MAX_DATA	128	/* bytes of data per call */

struct fhook_khook {
	/* "function", or "module:function" for a module's function */
	const char *name;
	/*
	 * Called instead of the function, with the same prototype, in the
	 * caller's context (it may sleep where the function may).  NULL:
	 * the function itself runs (observe only).
	 */
	void *replacement;
	/*
	 * The address of the module's function pointer that fhook sets to
	 * call the original function (from the replacement only), or NULL
	 */
	void *orig;
	fhook_khook_entry_t entry;	/* before the call, or NULL */
	fhook_khook_exit_t exit;	/* after it returned, or NULL */
	unsigned int data_size;		/* <= FHOOK_KHOOK_MAX_DATA */
	void *private;			/* the module's own, for its handlers */

	/* set by fhook_khook_install() */
	unsigned long address;		/* the function's address */
	int error;			/* why this hook failed (-errno), or 0 */
	const char *why;		/* ... in words (until the next install), or NULL */
	void *fhook;			/* fhook's own state, NULL when removed */
};

#define FHOOK_KHOOK_REPLACE(_name, _replacement, _orig)	\
	{ .name = (_name), .replacement = (void *)(_replacement), .orig = (_orig) }
#define FHOOK_KHOOK_OBSERVE(_name, _entry, _exit, _data_size)	\
	{ .name = (_name), .entry = (_entry), .exit = (_exit), .data_size = (_data_size) }

/*
 * Install @n hooks of @owner, all or none: 0, or a negative errno after
 * every hook already armed was removed again; the failing hook has
 * .error and .why set, and the kernel log has a line naming it.  Sleeps.
 */
int __fhook_khook_install(struct fhook_khook *hooks, size_t n, struct module *owner);
#define fhook_khook_install(hooks, n) __fhook_khook_install(hooks, n, THIS_MODULE)

/*
 * Remove @n hooks (the installed ones; the others are skipped).  Returns
 * when no task is inside a replacement, a handler, or a function of the
 * module; sleeps meanwhile (a line in the kernel log every 10 s names a
 * hook still in use).  Tasks inside another function the module only
 * observes (entry and exit handlers) are not waited for: their handlers
 * are detached, and they return without running the module's code.
 */
void fhook_khook_remove(struct fhook_khook *hooks, size_t n);

/* The @n-th argument (0-based, integers and pointers) as at entry. */
static inline unsigned long fhook_khook_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}

/* In an exit handler: the function's return value. */
static inline unsigned long fhook_khook_retval(struct pt_regs *regs)
{
	return regs_return_value(regs);
}

/* In an exit handler: what the caller gets instead. */
static inline void fhook_khook_set_retval(struct pt_regs *regs, unsigned long v)
{
	regs_set_return_value(regs, v);
}

#endif /* _FHOOK_KHOOK_H */
