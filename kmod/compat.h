/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place for differences between the kernels fhook supports
 * (Debian 6.1 and 6.12).  Features are detected from the headers by Kbuild
 * (FHOOK_HAVE_*) or by #ifdef on macros, never by LINUX_VERSION_CODE:
 * Debian backports APIs into its stable kernels.
 */
#ifndef FHOOK_COMPAT_H
#define FHOOK_COMPAT_H

#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/uprobes.h>
#ifdef FHOOK_HAVE_ARCH_FTRACE_REGS
#include <linux/ftrace_regs.h>
#endif

/* vm_flags became read-only with accessors in 6.3. */
static inline void fhook_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef FHOOK_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void fhook_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef FHOOK_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * uprobes: 6.12 (and backports) register returning a struct uprobe * and
 * unregister in two steps; 6.1 registers returning int and unregisters
 * synchronously by (inode, offset).
 */
struct fhook_uprobe_handle {
	struct inode *inode;
	loff_t offset;
	struct uprobe *uprobe;
};

static inline int fhook_uprobe_register(struct fhook_uprobe_handle *h,
					struct uprobe_consumer *uc)
{
#ifdef FHOOK_HAVE_UPROBE_PTR
	struct uprobe *u = uprobe_register(h->inode, h->offset, 0, uc);

	if (IS_ERR(u))
		return PTR_ERR(u);
	h->uprobe = u;
	return 0;
#else
	return uprobe_register(h->inode, h->offset, uc);
#endif
}

/* Returns once no handler of @uc runs any more. */
static inline void fhook_uprobe_unregister(struct fhook_uprobe_handle *h,
					   struct uprobe_consumer *uc)
{
#ifdef FHOOK_HAVE_UPROBE_PTR
	uprobe_unregister_nosync(h->uprobe, uc);
	uprobe_unregister_sync();
	h->uprobe = NULL;
#else
	uprobe_unregister(h->inode, h->offset, uc);
#endif
}

/*
 * ftrace direct calls, the ops-based API: 6.1 names it *_multi and leaves
 * the filter to the caller on unregister; 6.5+ drops the suffix and takes
 * a free_filters flag.  The filter is freed by the probe's release either
 * way.  ops->func and ops->trampoline must be clear before registering
 * (6.1 refuses otherwise; unregistering clears them, a failed registration
 * may not).
 */
static inline int fhook_direct_register(struct ftrace_ops *ops, unsigned long addr)
{
	ops->func = NULL;
	ops->trampoline = 0;
#ifdef FHOOK_HAVE_DIRECT_OPS_API
	return register_ftrace_direct(ops, addr);
#else
	return register_ftrace_direct_multi(ops, addr);
#endif
}

static inline int fhook_direct_unregister(struct ftrace_ops *ops, unsigned long addr)
{
#ifdef FHOOK_HAVE_DIRECT_OPS_API
	return unregister_ftrace_direct(ops, addr, false);
#else
	return unregister_ftrace_direct_multi(ops, addr);
#endif
}

static inline int fhook_direct_modify(struct ftrace_ops *ops, unsigned long addr)
{
#ifdef FHOOK_HAVE_DIRECT_OPS_API
	return modify_ftrace_direct(ops, addr);
#else
	return modify_ftrace_direct_multi(ops, addr);
#endif
}

/*
 * The registers an ftrace_ops callback without FTRACE_OPS_FL_SAVE_REGS
 * gets (FHOOK_ARCH_PARTIAL_REGS: x86's argument registers, %rax, %rbp, ip
 * and sp; arm64's x0..x8, fp, lr, sp and pc) as a struct pt_regs of which
 * only those members are valid.  Where the arch's ftrace_regs hold none
 * (arm64 from 6.2) its ftrace_partial_regs() copies them into @buf, whose
 * writes ftrace_caller does not see; 6.12's x86 reaches the pt_regs inside
 * through arch_ftrace_regs(), 6.1's struct ftrace_regs is one.
 */
/*
 * On @buf of fhook_fregs_partial(): where nothing is copied into it (x86;
 * arm64 before 6.2) it is never read, so CONFIG_INIT_STACK_ALL_ZERO
 * (Debian's kernels) need not zero its 168 bytes on every call.
 */
