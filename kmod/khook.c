// SPDX-License-Identifier: GPL-2.0
/*
 * The hook API for other modules (include/fhook/khook.h, docs/khook.md).
 *
 * Each hook is an IPMODIFY ftrace_ops on one function whose callback
 * sends the call to an around trampoline slot (around.c): the slot runs
 * the module's entry handler, its replacement (or the function's body,
 * after the fentry call) and its exit handler, counting the calls inside.
 * The replacement's "original" is the slot's fhook_orig_N stub, which
 * continues at the body after the fentry call: it never comes back to the
 * hook, whoever calls it, so no within_module() test is needed.
 *
 * Names are resolved as a kprobe's symbol_name is (the kernel's
 * kallsyms_lookup_name(), "module:function" included), by registering a
 * disabled kprobe: nothing is patched, and kprobes' refusals (fhook's own
 * text, the kprobe blacklist, non-text) apply.
 *
 * Removal unregisters the ops, then waits until no call is inside
 * (around.c): the module's replacement and handlers may go once it
 * returns.  A module that goes without removing its hooks, or whose
 * hooked function's module goes, has them removed here, from the module
 * notifier.
 *
 * The ledger (fhook_khooks) lists every installed hook for `fhook status`
 * and `fhook hook` (FHOOK_IOC_KHOOKS) and names the owner of a function
 * another hook of this API would conflict with.
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <fhook/khook.h>

struct fhook_khook_k {
	struct fhook_around around;
	struct ftrace_ops ops;
	struct fhook_khook *hook;	/* the module's entry */
	struct module *owner;
	unsigned long addr;		/* the fentry site */
	char func[KSYM_SYMBOL_LEN];	/* "name+0x0/0x.. [mod]" at install */
	atomic_long_t hits;
	atomic_long_t missed;
	struct list_head node;		/* fhook_khooks */
};

static DEFINE_MUTEX(fhook_khook_lock);	/* the ledger */
/*
 * Held for a whole removal, waits included (before fhook_khook_lock): a
 * module's own removal and the notifier's never race for one hook, and
 * the later one returns only after the hook is gone.
 */
static DEFINE_MUTEX(fhook_khook_removing);
static LIST_HEAD(fhook_khooks);

static notrace void fhook_khook_callback(unsigned long ip, unsigned long parent_ip,
					 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct fhook_khook_k *k = container_of(op, struct fhook_khook_k, ops);
	struct pt_regs *regs = ftrace_get_regs(fregs);

	/* the trampoline runs the handlers and the replacement */
	if (likely(regs && fhook_around_at(&k->around, ip)))
		regs->ip = fhook_around_tramps[k->around.slot];
}

/* Before the replacement or the body; preemptible. */
static notrace void fhook_khook_enter(struct fhook_around *a, struct fhook_around_frame *f)
{
	struct fhook_khook_k *k = container_of(a, struct fhook_khook_k, around);
	struct fhook_khook *hook = k->hook;
	int bit;

	atomic_long_inc(&k->hits);
	if (!hook->entry && !hook->exit)
		return;
	/* a hooked function the handler calls runs without its handlers */
	bit = ftrace_test_recursion_trylock(f->regs.ip, *(unsigned long *)f->regs.sp);
	if (bit < 0) {
		atomic_long_inc(&k->missed);
		return;
	}
	memset(f->data, 0, hook->data_size);
	f->record = !(hook->entry && hook->entry(hook, &f->regs, f->data)) && hook->exit;
	ftrace_test_recursion_unlock(bit);
}

/* After it returned, %rax in regs.ax. */
static notrace void fhook_khook_leave(struct fhook_around *a, struct fhook_around_frame *f)
{
	struct fhook_khook_k *k = container_of(a, struct fhook_khook_k, around);
	int bit;

	if (!f->record)
		return;
	bit = ftrace_test_recursion_trylock(f->regs.ip, *(unsigned long *)f->regs.sp);
	if (bit < 0) {
		atomic_long_inc(&k->missed);
		return;
	}
	k->hook->exit(k->hook, &f->regs, f->data);
	ftrace_test_recursion_unlock(bit);
}

static void fhook_khook_free(struct fhook_around *a)
{
	kfree(container_of(a, struct fhook_khook_k, around));
}

static const struct fhook_around_ops fhook_khook_around_ops = {
	.enter	= fhook_khook_enter,
	.exit	= fhook_khook_leave,
	.free	= fhook_khook_free,
};

/* "name [mod]" of @func ("name+0x0/0x40 [mod]"). */
static void fhook_khook_name(const char *func, char *buf, size_t len)
{
	const char *plus = strchr(func, '+');
	const char *mod = strchr(func, '[');

	if (!plus) {
		strscpy(buf, func, len);
		return;
	}
	snprintf(buf, len, "%.*s%s%s", (int)(plus - func), func, mod ? " " : "", mod ?: "");
}

/* Resolve @name with a disabled kprobe: its address past any ENDBR. */
static int fhook_khook_resolve(const char *name, unsigned long *addr)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	*addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return 0;
}

