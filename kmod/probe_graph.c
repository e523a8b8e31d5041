// SPDX-License-Identifier: GPL-2.0
/*
 * Call graphs (FHOOK_PROBE_GRAPH): what the function_graph tracer shows
 * with set_graph_function, from a module.  Debian's 6.1 exports neither
 * fgraph nor rethook nor fprobe to modules, so the return is caught as
 * fgraph catches it, with our own return trampoline: at a function's
 * entry the callback saves the return address (the word at the stack
 * pointer of the fentry call) on the task's shadow stack and puts
 * fhook_graph_return (tramp.S) in its place; the function returns there,
 * fhook_graph_exit() pops the shadow stack and says where to go on.  The
 * same code runs on 6.12, where fprobe (rethook) would be available: one
 * mechanism to test, and cheaper than a rethook node per call.
 *
 * Three ftrace_ops share one callback:
 *   entry    the graph functions: a task not in the graph enters it
 *   all      every other traceable function: traced while in the graph
 *   notrace  set_graph_notrace: a frame that hides itself and its callees
 * A graph function given by pattern is left out of "all" (its notrace
 * list takes the same patterns); one given by address (:mod:) is in both
 * (ftrace_set_notrace() takes no addresses): both callbacks run, the
 * second sees the frame the first pushed for the same function and return
 * address and leaves it.
 * Tail calls push a frame on the same return address; its saved return
 * address is the trampoline, so the return pops both, inner first.
 *
 * Shadow stacks: a pool allocated at arm, one stack per task that entered
 * the graph, taken at its first entry and kept (idle) between its calls,
 * given back at the task's last context switch; when none is free, an
 * idle one is taken from its task.  Who owns a stack and whether it is
 * in use is one word (gs->own: the task, and FHOOK_GS_ACTIVE): a task
 * takes its idle stack back with a cmpxchg from (itself, idle), a thief
 * with a cmpxchg from (that task, idle) to (thief, active); one of them
 * wins, and a task whose stack went to another meanwhile (and is idle
 * again there) cannot take it, as it could with a bare state.
 * A task finds its stack in a hash of buckets of four (task, stack) pairs,
 * looked up without locks: a pair is added by its task and removed by a
 * dead task's last sched_switch or by a thief holding the lock, after the
 * cmpxchg that makes the stack its own.  A lookup racing with a removal
 * and the way's reuse may return another task's stack: the owner word
 * tells.  The pool lock (raw, irqs off) covers the free list, the
 * buckets' changes and the teardown's walk.
 *
 * Leaves in one record: the push holds its entry record back (the frame
 * keeps ts and context; gs->pending and this CPU's fhook_graph_pending say
 * so) until something else is recorded on the CPU: a push inside it, any
 * other record (fhook_ring_reserve() calls fhook_graph_flush() first),
 * the task switching out.  A call that returns first is a leaf: its
 * return record (FHOOK_GRAPH_RET_LEAF) stands for both.  At most one
 * entry waits per CPU, that of the task running there.  --args writes
 * entries at once; at depth 1 only the entry ops is registered.
 *
 * Ordering on a stack: a push reserves its frame (depth + 1) before
 * filling it, so an interrupt's calls nest above it, as fgraph's
 * curr_ret_stack does; the return address is replaced last.  A return
 * finds its frame by the stack pointer it returned with, from the top;
 * frames above it (a non-local exit, or frames the teardown restored)
 * are dropped.
 *
 * Teardown (disarm): the ops go (no new frame), recording stops
 * (synchronize_rcu(): no handler writes to the session's rings after
 * that), then every pending frame's return address is put back with a
 * cmpxchg from the trampoline's address: a task returns straight to its
 * caller from then on.  A frame whose slot no longer holds our address
 * was taken over by another return hook (fgraph, a kretprobe) after ours
 * and still comes back through the trampoline: the pool then stays (and
 * the module with it) until those have returned, checked by a work item.
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/hash.h>
#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#define FHOOK_GRAPH_BUCKET_BITS	10
#define FHOOK_GRAPH_WAYS	4

/* fhook_gframe.flags */
#define FHOOK_GF_NOTRACE	BIT(0)	/* set_graph_notrace: no records, no callees */
#define FHOOK_GF_RESTORED	BIT(1)	/* teardown put the return address back */

struct fhook_gframe {
	unsigned long *slot;		/* where the return address was */
	unsigned long ret;		/* ... and what it was */
	unsigned long func;
	u64 calltime;
	unsigned long flags;
	u8 ctx;				/* the entry's hdr.flags and hdr.preempt */
	u8 preempt;
};

/*
 * fhook_gstack.own: its task (NULL: on the free list) | FHOOK_GS_ACTIVE,
 * set while the task is inside the graph (clear: kept between calls, no
 * frame).  The task part changes under the pool lock only.
 */
#define FHOOK_GS_ACTIVE		1UL

