// SPDX-License-Identifier: GPL-2.0
/*
 * IPMODIFY hooks: an ftrace_ops with FTRACE_OPS_FL_IPMODIFY on one
 * function, whose callback changes where the call continues:
 *
 *   RETURN    to fhook_hook_return with %rax set: the function is skipped
 *   REDIRECT  to another function with the same prototype
 *   AROUND    to an around trampoline slot (around.c), which runs the
 *             function's body after its fentry call (so the hook does
 *             not see the call again: no recursion, no within_module()
 *             test) and records entry fields, return value and duration.
 *
 * RETURN and REDIRECT need CAP_SYS_ADMIN and lab mode (module parameter
 * lab=1, which taints the kernel), and refuse under lockdown (priv.c).
 *
 * Lifetime.  Tasks can sleep inside the body while our trampoline's
 * return address is on their stack: a trace-around hook removed while
 * calls are inside is detached from its session (no more records) and
 * handed to around.c, which frees it once the last call has returned.
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

bool fhook_lab;
module_param_named(lab, fhook_lab, bool, 0444);
MODULE_PARM_DESC(lab, "Allow hooks that override returns and redirect calls (taints the kernel)");

struct fhook_hook_k {
	struct fhook_probe *probe;	/* its probe; not used once !live */
	bool live;			/* the session exists: records allowed */
	u32 action;
	u32 flags;			/* FHOOK_HOOK_F_* */
	u32 probability;		/* ppm, 0 = always */
	s64 retval;
	unsigned long redirect;		/* REDIRECT: where the call goes */
	unsigned long target;		/* AROUND: the body, fentry site + 5 */
	unsigned long addr;		/* the hooked function */
	/* "name+off/size [mod]" of addr and redirect at PROBE_ADD */
	char addr_sym[KSYM_SYMBOL_LEN];
	char redirect_sym[KSYM_SYMBOL_LEN];
	bool armed_once;		/* registered at some point */
	unsigned long fentry;		/* the hooked function's fentry site */
	pid_t pid;			/* who added it, for conflicts */
	char comm[TASK_COMM_LEN];
	struct list_head held_node;	/* fhook_hooks_held while registered */
	u64 nth, every, times;
	atomic64_t calls;		/* matching calls since START */
	atomic64_t acted;		/* actions since START (times) */
	struct fhook_around around;	/* AROUND: its slot (slot -1: none) */
	struct fhook_user *user;	/* AROUND: whose share the slot is in until freed */
};

/* A hook (FHOOK_PROBE_HOOK): an IPMODIFY ftrace_ops on one function. */
struct fhook_hook_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct ftrace_ops ops;
	struct fhook_hook_k *hook;	/* may outlive the probe (AROUND: drained) */
};

static_assert(offsetof(struct fhook_hook_probe, p) == 0);

static inline struct fhook_hook_probe *to_hook(struct fhook_probe *p)
{
	return container_of(p, struct fhook_hook_probe, p);
}

static DEFINE_PER_CPU(struct rnd_state, fhook_hook_rnd);
static DEFINE_MUTEX(fhook_hooks_held_lock);
static LIST_HEAD(fhook_hooks_held);		/* registered hooks */

/*
 * Does a CLI hook hold the function whose fentry site is @fentry?  Says
 * whose in @buf (khook.c's conflicts).
 */
bool fhook_hook_owner(unsigned long fentry, char *buf, size_t len)
{
	struct fhook_hook_k *h;
	bool found = false;

	mutex_lock(&fhook_hooks_held_lock);
	list_for_each_entry(h, &fhook_hooks_held, held_node) {
		if (h->fentry == fentry) {
			snprintf(buf, len, "fhook's CLI holds it (fhook hook, pid %d, %s)", h->pid,
				 h->comm);
			found = true;
			break;
		}
	}
	mutex_unlock(&fhook_hooks_held_lock);
	return found;
}