static int fhook_khook_check(struct fhook_khook *hook)
{
	if (!hook->name || !*hook->name) {
		hook->why = "no function name";
		return -EINVAL;
	}
	if (!hook->replacement && !hook->entry && !hook->exit) {
		hook->why = "neither a replacement nor an entry or exit handler";
		return -EINVAL;
	}
	if (hook->orig && !hook->replacement) {
		hook->why = "an original pointer without a replacement";
		return -EINVAL;
	}
	if (hook->data_size > FHOOK_KHOOK_MAX_DATA) {
		hook->why = "data_size is more than FHOOK_KHOOK_MAX_DATA";
		return -E2BIG;
	}
	if (hook->fhook) {
		hook->why = "already installed";
		return -EBUSY;
	}
	return 0;
}

static int fhook_khook_arm(struct fhook_khook *hook, struct module *owner)
{
	static char who[128];	/* under fhook_khook_lock */
	struct fhook_khook_k *k;
	unsigned long addr;
	u32 words;
	s32 bad;
	int ret;

	ret = fhook_khook_check(hook);
	if (ret)
		return ret;
	ret = fhook_khook_resolve(hook->name, &addr);
	if (ret) {
		hook->why = ret == -ENOENT ? "no such function" :
			    ret == -ELOOP ? "a function of fhook itself" :
			    "not a function the kernel lets be probed (kprobe blacklist, not text)";
		return ret;
	}
	list_for_each_entry(k, &fhook_khooks, node) {
		if (k->addr == addr) {
			snprintf(who, sizeof(who), "module %s holds it with fhook's hook API",
				 k->owner->name);
			hook->why = who;
			return -EBUSY;
		}
	}
	/* the caller's stack arguments the replacement or body may read */
	ret = fhook_body_stack_words((const u64 []){ addr }, 1, &words, &bad);
	if (ret) {
		hook->why = ret == -EOPNOTSUPP ?
			    "a prototype fhook cannot pass on (struct by value, too many stack words)" :
			    "no prototype for it in BTF";
		return ret;
	}

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k) {
		hook->why = "out of memory";
		return -ENOMEM;
	}
	k->hook = hook;
	k->owner = owner;
	k->addr = addr;
	sprint_symbol(k->func, addr);
	k->ops.func = fhook_khook_callback;
	k->ops.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY;
	ret = fhook_around_add(&k->around, &fhook_khook_around_ops,
			       (unsigned long)hook->replacement, words);
	if (ret) {
		hook->why = "all around trampoline slots are in use";
		goto err_free;
	}
	ret = fhook_around_set_body(&k->around, addr);
	if (ret) {
		hook->why = "its text cannot be read";
		goto err_slot;
	}
	ret = ftrace_set_filter_ip(&k->ops, addr, 0, 0);
	if (ret) {
		hook->why = "not a function ftrace can trace (notrace, inlined, __init)";
		ret = -ENOENT;
		goto err_slot;
	}
	if (hook->orig)
		WRITE_ONCE(*(unsigned long *)hook->orig, fhook_around_orig(&k->around));
	ret = register_ftrace_function(&k->ops);
	if (ret) {
		if (ret == -EBUSY && fhook_hook_owner(addr, who, sizeof(who)))
			hook->why = who;
		else if (ret == -EBUSY)
			hook->why = "another IPMODIFY ftrace user (livepatch, a module outside fhook) or a direct call holds it: see enabled_functions in tracefs";
		else
			hook->why = "ftrace refused the hook";
		goto err_orig;
	}
	hook->address = addr;
	WRITE_ONCE(hook->fhook, k);
	list_add_tail(&k->node, &fhook_khooks);
	return 0;

err_orig:
	if (hook->orig)
		WRITE_ONCE(*(unsigned long *)hook->orig, 0);
err_slot:
	ftrace_free_filter(&k->ops);
	fhook_around_release(&k->around, false);	/* frees k */
	return ret;
err_free:
	kfree(k);
	return ret;
}

/* Unregister @k's ops and take it off the ledger; under the lock. */
static void fhook_khook_unhook(struct fhook_khook_k *k)
{
	int ret = unregister_ftrace_function(&k->ops);

	if (ret)
		pr_err("%s: %s: unregistering the hook failed (%d)\n", k->owner->name, k->func,
		       ret);
	list_del(&k->node);
}

/* After unhooking: wait for the calls inside, free @k. */
static void fhook_khook_drain(struct fhook_khook_k *k)
{
	struct fhook_khook *hook = k->hook;
	char what[MODULE_NAME_LEN + KSYM_SYMBOL_LEN + 16];

	snprintf(what, sizeof(what), "%s: hook on %s", k->owner->name, k->func);
	ftrace_free_filter(&k->ops);
	fhook_around_wait(&k->around, what);	/* frees k */
	/* no replacement of the module is running: the stub is unused */
	if (hook->orig)
		WRITE_ONCE(*(unsigned long *)hook->orig, 0);
	hook->address = 0;
	WRITE_ONCE(hook->fhook, NULL);
}