struct fhook_gstack {
	unsigned long own;
	unsigned int depth;		/* frames in use */
	unsigned int way;		/* its place in the bucket of its task */
	int pending;			/* the frame whose entry is held back, or -1 */
	struct fhook_gstack *next_free;
	struct fhook_gframe frames[FHOOK_GRAPH_MAX_DEPTH];
};

struct fhook_gbucket {
	struct task_struct *task[FHOOK_GRAPH_WAYS];
	struct fhook_gstack *stack[FHOOK_GRAPH_WAYS];
};

struct fhook_graph_probe;

/* The shadow stacks of the one call graph; outlives its probe while draining. */
struct fhook_gpool {
	raw_spinlock_t lock;
	struct fhook_gstack *free;
	struct fhook_gstack *stacks;	/* [nr] */
	unsigned int nr;
	unsigned int max_depth;
	u64 threshold;
	bool no_irqs;
	bool args;
	/*
	 * false: the last steal found no idle stack, and no task has left
	 * the graph since (a task entering then counts itself missed at
	 * once, without scanning the pool under its lock)
	 */
	bool maybe_idle;
	/* the probe whose rings get the records; NULL once disarmed */
	struct fhook_graph_probe *probe;
	struct fhook_gbucket buckets[1 << FHOOK_GRAPH_BUCKET_BITS];
};

struct fhook_graph_probe {
	struct fhook_func_probe f;	/* first: the entry ops and the probe */
	struct ftrace_ops all_ops;
	struct ftrace_ops notrace_ops;
	bool all_registered;
	bool notrace_registered;
	bool has_notrace;
	struct fhook_graph cfg;
};

static_assert(offsetof(struct fhook_graph_probe, f) == 0);

static_assert(__alignof__(struct task_struct) > FHOOK_GS_ACTIVE);

static __always_inline unsigned long fhook_gs_own(struct task_struct *t, unsigned long active)
{
	return (unsigned long)t | active;
}

static __always_inline struct task_struct *fhook_gs_task(struct fhook_gstack *gs)
{
	return (struct task_struct *)(READ_ONCE(gs->own) & ~FHOOK_GS_ACTIVE);
}

static inline struct fhook_graph_probe *to_graph(struct fhook_probe *p)
{
	return container_of(to_func(p), struct fhook_graph_probe, f);
}

/*
 * The pool of the call graph armed or draining (NULL: none).  Its
 * trampoline and stacks are reached by returns until it is freed.
 */
static struct fhook_gpool *fhook_gpool;
static DEFINE_MUTEX(fhook_graph_lock);		/* fhook_gpool changes */
/*
 * Set while this CPU runs our callbacks, return handler or switch probe:
 * the kernel functions they call (spinlocks, irq_work, glob_match) are
 * traced by the "all" ops, and ftrace's recursion lock lets one nested
 * call through (its transition bit).  A callback that finds it set leaves
 * the call alone, so fhook never pushes frames for its own work (an
 * interrupt that arrives meanwhile is not traced either).
 */
static DEFINE_PER_CPU(int, fhook_graph_busy);
/* The stack of the task on this CPU when one of its entries is held back */
DEFINE_PER_CPU(struct fhook_gstack *, fhook_graph_pending);
static struct tracepoint *fhook_tp_switch;
static bool fhook_switch_registered;

static __always_inline struct fhook_gbucket *fhook_gbucket(struct fhook_gpool *g,
							   struct task_struct *t)
{
	return &g->buckets[hash_ptr(t, FHOOK_GRAPH_BUCKET_BITS)];
}

/*
 * The shadow stack of @t, or NULL.  Lockless (see the top of the file):
 * a stack that is not @t's (taken from @t meanwhile) counts as none.
 */
static __always_inline struct fhook_gstack *fhook_gstack_find(struct fhook_gpool *g,
							      struct task_struct *t)
{
	struct fhook_gbucket *b = fhook_gbucket(g, t);
	struct fhook_gstack *gs;
	int w;

	for (w = 0; w < FHOOK_GRAPH_WAYS; w++) {
		/* pairs with the release in fhook_gstack_get(): stack set */
		if (smp_load_acquire(&b->task[w]) == t) {
			gs = READ_ONCE(b->stack[w]);
			return fhook_gs_task(gs) == t ? gs : NULL;
		}
	}
	return NULL;
}

/*
 * current's stack while current is inside the graph, else NULL.  Only
 * current leaves the graph (its return, or its death): the stack and its
 * depth stay its own, unlike an idle stack, which a thief may take (and
 * push on) right after any look at it.
 */
static __always_inline struct fhook_gstack *fhook_gstack_active(struct fhook_gpool *g)
{
	struct fhook_gstack *gs = fhook_gstack_find(g, current);

	return gs && READ_ONCE(gs->own) == fhook_gs_own(current, FHOOK_GS_ACTIVE) ? gs : NULL;
}

/* Unlink @gs from its task's bucket; under the pool lock. */
static notrace void fhook_gstack_unlink(struct fhook_gpool *g, struct fhook_gstack *gs)
{
	WRITE_ONCE(fhook_gbucket(g, fhook_gs_task(gs))->task[gs->way], NULL);
}

