// SPDX-License-Identifier: GPL-2.0
/*
 * Direct probes: function entry through fhook's own trampolines
 * (tramp.S), attached with the ftrace direct-call API instead of an
 * ftrace_ops callback.  The fentry site calls the trampoline itself (or,
 * when other ftrace users share the function, ftrace_regs_caller returns
 * into it), so no list of callbacks is walked.  Two trampolines per slot:
 * the counting one increments a per-CPU counter, the recording one writes
 * the same FHOOK_REC_FUNC record as a function probe.  A counting probe
 * that nothing filters (no predicate, no pid/cpu filter, not even the
 * controller's own tgid, no trigger that can pause it) gets the fast path
 * instead: three instructions in assembly incrementing a per-CPU counter,
 * which STATS adds live and disarm folds into the session's counters (the
 * stats area's hits_elsewhere bit says so meanwhile).
 * FHOOK_IOC_DIRECT_MODIFY switches between them with
 * modify_ftrace_direct().  A latency probe (FHOOK_PROBE_F_LATENCY) takes
 * the slot's latency trampoline instead, which times the body (latency.c).
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>

/* A direct probe: a function probe's filter and a slot of trampolines. */
struct fhook_direct_probe {
	struct fhook_func_probe f;	/* first: freed as a struct fhook_probe */
	struct fhook_func_targets targets;
	int slot;			/* trampoline slot, or -1 */
	bool fast;			/* on the fast counting trampoline */
	u64 __percpu *fast_hits;	/* its hits, until disarmed */
};

static_assert(offsetof(struct fhook_direct_probe, f.p) == 0);

static inline struct fhook_direct_probe *to_direct(struct fhook_probe *p)
{
	return container_of(to_func(p), struct fhook_direct_probe, f);
}

/* slot -> probe; set before the probe is armed, cleared after release */
struct fhook_probe *fhook_direct_slots[FHOOK_NR_SLOTS];
static DEFINE_MUTEX(fhook_direct_lock);
/* read by the fast trampolines: set when a slot is taken (init) */
unsigned long fhook_direct_fast_ctrs[FHOOK_NR_SLOTS];

/* Called by the counting trampoline of @slot, preemptible. */
asmlinkage notrace void fhook_direct_count(unsigned long slot)
{
	fhook_probe_count_guarded(READ_ONCE(fhook_direct_slots[slot]), _THIS_IP_, _RET_IP_);
}

/*
 * Called by the recording trampoline of @slot: @ret is the return address
 * into the traced function (its fentry call site + 5), @parent the one
 * into its caller.
 */
asmlinkage notrace void fhook_direct_record(unsigned long slot, unsigned long ret,
					    unsigned long parent)
{
	fhook_func_hit(READ_ONCE(fhook_direct_slots[slot]), ret - MCOUNT_INSN_SIZE, parent);
}

static unsigned long fhook_direct_tramp(struct fhook_direct_probe *d, bool count)
{
	if (d->f.p.lat)
		return fhook_lat_tramps[d->slot];
	if (!count)
		return FHOOK_ARCH_FNREC_ASM && fhook_fnrec_asm_ok(&d->f.p) ?
			       fhook_direct_fnrec_tramps[d->slot] :
			       fhook_direct_record_tramps[d->slot];
	return d->fast ? fhook_direct_fast_tramps[d->slot] : fhook_direct_count_tramps[d->slot];
}

/*
 * May a counting probe skip fhook_probe_count()?  Only when nothing it
 * checks can say no: the session's filters are set before START, and
 * FHOOK_IOC_PID_FILTER / CPU_FILTER refuse to change them while a fast
 * probe is armed (fhook_direct_fast_armed()); triggers are added before
 * START only.
 */
static bool fhook_direct_unfiltered(struct fhook_probe *p)
{
	struct fhook_session *s = p->session;

	return !p->pred && !READ_ONCE(s->cpu_filter) && !READ_ONCE(s->ignore_tgid) &&
	       !READ_ONCE(s->pid_filter) && !fhook_trigger_targets(s, p);
}

static bool fhook_direct_fast_ok(struct fhook_direct_probe *d, bool count)
{
	return count && d->fast_hits && fhook_direct_unfiltered(&d->f.p);
}

