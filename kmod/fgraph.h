/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The return-trampoline mechanism (fgraph.c), as kernel/trace/fgraph.c is
 * to the function_graph tracer: per-task shadow stacks, the push at a
 * function's entry that puts fhook_graph_return (tramp.S) in place of its
 * return address, the pop when it returns there, and the teardown that
 * puts every pending return address back.  Its user (one at a time: a
 * call graph, probe_graph.c, recording calls or keeping failing chains,
 * graph_errors.c) registers the ftrace_ops whose
 * callbacks call fhook_fgraph_call(), and gets its callbacks (struct
 * fhook_fgraph_ops) with each frame as it is pushed and as it returns.
 */
#ifndef FHOOK_FGRAPH_H
#define FHOOK_FGRAPH_H

#include "fhook.h"
#include "tramp.h"

#include <linux/hash.h>

/* fhook_gframe.flags */
#define FHOOK_GF_NOTRACE	BIT(0)	/* pushed silently: no callbacks, no callees */
#define FHOOK_GF_RESTORED	BIT(1)	/* teardown put the return address back */

/* One call on a shadow stack. */
struct fhook_gframe {
	/*
	 * The call's identity: where its return address was at its entry
	 * (fhook_arch_frame_key(): x86's stack slot, arm64's stack pointer:
	 * its return address is in a register there)
	 */
	unsigned long *slot;
#ifdef FHOOK_ARCH_GRAPH_FP
	/*
	 * the caller's frame pointer at its entry, which the function's
	 * frame record links to: what a frame-record walk finds it by
	 */
	unsigned long fp;
#endif
	unsigned long ret;		/* its return address */
	unsigned long func;
	unsigned long flags;
	/* the user's per-call data, set by its entry callback */
	u64 calltime;
	u32 data;
};

/* What an unwinder finds @f by: fhook_fgraph_ret_addr() */
static inline unsigned long fhook_gframe_unwind_key(const struct fhook_gframe *f)
{
#ifdef FHOOK_ARCH_GRAPH_FP
	return f->fp;
#else
	return (unsigned long)f->slot;
#endif
}

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
	/* the user's: a frame it holds something back for, or -1 (set at entry) */
	int pending;
	struct fhook_gstack *next_free;
	struct fhook_gframe frames[FHOOK_GRAPH_MAX_DEPTH];
};

/*
 * What the user is told.  @user is what it gave fhook_fgraph_start(), NULL
 * once it detached.  All run on the task's CPU with preemption off and
 * the CPU's busy flag set (fhook_fgraph_busy: what they call is not
 * traced), never in NMI.
 */
struct fhook_fgraph_ops {
	/* current, outside the graph, enters it at @ip: may it? */
	bool (*admit)(void *user);
	/* current entered, but no shadow stack was left for it */
	void (*missed)(void *user);
	/*
	 * @f pushed at @depth of @gs (slot, ret, func set): its per-call data
	 * (calltime, data) is the callback's to set.  @pc and @irqs_off are
	 * the context of the call, @regs its registers at entry.
	 */
	void (*entry)(void *user, struct fhook_gstack *gs, struct fhook_gframe *f,
		      unsigned int depth, struct pt_regs *regs, unsigned int pc, bool irqs_off);
	/*
	 * @f (at @depth, frames above it dropped) returned @retval at @now;
	 * also with @user NULL (detached) and for FHOOK_GF_NOTRACE frames
	 */
	void (*ret)(void *user, struct fhook_gstack *gs, struct fhook_gframe *f,
		    unsigned int depth, unsigned long retval, u64 now, unsigned int pc,
		    bool irqs_off);
	/*
	 * Write what is held back for @gs (this CPU's fhook_fgraph_pending):
	 * something else is about to be recorded on this CPU, or the task
	 * leaves it (fhook_fgraph_flush())
	 */
	void (*flush)(void *user, struct fhook_gstack *gs);
};

struct fhook_fgraph_cfg {
	unsigned int nr_stacks;		/* tasks inside at once */
	unsigned int max_depth;		/* frames per task */
	bool no_irqs;			/* calls in hardirq context get no frame */
};