/*
 * An idle stack of another task, taken from it (the pool is used up):
 * its task, which may try to take it back at this moment, loses the
 * cmpxchg and asks for a stack here, under the lock we hold.
 */
static notrace struct fhook_gstack *fhook_gstack_steal(struct fhook_gpool *g)
{
	unsigned int i;

	for (i = 0; i < g->nr; i++) {
		struct fhook_gstack *gs = &g->stacks[i];
		unsigned long idle = READ_ONCE(gs->own);

		if (idle && !(idle & FHOOK_GS_ACTIVE) &&
		    cmpxchg(&gs->own, idle, fhook_gs_own(current, FHOOK_GS_ACTIVE)) == idle) {
			/* the old task's pair (fhook_gs_task() names the thief now) */
			WRITE_ONCE(fhook_gbucket(g, (struct task_struct *)idle)->task[gs->way], NULL);
			return gs;
		}
	}
	return NULL;
}

/*
 * A stack for current, entering the graph, active; NULL when none is left
 * (free or idle) or its bucket is full.
 */
static notrace struct fhook_gstack *fhook_gstack_get(struct fhook_gpool *g)
{
	struct task_struct *t = current;
	struct fhook_gbucket *b = fhook_gbucket(g, t);
	struct fhook_gstack *gs = NULL;
	unsigned long flags;
	int w;

	raw_spin_lock_irqsave(&g->lock, flags);
	/*
	 * Its own stack still: not expected (a failed lookup or cmpxchg means
	 * the pair went under this lock), but a second pair would be lost.
	 */
	for (w = 0; w < FHOOK_GRAPH_WAYS; w++) {
		if (b->task[w] == t) {
			gs = b->stack[w];
			WRITE_ONCE(gs->own, fhook_gs_own(t, FHOOK_GS_ACTIVE));
			goto unlock;
		}
	}
	for (w = 0; w < FHOOK_GRAPH_WAYS && b->task[w]; w++)
		;
	if (w == FHOOK_GRAPH_WAYS)
		goto unlock;
	gs = g->free;
	if (gs) {
		g->free = gs->next_free;
		WRITE_ONCE(gs->own, fhook_gs_own(t, FHOOK_GS_ACTIVE));
	} else {
		if (!READ_ONCE(g->maybe_idle))
			goto unlock;
		WRITE_ONCE(g->maybe_idle, false);
		/*
		 * (C) pairs with (D): either the scan sees a stack that went
		 * idle or its task sees maybe_idle false and sets it again
		 */
		smp_mb();
		/* (active and ours already) */
		gs = fhook_gstack_steal(g);
		if (!gs)
			goto unlock;
		WRITE_ONCE(g->maybe_idle, true);	/* there may be more */
	}
	gs->depth = 0;
	gs->pending = -1;
	gs->way = w;
	WRITE_ONCE(b->stack[w], gs);
	/* pairs with the acquire in fhook_gstack_find(): stack set first */
	smp_store_release(&b->task[w], t);
unlock:
	raw_spin_unlock_irqrestore(&g->lock, flags);
	return gs;
}

/* Give @gs back (its task died); under the pool lock. */
static notrace void __fhook_gstack_put(struct fhook_gpool *g, struct fhook_gstack *gs)
{
	fhook_gstack_unlink(g, gs);
	WRITE_ONCE(gs->own, 0);
	gs->next_free = g->free;
	g->free = gs;
}

/* A task entering the graph: the session's filters and the predicate. */
static __always_inline bool fhook_graph_admit(struct fhook_probe *p,
					      struct fhook_probe_counters *c)
{
	if (fhook_session_wants(p->session) && (!p->pred || fhook_pred_run(p->pred, NULL, 0)))
		return true;
	fhook_count(&c->filtered);
	return false;
}