/*
 * Do the conditions select this matching call?  Preemption is off (the
 * per-CPU random state).
 */
static notrace bool fhook_hook_due(struct fhook_hook_k *h)
{
	u64 n;

	if (!h->nth && !h->every && !h->times && !h->probability)
		return true;
	n = atomic64_inc_return(&h->calls);
	if (h->nth && n != h->nth)
		return false;
	if (h->every && n % h->every)
		return false;
	if (h->probability &&
	    prandom_u32_state(this_cpu_ptr(&fhook_hook_rnd)) % FHOOK_HOOK_MAX_PROBABILITY >=
	    h->probability)
		return false;
	if (h->times && atomic64_inc_return(&h->acted) > h->times)
		return false;
	return true;
}

/* Fetch program, predicate and conditions on @regs; preemption off. */
static notrace bool fhook_hook_select(struct fhook_probe *p, struct pt_regs *regs,
				      struct fhook_fetch_ctx *ctx, u8 *data, u32 limit)
{
	const struct fhook_prog *prog = p->prog;

	fhook_fetch_ctx_init(ctx, regs, data, limit, false);
	memset(data, 0, prog->data_size);
	ctx->dyn = prog->data_size;
	fhook_prog_run(prog, 0, prog->len, ctx);
	if (p->pred && !fhook_pred_run(p->pred, data, ctx->dyn))
		return false;
	return fhook_hook_due(to_hook(p)->hook);
}

/* One FHOOK_REC_HOOK record; preemption off. */
static notrace void fhook_hook_write(struct fhook_probe *p, unsigned long ip,
				     unsigned long ret_ip, u64 retval, u64 duration,
				     const struct fhook_fetch_ctx *ctx, unsigned int pc,
				     bool irqs_off)
{
	struct fhook_session *s = p->session;
	int cpu = smp_processor_id();
	struct fhook_probe_counters *c = fhook_counters(s, cpu, p->id);
	struct fhook_ring *rb = s->rings[cpu];
	unsigned int size = sizeof(struct fhook_rec_hook) + ctx->dyn;
	struct fhook_rec_hook *r;

	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init(&r->hdr, FHOOK_REC_HOOK, size, p->id, pc, irqs_off);
		r->ip = ip;
		r->ret_ip = ret_ip;
		r->faults = ctx->faults;
		r->retval = retval;
		r->duration = duration;
		r->action = to_hook(p)->hook->action;
		r->__pad = 0;
		memcpy(r->data, ctx->data, ctx->dyn);
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

static notrace void fhook_hook_callback(unsigned long ip, unsigned long parent_ip,
					struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct fhook_hook_probe *hp = container_of(op, struct fhook_hook_probe, ops);
	struct pt_regs regs_copy __fhook_fregs_buf;
	struct fhook_probe *p = &hp->p;
	struct fhook_session *s = p->session;
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_hook_k *h = hp->hook;
	struct fhook_probe_counters *c;
	struct fhook_fetch_ctx ctx;
	struct fhook_rec_probe *scratch;
	int bit;

	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		preempt_disable_notrace();
		fhook_count(&fhook_counters(s, smp_processor_id(), p->id)->missed);
		preempt_enable_notrace();
		return;
	}
	c = fhook_counters(s, smp_processor_id(), p->id);
	/*
	 * fhook's own calls (a fetch program's reads, the ring) are never
	 * changed: ftrace's recursion guard lets one nested call through
	 */
	if (unlikely(!fhook_hook_can_change(fregs)) || !fhook_session_wants(s) ||
	    READ_ONCE(p->paused) || within_module(parent_ip, THIS_MODULE)) {
		fhook_count(&c->filtered);
		goto out;
	}
	if (h->action == FHOOK_HOOK_AROUND) {
		/* the trampoline decides, with the arguments it saved */
		if (likely(fhook_around_at(&h->around, ip)))
			fhook_hook_set_ip(fregs, fhook_around_tramps[h->around.slot]);
		else
			fhook_count(&c->missed);
		goto out;
	}
	scratch = fhook_scratch_get();
	if (unlikely(!scratch)) {
		fhook_count(&c->missed);
		goto out;
	}
	if (!fhook_hook_select(p, fhook_hook_regs(fregs, &regs_copy), &ctx, scratch->data,
			       FHOOK_MAX_PROBE_DATA)) {
		fhook_count(&c->filtered);
		goto put;
	}
	fhook_count(&c->hits);
	if (h->action == FHOOK_HOOK_RETURN) {
		fhook_hook_set_return(fregs, h->retval);
		fhook_hook_set_ip(fregs, (unsigned long)fhook_hook_return);
	} else {
		fhook_hook_set_ip(fregs, h->redirect);
	}
	if (h->flags & FHOOK_HOOK_F_RECORD)
		fhook_hook_write(p, ip, parent_ip,
				 h->action == FHOOK_HOOK_RETURN ? h->retval : 0, 0, &ctx, pc,
				 irqs_off);
put:
	fhook_scratch_put();
out:
	ftrace_test_recursion_unlock(bit);
}

