// SPDX-License-Identifier: GPL-2.0
/*
 * The around trampoline's slots: a call an IPMODIFY ftrace_ops sends to
 * fhook_around_N (tramp.S) runs in place of the function, calls its
 * slot's target (the function's body after its fentry call, or another
 * module's replacement) with the caller's arguments, and comes back here
 * before and after.  Two users embed a struct fhook_around:
 *
 *   hook.c   the CLI's trace-around hooks (records around the body)
 *   khook.c  other modules' hooks (their replacement, entry and exit)
 *
 * A slot counts the calls inside it (inflight): tasks can sleep inside the
 * target with the trampoline's return address on their stack, and RCU
 * tasks counts a voluntary sleep as quiescent, so unregistering the ops
 * is not enough before the slot is freed.  Its owner either waits for the
 * last call (fhook_around_wait, for a module's hooks: their text goes
 * next) or hands the slot over to be freed once it has left
 * (fhook_around_release, for a session: it may not block).
 *
 * fhook_orig_N (tramp.S) continues at slot N's body with the caller's
 * return address on the stack: what a replacement calls for "the
 * original", reached from C with an indirect call (it has an ENDBR; the
 * body after the fentry call has none and is reached with a return).
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

static struct fhook_around *fhook_around_slots[FHOOK_NR_SLOTS];
unsigned long fhook_around_bodies[FHOOK_NR_SLOTS];
static DEFINE_MUTEX(fhook_around_lock);		/* slots, drain list */
static LIST_HEAD(fhook_around_draining);
static void fhook_around_drain(struct work_struct *work);
static DECLARE_DELAYED_WORK(fhook_drain_work, fhook_around_drain);

/* fhook_around_own_calls(): frames of @a on current's stack */
struct fhook_around_own {
	struct fhook_around *a;
	long n;
};

/* Slots taken, by sessions and modules; under fhook_around_lock */
static u32 fhook_around_used_locked(void)
{
	u32 i, n = 0;

	for (i = 0; i < FHOOK_NR_SLOTS; i++)
		n += !!fhook_around_slots[i];
	return n;
}

/* Slots taken now (FHOOK_IOC_HANDSHAKE: fhook status) */
u32 fhook_around_used(void)
{
	u32 n;

	mutex_lock(&fhook_around_lock);
	n = fhook_around_used_locked();
	mutex_unlock(&fhook_around_lock);
	return n;
}

/*
 * Take a slot for @a; its calls go to @target (0: the body, once known).
 * Sessions (!@module) leave FHOOK_KHOOK_SLOTS of them to other modules'
 * hooks: a tracing session of trace-around hooks never makes a module's
 * fhook_khook_install() fail.  -ENOSPC when none is left.
 */
int fhook_around_add(struct fhook_around *a, const struct fhook_around_ops *ops,
		     unsigned long target, u32 stack_args, bool module)
{
	int i;

	a->ops = ops;
	a->target = target;
	a->stack_args = stack_args;
	a->slot = -1;
	atomic_long_set(&a->inflight, 0);
	INIT_LIST_HEAD(&a->drain_node);
	mutex_lock(&fhook_around_lock);
	/* a session past its share finds no slot */
	i = !module && fhook_around_used_locked() >= FHOOK_NR_SLOTS - FHOOK_KHOOK_SLOTS ?
	    FHOOK_NR_SLOTS : 0;
	for (; i < FHOOK_NR_SLOTS; i++) {
		if (!fhook_around_slots[i]) {
			WRITE_ONCE(fhook_around_bodies[i], 0);
			WRITE_ONCE(fhook_around_slots[i], a);
			a->slot = i;
			fhook_frames_get();
			break;
		}
	}
	mutex_unlock(&fhook_around_lock);
	return a->slot < 0 ? -ENOSPC : 0;
}

/*
 * The function @a hooks is at @func: its body after the fentry call is
 * where calls without a replacement go, and where fhook_orig_N continues.
 */
int fhook_around_set_body(struct fhook_around *a, unsigned long func)
{
	unsigned long fentry;
	int ret = fhook_arch_fentry_site(func, &fentry);

	if (ret)
		return ret;
	WRITE_ONCE(fhook_around_bodies[a->slot], fentry + MCOUNT_INSN_SIZE);
	if (!a->target)
		WRITE_ONCE(a->target, fentry + MCOUNT_INSN_SIZE);
	return 0;
}

