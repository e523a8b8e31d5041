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
 * returns.  A module that goes without removing its hooks has them
 * removed here, from the module notifier, which waits only for calls
 * inside a replacement (an observer's handlers are detached instead); a
 * hook whose function's module goes is unhooked there and left to its
 * owner.  Each hook is drained by the one task that adopted it (moved it
 * from the ledger to fhook_khook_draining, under fhook_khook_lock), with
 * no lock held: a task asleep inside one hook delays that hook's removal
 * only, never another module's load or unload.  Anyone else who needs
 * the hook gone waits for its free (fhook_khook_wq).  A hook ftrace
 * fails to unregister (after ftrace_kill()) stops sending calls to its
 * slot and is kept, with fhook, for good.
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
	unsigned long addr;		/* as the kprobe resolved it (past an ENDBR) */
	char func[KSYM_SYMBOL_LEN];	/* "name+0x0/0x.. [mod]" at install */
	atomic_long_t hits;
	atomic_long_t missed;
	struct list_head node;		/* fhook_khooks, then fhook_khook_draining */
	struct task_struct *drainer;	/* who drains it: fhook_khook_adopt() */
	bool handlers;			/* the hook has an entry or exit handler */
	bool unhooked;			/* off the ledger, ops unregistered */
	bool draining;			/* its drain has begun */
	bool stuck;			/* its ops could not be unregistered */
};

static DEFINE_MUTEX(fhook_khook_lock);	/* the ledger, the draining list */
static LIST_HEAD(fhook_khooks);
static LIST_HEAD(fhook_khook_draining);
/* a hook freed: hook->fhook cleared, fhook_khook_freed bumped */
static DECLARE_WAIT_QUEUE_HEAD(fhook_khook_wq);
static unsigned long fhook_khook_freed;

static notrace void fhook_khook_callback(unsigned long ip, unsigned long parent_ip,
					 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct fhook_khook_k *k = container_of(op, struct fhook_khook_k, ops);

	/* the trampoline runs the handlers and the replacement */
	if (likely(fhook_hook_can_change(fregs) && !READ_ONCE(k->stuck) &&
		   fhook_around_at(&k->around, ip)))
		fhook_hook_set_ip(fregs, fhook_around_tramps[k->around.slot]);
}

/*
 * Before the replacement or the body; preemptible.  The module's hook is
 * read with preemption off (the recursion lock): a detach waits for that
 * (fhook_around_wait()).
 */
static notrace void fhook_khook_enter(struct fhook_around *a, struct fhook_around_frame *f)
{
	struct fhook_khook_k *k = container_of(a, struct fhook_khook_k, around);
	struct fhook_khook *hook;
	int bit;

	atomic_long_inc(&k->hits);
	if (!k->handlers)
		return;
	/* a hooked function the handler calls runs without its handlers */
	bit = ftrace_test_recursion_trylock(instruction_pointer(&f->regs), fhook_arch_around_parent(f));
	if (bit < 0) {
		atomic_long_inc(&k->missed);
		return;
	}
	hook = READ_ONCE(k->hook);	/* NULL: detached, its module going or gone */
	if (hook) {
		memset(f->data, 0, hook->data_size);
		f->record = !(hook->entry && hook->entry(hook, &f->regs, f->data)) && hook->exit;
	}
	ftrace_test_recursion_unlock(bit);
}

/* After it returned, %rax in regs.ax. */
static notrace void fhook_khook_leave(struct fhook_around *a, struct fhook_around_frame *f)
{
	struct fhook_khook_k *k = container_of(a, struct fhook_khook_k, around);
	struct fhook_khook *hook;
	int bit;

	if (!f->record)
		return;
	bit = ftrace_test_recursion_trylock(instruction_pointer(&f->regs), fhook_arch_around_parent(f));
	if (bit < 0) {
		atomic_long_inc(&k->missed);
		return;
	}
	hook = READ_ONCE(k->hook);	/* (as in fhook_khook_enter()) */
	if (hook)
		hook->exit(hook, &f->regs, f->data);
	ftrace_test_recursion_unlock(bit);
}

/*
 * The module's hook says @k is gone (its replacement's stub is unused),
 * and @k forgets the hook: the module may go now.
 */