/* How fhook_fgraph_call() treats the call */
enum fhook_fgraph_mode {
	FHOOK_FG_ENTER,		/* a graph function: may enter the graph */
	FHOOK_FG_NESTED,	/* a frame only inside the graph */
	FHOOK_FG_NOTRACE,	/* inside the graph: a silent frame, no callees */
};

/*
 * Set while this CPU runs the mechanism or its user's callbacks: the
 * kernel functions they call are traced by the user's ops, and ftrace's
 * recursion lock lets one nested call through.
 */
DECLARE_PER_CPU(int, fhook_fgraph_busy);

int fhook_fgraph_start(const struct fhook_fgraph_ops *ops, void *user,
		       const struct fhook_fgraph_cfg *cfg);
bool fhook_fgraph_is_user(void *user);
void fhook_fgraph_detach(void);
/*
 * The pool's memory is @pages of fhook's budget, charged to @charged
 * (fhook_mem_reserve()): true when the pool outlives the stop (calls
 * inside, or @stuck) and has taken that charge, given back when it is
 * freed.
 */
bool fhook_fgraph_stop(bool stuck, struct fhook_user *charged, u64 pages);


/*
 * The hot paths, inline in the user's file: its callbacks (a constant
 * struct fhook_fgraph_ops) become direct calls, or inline code where the
 * user marks them __always_inline (the call graph does: each call pays
 * no more than before the split), as the kernel's fgraph makes them
 * static calls for its one user.  Below: what they share with
 * fgraph.c.
 */
#define FHOOK_GRAPH_BUCKET_BITS	10
#define FHOOK_GRAPH_WAYS	4

struct fhook_gbucket {
	struct task_struct *task[FHOOK_GRAPH_WAYS];
	struct fhook_gstack *stack[FHOOK_GRAPH_WAYS];
};

/* The shadow stacks of the one user; outlives its use while draining. */
struct fhook_gpool {
	raw_spinlock_t lock;
	struct fhook_gstack *free;
	struct fhook_gstack *stacks;	/* [nr] */
	unsigned int nr;
	unsigned int max_depth;
	bool no_irqs;
	/*
	 * false: the last steal found no idle stack, and no task has left
	 * the graph since (a task entering then counts itself missed at
	 * once, without scanning the pool under its lock)
	 */
	bool maybe_idle;
	const struct fhook_fgraph_ops *ops;
	/* what the callbacks get; NULL once detached */
	void *user;
	/* a pool left after its stop: the budget its memory is charged to */
	struct fhook_user *charged;
	u64 charged_pages;
	struct fhook_gbucket buckets[1 << FHOOK_GRAPH_BUCKET_BITS];
};

static_assert(__alignof__(struct task_struct) > FHOOK_GS_ACTIVE);

static __always_inline unsigned long fhook_gs_own(struct task_struct *t, unsigned long active)
{
	return (unsigned long)t | active;
}

static __always_inline struct task_struct *fhook_gs_task(struct fhook_gstack *gs)
{
	return (struct task_struct *)(READ_ONCE(gs->own) & ~FHOOK_GS_ACTIVE);
}

/* the pool in use or draining (NULL: none); fgraph.c */
extern struct fhook_gpool *fhook_gpool;
struct fhook_gstack *fhook_gstack_get(struct fhook_gpool *g);

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

/*
 * From the user's ftrace_ops callbacks: the call of @ip (its registers
 * @fregs, return address in fhook_arch_return_slot()), treated as @mode says;
 * @ops: the user's callbacks, a constant the compiler calls directly.
 */