/*
 * A trace-around call's entry (around.c filled @f): is it traced (fields,
 * predicate, conditions)?  Preemptible.
 */
static notrace void fhook_hook_around_enter(struct fhook_around *a, struct fhook_around_frame *f)
{
	struct fhook_hook_k *h = container_of(a, struct fhook_hook_k, around);
	struct fhook_probe *p = h->probe;
	struct fhook_probe_counters *c;
	struct fhook_fetch_ctx ctx;
	int bit;

	/* the fetch program's reads are traceable functions: guard them */
	bit = ftrace_test_recursion_trylock(instruction_pointer(&f->regs), fhook_arch_around_parent(f));
	if (bit < 0) {
		preempt_disable_notrace();
		fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->missed);
		preempt_enable_notrace();
		return;
	}
	c = fhook_counters(p->session, smp_processor_id(), p->id);
	if (!fhook_hook_select(p, &f->regs, &ctx, f->data, FHOOK_HOOK_AROUND_DATA)) {
		fhook_count(&c->filtered);
	} else {
		fhook_count(&c->hits);
		f->faults = ctx.faults;
		f->dyn = ctx.dyn;
		f->record = 1;
		f->ts = ktime_get_mono_fast_ns();
	}
	ftrace_test_recursion_unlock(bit);
}

/* After the body returned (%rax in regs.ax): the record. */
static notrace void fhook_hook_around_exit(struct fhook_around *a, struct fhook_around_frame *f)
{
	struct fhook_hook_k *h = container_of(a, struct fhook_hook_k, around);
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	unsigned long ip = instruction_pointer(&f->regs);
	unsigned long ret_ip = fhook_arch_around_parent(f);
	struct fhook_fetch_ctx ctx;
	int bit;

	if (!f->record)
		return;
	bit = ftrace_test_recursion_trylock(ip, ret_ip);
	if (bit < 0)
		return;
	/*
	 * Pairs with synchronize_rcu_tasks_rude() after !live in
	 * fhook_hook_unhook(): preemption is off here (the recursion lock)
	 * but RCU may not be watching.  The clock is read inside the guard:
	 * a hook on the clocksource's read function would otherwise come
	 * back here for ever.
	 */
	if (READ_ONCE(h->live)) {
		ctx.data = f->data;
		ctx.dyn = f->dyn;
		ctx.faults = f->faults;
		fhook_hook_write(h->probe, ip, ret_ip, regs_return_value(&f->regs),
				 ktime_get_mono_fast_ns() - f->ts, &ctx, pc, irqs_off);
	}
	ftrace_test_recursion_unlock(bit);
}