/* An entry record: of the call of @ip at @depth, which came at @ts */
static notrace void fhook_graph_rec_entry(struct fhook_graph_probe *gp, unsigned long ip,
					  unsigned int depth, struct pt_regs *args, u64 ts,
					  u8 ctx, u8 preempt, struct fhook_probe_counters *c)
{
	struct fhook_probe *p = &gp->f.p;
	struct fhook_rec_graph_ent *r;
	unsigned int size = sizeof(*r);
	struct fhook_ring *rb;

	if (args)
		size += FHOOK_GRAPH_NR_ARGS * sizeof(u64);
	/* hits count records tried: hits == written + lost, as for every probe */
	fhook_count(&c->hits);
	rb = p->session->rings[smp_processor_id()];
	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ctx(&r->hdr, FHOOK_REC_GRAPH_ENT, size, p->id, ts, ctx,
				   preempt);
		r->ip = ip;
		r->depth = depth;
		r->nr_args = 0;
		if (args) {
			r->nr_args = FHOOK_GRAPH_NR_ARGS;
			r->args[0] = args->di;
			r->args[1] = args->si;
			r->args[2] = args->dx;
			r->args[3] = args->cx;
			r->args[4] = args->r8;
			r->args[5] = args->r9;
		}
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/*
 * The entry held back on @gs (see fhook_rec_graph_ret), written now:
 * something else is about to be recorded on this CPU, or the task leaves
 * it.  With the CPU's busy flag set; @gp NULL: recording stopped.
 */
static notrace void fhook_graph_put_pending(struct fhook_graph_probe *gp, struct fhook_gstack *gs)
{
	int i = gs->pending;
	struct fhook_gframe *f;

	gs->pending = -1;
	__this_cpu_write(fhook_graph_pending, NULL);
	if (i < 0 || !gp)
		return;
	f = &gs->frames[i];
	fhook_graph_rec_entry(gp, f->func, i, NULL, f->calltime, f->ctx, f->preempt,
			      fhook_counters(gp->f.p.session, smp_processor_id(), gp->f.p.id));
}

/*
 * fhook_ring_reserve(): a record is about to be made on this CPU while an
 * entry of the task is held back; the entry goes first.  Not from an NMI
 * (it may have come in the middle of a push) nor from inside our own
 * handlers (they put it in order themselves).
 */
notrace void fhook_graph_flush(void)
{
	struct fhook_gstack *gs = __this_cpu_read(fhook_graph_pending);
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);

	if (!gs || !g || in_nmi() || __this_cpu_read(fhook_graph_busy))
		return;
	__this_cpu_write(fhook_graph_busy, 1);
	fhook_graph_put_pending(READ_ONCE(g->probe), gs);
	__this_cpu_write(fhook_graph_busy, 0);
}

enum fhook_graph_mode {
	FHOOK_GM_ENTER,		/* a graph function: may enter the graph */
	FHOOK_GM_NESTED,	/* traced only inside the graph */
	FHOOK_GM_NOTRACE,	/* inside the graph: hide it and its callees */
};

static __always_inline void fhook_graph_call(unsigned long ip, unsigned long parent_ip,
					     struct ftrace_regs *fregs,
					     enum fhook_graph_mode mode)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_graph_probe *gp;
	struct fhook_probe_counters *c;
	struct fhook_gstack *gs;
	struct fhook_gframe *f;
	struct pt_regs *regs;
	unsigned long *slot;
	unsigned int i;
	u64 ts;
	int bit;

	/* NMIs stay out: a frame pushed there could race the task's own push */
	if (unlikely(!g || in_nmi()))
		return;
	/*
	 * The common case first, without a lock or a flag: a call no task
	 * traces (a task outside the graph, or past the depth limit).  Only
	 * the task itself changes its stack and depth (interrupts on its
	 * CPU put the depth back before they return).
	 */
	gs = fhook_gstack_active(g);
	i = gs ? READ_ONCE(gs->depth) : 0;
	if (i ? i >= g->max_depth : mode != FHOOK_GM_ENTER)
		return;
	/*
	 * A dead task gives its stack back in fhook_graph_on_switch(), inside
	 * __schedule(): what it calls from then on (the tracepoint's iterator
	 * that calls us, with a second sched_switch probe) returns after that,
	 * so it gets no frame.  What it called before never returns.
	 */
	if (unlikely(READ_ONCE(current->__state) == TASK_DEAD))
		return;
	/* also disables preemption */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
	if (__this_cpu_read(fhook_graph_busy))
		goto out;
	__this_cpu_write(fhook_graph_busy, 1);
	gp = READ_ONCE(g->probe);
	if (unlikely(!gp))
		goto done;
	regs = fhook_fregs_partial(fregs);
	slot = (unsigned long *)kernel_stack_pointer(regs);
	/* again: an interrupt on this CPU may have come and gone meanwhile */
	gs = fhook_gstack_find(g, current);
	if (!gs || READ_ONCE(gs->own) != fhook_gs_own(current, FHOOK_GS_ACTIVE)) {
		/*
		 * Entering the graph: the task's idle stack if still its own
		 * (see fhook_gstack_active(): its depth may be another's now)
		 */
		if (mode != FHOOK_GM_ENTER || (g->no_irqs && in_hardirq()))
			goto done;
		c = fhook_counters(gp->f.p.session, smp_processor_id(), gp->f.p.id);
		if (!fhook_graph_admit(&gp->f.p, c))
			goto done;
		if (!gs || cmpxchg(&gs->own, fhook_gs_own(current, 0),
				   fhook_gs_own(current, FHOOK_GS_ACTIVE)) != fhook_gs_own(current, 0))
			gs = fhook_gstack_get(g);
		if (!gs) {
			fhook_count(&c->missed);
			goto done;
		}
	} else {
		i = gs->depth;
		/*
		 * The other ops' callback already pushed this call (see top):
		 * the same function at the same return address.  A tail call
		 * (jmp) has the same return address but another function: it
		 * gets its own frame, whose return address is the trampoline.
		 */
		if (i && ((gs->frames[i - 1].slot == slot && gs->frames[i - 1].func == ip) ||
			  (gs->frames[i - 1].flags & FHOOK_GF_NOTRACE)))
			goto done;
		if (i >= g->max_depth || (g->no_irqs && in_hardirq()))
			goto done;
		c = fhook_counters(gp->f.p.session, smp_processor_id(), gp->f.p.id);
	}

	i = gs->depth;
	/* reserve first: an interrupt's calls nest above this frame */
	WRITE_ONCE(gs->depth, i + 1);
	barrier();
	f = &gs->frames[i];
	f->slot = slot;
	f->func = ip;
	f->ret = READ_ONCE(*slot);
	if (mode == FHOOK_GM_NOTRACE) {
		f->flags = FHOOK_GF_NOTRACE;
	} else {
		f->flags = 0;
		ts = ktime_get_mono_fast_ns();
		f->calltime = ts;
		if (!g->threshold) {
			/* the caller is no leaf: its entry first */
			if (gs->pending >= 0)
				fhook_graph_put_pending(gp, gs);
			f->ctx = fhook_rec_ctx(pc, irqs_off);
			f->preempt = fhook_rec_preempt(pc);
			if (g->args) {
				fhook_graph_rec_entry(gp, ip, i, regs, ts, f->ctx, f->preempt, c);
			} else {
				/* held back: a leaf needs only its return record */
				gs->pending = i;
				__this_cpu_write(fhook_graph_pending, gs);
			}
		}
	}
	/* the frame is complete before any return can find it */
	barrier();
	WRITE_ONCE(*slot, (unsigned long)fhook_graph_return);
