// SPDX-License-Identifier: GPL-2.0
/*
 * The wakeup latency tracers (FHOOK_PROBE_WAKEUP): what the kernel's
 * wakeup, wakeup_rt and wakeup_dl tracers (kernel/trace/trace_sched_wakeup.c)
 * measure, for kernels built without CONFIG_SCHED_TRACER, on the
 * sched_wakeup, sched_wakeup_new and sched_switch tracepoints.
 *
 * The tracked wakeup is the kernel tracer's: one task at a time, taken
 * when a task of the class is woken that outranks both the task tracked
 * now and the task that woke it (a deadline task is kept until it runs);
 * the switch to it ends the measure, reported as a record when it is a
 * new maximum or over the threshold, with the waker's stack if asked
 * (taken before the lock, in the scratch buffer of the CPU); a tracked
 * task seen switching out first (woken while it was still running) is
 * dropped.  One raw lock per tracer (the kernel's wakeup_lock), taken
 * with interrupts off, covers it: sched_switch runs with the runqueue
 * lock held, sched_wakeup with it or (a task waking itself) with
 * preemption off only; neither may sleep, on PREEMPT_RT either.  One
 * tracer per session.  The CPU the tracked task is queued on (followed
 * through sched_migrate_task) is the session's wakeup_cpu, where its
 * FHOOK_PROBE_F_WAKEUP_CPU function probes record.
 *
 * The histogram is runqlat's: every task of the class stamped when it is
 * woken or preempted while runnable, and the stamp taken at the switch to
 * it; a task that blocks drops its stamp (a stale one, from a wakeup
 * while it ran, would time its next run from then).  Stamps live in a
 * table of FHOOK_WAKE_SLOTS (task, time) pairs found by the task's
 * address, without a lock: a stamp is the task's own (its wakeup and its
 * switch are ordered by its runqueue lock), and a task whose slot another
 * one took meanwhile loses that sample (counted as missed).  Hist tables
 * on the probe (FHOOK_IOC_HIST_SET) count each sample too, by what its
 * struct fhook_wakeup_sample holds (per task: runqlat -P, -L).  The task
 * word says whose the time is: a writer claims it (xchg to
 * FHOOK_WAKE_BUSY; a writer that finds it claimed gives up, as does one
 * interrupted on its CPU by another) before it writes the time and sets
 * it after (B), so a reader whose cmpxchg (task -> NULL) succeeds read
 * that task's time (A).
 */
#include "fhook.h"
#include "lathist.h"

#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/sched/deadline.h>
#include <linux/sched/prio.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>

#define FHOOK_WAKE_SLOTS_BITS	12
#define FHOOK_WAKE_SLOTS	(1U << FHOOK_WAKE_SLOTS_BITS)
/* a slot a writer is filling in: no task's */
#define FHOOK_WAKE_BUSY		((struct task_struct *)1UL)

struct fhook_wake_slot {
	struct task_struct *task;	/* stamped and not yet run; NULL: free */
	u64 ts;
};

/* The tracked wakeup (the kernel tracer's wakeup_task and its data). */
struct fhook_wake_tracked {
	struct task_struct *task;	/* referenced; NULL: none */
	int prio;			/* its prio, INT_MAX: none (wakeup_prio) */
	bool dl;			/* a deadline task: kept until it runs */
	bool new_task;			/* sched_wakeup_new */
	int cpu;			/* task_cpu() when woken */
	u64 ts;
	int waker_cpu;
	pid_t waker_pid;
	int waker_prio;
	u8 waker_flags;
	u8 waker_preempt;
	u32 calls_from;			/* ns after ts: the session's wakeup_cpu set */
	char waker_comm[FHOOK_COMM_LEN];
	unsigned int nr_stack;		/* the waker's stack, innermost first */
	u64 stack[FHOOK_MAX_STACK];
};

struct fhook_wakeup_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct fhook_wakeup cfg;
	int below;			/* the class: tasks of prio below this */
	raw_spinlock_t lock;		/* t, max, nr */
	struct fhook_wake_tracked t;
	u64 max;
	u64 nr;
	struct fhook_wake_slot *slots;	/* [FHOOK_WAKE_SLOTS] */
	struct fhook_lathist __percpu *hist;
	int nr_registered;		/* tracepoints, in fhook_wake_tps order */
};

static_assert(offsetof(struct fhook_wakeup_probe, p) == 0);