bool fhook_direct_fast_armed(struct fhook_session *s)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node)
		if (p->kind == &fhook_direct_kind && p->registered && to_direct(p)->fast)
			return true;
	return false;
}

/*
 * The fast path's hits on @cpu, not yet in the session's counters; a
 * latency probe's timed calls.
 */
static u64 fhook_direct_hits_elsewhere(struct fhook_probe *p, int cpu)
{
	struct fhook_direct_probe *d = to_direct(p);

	if (d->f.p.lat)
		return fhook_lat_hits(d->f.p.lat, cpu);
	return d->fast_hits ? READ_ONCE(*per_cpu_ptr(d->fast_hits, cpu)) : 0;
}

/*
 * Move the fast path's hits into the session's counters, once no task can
 * be on the fast trampoline (unregistered).
 */
static void fhook_direct_fold(struct fhook_direct_probe *d)
{
	struct fhook_probe *p = &d->f.p;
	struct fhook_probe_counters *c;
	int cpu;

	if (!d->fast_hits)
		return;
	for_each_possible_cpu(cpu) {
		u64 *n = per_cpu_ptr(d->fast_hits, cpu);

		c = fhook_counters(p->session, cpu, p->id);
		WRITE_ONCE(c->hits, c->hits + *n);
		*n = 0;
	}
}

/* F_LATENCY goes alone, and only it passes stack_args (the body's stack words) */
static int fhook_direct_validate(struct fhook_session *s, const struct fhook_probe_add *arg)
{
	if (((arg->flags & FHOOK_PROBE_F_LATENCY) && arg->flags != FHOOK_PROBE_F_LATENCY) ||
	    (arg->stack_args && !(arg->flags & FHOOK_PROBE_F_LATENCY)) ||
	    arg->stack_args > FHOOK_HOOK_MAX_STACK_ARGS)
		return fhook_refuse(s, FHOOK_R_LATENCY_FLAGS, -1, -EINVAL);
	return 0;
}

/* Slots taken now (FHOOK_IOC_HANDSHAKE: fhook status) */
u32 fhook_direct_used(void)
{
	u32 i, n = 0;

	mutex_lock(&fhook_direct_lock);
	for (i = 0; i < FHOOK_NR_SLOTS; i++)
		n += !!fhook_direct_slots[i];
	mutex_unlock(&fhook_direct_lock);
	return n;
}

/*
 * Take a free slot for @p, a direct probe or a kprobe the assembly records
 * (probe_kprobe.c), within its user's share: the slot, or a negative
 * FHOOK_R_* reason.  Until fhook_direct_slot_give(), the slot's
 * trampolines find @p.
 */
int fhook_direct_slot_take(struct fhook_probe *p)
{
	int i, slot = -FHOOK_R_SLOTS;

	if (fhook_user_slot_take(p->session->user, FHOOK_USER_SLOT_DIRECT))
		return -FHOOK_R_USER_SLOTS;
	mutex_lock(&fhook_direct_lock);
	for (i = 0; i < FHOOK_NR_SLOTS; i++) {
		if (!fhook_direct_slots[i]) {
			WRITE_ONCE(fhook_direct_slots[i], p);
			slot = i;
			break;
		}
	}
	mutex_unlock(&fhook_direct_lock);
	if (slot < 0)
		fhook_user_slot_give(p->session->user, FHOOK_USER_SLOT_DIRECT);
	return slot;
}

/* ... once nothing is attached to its trampolines */
void fhook_direct_slot_give(struct fhook_probe *p, int slot)
{
	mutex_lock(&fhook_direct_lock);
	WRITE_ONCE(fhook_direct_slots[slot], NULL);
	WRITE_ONCE(fhook_direct_fast_ctrs[slot], 0);
	mutex_unlock(&fhook_direct_lock);
	fhook_user_slot_give(p->session->user, FHOOK_USER_SLOT_DIRECT);
}