done:
	__this_cpu_write(fhook_graph_busy, 0);
out:
	ftrace_test_recursion_unlock(bit);
}

static notrace void fhook_graph_entry_cb(unsigned long ip, unsigned long parent_ip,
					 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	fhook_graph_call(ip, parent_ip, fregs, FHOOK_GM_ENTER);
}

static notrace void fhook_graph_all_cb(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	fhook_graph_call(ip, parent_ip, fregs, FHOOK_GM_NESTED);
}

static notrace void fhook_graph_notrace_cb(unsigned long ip, unsigned long parent_ip,
					   struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	fhook_graph_call(ip, parent_ip, fregs, FHOOK_GM_NOTRACE);
}

static notrace void fhook_graph_rec_ret(struct fhook_graph_probe *gp, struct fhook_gframe *f,
					unsigned int depth, unsigned long retval, u64 now,
					unsigned int pc, bool irqs_off, bool leaf)
{
	struct fhook_probe *p = &gp->f.p;
	struct fhook_rec_graph_ret *r;
	struct fhook_probe_counters *c;
	struct fhook_ring *rb;
	int cpu;

	cpu = smp_processor_id();
	c = fhook_counters(p->session, cpu, p->id);
	fhook_count(&c->hits);
	rb = p->session->rings[cpu];
	r = fhook_ring_reserve(rb, sizeof(*r), p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ts(&r->hdr, FHOOK_REC_GRAPH_RET, sizeof(*r), p->id, pc,
				  irqs_off, now);
		r->ip = f->func;
		r->calltime = f->calltime;
		r->retval = retval;
		r->depth = depth;
		r->ret_flags = leaf ? FHOOK_GRAPH_RET_LEAF : 0;
		r->entry_flags = leaf ? f->ctx : 0;
		r->entry_preempt = leaf ? f->preempt : 0;
		r->__pad = 0;
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/*
 * tramp.S: a function of the graph returned, with the stack pointer @sp
 * (just above its return address's slot) and %rax = @retval.  Returns
 * where it was to return to.
 */
asmlinkage notrace unsigned long fhook_graph_exit(unsigned long sp, unsigned long retval)
{
	unsigned long *slot = (unsigned long *)sp - 1;
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_graph_probe *gp;
	struct fhook_gstack *gs;
	struct fhook_gframe *f;
	unsigned long ret;
	int i = -1, busy;
	bool leaf = false;
	u64 now;

	/* the ring and the busy flag are this CPU's */
	preempt_disable_notrace();
	busy = __this_cpu_read(fhook_graph_busy);
	__this_cpu_write(fhook_graph_busy, 1);
	/* (the clocksource's read function may be traced: after the flag) */
	now = ktime_get_mono_fast_ns();
	gs = g ? fhook_gstack_find(g, current) : NULL;
	if (gs) {
		for (i = READ_ONCE(gs->depth) - 1; i >= 0; i--)
			if (gs->frames[i].slot == slot)
				break;
	}
	if (unlikely(i < 0))
		/* nowhere to go: fgraph's ftrace_return_to_handler() does the same */
		panic("fhook: return address of task %d at %p lost\n", current->pid, slot);
	f = &gs->frames[i];
	ret = f->ret;
	/*
	 * Its entry still held back: a leaf.  Held back above it (frames
	 * dropped, see top): that call is not drawn at all.  The pointer is
	 * this CPU's: a task that left the CPU had its entry written.
	 */
	if (gs->pending >= i) {
		leaf = gs->pending == i;
		gs->pending = -1;
		__this_cpu_write(fhook_graph_pending, NULL);
	}
	gp = READ_ONCE(g->probe);
	if (gp && !(f->flags & FHOOK_GF_NOTRACE) &&
	    (!g->threshold || now - f->calltime >= g->threshold))
		fhook_graph_rec_ret(gp, f, i, retval, now, pc, irqs_off, leaf);
	/* the frame (and any above it, see top) is done */
	WRITE_ONCE(gs->depth, i);
	/* out of the graph: the task keeps its stack for its next call */
	if (!i) {
		/* pairs with a thief's cmpxchg (fhook_gstack_steal()): depth 0 first */
		smp_store_release(&gs->own, fhook_gs_own(current, 0));
		smp_mb();	/* (D) pairs with (C) in fhook_gstack_get() */
		if (unlikely(!READ_ONCE(g->maybe_idle)))
			WRITE_ONCE(g->maybe_idle, true);
	}
	__this_cpu_write(fhook_graph_busy, busy);
	preempt_enable_notrace();
	return ret;
}

/*
 * TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next,
 * unsigned int prev_state): a dying task gives its stack back at its last
 * switch (frames it died inside never return; from TASK_DEAD on it pushes
 * none, see fhook_graph_call()).
 */
static notrace void fhook_graph_on_switch(void *data, bool preempt, struct task_struct *prev,
					  struct task_struct *next, unsigned int prev_state)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);
	struct fhook_gstack *gs;
	unsigned long flags;

	int busy;

	/* prev (current) leaves the CPU: its entry held back goes first */
	if (unlikely(__this_cpu_read(fhook_graph_pending)))
		fhook_graph_flush();
	if (!g || READ_ONCE(prev->__state) != TASK_DEAD)
		return;
	gs = fhook_gstack_find(g, prev);
	if (!gs)
		return;
	busy = __this_cpu_read(fhook_graph_busy);
	__this_cpu_write(fhook_graph_busy, 1);
	raw_spin_lock_irqsave(&g->lock, flags);
	/* (an idle stack may have been stolen meanwhile) */
	if (fhook_gs_task(gs) == prev)
		__fhook_gstack_put(g, gs);
	raw_spin_unlock_irqrestore(&g->lock, flags);
	__this_cpu_write(fhook_graph_busy, busy);
}

