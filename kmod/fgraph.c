// SPDX-License-Identifier: GPL-2.0
/*
 * The return-trampoline mechanism (fgraph.h): what kernel/trace/fgraph.c
 * is to the function_graph tracer.  Debian's 6.1 exports neither fgraph
 * nor rethook nor fprobe to modules, so the return is caught as fgraph
 * catches it, with our own return trampoline: at a function's entry the
 * push saves the return address (the word at the stack pointer of the
 * fentry call) on the task's shadow stack and puts fhook_graph_return
 * (tramp.S) in its place; the function returns there, fhook_graph_exit()
 * pops the shadow stack and says where to go on.  The same code runs on
 * 6.12, where fprobe (rethook) would be available: one mechanism to test,
 * and cheaper than a rethook node per call.
 *
 * The user's ftrace_ops callbacks call fhook_fgraph_call() with how to
 * treat the call (enum fhook_fgraph_mode): a function that enters the
 * graph, one traced only inside it, one whose callees are hidden.  The
 * same call may come twice (a function in two of the user's ops: both
 * callbacks run); the second sees the frame the first pushed for the same
 * function and return address and leaves it.  Tail calls push a frame on
 * the same return address; its saved return address is the trampoline,
 * so the return pops both, inner first.
 *
 * Shadow stacks: a pool allocated at start, one stack per task that
 * entered the graph, taken at its first entry and kept (idle) between its
 * calls, given back at the task's last context switch; when none is free,
 * an idle one is taken from its task.  Who owns a stack and whether it is
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
 * Ordering on a stack: a push reserves its frame (depth + 1) before
 * filling it, so an interrupt's calls nest above it, as fgraph's
 * curr_ret_stack does; the return address is replaced last.  A return
 * finds its frame by the stack pointer it returned with, from the top;
 * frames above it (a non-local exit, or frames the teardown restored)
 * are dropped.
 *
 * Teardown: the user's ops go (no new frame) and it detaches (its
 * callbacks get a NULL user from then on), then fhook_fgraph_stop() waits
 * for the callbacks in flight and puts every pending frame's return
 * address back with a cmpxchg from the trampoline's address: a task
 * returns straight to its caller from then on.  A frame whose slot no
 * longer holds our address was taken over by another return hook (fgraph,
 * a kretprobe) after ours and still comes back through the trampoline:
 * the pool then stays (and the module with it) until those have returned,
 * checked by a work item.
 */
#include "fgraph.h"
#include "tramp.h"

#include <linux/hash.h>
#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

/*
 * The pool in use or draining (NULL: none).  Its trampoline and stacks
 * are reached by returns until it is freed.
 */
struct fhook_gpool *fhook_gpool;
static DEFINE_MUTEX(fhook_gpool_lock);		/* fhook_gpool changes */
DEFINE_PER_CPU(int, fhook_fgraph_busy);
DEFINE_PER_CPU(struct fhook_gstack *, fhook_fgraph_pending);
static struct tracepoint *fhook_tp_switch;
static bool fhook_switch_registered;

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
notrace struct fhook_gstack *fhook_gstack_get(struct fhook_gpool *g)
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

/*
 * fhook_ring_reserve(): a record is about to be made on this CPU while
 * the user holds one back for the task here; that one goes first.  Not
 * from an NMI (it may have come in the middle of a push) nor from inside
 * our own handlers (they put it in order themselves).
 */
notrace void fhook_fgraph_flush(void)
{
	struct fhook_gstack *gs = __this_cpu_read(fhook_fgraph_pending);
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);

	if (!gs || !g || in_nmi() || __this_cpu_read(fhook_fgraph_busy))
		return;
	__this_cpu_write(fhook_fgraph_busy, 1);
	g->ops->flush(READ_ONCE(g->user), gs);
	__this_cpu_write(fhook_fgraph_busy, 0);
}

/*
 * TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next,
 * unsigned int prev_state): what the user holds back for prev (current)
 * is written as it leaves the CPU; a dying task gives its stack back at its last switch (frames it
 * died inside never return; from TASK_DEAD on it pushes none, see
 * fhook_fgraph_call()).
 */