static int fhook_direct_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			     s32 *err_index)
{
	/* before any address is looked up (modwatch.c) */
	u64 gen = fhook_modwatch_gen();
	struct fhook_direct_probe *d = to_direct(p);
	struct fhook_func_targets *t = &d->targets;
	int ret;

	d->slot = -1;
	d->f.ops.flags = 0;
	ret = fhook_func_filter_init(&d->f, arg, err_index, t);
	if (ret)
		return ret;
	ret = fhook_direct_slot_take(p);
	if (ret < 0)
		return fhook_refuse(p->session, -ret, -1, -ENOSPC);
	d->slot = ret;
	if (arg->flags & FHOOK_PROBE_F_LATENCY) {
		u32 words;

		/* (a CPU whose port has no latency trampoline on this kernel) */
		if (FHOOK_ARCH_NO_FEATURES & FHOOK_FEAT_LATENCY)
			return fhook_refuse(p->session, FHOOK_R_ARCH, -1, -EOPNOTSUPP);

		/*
		 * The trampoline runs the bodies: each function's prototype is
		 * checked in BTF, so they are named by address, not by globs
		 * whose matches the module cannot list
		 */
		if (!t->nr_ips || t->filter_text || t->exclude_text)
			return fhook_refuse(p->session, FHOOK_R_LATENCY_BY_ADDR, -1, -EINVAL);
		ret = fhook_body_stack_words(t->ips, t->nr_ips, &words, err_index);
		if (ret)
			return ret;
		d->f.p.lat = fhook_lat_create(p, d->slot, words);
		if (IS_ERR(d->f.p.lat)) {
			ret = PTR_ERR(d->f.p.lat);
			d->f.p.lat = NULL;
			return ret;
		}
	} else {
		/* also for recording probes: DIRECT_MODIFY may make them count */
		d->fast_hits = alloc_percpu_gfp(u64, GFP_KERNEL_ACCOUNT);
		if (!d->fast_hits)
			return -ENOMEM;
		/* the slot's fast trampoline reads it; the slot is ours until release */
		WRITE_ONCE(fhook_direct_fast_ctrs[d->slot], (unsigned long)d->fast_hits);
	}
	return fhook_modwatch_add(p, gen);
}

/* Under the modwatch lock: no unload runs meanwhile. */
static int fhook_direct_arm_watched(struct fhook_probe *p)
{
	struct fhook_direct_probe *d = to_direct(p);
	int ret;

	if (d->f.p.lat) {
		/* no filter to apply: PID_FILTER and CPU_FILTER are refused */
		d->fast = fhook_direct_unfiltered(p);
		fhook_lat_arm(d->f.p.lat, d->fast);
	} else {
		d->fast = fhook_direct_fast_ok(d, p->count_only);
	}
	if (d->fast || d->f.p.lat)
		fhook_stats_elsewhere(p->session, p->id, true);
	p->fnrec = fhook_fnrec_ok(p);
	ret = fhook_direct_register(&d->f.ops, fhook_direct_tramp(d, p->count_only));
	if (ret)
		return ret;
	p->registered = true;
	return 0;
}

static int fhook_direct_arm(struct fhook_probe *p)
{
	return fhook_modwatch_arm(p, fhook_direct_arm_watched);
}

/* Under the modwatch lock: from the session or a module unload. */
static void fhook_direct_unhook(struct fhook_probe *p)
{
	struct fhook_direct_probe *d = to_direct(p);
	int ret;

	if (!p->registered)
		return;
	/* waits until no task is on the trampoline (RCU tasks) */
	ret = fhook_direct_unregister(&d->f.ops, fhook_direct_tramp(d, p->count_only));
	if (ret) {
		/* still attached: the probe must not be freed (session.c) */
		pr_err("probe %u: unregister direct: %d\n", p->id, ret);
		return;
	}
	p->registered = false;
}

/*
 * Under the session lock (or in release): the fold and FHOOK_IOC_STATS do
 * not race.  A probe unhooked by a module unload keeps its fast hits in
 * the per-CPU counter, which STATS reads, until this.
 */
static void fhook_direct_disarm(struct fhook_probe *p)
{
	struct fhook_direct_probe *d = to_direct(p);

	fhook_modwatch_unhook(p, fhook_direct_unhook);
	if (!p->registered && !d->f.p.lat) {
		fhook_direct_fold(d);
		fhook_stats_elsewhere(p->session, p->id, false);
	}
}