/*
 * Put back every pending return address that still holds the trampoline;
 * true when no frame is left that will return through it.
 */
static bool fhook_graph_restore(struct fhook_gpool *g)
{
	unsigned long tramp = (unsigned long)fhook_graph_return;
	bool done = true;
	unsigned long flags;
	unsigned int s;
	int i;

	raw_spin_lock_irqsave(&g->lock, flags);
	for (s = 0; s < g->nr; s++) {
		struct fhook_gstack *gs = &g->stacks[s];

		if (!READ_ONCE(gs->own))
			continue;
		for (i = READ_ONCE(gs->depth) - 1; i >= 0; i--) {
			struct fhook_gframe *f = &gs->frames[i];

			if (f->flags & FHOOK_GF_RESTORED)
				continue;
			/*
			 * A frame returning right now may be restored after its
			 * return: the word is then below the stack pointer,
			 * about to be overwritten by the trampoline's own saves.
			 */
			if (cmpxchg(f->slot, tramp, f->ret) == tramp)
				f->flags |= FHOOK_GF_RESTORED;
			else
				done = false;
		}
	}
	raw_spin_unlock_irqrestore(&g->lock, flags);
	return done;
}

static void fhook_gpool_free(struct fhook_gpool *g)
{
	/* returns still on the trampoline's code, preempted there or not */
	synchronize_rcu_tasks_rude();
	synchronize_rcu_tasks();
	/* the switch probe goes with the pool, under the lock an arm takes */
	mutex_lock(&fhook_graph_lock);
	WRITE_ONCE(fhook_gpool, NULL);
	if (fhook_switch_registered) {
		tracepoint_probe_unregister(fhook_tp_switch, (void *)fhook_graph_on_switch, NULL);
		fhook_switch_registered = false;
		tracepoint_synchronize_unregister();
	}
	mutex_unlock(&fhook_graph_lock);
	vfree(g->stacks);
	kvfree(g);
}

/*
 * The pool left when calls were still inside at disarm (fhook_gpool),
 * freed once they have returned.  It holds a module reference meanwhile;
 * module exit waits for the work's last run to leave this function.
 */
static void fhook_gpool_drain(struct work_struct *work);
static DECLARE_DELAYED_WORK(fhook_gpool_drain_work, fhook_gpool_drain);

static void fhook_gpool_drain(struct work_struct *work)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);

	if (!fhook_graph_restore(g)) {
		queue_delayed_work(system_long_wq, &fhook_gpool_drain_work, HZ / 10);
		return;
	}
	pr_info("graph: the last traced call has returned\n");
	fhook_gpool_free(g);
	module_put(THIS_MODULE);
}

static struct fhook_gpool *fhook_gpool_create(const struct fhook_graph *cfg)
{
	unsigned int i, nr = cfg->max_tasks ?: FHOOK_GRAPH_DEF_TASKS;
	struct fhook_gpool *g;