/* What a replacement calls for the original function. */
unsigned long fhook_around_orig(struct fhook_around *a)
{
	return fhook_orig_tramps[a->slot];
}

/* The trampoline's entry: where the call goes; preemptible. */
asmlinkage notrace void fhook_around_enter(struct fhook_around_frame *f)
{
	struct fhook_around *a = READ_ONCE(fhook_around_slots[f->slot]);
	const u64 *args = fhook_arch_around_args(f);

	atomic_long_inc(&a->inflight);
	f->target = READ_ONCE(a->target);
	/*
	 * the arguments the caller put on the stack, for the target (inline:
	 * copy_from_kernel_nofault() could be the hooked function itself)
	 */
	fhook_stack_args_copy(f->stack, args, a->stack_args);
	f->record = 0;
	fhook_arch_around_regs(f, READ_ONCE(fhook_around_bodies[f->slot]) - MCOUNT_INSN_SIZE);
	f->owner = (unsigned long)a;
	a->ops->enter(a, f);
}

/* After the target returned (%rax in regs.ax). */
asmlinkage notrace void fhook_around_exit(struct fhook_around_frame *f)
{
	struct fhook_around *a = READ_ONCE(fhook_around_slots[f->slot]);

	a->ops->exit(a, f);
	/*
	 * The last access to @a from this call: pairs with the full barrier
	 * after the inflight reads in fhook_around_wait()/_drain().
	 */
	smp_mb__before_atomic();
	atomic_long_dec(&a->inflight);
}

/* Tasks preempted in our text, or in it while RCU was not watching. */
static void fhook_around_sync(void)
{
	synchronize_rcu_tasks_rude();
	synchronize_rcu_tasks();
}

static void fhook_around_free(struct fhook_around *a)
{
	mutex_lock(&fhook_around_lock);
	WRITE_ONCE(fhook_around_slots[a->slot], NULL);
	mutex_unlock(&fhook_around_lock);
	fhook_frames_put();
	a->ops->free(a);
}

/*
 * frames.c: the task exits inside the call of @frame, which never comes
 * back: counted out as fhook_around_exit() would, without ops->exit.
 */
static notrace void fhook_around_abandon(void *frame)
{
	struct fhook_around_frame *f = frame;
	struct fhook_around *a = (struct fhook_around *)f->owner;

	/* (a live frame's slot is @a's until its call is counted out) */
	if (f->slot >= FHOOK_NR_SLOTS || READ_ONCE(fhook_around_slots[f->slot]) != a)
		return;
	/* the last access to @a from this call, as in fhook_around_exit() */
	smp_mb__before_atomic();
	atomic_long_dec(&a->inflight);
}

const struct fhook_frame_kind fhook_around_frame_kind = {
	.abandon	= fhook_around_abandon,
};

static notrace void fhook_around_count_own(void *frame, void *arg)
{
	const struct fhook_around_frame *f = frame;
	struct fhook_around_own *own = arg;

	own->n += f->owner == (unsigned long)own->a && f->slot == own->a->slot;
}

/*
 * Calls of current inside @a: its live frames on its own stack that name
 * @a, never more than the calls inside.  A module whose hook is on its own
 * unload path removes it from below the hooked function.  Where the walk
 * could not see the whole stack, every call inside may be current's:
 * none is waited for (@a is let go, freed when they have returned).
 */
static long fhook_around_own_calls(struct fhook_around *a)
{
	struct fhook_around_own own = { .a = a };
	long inflight = atomic_long_read(&a->inflight);

	if (!fhook_frames_walk(FHOOK_FRAME_AROUND, fhook_around_count_own, &own))
		return inflight;
	return own.n <= inflight ? own.n : 0;
}

/*
 * Wait until no call is inside @a (its ops unregistered: no new one
 * comes), then free it.  Sleeps as long as a task stays in the target: a
 * line every 10 s says so.  The caller's own calls inside (its unload
 * path is hooked) are not waited for, everyone else's are: then @a is
 * detached (ops->detach) and freed once they return
 * (fhook_around_release()).
 */