static void fhook_khook_detach(struct fhook_khook_k *k)
{
	struct fhook_khook *hook = k->hook;

	mutex_lock(&fhook_khook_lock);
	list_del_init(&k->node);
	if (hook->orig)
		WRITE_ONCE(*(unsigned long *)hook->orig, 0);
	hook->address = 0;
	WRITE_ONCE(k->hook, NULL);
	WRITE_ONCE(hook->fhook, NULL);
	fhook_khook_freed++;
	mutex_unlock(&fhook_khook_lock);
	wake_up_all(&fhook_khook_wq);
}

/*
 * No call inside any more (or never installed: no drainer, nothing to
 * tell, and the install holds the lock): detached if not yet, and @k
 * goes, unless ftrace still holds its ops.
 */
static void fhook_khook_free(struct fhook_around *a)
{
	struct fhook_khook_k *k = container_of(a, struct fhook_khook_k, around);

	if (k->drainer && k->hook)
		fhook_khook_detach(k);
	if (!k->stuck)
		kfree(k);
}

/* Removed from inside a call of it: the module goes before the call returns */
static void fhook_khook_detach_around(struct fhook_around *a)
{
	struct fhook_khook_k *k = container_of(a, struct fhook_khook_k, around);

	if (k->hook->replacement)
		pr_err("%s: %s: removed from inside its own replacement's call: it returns into the module's text\n",
		       k->owner->name, k->func);
	fhook_khook_detach(k);
}

static const struct fhook_around_ops fhook_khook_around_ops = {
	.enter	= fhook_khook_enter,
	.exit	= fhook_khook_leave,
	.free	= fhook_khook_free,
	.detach	= fhook_khook_detach_around,
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

/* (out of line, as fhook_khook_arm(): fhook errors names them) */
static noinline int fhook_khook_check(struct fhook_khook *hook)
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

static noinline int fhook_khook_arm(struct fhook_khook *hook, struct module *owner)
{
	static char who[128];	/* under fhook_khook_lock */
	struct fhook_khook_k *k;
	unsigned long addr, site;
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
			    ret == -EDEADLK ?
			    "a call of it may never return (its task exits inside): the hook could never go" :
			    "no prototype for it in BTF";
		return ret;
	}

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k) {
		hook->why = "out of memory";
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&k->node);
	k->hook = hook;
	k->handlers = hook->entry || hook->exit;
	k->owner = owner;
	k->addr = addr;
	sprint_symbol(k->func, addr);
	k->ops.func = fhook_khook_callback;
	k->ops.flags = FHOOK_HOOK_OPS_FLAGS;
	ret = fhook_around_add(&k->around, &fhook_khook_around_ops,
			       (unsigned long)hook->replacement, words, true);
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
		if (ret == -EBUSY && !fhook_arch_fentry_site(addr, &site) &&
		    fhook_hook_owner(site, who, sizeof(who)))
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

/*
 * Unregister @k's ops and move it from the ledger to the draining list;
 * under the lock.  Its drainer is set apart (fhook_khook_adopt()).
 */
static void fhook_khook_unhook(struct fhook_khook_k *k)
{
	int ret = unregister_ftrace_function(&k->ops);

	if (ret) {
		/*
		 * ftrace still calls the ops (after ftrace_kill()): it sends
		 * no call to the slot any more, and @k, which embeds the ops,
		 * stays with fhook
		 */
		WRITE_ONCE(k->stuck, true);
		__module_get(THIS_MODULE);
		pr_err("%s: %s: unregistering the hook failed (%d): kept, reboot to reclaim\n",
		       k->owner->name, k->func, ret);
	}
	list_move_tail(&k->node, &fhook_khook_draining);
	k->unhooked = true;
}

/*
 * The caller will drain @k (unhooked first if not yet), unless someone
 * else does; under the lock.
 */
static void fhook_khook_adopt(struct fhook_khook_k *k)
{
	if (k->drainer)
		return;
	if (!k->unhooked)
		fhook_khook_unhook(k);
	k->drainer = current;
}

/*
 * After unhooking, no lock held: wait for the calls inside, free @k; or,
 * !@wait, detach @k's handlers and let the calls finish on their own (@k
 * freed once they have).
 */