/* Does the probe hook a function of @mod (its ips, or @globs matching)? */
static bool fhook_direct_in_module(struct fhook_probe *p, struct module *mod, bool globs)
{
	const struct fhook_func_targets *t = &to_direct(p)->targets;
	u32 i;

	for (i = 0; i < t->nr_ips; i++)
		if (within_module(t->ips[i], mod))
			return true;
	return globs && t->filter_text &&
	       fhook_module_matches(mod, t->filter_text, t->exclude_text);
}

static void fhook_direct_release(struct fhook_probe *p)
{
	struct fhook_direct_probe *d = to_direct(p);

	fhook_modwatch_del(p);
	kfree(d->targets.filter_text);
	kfree(d->targets.exclude_text);
	kvfree(d->targets.ips);
	ftrace_free_filter(&d->f.ops);
	kfree(p->pred);
	free_percpu(d->fast_hits);
	/* unregistered: calls still in the body keep the histogram (latency.c) */
	fhook_lat_release(d->f.p.lat, d->slot);
	d->f.p.lat = NULL;
	if (d->slot >= 0)
		fhook_direct_slot_give(p, d->slot);
}

/* DIRECT_MODIFY of @p, under the session and modwatch locks. */
static int fhook_direct_modify_watched(struct fhook_direct_probe *d, bool count)
{
	struct fhook_probe *p = &d->f.p;
	bool was_fast = d->fast;
	int ret;

	if (!p->registered)
		return fhook_refuse(p->session, FHOOK_R_NOT_REGISTERED, -1, -ENOTCONN);
	if (count == p->count_only)
		return 0;
	/* the recording trampoline may run triggers; counting cannot */
	if (p->nr_triggers || p->stack)
		return fhook_refuse(p->session, FHOOK_R_COUNT_SWITCH, -1, -EOPNOTSUPP);
	/*
	 * to counting: fast if it may.  The fast path's hits stay in its
	 * per-CPU counter (read live, folded at disarm).
	 */
	d->fast = fhook_direct_fast_ok(d, count);
	if (d->fast)
		fhook_stats_elsewhere(p->session, p->id, true);
	ret = fhook_direct_modify(&d->f.ops, fhook_direct_tramp(d, count));
	if (ret) {
		d->fast = was_fast;
		return ret;
	}
	p->count_only = count;
	return 0;
}

/* FHOOK_IOC_DIRECT_MODIFY, under the session lock. */
int fhook_direct_modify_ioc(struct fhook_session *s, const struct fhook_direct_modify *m)
{
	struct fhook_probe *p = fhook_probe_find(s, m->probe_id);
	int ret;

	if (!p)
		return fhook_refuse(s, FHOOK_R_NO_PROBE, -1, -ENOENT);
	if (p->kind != &fhook_direct_kind || p->lat)
		return fhook_refuse(s, FHOOK_R_PROBE_KIND, -1, -EINVAL);
	/* an unload's unhook computes the trampoline from fast, count_only */
	fhook_modwatch_lock();
	ret = fhook_direct_modify_watched(to_direct(p), m->flags & FHOOK_PROBE_F_COUNT);
	fhook_modwatch_unlock();
	return ret;
}

/* a latency probe's histogram (FHOOK_IOC_LATENCY) */
static bool fhook_direct_read_latency(struct fhook_probe *p, int cpu, struct fhook_latency *out)
{
	if (!p->lat)
		return false;
	fhook_lat_read(p->lat, cpu, out);
	return true;
}

const struct fhook_probe_kind fhook_direct_kind = {
	.size		= sizeof(struct fhook_direct_probe),
	.feature	= FHOOK_FEAT_DIRECT,
	.fields		= FHOOK_ADD_PATTERNS | FHOOK_ADD_PRED | FHOOK_ADD_STACK_ARGS,
	.flags		= FHOOK_PROBE_F_STACK | FHOOK_PROBE_F_COUNT | FHOOK_PROBE_F_LATENCY,
	.validate	= fhook_direct_validate,
	.init		= fhook_direct_init,
	.arm		= fhook_direct_arm,
	.disarm		= fhook_direct_disarm,
	.release	= fhook_direct_release,
	.disarm_unregisters = true,
	.in_module	= fhook_direct_in_module,
	.unhook		= fhook_direct_unhook,
	.hits_elsewhere	= fhook_direct_hits_elsewhere,
	.read_latency	= fhook_direct_read_latency,
};