static inline struct fhook_wakeup_probe *to_wakeup(struct fhook_probe *p)
{
	return container_of(p, struct fhook_wakeup_probe, p);
}

/* the class's bound on task_struct.prio (dl_prio(), rt_prio()) */
static const int fhook_wake_below[] = {
	[FHOOK_WAKEUP_ALL]	= INT_MAX,
	[FHOOK_WAKEUP_RT]	= MAX_RT_PRIO,
	[FHOOK_WAKEUP_DL]	= MAX_DL_PRIO,
};

static __always_inline struct fhook_wake_slot *fhook_wake_slot(struct fhook_wakeup_probe *w,
							       struct task_struct *t)
{
	return &w->slots[hash_ptr(t, FHOOK_WAKE_SLOTS_BITS)];
}

/* @t is queued to run from @now on: the histogram's stamp. */
static notrace void fhook_wake_stamp(struct fhook_wakeup_probe *w, struct task_struct *t, u64 now)
{
	struct fhook_wake_slot *sl = fhook_wake_slot(w, t);

	struct task_struct *was;

	/* (A) claimed first: a reader's cmpxchg from the old task fails from here on */
	was = xchg(&sl->task, FHOOK_WAKE_BUSY);
	if (was && was != t)
		fhook_count(&fhook_counters(w->p.session, smp_processor_id(), w->p.id)->missed);
	/* another writer is filling it in: it is that one's */
	if (was == FHOOK_WAKE_BUSY)
		return;
	WRITE_ONCE(sl->ts, now);
	/* (B) the time before the task: pairs with the acquire in fhook_wake_unstamp() */
	smp_store_release(&sl->task, t);
}

/* @t runs now: its stamp, taken out of the table, or 0. */
static notrace u64 fhook_wake_unstamp(struct fhook_wakeup_probe *w, struct task_struct *t)
{
	struct fhook_wake_slot *sl = fhook_wake_slot(w, t);
	u64 ts;

	/* (B) pairs with the release in fhook_wake_stamp(): @t's time */
	if (smp_load_acquire(&sl->task) != t)
		return 0;
	ts = READ_ONCE(sl->ts);
	/* (A) fully ordered: ts was read while the slot was still @t's */
	return cmpxchg(&sl->task, t, NULL) == t ? ts : 0;
}

/*
 * Is @t's latency one to measure: of the class, wanted by the session's
 * filters (pids: the task; CPUs: @cpu), not an idle task.
 */
static __always_inline bool fhook_wake_wants(struct fhook_wakeup_probe *w,
					     struct task_struct *t, int cpu)
{
	return READ_ONCE(t->prio) < w->below && !is_idle_task(t) &&
	       fhook_session_wants_task(w->p.session, t, cpu);
}

/* Drop the tracked wakeup; under w->lock.  Returns the task to put. */
static notrace struct task_struct *fhook_wake_reset(struct fhook_wakeup_probe *w)
{
	struct task_struct *t = w->t.task;

	WRITE_ONCE(w->p.session->wakeup_cpu, -1);
	w->t.task = NULL;
	w->t.prio = INT_MAX;
	w->t.dl = false;
	return t;
}

/* @t, tracked, runs without a switch to it since it was woken: drop it. */
static notrace void fhook_wake_untrack(struct fhook_wakeup_probe *w, struct task_struct *t)
{
	struct task_struct *put = NULL;
	unsigned long flags;

	raw_spin_lock_irqsave(&w->lock, flags);
	if (w->t.task == t)
		put = fhook_wake_reset(w);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	if (put)
		put_task_struct(put);
}

/*
 * The waker's stack into @ips, without fhook's frames on top: from the
 * tracepoint's iterator that called the probe on.
 */
static noinline notrace unsigned int fhook_wake_stack(u64 *ips)
{
	unsigned int n = fhook_stack_kernel(NULL, ips, FHOOK_MAX_STACK), i;

	for (i = 0; i < n && within_module(ips[i], THIS_MODULE); i++)
		;
	memmove(ips, ips + i, (n - i) * sizeof(u64));
	return n - i;
}