#ifdef FHOOK_HAVE_ARCH_FTRACE_PARTIAL_REGS
#define __fhook_fregs_buf
#else
#define __fhook_fregs_buf	__uninitialized
#endif

static __always_inline struct pt_regs *fhook_fregs_partial(struct ftrace_regs *fregs,
							   struct pt_regs *buf)
{
#if defined(FHOOK_HAVE_ARCH_FTRACE_PARTIAL_REGS)
	return ftrace_partial_regs(fregs, buf);
#elif defined(FHOOK_HAVE_ARCH_FTRACE_REGS)
	return &arch_ftrace_regs(fregs)->regs;
#else
	return &fregs->regs;
#endif
}

/*
 * A hook's ftrace_ops changes where a call goes (and a RETURN hook its
 * return value).  Where ftrace gives full registers (x86; arm64 before
 * 6.2: DYNAMIC_FTRACE_WITH_REGS) the ops asks for them and changes its
 * struct pt_regs.  Where its ftrace_regs hold only the argument registers
 * (arm64 from 6.2: DYNAMIC_FTRACE_WITH_ARGS alone) it changes those, which
 * ftrace_caller restores, pc included; filters and fetch programs run on
 * a partial copy (fhook_fregs_partial()) and may read only what it holds
 * (FHOOK_R_HOOK_REGS).  The copy is made only for them: a hook that just
 * sends the call to a trampoline sets pc directly.
 */
#if !defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS) && defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#define FHOOK_HOOK_OPS_FLAGS	FTRACE_OPS_FL_IPMODIFY
#define FHOOK_HOOK_PARTIAL_REGS	1

/* ftrace_caller always saves what a hook changes */
static __always_inline bool fhook_hook_can_change(struct ftrace_regs *fregs)
{
	return true;
}

static __always_inline struct pt_regs *fhook_hook_regs(struct ftrace_regs *fregs,
							struct pt_regs *buf)
{
	return fhook_fregs_partial(fregs, buf);
}

static __always_inline void fhook_hook_set_ip(struct ftrace_regs *fregs, unsigned long ip)
{
	ftrace_regs_set_instruction_pointer(fregs, ip);
}

static __always_inline void fhook_hook_set_return(struct ftrace_regs *fregs, unsigned long val)
{
	ftrace_regs_set_return_value(fregs, val);
}
#else
#define FHOOK_HOOK_OPS_FLAGS	(FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY)
#define FHOOK_HOOK_PARTIAL_REGS	0

/* not if ftrace saved no registers (another ops' call without SAVE_REGS) */
static __always_inline bool fhook_hook_can_change(struct ftrace_regs *fregs)
{
	return ftrace_get_regs(fregs);
}

/* (only where fhook_hook_can_change()) */
static __always_inline struct pt_regs *fhook_hook_regs(struct ftrace_regs *fregs,
							struct pt_regs *buf)
{
	return ftrace_get_regs(fregs);
}

static __always_inline void fhook_hook_set_ip(struct ftrace_regs *fregs, unsigned long ip)
{
	instruction_pointer_set(ftrace_get_regs(fregs), ip);
}

static __always_inline void fhook_hook_set_return(struct ftrace_regs *fregs, unsigned long val)
{
	regs_set_return_value(ftrace_get_regs(fregs), val);
}
#endif

/*
 * Tasks whose user registers are not their own (io_uring workers, and
 * from 6.4 every user worker: created with the parent's registers but ip
 * and sp): no user stack is taken from them.
 */
#ifdef PF_USER_WORKER
#define FHOOK_PF_NO_USER_REGS	(PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER)
#else
#define FHOOK_PF_NO_USER_REGS	(PF_KTHREAD | PF_IO_WORKER)
#endif

/*
 * A zero-length RCU quiescent state, from a loop that never sleeps
 * (osnoise's, as the kernel's): rcu_momentary_eqs() since 6.12 (and
 * Debian's later 6.1), rcu_momentary_dyntick_idle() before
 */
#ifdef FHOOK_HAVE_RCU_MOMENTARY_EQS
#define fhook_rcu_momentary_qs()	rcu_momentary_eqs()
#else
#define fhook_rcu_momentary_qs()	rcu_momentary_dyntick_idle()
#endif

#endif /* FHOOK_COMPAT_H */