static notrace void fhook_fgraph_on_switch(void *data, bool preempt, struct task_struct *prev,
					   struct task_struct *next, unsigned int prev_state)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);
	struct fhook_gstack *gs;
	unsigned long flags;
	int busy;

	/* prev (current) leaves the CPU: what is held back for it goes first */
	if (unlikely(__this_cpu_read(fhook_fgraph_pending)))
		fhook_fgraph_flush();
	if (!g || READ_ONCE(prev->__state) != TASK_DEAD)
		return;
	gs = fhook_gstack_find(g, prev);
	if (!gs)
		return;
	busy = __this_cpu_read(fhook_fgraph_busy);
	__this_cpu_write(fhook_fgraph_busy, 1);
	raw_spin_lock_irqsave(&g->lock, flags);
	/* (an idle stack may have been stolen meanwhile) */
	if (fhook_gs_task(gs) == prev)
		__fhook_gstack_put(g, gs);
	raw_spin_unlock_irqrestore(&g->lock, flags);
	__this_cpu_write(fhook_fgraph_busy, busy);
}

/*
 * Put back every pending return address that still holds the trampoline;
 * true when no frame is left that will return through it.
 */
static bool fhook_fgraph_restore(struct fhook_gpool *g)
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
			/* (a return address in a register: it comes back through us) */
			if (!FHOOK_ARCH_RETURN_ON_STACK) {
				done = false;
				continue;
			}
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
	/* the switch probe goes with the pool, under the lock a start takes */
	mutex_lock(&fhook_gpool_lock);
	WRITE_ONCE(fhook_gpool, NULL);
	if (fhook_switch_registered) {
		tracepoint_probe_unregister(fhook_tp_switch, (void *)fhook_fgraph_on_switch, NULL);
		fhook_switch_registered = false;
		tracepoint_synchronize_unregister();
	}
	mutex_unlock(&fhook_gpool_lock);
	/* readers with preemption off: fhook_fgraph_ret_addr() (an exit's walk) */
	synchronize_rcu();
	vfree(g->stacks);
	fhook_mem_unreserve(g->charged, g->charged_pages);
	kvfree(g);
}

/* Name the tasks (a few) whose calls keep @g after its stop, once */
static void fhook_gpool_name_pending(struct fhook_gpool *g)
{
	char who[4][TASK_COMM_LEN + 12] = { "", "", "", "" };
	unsigned int s, n = 0, more = 0;
	unsigned long flags;

	/* (a task gives its stack back under the lock as it dies) */
	raw_spin_lock_irqsave(&g->lock, flags);
	for (s = 0; s < g->nr; s++) {
		struct task_struct *t = fhook_gs_task(&g->stacks[s]);

		if (!t || !READ_ONCE(g->stacks[s].depth))
			continue;
		if (n < ARRAY_SIZE(who))
			snprintf(who[n++], sizeof(who[0]), " %s[%d]", t->comm, task_pid_nr(t));
		else
			more++;
	}
	raw_spin_unlock_irqrestore(&g->lock, flags);
	pr_info("graph: calls still inside hold the trampoline, freed when they return:%s%s%s%s (and %u more)\n",
		who[0], who[1], who[2], who[3], more);
}

/*
 * The pool left when calls were still inside at stop (fhook_gpool),
 * freed once they have returned.  It holds a module reference meanwhile;
 * module exit waits for the work's last run to leave this function.
 */
static void fhook_gpool_drain(struct work_struct *work);
static DECLARE_DELAYED_WORK(fhook_gpool_drain_work, fhook_gpool_drain);

static void fhook_gpool_drain(struct work_struct *work)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);

	if (!fhook_fgraph_restore(g)) {
		queue_delayed_work(system_long_wq, &fhook_gpool_drain_work, HZ / 10);
		return;
	}
	fhook_gpool_free(g);
	/* (once freed: another call graph may start now) */
	pr_info("graph: the last traced call has returned\n");
	module_put(THIS_MODULE);
}

static struct fhook_gpool *fhook_gpool_create(const struct fhook_fgraph_cfg *cfg)
{
	unsigned int i, nr = cfg->nr_stacks;
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
	g->max_depth = cfg->max_depth;
	g->no_irqs = cfg->no_irqs;
	return g;
}

/*
 * A pool of shadow stacks for @user, whose callbacks are @ops; EBUSY
 * while another is in use or draining.  The user's ops come after this.
 */