/* The kernel tracer's probe_wakeup(): does @p become the tracked wakeup? */
static notrace void fhook_wake_track(struct fhook_wakeup_probe *w, struct task_struct *p,
				     bool new_task, u64 now)
{
	struct task_struct *put = NULL;
	int prio = READ_ONCE(p->prio);
	bool dl = dl_prio(prio);
	unsigned int nr_stack = 0;
	unsigned long flags;
	u64 *ips;

	if (!dl && (prio >= READ_ONCE(w->t.prio) || prio >= current->prio))
		return;
	/* (a deadline task is kept until it runs) */
	if (READ_ONCE(w->t.dl))
		return;
	/* (the stack before the lock: the walk is the long part) */
	ips = w->cfg.flags & FHOOK_WAKEUP_F_STACK ? (u64 *)fhook_scratch_get() : NULL;
	if (ips)
		nr_stack = fhook_wake_stack(ips);
	raw_spin_lock_irqsave(&w->lock, flags);
	/* (raced with another wakeup) */
	if (w->t.dl || (!dl && prio >= w->t.prio))
		goto unlock;
	put = fhook_wake_reset(w);
	w->t.task = get_task_struct(p);
	w->t.prio = prio;
	w->t.dl = dl;
	w->t.new_task = new_task;
	w->t.cpu = task_cpu(p);
	w->t.ts = now;
	/*
	 * (read before the CPU is published: every call recorded for this
	 * wakeup is stamped after it, and a call stamped before it may be the
	 * previous wakeup's, on that one's CPU)
	 */
	w->t.calls_from = min_t(u64, fhook_clock_since(fhook_clock(), now), U32_MAX);
	WRITE_ONCE(w->p.session->wakeup_cpu, w->t.cpu);
	w->t.waker_cpu = smp_processor_id();
	w->t.waker_pid = current->pid;
	w->t.waker_prio = current->prio;
	w->t.waker_flags = fhook_rec_ctx(preempt_count(), irqs_disabled_flags(flags));
	w->t.waker_preempt = fhook_rec_preempt(preempt_count());
	memcpy(w->t.waker_comm, current->comm, FHOOK_COMM_LEN);
	w->t.nr_stack = nr_stack;
	if (nr_stack)
		memcpy(w->t.stack, ips, nr_stack * sizeof(u64));
unlock:
	raw_spin_unlock_irqrestore(&w->lock, flags);
	if (ips)
		fhook_scratch_put();
	if (put)
		put_task_struct(put);
}

static notrace void fhook_wake_woken(struct fhook_wakeup_probe *w, struct task_struct *p,
				     bool new_task)
{
	u64 now;

	if (!fhook_wake_wants(w, p, task_cpu(p)))
		return;
	now = fhook_clock();
	fhook_wake_stamp(w, p, now);
	if (!(w->cfg.flags & FHOOK_WAKEUP_F_HIST_ONLY))
		fhook_wake_track(w, p, new_task, now);
}

/* TP_PROTO(struct task_struct *p): sched_wakeup */
static notrace void fhook_wake_on_wakeup(void *data, struct task_struct *p)
{
	fhook_wake_woken(data, p, false);
}

/* TP_PROTO(struct task_struct *p): sched_wakeup_new */
static notrace void fhook_wake_on_wakeup_new(void *data, struct task_struct *p)
{
	fhook_wake_woken(data, p, true);
}

/*
 * TP_PROTO(struct task_struct *p, int dest_cpu): sched_migrate_task.  The
 * tracked task moved: its function calls are those of its new CPU (the
 * kernel tracer's probe_wakeup_migrate_task()).
 */
static notrace void fhook_wake_on_migrate(void *data, struct task_struct *p, int dest_cpu)
{
	struct fhook_wakeup_probe *w = data;
	unsigned long flags;

	if (READ_ONCE(w->t.task) != p)
		return;
	raw_spin_lock_irqsave(&w->lock, flags);
	if (w->t.task == p)
		WRITE_ONCE(w->p.session->wakeup_cpu, dest_cpu);
	raw_spin_unlock_irqrestore(&w->lock, flags);
}

/* The stack trailers of a report: the switch's (@nr_switch) and the waker's */
static inline u32 fhook_wake_stacks_size(const struct fhook_wake_tracked *t,
					 unsigned int nr_switch)
{
	if (nr_switch)
		return 8 * (nr_switch + 1) + 8 * (t->nr_stack + 1);
	return t->nr_stack ? 8 * (t->nr_stack + 1) : 0;
}

/*
 * The record of the tracked wakeup of @next, ended at @now, @size bytes
 * (then the switch's stack @sw when @nr_switch, and the waker's when
 * either is there); under w->lock.
 */