static void fhook_hook_around_free(struct fhook_around *a)
{
	struct fhook_hook_k *h = container_of(a, struct fhook_hook_k, around);

	/* (a slot draining after its session still counts in its user's share) */
	fhook_user_slot_give(h->user, FHOOK_USER_SLOT_AROUND);
	kfree(h);
}

static const struct fhook_around_ops fhook_hook_around_ops = {
	.enter	= fhook_hook_around_enter,
	.exit	= fhook_hook_around_exit,
	.free	= fhook_hook_around_free,
};

static int fhook_hook_copy(struct fhook_session *s, struct fhook_hook *hk, u64 uptr)
{
	int ret;

	if (!uptr)
		return fhook_refuse(s, FHOOK_R_HOOK_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(hk, sizeof(*hk), sizeof(*hk), uptr);
	if (ret < 0)
		return fhook_refuse(s, FHOOK_R_HOOK_CFG, -1, ret);
	if (!hk->action || hk->action >= FHOOK_HOOK_ACTION_MAX ||
	    (hk->flags & ~FHOOK_HOOK_FLAGS) || hk->reserved[0] || hk->reserved[1] ||
	    hk->reserved[2] ||
	    hk->probability > FHOOK_HOOK_MAX_PROBABILITY ||
	    hk->stack_args > FHOOK_HOOK_MAX_STACK_ARGS || hk->__pad ||
	    (hk->action != FHOOK_HOOK_AROUND && hk->stack_args) ||
	    (hk->action != FHOOK_HOOK_RETURN && hk->retval) ||
	    (hk->action != FHOOK_HOOK_REDIRECT && hk->redirect) ||
	    (hk->action == FHOOK_HOOK_REDIRECT && !hk->redirect) ||
	    (hk->action == FHOOK_HOOK_AROUND && hk->flags))
		return fhook_refuse(s, FHOOK_R_HOOK_CFG, -1, -EINVAL);
	return 0;
}

static int fhook_hook_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			   s32 *err_index)
{
	/* before any address is looked up (modwatch.c) */
	u64 gen = fhook_modwatch_gen();
	struct fhook_hook_probe *hp = to_hook(p);
	unsigned long hooked, redirect;
	struct fhook_hook_k *h;
	struct fhook_hook hk;
	int ret;

	hp->ops.func = fhook_hook_callback;
	hp->ops.flags = FHOOK_HOOK_OPS_FLAGS;
	if (!arg->addr)
		return fhook_refuse(p->session, FHOOK_R_SYMBOL_OR_ADDR, -1, -EINVAL);
	ret = fhook_hook_copy(p->session, &hk, arg->hook);
	if (ret)
		return ret;
	/* changing what the kernel does: CAP_SYS_ADMIN, lab mode, no lockdown */
	if (hk.action != FHOOK_HOOK_AROUND) {
		ret = fhook_priv_require(p, FHOOK_PRIV_CHANGE);
		if (ret)
			return ret;
	} else {
		u64 ip = arg->addr;
		u32 words;

		/* the body's stack arguments: counted from BTF, not taken on trust */
		ret = fhook_body_stack_words(&ip, 1, &words, err_index);
		if (ret)
			return ret;
		hk.stack_args = words;
	}

	p->prog = fhook_prog_load(p, arg, false, false, err_index);
	if (IS_ERR(p->prog)) {
		ret = PTR_ERR(p->prog);
		p->prog = NULL;
		return ret;
	}
	if (hk.action == FHOOK_HOOK_AROUND && p->prog->data_size > FHOOK_HOOK_AROUND_DATA)
		return fhook_refuse(p->session, FHOOK_R_HOOK_DATA, -1, -E2BIG);
	/* (the rest of a partial copy is this stack's old contents) */
	if (FHOOK_HOOK_PARTIAL_REGS && hk.action != FHOOK_HOOK_AROUND &&
	    fhook_prog_needs_all_regs(p->prog))
		return fhook_refuse(p->session, FHOOK_R_HOOK_REGS, -1, -EOPNOTSUPP);
	p->pred = fhook_pred_load(p, arg, p->prog->data_size, err_index);
	if (IS_ERR(p->pred)) {
		ret = PTR_ERR(p->pred);
		p->pred = NULL;
		return ret;
	}

	if (hk.action == FHOOK_HOOK_REDIRECT) {
		char sym[KSYM_SYMBOL_LEN];

		/* a function's first byte, probeable kernel text */
		sprint_symbol(sym, hk.redirect);
		if (!strstr(sym, "+0x0/"))
			return fhook_refuse(p->session, FHOOK_R_HOOK_TARGET, -1, -EINVAL);
		ret = fhook_kprobe_check_text(hk.redirect, &redirect);
		if (ret)
			return ret;
		ret = fhook_kprobe_check_text(arg->addr, &hooked);
		if (!ret && hooked == redirect)	/* it would call itself for ever */
			return fhook_refuse(p->session, FHOOK_R_SELF, -1, -ELOOP);
	}

	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->probe = p;
	h->action = hk.action;
	h->flags = hk.flags;
	h->probability = hk.probability;
	h->retval = hk.retval;
	h->redirect = hk.action == FHOOK_HOOK_REDIRECT ? redirect : 0;
	h->nth = hk.nth;
	h->every = hk.every;
	h->times = hk.times;
	h->addr = arg->addr;
	h->around.slot = -1;
	h->pid = task_tgid_nr(current);
	get_task_comm(h->comm, current);
	INIT_LIST_HEAD(&h->held_node);
	sprint_symbol(h->addr_sym, h->addr);
	if (h->redirect)
		sprint_symbol(h->redirect_sym, h->redirect);
	hp->hook = h;
	ret = fhook_arch_fentry_site(h->addr, &h->fentry);
	if (ret)
		return ret;
	/* from now on an unload of its module or its target's is seen */
	ret = fhook_modwatch_add(p, gen);
	if (ret)
		return ret;
	if (hk.action == FHOOK_HOOK_AROUND) {
		if (fhook_user_slot_take(p->session->user, FHOOK_USER_SLOT_AROUND))
			return fhook_refuse(p->session, FHOOK_R_USER_SLOTS, -1, -ENOSPC);
		ret = fhook_around_add(&h->around, &fhook_hook_around_ops, 0, hk.stack_args, false);
		if (ret) {
			fhook_user_slot_give(p->session->user, FHOOK_USER_SLOT_AROUND);
			return ret;
		}
		h->user = p->session->user;
		ret = fhook_around_set_body(&h->around, arg->addr);
		if (ret)
			return ret;
	}

	ret = ftrace_set_filter_ip(&hp->ops, arg->addr, 0, 0);
	/* ftrace says -EINVAL for an address that is not a traceable function */
	return ret == -EINVAL ? -ENOENT : ret;
}