void fhook_around_wait(struct fhook_around *a, const char *what)
{
	unsigned long next = jiffies + 10 * HZ;
	long own = a->ops->detach ? fhook_around_own_calls(a) : 0;

	while (atomic_long_read(&a->inflight) > own) {
		if (time_after(jiffies, next)) {
			pr_info("%s: waiting for %ld call(s) still inside\n", what,
				atomic_long_read(&a->inflight));
			next = jiffies + 10 * HZ;
		}
		/* not a hung task: it waits for others */
		schedule_timeout_idle(HZ / 50);
	}
	if (own) {
		pr_warn("%s: removed from inside itself (%ld call(s)): freed once they return\n",
			what, own);
		fhook_around_let_go(a);
		return;
	}
	smp_mb();	/* pairs with fhook_around_exit() */
	fhook_around_sync();
	fhook_around_free(a);
}

static void fhook_around_drain(struct work_struct *work)
{
	struct fhook_around *a, *tmp;
	LIST_HEAD(done);
	bool left;

	mutex_lock(&fhook_around_lock);
	list_for_each_entry_safe(a, tmp, &fhook_around_draining, drain_node) {
		if (!atomic_long_read(&a->inflight))
			list_move(&a->drain_node, &done);
	}
	left = !list_empty(&fhook_around_draining);
	mutex_unlock(&fhook_around_lock);
	if (!list_empty(&done)) {
		smp_mb();	/* pairs with fhook_around_exit() */
		/* the last calls may still be on the trampoline's epilogue */
		fhook_around_sync();
		list_for_each_entry_safe(a, tmp, &done, drain_node) {
			list_del(&a->drain_node);
			pr_info("hook: the last call has left a removed hook (slot %d)\n", a->slot);
			fhook_around_free(a);
			module_put(THIS_MODULE);
		}
	}
	if (left)
		queue_delayed_work(system_long_wq, &fhook_drain_work, HZ / 20);
}

/*
 * Free @a (its ops unregistered) once the last call has left, without
 * waiting here; @reached: its ops were ever registered.
 */
void fhook_around_release(struct fhook_around *a, bool reached)
{
	if (!reached) {
		fhook_around_free(a);
		return;
	}
	if (!atomic_long_read(&a->inflight)) {
		smp_mb();	/* pairs with fhook_around_exit() */
		fhook_around_sync();
		fhook_around_free(a);
		return;
	}
	/* tasks are inside the function, below our trampoline: wait for them */
	pr_info("hook: %ld calls still inside the hooked function, freed when they return\n",
		atomic_long_read(&a->inflight));
	__module_get(THIS_MODULE);
	mutex_lock(&fhook_around_lock);
	list_add_tail(&a->drain_node, &fhook_around_draining);
	mutex_unlock(&fhook_around_lock);
	queue_delayed_work(system_long_wq, &fhook_drain_work, HZ / 20);
}

/*
 * Free @a (its ops unregistered) once the last call has left, without
 * waiting for them here: its owner's code is called no more once this
 * returns (ops->detach).
 */
void fhook_around_let_go(struct fhook_around *a)
{
	a->ops->detach(a);
	/* handlers that read what detach took, and calls still on their way */
	fhook_around_sync();
	fhook_around_release(a, true);
}

void fhook_around_init(void)
{
	BUILD_BUG_ON(offsetof(struct fhook_around_frame, slot) != FHOOK_AF_SLOT);
	BUILD_BUG_ON(offsetof(struct fhook_around_frame, target) != FHOOK_AF_TARGET);
	BUILD_BUG_ON(offsetof(struct fhook_around_frame, stack) != FHOOK_AF_STACK);
	BUILD_BUG_ON(sizeof(struct fhook_around_frame) != FHOOK_AF_SIZE);
	BUILD_BUG_ON(FHOOK_AF_SPACE % 16 || FHOOK_AF_SPACE < FHOOK_AF_SIZE);
#ifdef FHOOK_AF_X0	/* (arm64's saves x0..x8 in place) */
	BUILD_BUG_ON(offsetof(struct fhook_around_frame, regs.regs[0]) != FHOOK_AF_X0);
#endif
#ifdef FHOOK_BODY_RET_TO_FRAME
	/* (tramp.S pushes the stack arguments between frame and call) */
	BUILD_BUG_ON(FHOOK_BODY_RET_TO_FRAME != 8 * (FHOOK_HOOK_MAX_STACK_ARGS + 1));
#endif
}

/* Module exit: every slot is free (each draining one held a reference). */
void fhook_around_exit_module(void)
{
	cancel_delayed_work_sync(&fhook_drain_work);
}