static notrace void fhook_wake_record(struct fhook_wakeup_probe *w, struct fhook_rec_wakeup *r,
				      u32 size, struct task_struct *prev, struct task_struct *next,
				      unsigned int prev_state, u64 latency, u64 now, bool new_max,
				      const u64 *sw, unsigned int nr_switch)
{
	struct fhook_wake_tracked *t = &w->t;
	u64 *ips = (u64 *)(r + 1);

	fhook_rec_init_ts(&r->hdr, FHOOK_REC_WAKEUP, size, w->p.id, preempt_count(),
			  irqs_disabled(), now);
	r->wflags = 0;
	if (nr_switch) {
		memcpy(ips, sw, nr_switch * sizeof(u64));
		ips += fhook_stack_trailer(ips, nr_switch) / sizeof(u64);
		r->wflags |= FHOOK_WAKEUP_SWITCH_STACK;
	}
	if (t->nr_stack || nr_switch) {
		r->hdr.flags |= FHOOK_CTX_STACK;
		memcpy(ips, t->stack, t->nr_stack * sizeof(u64));
		fhook_stack_trailer(ips, t->nr_stack);
	}
	r->latency = latency;
	r->wakeup_ts = t->ts;
	r->max = w->max;
	r->nr = w->nr;
	r->pid = next->pid;
	r->tgid = next->tgid;
	r->wakeup_cpu = t->cpu;
	r->waker_cpu = t->waker_cpu;
	r->waker_pid = t->waker_pid;
	r->prio = next->prio;
	r->waker_prio = t->waker_prio;
	r->prev_prio = prev->prio;
	r->prev_state = prev_state;
	r->policy = next->policy;
	r->rt_priority = next->rt_priority;
	r->nice = task_nice(next);
	rcu_read_lock();
	r->uid = from_kuid_munged(&init_user_ns, task_uid(next));
	rcu_read_unlock();
	r->wflags |= (new_max ? FHOOK_WAKEUP_NEW_MAX : 0) | (t->new_task ? FHOOK_WAKEUP_NEW_TASK : 0);
	r->waker_flags = t->waker_flags;
	r->waker_preempt = t->waker_preempt;
	r->__pad = 0;
	r->calls_from = t->calls_from;
	memcpy(r->comm, next->comm, FHOOK_COMM_LEN);
	memcpy(r->waker_comm, t->waker_comm, FHOOK_COMM_LEN);
}

/* The kernel tracer's probe_wakeup_sched_switch(): the tracked task runs. */
static notrace void fhook_wake_switched(struct fhook_wakeup_probe *w, struct task_struct *prev,
					struct task_struct *next, unsigned int prev_state,
					u64 now)
{
	struct fhook_session *s = w->p.session;
	int cpu = smp_processor_id();
	struct fhook_probe_counters *c = fhook_counters(s, cpu, w->p.id);
	struct task_struct *put = NULL;
	struct fhook_rec_wakeup *r = NULL;
	struct fhook_ring *rb = s->rings[cpu];
	bool report, new_max = false;
	unsigned int nr_switch = 0;
	unsigned long flags;
	u64 latency, *sw = NULL;

	/* (the switch's stack before the lock, as the waker's) */
	if ((w->cfg.flags & FHOOK_WAKEUP_F_STACK) && READ_ONCE(w->t.task) == next) {
		sw = (u64 *)fhook_scratch_get();
		if (sw)
			nr_switch = fhook_wake_stack(sw);
	}
	raw_spin_lock_irqsave(&w->lock, flags);
	if (w->t.task != next)
		goto unlock;
	latency = (s64)(now - w->t.ts) > 0 ? now - w->t.ts : 0;
	w->nr++;
	if (w->cfg.threshold_ns)
		report = latency >= w->cfg.threshold_ns;
	else
		report = latency > w->max;
	if (latency > w->max) {
		w->max = latency;
		new_max = true;
	}
	if (report && fhook_session_wants_task(s, next, cpu)) {
		u32 size = sizeof(*r) + fhook_wake_stacks_size(&w->t, nr_switch);

		r = fhook_ring_reserve(rb, size, w->p.id);
		if (!IS_ERR_OR_NULL(r)) {
			fhook_wake_record(w, r, size, prev, next, prev_state, latency, now, new_max,
					  sw, nr_switch);
			fhook_count(&c->written);
		}
		fhook_ring_commit(rb);
	}
	put = fhook_wake_reset(w);
unlock:
	raw_spin_unlock_irqrestore(&w->lock, flags);
	if (sw)
		fhook_scratch_put();
	if (put)
		put_task_struct(put);
}