int __fhook_khook_install(struct fhook_khook *hooks, size_t n, struct module *owner)
{
	size_t i;
	int ret = 0;

	if (!hooks || !n || !owner)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		hooks[i].error = 0;
		hooks[i].why = NULL;
	}
	mutex_lock(&fhook_khook_lock);
	for (i = 0; i < n; i++) {
		ret = fhook_khook_arm(&hooks[i], owner);
		if (ret)
			break;
	}
	if (ret) {
		hooks[i].error = ret;
		pr_err("%s: hook %zu (%s): %s (%d)%s\n", owner->name, i, hooks[i].name ?: "?",
		       hooks[i].why, ret, i ? ": the hooks before it are removed again" : "");
	}
	mutex_unlock(&fhook_khook_lock);
	if (ret)
		fhook_khook_remove(hooks, i);
	else
		pr_info("%s: %zu hook(s) installed\n", owner->name, n);
	return ret;
}
EXPORT_SYMBOL_GPL(__fhook_khook_install);

void fhook_khook_remove(struct fhook_khook *hooks, size_t n)
{
	struct fhook_khook_k *k;
	size_t i;

	if (!hooks)
		return;
	mutex_lock(&fhook_khook_removing);
	/* unhook all first: none is reached while the others drain */
	mutex_lock(&fhook_khook_lock);
	for (i = 0; i < n; i++) {
		k = hooks[i].fhook;
		if (k)
			fhook_khook_unhook(k);
	}
	mutex_unlock(&fhook_khook_lock);
	for (i = 0; i < n; i++) {
		k = hooks[i].fhook;
		if (k)
			fhook_khook_drain(k);
	}
	mutex_unlock(&fhook_khook_removing);
}
EXPORT_SYMBOL_GPL(fhook_khook_remove);

/*
 * A module going: the hooks it left installed, and those on its
 * functions, are removed (their text is still there until it is freed).
 */
static int fhook_khook_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	struct fhook_khook_k *k, *tmp;
	LIST_HEAD(going);

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&fhook_khook_removing);
	mutex_lock(&fhook_khook_lock);
	list_for_each_entry_safe(k, tmp, &fhook_khooks, node) {
		if (k->owner == mod) {
			pr_warn("%s left its hook on %s installed: removed\n", mod->name, k->func);
		} else if (within_module(k->addr, mod)) {
			pr_warn("%s: its function %s, hooked by %s, is going: hook removed\n",
				mod->name, k->func, k->owner->name);
		} else {
			continue;
		}
		fhook_khook_unhook(k);
		list_add_tail(&k->node, &going);
	}
	mutex_unlock(&fhook_khook_lock);
	list_for_each_entry_safe(k, tmp, &going, node) {
		list_del(&k->node);
		fhook_khook_drain(k);
	}
	mutex_unlock(&fhook_khook_removing);
	return NOTIFY_OK;
}

static struct notifier_block fhook_khook_nb = {
	.notifier_call = fhook_khook_module_notify,
	/* before modwatch.c's: it may wait for calls inside */
	.priority = 1,
};

/* FHOOK_IOC_KHOOKS: the ledger. */
long fhook_khook_list(struct fhook_khooks __user *uarg)
{
	struct fhook_khook_info __user *out;
	struct fhook_khook_info info;
	struct fhook_khook_k *k;
	struct fhook_khooks arg;
	u32 nr = 0;
	long ret = 0;

	ret = fhook_copy_arg_min(&arg, sizeof(arg), sizeof(arg), (unsigned long)uarg);
	if (ret < 0)
		return ret;
	ret = 0;
	if (arg.__pad || arg.reserved[0] || arg.reserved[1] ||
	    arg.entry_size != sizeof(info) || (arg.nr && !arg.entries))
		return -EINVAL;
	out = u64_to_user_ptr(arg.entries);
	mutex_lock(&fhook_khook_lock);
	list_for_each_entry(k, &fhook_khooks, node) {
		if (nr < arg.nr) {
			memset(&info, 0, sizeof(info));
			info.addr = k->addr;
			info.hits = atomic_long_read(&k->hits);
			info.inside = atomic_long_read(&k->around.inflight);
			info.missed = atomic_long_read(&k->missed);
			info.kind = (k->hook->replacement ? FHOOK_KHOOK_KIND_REPLACE : 0) |
				    (k->hook->entry ? FHOOK_KHOOK_KIND_ENTRY : 0) |
				    (k->hook->exit ? FHOOK_KHOOK_KIND_EXIT : 0);
			fhook_khook_name(k->func, info.func, sizeof(info.func));
			strscpy(info.owner, k->owner->name, sizeof(info.owner));
			if (copy_to_user(&out[nr], &info, sizeof(info))) {
				ret = -EFAULT;
				break;
			}
		}
		nr++;
	}
	mutex_unlock(&fhook_khook_lock);
	if (!ret && put_user(nr, &uarg->nr))
		ret = -EFAULT;
	return ret;
}

int fhook_khook_init(void)
{
	return register_module_notifier(&fhook_khook_nb);
}

/* No module can use the API here: each one holds a reference on fhook. */
void fhook_khook_exit(void)
{
	unregister_module_notifier(&fhook_khook_nb);
}