static void fhook_khook_drain(struct fhook_khook_k *k, bool wait)
{
	char what[MODULE_NAME_LEN + KSYM_SYMBOL_LEN + 16];

	snprintf(what, sizeof(what), "%s: hook on %s", k->owner->name, k->func);
	if (!k->stuck) {
		ftrace_free_filter(&k->ops);
	} else {
		/*
		 * a failed unregister did not wait for the callbacks in
		 * flight: one that read !stuck may still be on its way to
		 * the slot, not yet counted inside
		 */
		synchronize_rcu_tasks_rude();
		synchronize_rcu_tasks();
	}
	/*
	 * (removed from below the hooked function, the module's own unload
	 * path: detached there, freed after the calls inside return)
	 */
	if (wait)
		fhook_around_wait(&k->around, what);
	else
		fhook_around_let_go(&k->around);
}

/*
 * @k, found under the lock, is ours to drain (we unhooked it, nobody
 * drains it yet)?  Under the lock.
 */
static bool fhook_khook_take(struct fhook_khook_k *k)
{
	if (!k || k->drainer != current || k->draining)
		return false;
	k->draining = true;
	return true;
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
	if (FHOOK_ARCH_NO_FEATURES & FHOOK_FEAT_KHOOK) {
		hooks[0].error = -EOPNOTSUPP;
		hooks[0].why = "fhook's hooks need ftrace to change a call's registers (DYNAMIC_FTRACE_WITH_REGS or _WITH_ARGS), which this kernel does not give on this CPU";
		pr_err("%s: %s\n", owner->name, hooks[0].why);
		return -EOPNOTSUPP;
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

/*
 * Must @k's owner, removing it or going, wait for the calls inside its
 * hook @k?  For those inside its replacement (they run its text and call
 * its "original" through the pointer the detach clears) and for those
 * inside one of its own functions.  Calls inside the body of another
 * function it observes reach none of its code once @k is detached: a task
 * asleep in a pipe read under an observer of vfs_read holds no rmmod.
 */
static bool fhook_khook_must_wait(struct fhook_khook_k *k)
{
	return k->hook && (k->hook->replacement || within_module(k->addr, k->owner));
}

void fhook_khook_remove(struct fhook_khook *hooks, size_t n)
{
	struct fhook_khook_k *k;
	size_t i;
	bool mine;

	if (!hooks)
		return;
	/* unhook all first: none is reached while the others drain */
	mutex_lock(&fhook_khook_lock);
	for (i = 0; i < n; i++) {
		if (hooks[i].fhook)
			fhook_khook_adopt(hooks[i].fhook);
	}
	mutex_unlock(&fhook_khook_lock);
	/* ours drained, the others' (the module notifier's) waited for */
	for (i = 0; i < n; i++) {
		mutex_lock(&fhook_khook_lock);
		k = hooks[i].fhook;	/* set: @k is not freed yet */
		mine = fhook_khook_take(k);
		mutex_unlock(&fhook_khook_lock);
		if (mine)
			fhook_khook_drain(k, fhook_khook_must_wait(k));
		else if (k)	/* (not a hung task: it waits for others) */
			wait_event_idle(fhook_khook_wq, READ_ONCE(hooks[i].fhook) != k);
	}
}
EXPORT_SYMBOL_GPL(fhook_khook_remove);

/*
 * A module going.  The hooks on its functions are unhooked (ftrace
 * patches none of its text any more) and left to their owners, whose
 * fhook_khook_remove() or own going drains them: calls inside them run
 * their owners' code, not the going module's, unless it is broken.  The
 * hooks it left installed are unhooked all at once (none is reached while
 * the others drain), then drained one at a time with no lock held; the
 * notifier returns once none of them is left, drained here or by others.
 * It waits for calls inside only where fhook_khook_must_wait() says so:
 * the notifier chain is walked under its rwsem, which a module registering
 * a notifier of its own waits for, and every later load and unload behind
 * it.  A module with none costs one walk of the ledger.
 */
static int fhook_khook_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct fhook_khook_k *k, *tmp;
	struct module *mod = data;
	unsigned long freed;
	bool waiting, mine, wait = true;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&fhook_khook_lock);
	list_for_each_entry_safe(k, tmp, &fhook_khooks, node) {
		if (k->owner == mod) {
			pr_warn("%s left its hook on %s installed: removed\n", mod->name, k->func);
			fhook_khook_adopt(k);
		} else if (within_module(k->addr, mod)) {
			pr_warn("%s: its function %s, hooked by %s, is going: hook removed (%s frees it with fhook_khook_remove())\n",
				mod->name, k->func, k->owner->name, k->owner->name);
			fhook_khook_unhook(k);
			/* what the owner's replacement would call is going */
			if (k->hook->orig)
				WRITE_ONCE(*(unsigned long *)k->hook->orig, 0);
		}
	}
	mutex_unlock(&fhook_khook_lock);
	for (;;) {
		mine = false;
		waiting = false;
		mutex_lock(&fhook_khook_lock);
		list_for_each_entry(k, &fhook_khook_draining, node) {
			if (k->owner != mod)
				continue;
			/* (unhooked when another module's function went) */
			fhook_khook_adopt(k);
			mine = fhook_khook_take(k);
			if (mine) {
				wait = fhook_khook_must_wait(k);
				break;
			}
			waiting = true;
		}
		freed = fhook_khook_freed;
		mutex_unlock(&fhook_khook_lock);
		if (mine)
			fhook_khook_drain(k, wait);
		else if (waiting)	/* (not a hung task: it waits for others) */
			wait_event_idle(fhook_khook_wq, READ_ONCE(fhook_khook_freed) != freed);
		else
			return NOTIFY_OK;
	}
}

