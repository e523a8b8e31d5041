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

/* slot -> probe; set before the probe is armed, cleared after release */
static struct fhook_probe *fhook_direct_slots[FHOOK_NR_SLOTS];
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

static unsigned long fhook_direct_tramp(struct fhook_probe *p, bool count)
{
	if (p->lat)
		return fhook_lat_tramps[p->slot];
	if (!count)
		return fhook_direct_record_tramps[p->slot];
	return p->fast ? fhook_direct_fast_tramps[p->slot] : fhook_direct_count_tramps[p->slot];
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

static bool fhook_direct_fast_ok(struct fhook_probe *p, bool count)
{
	return count && p->fast_hits && fhook_direct_unfiltered(p);
}

bool fhook_direct_fast_armed(struct fhook_session *s)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node)
		if (p->type == FHOOK_PROBE_DIRECT && p->registered && p->fast)
			return true;
	return false;
}

/*
 * The fast path's hits on @cpu, not yet in the session's counters; a
 * latency probe's timed calls.
 */
u64 fhook_direct_fast_hits(struct fhook_probe *p, int cpu)
{
	if (p->lat)
		return fhook_lat_hits(p, cpu);
	return p->fast_hits ? READ_ONCE(*per_cpu_ptr(p->fast_hits, cpu)) : 0;
}

/*
 * Move the fast path's hits into the session's counters, once no task can
 * be on the fast trampoline (unregistered).
 */
static void fhook_direct_fold(struct fhook_probe *p)
{
	struct fhook_probe_counters *c;
	int cpu;

	if (!p->fast_hits)
		return;
	for_each_possible_cpu(cpu) {
		u64 *n = per_cpu_ptr(p->fast_hits, cpu);

		c = fhook_counters(p->session, cpu, p->id);
		WRITE_ONCE(c->hits, c->hits + *n);
		*n = 0;
	}
}

/* F_LATENCY goes alone, and only it passes stack_args (the body's stack words) */
static int fhook_direct_validate(const struct fhook_probe_add *arg)
{
	if ((arg->flags & FHOOK_PROBE_F_LATENCY) && arg->flags != FHOOK_PROBE_F_LATENCY)
		return -EINVAL;
	if ((arg->stack_args && !(arg->flags & FHOOK_PROBE_F_LATENCY)) ||
	    arg->stack_args > FHOOK_HOOK_MAX_STACK_ARGS)
		return -EINVAL;
	return 0;
}

static int fhook_direct_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			     s32 *err_index)
{
	/* before any address is looked up (modwatch.c) */
	u64 gen = fhook_modwatch_gen();
	int ret, i;

	p->slot = -1;
	p->ops.flags = 0;
	ret = fhook_func_filter_init(p, arg, err_index);
	if (ret)
		return ret;
	mutex_lock(&fhook_direct_lock);
	for (i = 0; i < FHOOK_NR_SLOTS; i++) {
		if (!fhook_direct_slots[i]) {
			WRITE_ONCE(fhook_direct_slots[i], p);
			p->slot = i;
			break;
		}
	}
	mutex_unlock(&fhook_direct_lock);
	if (p->slot < 0)
		return -ENOSPC;
	if (arg->flags & FHOOK_PROBE_F_LATENCY) {
		u32 words;

		/*
		 * The trampoline runs the bodies: each function's prototype is
		 * checked in BTF, so they are named by address, not by globs
		 * whose matches the module cannot list
		 */
		if (!p->nr_ips || p->filter_text || p->exclude_text)
			return -EINVAL;
		ret = fhook_body_stack_words(p->ips, p->nr_ips, &words, err_index);
		if (!ret)
			ret = fhook_lat_init(p, words);
		if (ret)
			return ret;
	} else {
		/* also for recording probes: DIRECT_MODIFY may make them count */
		p->fast_hits = alloc_percpu(u64);
		if (!p->fast_hits)
			return -ENOMEM;
		/* the slot's fast trampoline reads it; the slot is ours until release */
		WRITE_ONCE(fhook_direct_fast_ctrs[p->slot], (unsigned long)p->fast_hits);
	}
	return fhook_modwatch_add(p, gen);
}