/* @t's wait of @latency into the probe's hist tables (per task: runqlat -P, -L) */
static noinline notrace void fhook_wake_hist_add(struct fhook_wakeup_probe *w,
						 struct task_struct *t, u64 latency)
{
	struct fhook_wakeup_sample sample = {
		.latency = latency,
		.pid = t->pid,
		.tgid = t->tgid,
		.prio = READ_ONCE(t->prio),
		.bucket = min_t(unsigned int, fls64(latency), FHOOK_LAT_BUCKETS - 1),
	};

	static_assert(sizeof(sample.comm) == TASK_COMM_LEN);
	memcpy(sample.comm, t->comm, TASK_COMM_LEN);
	fhook_hist_add(w->p.hist, &sample, sizeof(sample), 0, 0, 0, NULL);
}

/*
 * TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next,
 *	    unsigned int prev_state): sched_switch
 */
static notrace void fhook_wake_on_switch(void *data, bool preempt, struct task_struct *prev,
					 struct task_struct *next, unsigned int prev_state)
{
	struct fhook_wakeup_probe *w = data;
	int cpu = smp_processor_id();
	u64 now = 0, ts;

	/* (the clock only for a task of the class: most switches are not) */
#define fhook_wake_now()	(now ?: (now = fhook_clock()))
	/* preempted (or woken by a signal) while runnable: queued again */
	if (preempt || task_is_running(prev)) {
		if (fhook_wake_wants(w, prev, cpu))
			fhook_wake_stamp(w, prev, fhook_wake_now());
	} else {
		fhook_wake_unstamp(w, prev);
	}
	if (unlikely(READ_ONCE(w->t.task) == prev))
		fhook_wake_untrack(w, prev);
	ts = fhook_wake_unstamp(w, next);
	if (ts && fhook_wake_wants(w, next, cpu)) {
		u64 latency = (s64)(fhook_wake_now() - ts) > 0 ? now - ts : 0;

		fhook_lathist_add(w->hist, latency);
		if (w->p.hist)
			fhook_wake_hist_add(w, next, latency);
	}
	if (READ_ONCE(w->t.task) == next)
		fhook_wake_switched(w, prev, next, prev_state, fhook_wake_now());
#undef fhook_wake_now
}

/*
 * The tracepoints, registered in this order and unregistered in reverse;
 * the last one only where the kernel has it (FHOOK_WAKE_TPS_NEEDED).
 */
static const struct {
	const char *name;
	void *probe;
} fhook_wake_tps[] = {
	{ "sched_switch",	fhook_wake_on_switch },
	{ "sched_wakeup",	fhook_wake_on_wakeup },
	{ "sched_wakeup_new",	fhook_wake_on_wakeup_new },
	{ "sched_migrate_task",	fhook_wake_on_migrate },
};

#define FHOOK_WAKE_TPS_NEEDED	3

static struct tracepoint *fhook_wake_tp[ARRAY_SIZE(fhook_wake_tps)];

static int fhook_wakeup_validate(struct fhook_session *s, const struct fhook_probe_add *arg)
{
	struct fhook_probe *p;
	int i;

	for (i = 0; i < FHOOK_WAKE_TPS_NEEDED; i++)
		if (!fhook_wake_tp[i])
			return fhook_refuse(s, FHOOK_R_WAKEUP_TPS, -1, -EOPNOTSUPP);
	/* each one is on every switch and wakeup: one per session */
	list_for_each_entry(p, &s->probes, node)
		if (p->type == FHOOK_PROBE_WAKEUP)
			return fhook_refuse(s, FHOOK_R_WAKEUP_ONE, -1, -EBUSY);
	return 0;
}