static struct notifier_block fhook_khook_nb = {
	.notifier_call = fhook_khook_module_notify,
	/* before modwatch.c's: it may wait for calls inside */
	.priority = 1,
};

/* FHOOK_IOC_KHOOKS: the ledger. */
long fhook_khook_list(struct fhook_khooks *arg)
{
	struct fhook_khook_info *infos = NULL;
	struct fhook_khook_k *k;
	u32 nr = 0, room;
	long ret;

	/* (its fields checked by ioctl.c) the ledger has a hook per around slot at most */
	room = min_t(u32, arg->nr, FHOOK_NR_SLOTS);
	if (room) {
		infos = kcalloc(room, sizeof(*infos), GFP_KERNEL_ACCOUNT);
		if (!infos)
			return -ENOMEM;
	}
	/*
	 * Copied out under the lock, to the caller after it: a buffer that
	 * faults for ever (userfaultfd, FUSE) must not hold what module
	 * loads and unloads wait for
	 */
	mutex_lock(&fhook_khook_lock);
	list_for_each_entry(k, &fhook_khooks, node) {
		if (nr < room) {
			struct fhook_khook_info *info = &infos[nr];

			info->addr = k->addr;
			info->hits = atomic_long_read(&k->hits);
			info->inside = atomic_long_read(&k->around.inflight);
			info->missed = atomic_long_read(&k->missed);
			info->kind = (k->hook->replacement ? FHOOK_KHOOK_KIND_REPLACE : 0) |
				     (k->hook->entry ? FHOOK_KHOOK_KIND_ENTRY : 0) |
				     (k->hook->exit ? FHOOK_KHOOK_KIND_EXIT : 0);
			fhook_khook_name(k->func, info->func, sizeof(info->func));
			strscpy(info->owner, k->owner->name, sizeof(info->owner));
		}
		nr++;
	}
	mutex_unlock(&fhook_khook_lock);
	ret = 0;
	if (copy_to_user(u64_to_user_ptr(arg->entries), infos,
			 array_size(min(nr, room), sizeof(*infos))))
		ret = -EFAULT;
	arg->nr = nr;
	kfree(infos);
	return ret;
}

/*
 * Is @ip, in fhook, one of the hook API's functions a call graph may
 * watch (FHOOK_HOOK_API_PREFIX): how a user's install failed, below
 * __fhook_khook_install?  They run in a module's init and exit only; the
 * callbacks among them are notrace.
 */
bool fhook_khook_traceable(unsigned long ip)
{
	char name[KSYM_SYMBOL_LEN];
	const char *s = name;

	sprint_symbol_no_offset(name, ip);
	if (str_has_prefix(s, "__"))
		s += 2;
	return str_has_prefix(s, FHOOK_HOOK_API_PREFIX);
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