	g = kvzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return NULL;
	g->stacks = __vmalloc(array_size(nr, sizeof(*g->stacks)), GFP_KERNEL_ACCOUNT);
	if (!g->stacks) {
		kvfree(g);
		return NULL;
	}
	raw_spin_lock_init(&g->lock);
	g->nr = nr;
	for (i = 0; i < nr; i++) {
		g->stacks[i].own = 0;
		g->stacks[i].next_free = i + 1 < nr ? &g->stacks[i + 1] : NULL;
	}
	g->free = &g->stacks[0];
	g->maybe_idle = true;
	g->max_depth = cfg->max_depth ?: FHOOK_GRAPH_MAX_DEPTH;
	g->threshold = cfg->threshold_ns;
	g->no_irqs = cfg->flags & FHOOK_GRAPH_F_NO_IRQS;
	g->args = cfg->flags & FHOOK_GRAPH_F_ARGS;
	return g;
}

static int fhook_graph_copy(struct fhook_graph *cfg, u64 uptr)
{
	int ret;

	if (!uptr)
		return -EINVAL;
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), sizeof(*cfg), uptr);
	if (ret < 0)
		return ret;
	if ((cfg->flags & ~FHOOK_GRAPH_FLAGS) || cfg->max_depth > FHOOK_GRAPH_MAX_DEPTH ||
	    cfg->max_tasks > FHOOK_GRAPH_MAX_TASKS || cfg->reserved[0] || cfg->reserved[1] ||
	    cfg->reserved[2])
		return -EINVAL;
	return 0;
}

/* The patterns of the user's text at @uptr (@len bytes, 0: none) to @set. */
static int fhook_graph_patterns(struct fhook_probe *p, struct ftrace_ops *ops, u64 uptr,
				u32 len,
				int (*set)(struct ftrace_ops *ops, unsigned char *buf, int len,
					   int reset),
				s32 *index, s32 *err_index)
{
	char *text = fhook_copy_text(uptr, len);
	int ret;

	if (IS_ERR(text))
		return PTR_ERR(text);
	ret = text ? fhook_func_set_patterns(p, ops, text, set, index, err_index) : 0;
	kfree(text);
	return ret;
}

static int fhook_graph_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			    s32 *err_index)
{
	struct fhook_graph_probe *gp = to_graph(p);
	struct fhook_probe_add entry = *arg;
	char own[] = "fhook_*";
	s32 index = 0, first;
	int ret;

	ret = fhook_graph_copy(&gp->cfg, arg->hook);
	if (ret)
		return ret;
	gp->f.ops.func = fhook_graph_entry_cb;
	gp->all_ops.func = fhook_graph_all_cb;
	gp->notrace_ops.func = fhook_graph_notrace_cb;
	/* the entry ops: the graph functions (exclude is set_graph_notrace here) */
	entry.exclude = 0;
	entry.exclude_len = 0;
	entry.hook = 0;
	ret = fhook_func_filter_init(&gp->f, &entry, err_index, NULL);
	if (ret)
		return ret;
	/*
	 * "all": every other function.  Not the graph functions given by
	 * pattern (one ops per function keeps the call on that ops' own
	 * trampoline, not ftrace's list function), not set_graph_notrace,
	 * not fhook's own functions.  (ftrace writes into what it parses.)
	 */
	ret = ftrace_set_notrace(&gp->all_ops, own, sizeof(own) - 1, 0);
	if (ret)
		return ret;
	/* (patterns entry took: they match; index counts them for err_index) */
	ret = fhook_graph_patterns(p, &gp->all_ops, arg->filter, arg->filter_len,
				   ftrace_set_notrace, &index, err_index);
	if (ret || !arg->exclude_len)
		return ret;
	/* set_graph_notrace: err_index after the filter's patterns and ips */
	index += arg->nr_ips;
	first = index;
	ret = fhook_graph_patterns(p, &gp->notrace_ops, arg->exclude, arg->exclude_len,
				   ftrace_set_filter, &index, err_index);
	if (ret)
		return ret;
	index = first;
	ret = fhook_graph_patterns(p, &gp->all_ops, arg->exclude, arg->exclude_len,
				   ftrace_set_notrace, &index, err_index);
	gp->has_notrace = !ret;
	return ret;
}

static void fhook_graph_unregister(struct fhook_graph_probe *gp)
{
	fhook_ops_unregister(&gp->f.p, &gp->f.ops);
	if (gp->all_registered && !unregister_ftrace_function(&gp->all_ops))
		gp->all_registered = false;
	if (gp->notrace_registered && !unregister_ftrace_function(&gp->notrace_ops))
		gp->notrace_registered = false;
	/*
	 * an ops ftrace kept still calls into the probe: the session keeps
	 * it all (fhook_session_stuck() looks at p->registered)
	 */
	if (gp->all_registered || gp->notrace_registered)
		gp->f.p.registered = true;
}