int fhook_fgraph_start(const struct fhook_fgraph_ops *ops, void *user,
		       const struct fhook_fgraph_cfg *cfg)
{
	struct fhook_gpool *g;
	int ret;

	if (!fhook_tp_switch)
		return -EOPNOTSUPP;
	if (!cfg->nr_stacks || !cfg->max_depth || cfg->max_depth > FHOOK_GRAPH_MAX_DEPTH)
		return -EINVAL;
	g = fhook_gpool_create(cfg);
	if (!g)
		return -ENOMEM;
	g->ops = ops;
	g->user = user;
	mutex_lock(&fhook_gpool_lock);
	ret = -EBUSY;
	if (fhook_gpool)
		goto err_pool;
	/* (under the lock: a pool being freed unregisters it under it too) */
	if (!fhook_switch_registered) {
		ret = tracepoint_probe_register(fhook_tp_switch, (void *)fhook_fgraph_on_switch,
						NULL);
		if (ret)
			goto err_pool;
		fhook_switch_registered = true;
	}
	WRITE_ONCE(fhook_gpool, g);
	mutex_unlock(&fhook_gpool_lock);
	return 0;

err_pool:
	mutex_unlock(&fhook_gpool_lock);
	vfree(g->stacks);
	kvfree(g);
	return ret;
}

/* Is the pool in use @user's (not detached)? */
bool fhook_fgraph_is_user(void *user)
{
	bool mine;

	mutex_lock(&fhook_gpool_lock);
	mine = fhook_gpool && READ_ONCE(fhook_gpool->user) == user;
	mutex_unlock(&fhook_gpool_lock);
	return mine;
}

/*
 * After the user's ops are gone: its callbacks get a NULL user from now
 * on (those running finish in fhook_fgraph_stop()'s grace periods).
 */
void fhook_fgraph_detach(void)
{
	int cpu;

	WRITE_ONCE(fhook_gpool->user, NULL);
	/* what is held back is never written now; flushes finish in the grace period */
	for_each_possible_cpu(cpu)
		per_cpu(fhook_fgraph_pending, cpu) = NULL;
}

/*
 * What a call graph put fhook_graph_return in place of, for the call an
 * unwinder of current's stack found by @key (arch/<cpu>/stack.c: x86's
 * return-address slot, arm64's frame pointer the record links to), or 0.
 * Only current pushes and pops its stack.  A function that tail-calls
 * another traced one shares its key: the callee's frame saved
 * fhook_graph_return itself, the caller's below it what was there first.
 */
notrace unsigned long fhook_fgraph_ret_addr(unsigned long key)
{
	struct fhook_gstack *gs;
	struct fhook_gpool *g;
	unsigned long ret = 0;
	int i;

	preempt_disable_notrace();	/* (the pool is freed after an RCU grace period) */
	g = READ_ONCE(fhook_gpool);
	gs = g ? fhook_gstack_active(g) : NULL;
	for (i = gs ? min_t(int, READ_ONCE(gs->depth), FHOOK_GRAPH_MAX_DEPTH) - 1 : -1; i >= 0; i--) {
		if (fhook_gframe_unwind_key(&gs->frames[i]) == key &&
		    gs->frames[i].ret != (unsigned long)fhook_graph_return) {
			ret = gs->frames[i].ret;
			break;
		}
	}
	preempt_enable_notrace();
	return ret;
}

/*
 * After fhook_fgraph_detach(): put the return addresses back and free the
 * pool, now or once the last call inside has returned.  @stuck: ftrace
 * kept one of the user's ops, whose callbacks may still push: keep it all.
 */
bool fhook_fgraph_stop(bool stuck, struct fhook_user *charged, u64 pages)
{
	struct fhook_gpool *g = fhook_gpool;

	/*
	 * callbacks with preemption off, and returns through the trampoline
	 * where RCU is not watching (idle entry and exit), as the other
	 * trampolines wait for them (around.c)
	 */
	synchronize_rcu();
	synchronize_rcu_tasks_rude();
	if (!stuck && fhook_fgraph_restore(g)) {
		fhook_gpool_free(g);
		return false;
	}
	/* the pool's memory stays charged until it is freed */
	g->charged = charged;
	g->charged_pages = pages;
	__module_get(THIS_MODULE);
	if (stuck) {
		pr_err("graph: ops still registered, the call graph stays\n");
		return true;
	}
	fhook_gpool_name_pending(g);
	queue_delayed_work(system_long_wq, &fhook_gpool_drain_work, HZ / 10);
	return true;
}

int fhook_fgraph_setup(void)
{
	fhook_tp_switch = fhook_tracepoint("sched_switch");
	if (!fhook_tp_switch)
		pr_warn("sched_switch tracepoint not found: no call graphs\n");
	return 0;
}

/*
 * Module exit: a draining pool holds a module reference, so none is left;
 * the drain's last run may still be returning from module_put().
 */
void fhook_fgraph_teardown(void)
{
	cancel_delayed_work_sync(&fhook_gpool_drain_work);
	WARN_ON_ONCE(READ_ONCE(fhook_gpool));
}