static __always_inline void fhook_fgraph_call(const struct fhook_fgraph_ops *ops, unsigned long ip,
					      unsigned long parent_ip, struct ftrace_regs *fregs,
					      enum fhook_fgraph_mode mode)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_gstack *gs;
	struct pt_regs *regs, regs_copy;
	struct fhook_gframe *f;
	unsigned long *slot;
	unsigned int i;
	void *user;
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
	if (i ? i >= g->max_depth : mode != FHOOK_FG_ENTER)
		return;
	/*
	 * A dead task gives its stack back in fhook_fgraph_on_switch(), inside
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
	if (__this_cpu_read(fhook_fgraph_busy))
		goto out;
	__this_cpu_write(fhook_fgraph_busy, 1);
	user = READ_ONCE(g->user);
	if (unlikely(!user))
		goto done;
	regs = fhook_fregs_partial(fregs, &regs_copy);
	slot = fhook_arch_frame_key(fregs);
	/* again: an interrupt on this CPU may have come and gone meanwhile */
	gs = fhook_gstack_find(g, current);
	if (!gs || READ_ONCE(gs->own) != fhook_gs_own(current, FHOOK_GS_ACTIVE)) {
		/*
		 * Entering the graph: the task's idle stack if still its own
		 * (see fhook_gstack_active(): its depth may be another's now)
		 */
		if (mode != FHOOK_FG_ENTER || (g->no_irqs && in_hardirq()) || !ops->admit(user))
			goto done;
		if (!gs || cmpxchg(&gs->own, fhook_gs_own(current, 0),
				   fhook_gs_own(current, FHOOK_GS_ACTIVE)) != fhook_gs_own(current, 0))
			gs = fhook_gstack_get(g);
		if (!gs) {
			ops->missed(user);
			goto done;
		}
	} else {
		i = gs->depth;
		/*
		 * Another ops' callback already pushed this call (see top):
		 * the same function at the same return address.  A tail call
		 * (jmp) has the same return address but another function: it
		 * gets its own frame, whose return address is the trampoline.
		 */
		if (i && ((gs->frames[i - 1].slot == slot && gs->frames[i - 1].func == ip) ||
			  (gs->frames[i - 1].flags & FHOOK_GF_NOTRACE)))
			goto done;
		if (i >= g->max_depth || (g->no_irqs && in_hardirq()))
			goto done;
	}

	i = gs->depth;
	/* reserve first: an interrupt's calls nest above this frame */
	WRITE_ONCE(gs->depth, i + 1);
	barrier();
	f = &gs->frames[i];
	f->slot = slot;
#ifdef FHOOK_ARCH_GRAPH_FP
	f->fp = fhook_arch_caller_fp(fregs);
#endif
	f->func = ip;
	f->ret = READ_ONCE(*fhook_arch_return_slot(fregs));
	if (mode == FHOOK_FG_NOTRACE) {
		f->flags = FHOOK_GF_NOTRACE;
	} else {
		f->flags = 0;
		ops->entry(user, gs, f, i, regs, pc, irqs_off);
	}
	/* the frame is complete before any return can find it */
	barrier();
	WRITE_ONCE(*fhook_arch_return_slot(fregs), (unsigned long)fhook_graph_return);
done:
	__this_cpu_write(fhook_fgraph_busy, 0);
out:
	ftrace_test_recursion_unlock(bit);
}

/*
 * The user's fhook_graph_exit() (tramp.S: a function of the graph returned,
 * with the stack pointer @sp, just above its return address's slot, and
 * %rax = @retval): the frame popped, @ops->ret told.  Returns where the
 * function was to return to.
 */
static __always_inline unsigned long fhook_fgraph_exit(const struct fhook_fgraph_ops *ops,
						       unsigned long sp, unsigned long retval)
{
	unsigned long *slot = fhook_arch_exit_key(sp);
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_gstack *gs;
	unsigned long ret;
	int i = -1, busy;
	u64 now;

	/* the user's records go to this CPU's ring; the busy flag is this CPU's */
	preempt_disable_notrace();
	busy = __this_cpu_read(fhook_fgraph_busy);
	__this_cpu_write(fhook_fgraph_busy, 1);
	/* (the clocksource's read function may be traced: after the flag) */
	now = fhook_clock();
	gs = g ? fhook_gstack_find(g, current) : NULL;
	if (gs) {
		for (i = READ_ONCE(gs->depth) - 1; i >= 0; i--)
			if (gs->frames[i].slot == slot)
				break;
	}
	if (unlikely(i < 0))
		/* nowhere to go: fgraph's ftrace_return_to_handler() does the same */
		panic("fhook: return address of task %d at %p lost\n", current->pid, slot);
	ret = gs->frames[i].ret;
	ops->ret(READ_ONCE(g->user), gs, &gs->frames[i], i, retval, now, pc, irqs_off);
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
	__this_cpu_write(fhook_fgraph_busy, busy);
	preempt_enable_notrace();
	return ret;
}

#endif