static void fhook_graph_disarm(struct fhook_probe *p)
{
	struct fhook_graph_probe *gp = to_graph(p);
	struct fhook_gpool *g;
	int cpu;

	mutex_lock(&fhook_graph_lock);
	g = fhook_gpool;
	if (!g || READ_ONCE(g->probe) != gp) {
		mutex_unlock(&fhook_graph_lock);
		return;
	}
	mutex_unlock(&fhook_graph_lock);
	/* no new frames; then no handler writes to the session's rings */
	fhook_graph_unregister(gp);
	WRITE_ONCE(g->probe, NULL);
	/* entries held back are never written now; flushes finish in the grace period */
	for_each_possible_cpu(cpu)
		per_cpu(fhook_graph_pending, cpu) = NULL;
	/*
	 * handlers with preemption off, and returns through the trampoline
	 * where RCU is not watching (idle entry and exit), as the other
	 * trampolines wait for them (around.c)
	 */
	synchronize_rcu();
	synchronize_rcu_tasks_rude();
	if (p->registered || gp->all_registered || gp->notrace_registered) {
		/* ftrace refused: its callbacks may still run, keep everything */
		pr_err("graph: ops still registered, the call graph stays\n");
		__module_get(THIS_MODULE);
		return;
	}
	if (fhook_graph_restore(g)) {
		fhook_gpool_free(g);
		return;
	}
	pr_info("graph: calls still inside hold the trampoline, freed when they return\n");
	__module_get(THIS_MODULE);
	queue_delayed_work(system_long_wq, &fhook_gpool_drain_work, HZ / 10);
}

static int fhook_graph_arm(struct fhook_probe *p)
{
	struct fhook_graph_probe *gp = to_graph(p);
	struct fhook_gpool *g;
	int ret;

	if (!fhook_tp_switch)
		return -EOPNOTSUPP;
	g = fhook_gpool_create(&gp->cfg);
	if (!g)
		return -ENOMEM;
	mutex_lock(&fhook_graph_lock);
	/* another call graph, armed or still draining */
	ret = -EBUSY;
	if (fhook_gpool)
		goto err_pool;
	/* (under the lock: a pool being freed unregisters it under it too) */
	if (!fhook_switch_registered) {
		ret = tracepoint_probe_register(fhook_tp_switch, (void *)fhook_graph_on_switch,
						NULL);
		if (ret)
			goto err_pool;
		fhook_switch_registered = true;
	}
	g->probe = gp;
	WRITE_ONCE(fhook_gpool, g);
	mutex_unlock(&fhook_graph_lock);
	/*
	 * Callees first: a task entering the graph sees them at once.  At
	 * depth 1 no callee is ever traced: the graph functions' own ops is
	 * all it takes (the function_graph tracer hooks every function
	 * whatever max_graph_depth says, and pays for it on every call).
	 */
	if (g->max_depth > 1) {
		ret = register_ftrace_function(&gp->all_ops);
		if (ret)
			goto err_ops;
		gp->all_registered = true;
	}
	if (gp->has_notrace && g->max_depth > 1) {
		ret = register_ftrace_function(&gp->notrace_ops);
		if (ret)
			goto err_ops;
		gp->notrace_registered = true;
	}
	ret = register_ftrace_function(&gp->f.ops);
	if (ret)
		goto err_ops;
	p->registered = true;
	return 0;

err_ops:
	/* frames may have been pushed by the ops registered so far */
	fhook_graph_disarm(p);
	return ret;
err_pool:
	mutex_unlock(&fhook_graph_lock);
	vfree(g->stacks);
	kvfree(g);
	return ret;
}

static void fhook_graph_release(struct fhook_probe *p)
{
	struct fhook_graph_probe *gp = to_graph(p);

	ftrace_free_filter(&gp->f.ops);
	ftrace_free_filter(&gp->all_ops);
	ftrace_free_filter(&gp->notrace_ops);
	kfree(p->pred);
}

static void fhook_graph_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		fhook_tp_switch = tp;
}

int fhook_graph_setup(void)
{
	for_each_kernel_tracepoint(fhook_graph_find_tp, NULL);
	if (!fhook_tp_switch)
		pr_warn("sched_switch tracepoint not found: no call graphs\n");
	return 0;
}

/*
 * Module exit: a draining pool holds a module reference, so none is left;
 * the drain's last run may still be returning from module_put().
 */
void fhook_graph_teardown(void)
{
	cancel_delayed_work_sync(&fhook_gpool_drain_work);
	WARN_ON_ONCE(READ_ONCE(fhook_gpool));
}

const struct fhook_probe_kind fhook_graph_kind = {
	.size		= sizeof(struct fhook_graph_probe),
	.fields		= FHOOK_ADD_PATTERNS | FHOOK_ADD_PRED | FHOOK_ADD_HOOK,
	.arm		= fhook_graph_arm,
	.init		= fhook_graph_init,
	.disarm		= fhook_graph_disarm,
	.release	= fhook_graph_release,
	.disarm_unregisters = true,
};