/*
 * Are the hooked function and the redirect target still what they were at
 * PROBE_ADD?  A module unloaded before the probe was watched (during its
 * PROBE_ADD) leaves other text, or nothing, at those addresses.
 */
static bool fhook_hook_still_there(struct fhook_hook_k *h)
{
	char sym[KSYM_SYMBOL_LEN];

	sprint_symbol(sym, h->addr);
	if (strcmp(sym, h->addr_sym))
		return false;
	if (!h->redirect)
		return true;
	sprint_symbol(sym, h->redirect);
	return !strcmp(sym, h->redirect_sym);
}

/* Under the modwatch lock: no unload runs meanwhile. */
static int fhook_hook_arm_watched(struct fhook_probe *p)
{
	struct fhook_hook_probe *hp = to_hook(p);
	struct fhook_hook_k *h = hp->hook;
	int ret;

	if (!fhook_hook_still_there(h)) {
		p->gone = true;
		pr_warn("probe %u: %s is not where it was: the probe is gone for good\n", p->id,
			h->addr_sym);
		return -EIDRM;
	}
	atomic64_set(&h->calls, 0);
	atomic64_set(&h->acted, 0);
	WRITE_ONCE(h->live, true);
	/* EBUSY: another IPMODIFY user (livepatch, a hook) or a direct call */
	ret = register_ftrace_function(&hp->ops);
	if (ret) {
		WRITE_ONCE(h->live, false);
		return ret;
	}
	p->registered = true;
	h->armed_once = true;
	mutex_lock(&fhook_hooks_held_lock);
	list_add_tail(&h->held_node, &fhook_hooks_held);
	mutex_unlock(&fhook_hooks_held_lock);
	return 0;
}