static int fhook_wakeup_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			     s32 *err_index)
{
	struct fhook_wakeup_probe *w = to_wakeup(p);
	struct fhook_wakeup *cfg = &w->cfg;
	int ret;

	if (!arg->hook)
		return fhook_refuse(p->session, FHOOK_R_WAKEUP_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), sizeof(*cfg), arg->hook);
	if (ret < 0)
		return fhook_refuse(p->session, FHOOK_R_WAKEUP_CFG, -1, ret);
	if (cfg->wclass >= ARRAY_SIZE(fhook_wake_below))
		return fhook_refuse(p->session, FHOOK_R_WAKEUP_CFG, -1, -EINVAL);
	if (cfg->flags & ~(FHOOK_WAKEUP_F_HIST_ONLY | FHOOK_WAKEUP_F_STACK))
		return fhook_refuse(p->session, FHOOK_R_FLAGS, -1, -EINVAL);
	if (cfg->__pad || cfg->reserved)
		return fhook_refuse(p->session, FHOOK_R_RESERVED, -1, -EINVAL);
	w->below = fhook_wake_below[cfg->wclass];
	raw_spin_lock_init(&w->lock);
	fhook_wake_reset(w);
	w->slots = kvcalloc(FHOOK_WAKE_SLOTS, sizeof(*w->slots), GFP_KERNEL_ACCOUNT);
	w->hist = alloc_percpu_gfp(struct fhook_lathist, GFP_KERNEL_ACCOUNT);
	if (!w->slots || !w->hist)
		return -ENOMEM;
	return 0;
}

static void fhook_wakeup_unregister(struct fhook_wakeup_probe *w)
{
	while (w->nr_registered) {
		w->nr_registered--;
		tracepoint_probe_unregister(fhook_wake_tp[w->nr_registered],
					    fhook_wake_tps[w->nr_registered].probe, w);
	}
}

static int fhook_wakeup_arm(struct fhook_probe *p)
{
	struct fhook_wakeup_probe *w = to_wakeup(p);
	int ret;

	/* a new run, a new maximum (the kernel tracer's max_latency = 0) */
	w->max = 0;
	w->nr = 0;
	for (; w->nr_registered < ARRAY_SIZE(fhook_wake_tps) && fhook_wake_tp[w->nr_registered];
	     w->nr_registered++) {
		ret = tracepoint_probe_register(fhook_wake_tp[w->nr_registered],
						fhook_wake_tps[w->nr_registered].probe, w);
		if (ret) {
			fhook_wakeup_unregister(w);
			tracepoint_synchronize_unregister();
			return ret;
		}
	}
	p->registered = true;
	return 0;
}

static void fhook_wakeup_disarm(struct fhook_probe *p)
{
	struct fhook_wakeup_probe *w = to_wakeup(p);
	struct task_struct *put;
	unsigned long flags;

	fhook_wakeup_unregister(w);
	/* the handlers in flight are done with the task, the ring, the table */
	tracepoint_synchronize_unregister();
	p->registered = false;
	raw_spin_lock_irqsave(&w->lock, flags);
	put = fhook_wake_reset(w);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	if (put)
		put_task_struct(put);
	/* stamps of tasks that did not run are stale at the next START */
	memset(w->slots, 0, FHOOK_WAKE_SLOTS * sizeof(*w->slots));
}

static void fhook_wakeup_release(struct fhook_probe *p)
{
	struct fhook_wakeup_probe *w = to_wakeup(p);

	kvfree(w->slots);
	free_percpu(w->hist);
}

static bool fhook_wakeup_read_latency(struct fhook_probe *p, int cpu, struct fhook_latency *out)
{
	fhook_lathist_read(to_wakeup(p)->hist, cpu, out);
	return true;
}

/* histogram samples on @cpu: FHOOK_IOC_STATS counts them as hits */
static u64 fhook_wakeup_hits(struct fhook_probe *p, int cpu)
{
	return READ_ONCE(per_cpu_ptr(to_wakeup(p)->hist, cpu)->count);
}

const struct fhook_probe_kind fhook_wakeup_kind = {
	.size		= sizeof(struct fhook_wakeup_probe),
	.fields		= FHOOK_ADD_HOOK,
	.validate	= fhook_wakeup_validate,
	.init		= fhook_wakeup_init,
	.arm		= fhook_wakeup_arm,
	.disarm		= fhook_wakeup_disarm,
	.release	= fhook_wakeup_release,
	.disarm_unregisters = true,
	.no_triggers	= true,
	.hits_elsewhere	= fhook_wakeup_hits,
	.read_latency	= fhook_wakeup_read_latency,
};

void fhook_wakeup_setup(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(fhook_wake_tps); i++) {
		fhook_wake_tp[i] = fhook_tracepoint(fhook_wake_tps[i].name);
		if (!fhook_wake_tp[i] && i < FHOOK_WAKE_TPS_NEEDED)
			pr_warn("%s tracepoint not found: no wakeup tracer\n", fhook_wake_tps[i].name);
	}
}