/* Under the modwatch lock: no unload runs meanwhile. */
static int fhook_direct_arm_watched(struct fhook_probe *p)
{
	int ret;

	if (p->lat) {
		/* no filter to apply: PID_FILTER and CPU_FILTER are refused */
		p->fast = fhook_direct_unfiltered(p);
		fhook_lat_arm(p, p->fast);
	} else {
		p->fast = fhook_direct_fast_ok(p, p->count_only);
	}
	if (p->fast || p->lat)
		fhook_stats_elsewhere(p->session, p->id, true);
	ret = fhook_direct_register(&p->ops, fhook_direct_tramp(p, p->count_only));
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
	int ret;

	if (!p->registered)
		return;
	/* waits until no task is on the trampoline (RCU tasks) */
	ret = fhook_direct_unregister(&p->ops, fhook_direct_tramp(p, p->count_only));
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
	fhook_modwatch_unhook(p, fhook_direct_unhook);
	if (!p->registered && !p->lat) {
		fhook_direct_fold(p);
		fhook_stats_elsewhere(p->session, p->id, false);
	}
}

/* Does the probe hook a function of @mod (its ips, or @globs matching)? */
static bool fhook_direct_in_module(struct fhook_probe *p, struct module *mod, bool globs)
{
	u32 i;

	for (i = 0; i < p->nr_ips; i++)
		if (within_module(p->ips[i], mod))
			return true;
	return globs && p->filter_text &&
	       fhook_module_matches(mod, p->filter_text, p->exclude_text);
}

static void fhook_direct_release(struct fhook_probe *p)
{
	fhook_modwatch_del(p);
	kfree(p->filter_text);
	kfree(p->exclude_text);
	kvfree(p->ips);
	ftrace_free_filter(&p->ops);
	fhook_triggers_free(p);
	kfree(p->pred);
	free_percpu(p->fast_hits);
	/* unregistered: calls still in the body keep the histogram (latency.c) */
	fhook_lat_release(p);
	if (p->slot >= 0) {
		mutex_lock(&fhook_direct_lock);
		WRITE_ONCE(fhook_direct_slots[p->slot], NULL);
		WRITE_ONCE(fhook_direct_fast_ctrs[p->slot], 0);
		mutex_unlock(&fhook_direct_lock);
	}
}

/* DIRECT_MODIFY of @p, under the session and modwatch locks. */
static int fhook_direct_modify_watched(struct fhook_probe *p, bool count)
{
	bool was_fast = p->fast;
	int ret;

	if (!p->registered)
		return -ENOTCONN;
	if (count == p->count_only)
		return 0;
	/* the recording trampoline may run triggers; counting cannot */
	if (p->nr_triggers || p->stack)
		return -EOPNOTSUPP;
	/*
	 * to counting: fast if it may.  The fast path's hits stay in its
	 * per-CPU counter (read live, folded at disarm).
	 */
	p->fast = fhook_direct_fast_ok(p, count);
	if (p->fast)
		fhook_stats_elsewhere(p->session, p->id, true);
	ret = fhook_direct_modify(&p->ops, fhook_direct_tramp(p, count));
	if (ret) {
		p->fast = was_fast;
		return ret;
	}
	p->count_only = count;
	return 0;
}

/* FHOOK_IOC_DIRECT_MODIFY, under the session lock. */
int fhook_direct_modify_ioc(struct fhook_session *s, const struct fhook_direct_modify *m)
{
	struct fhook_probe *p;
	int ret;

	list_for_each_entry(p, &s->probes, node) {
		if (p->id != m->probe_id)
			continue;
		if (p->type != FHOOK_PROBE_DIRECT || p->lat)
			return -EINVAL;
		/* an unload's unhook computes the trampoline from fast, count_only */
		fhook_modwatch_lock();
		ret = fhook_direct_modify_watched(p, m->flags & FHOOK_PROBE_F_COUNT);
		fhook_modwatch_unlock();
		return ret;
	}
	return -ENOENT;
}

const struct fhook_probe_kind fhook_direct_kind = {
	.fields		= FHOOK_ADD_PATTERNS | FHOOK_ADD_PRED | FHOOK_ADD_STACK_ARGS,
	.flags		= FHOOK_PROBE_FLAGS,
	.validate	= fhook_direct_validate,
	.init		= fhook_direct_init,
	.arm		= fhook_direct_arm,
	.disarm		= fhook_direct_disarm,
	.release	= fhook_direct_release,
	.disarm_unregisters = true,
	.in_module	= fhook_direct_in_module,
	.unhook		= fhook_direct_unhook,
};