static int fhook_hook_arm(struct fhook_probe *p)
{
	return fhook_modwatch_arm(p, fhook_hook_arm_watched);
}

/* Under the modwatch lock: from the session or a module unload. */
static void fhook_hook_unhook(struct fhook_probe *p)
{
	struct fhook_hook_probe *hp = to_hook(p);

	/* no call is sent to us any more once this returns true */
	if (!fhook_ops_unregister(p, &hp->ops))
		return;
	mutex_lock(&fhook_hooks_held_lock);
	list_del_init(&hp->hook->held_node);
	mutex_unlock(&fhook_hooks_held_lock);
	WRITE_ONCE(hp->hook->live, false);
	/*
	 * Trace-around calls already inside the body still record when they
	 * return; fhook_around_exit() may run where RCU is not watching, so
	 * wait with the flavour ftrace itself uses for that, which waits for
	 * every preemption-disabled region.
	 */
	if (hp->hook->around.slot >= 0)
		synchronize_rcu_tasks_rude();
}

/* The session's synchronize_rcu() follows (sync_rcu): !live is seen. */
static void fhook_hook_disarm(struct fhook_probe *p)
{
	fhook_modwatch_unhook(p, fhook_hook_unhook);
}

/* The hooked function or the redirect target is in @mod. */
static bool fhook_hook_in_module(struct fhook_probe *p, struct module *mod, bool globs)
{
	struct fhook_hook_k *h = to_hook(p)->hook;

	return within_module(h->addr, mod) || (h->redirect && within_module(h->redirect, mod));
}

static void fhook_hook_release(struct fhook_probe *p)
{
	struct fhook_hook_probe *hp = to_hook(p);
	struct fhook_hook_k *h = hp->hook;

	fhook_modwatch_del(p);
	ftrace_free_filter(&hp->ops);
	kfree(p->pred);
	kfree(p->prog);
	if (!h)
		return;
	hp->hook = NULL;
	mutex_lock(&fhook_hooks_held_lock);
	list_del_init(&h->held_node);
	mutex_unlock(&fhook_hooks_held_lock);
	if (h->around.slot < 0) {
		/* RETURN, REDIRECT: unregistering waited for the return stub */
		kfree(h);
		return;
	}
	fhook_around_release(&h->around, h->armed_once);
}

void fhook_hooks_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		prandom_seed_state(per_cpu_ptr(&fhook_hook_rnd, cpu), get_random_u64());
}

const struct fhook_probe_kind fhook_hook_kind = {
	.size		= sizeof(struct fhook_hook_probe),
	.feature	= FHOOK_FEAT_HOOK,
	.fields		= FHOOK_ADD_ADDR | FHOOK_ADD_PROG | FHOOK_ADD_DATA_SIZE | FHOOK_ADD_PRED |
			  FHOOK_ADD_HOOK,
	.init		= fhook_hook_init,
	.arm		= fhook_hook_arm,
	.disarm		= fhook_hook_disarm,
	.release	= fhook_hook_release,
	.disarm_unregisters = true,
	.sync_rcu	= true,
	.in_module	= fhook_hook_in_module,
	.unhook		= fhook_hook_unhook,
};
