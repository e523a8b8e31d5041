// SPDX-License-Identifier: GPL-2.0
/*
 * Latency probes (FHOOK_PROBE_DIRECT with FHOOK_PROBE_F_LATENCY): the
 * function's fentry site calls the slot's latency trampoline (tramp.S),
 * which takes the entry time, runs the function's body itself (as BPF
 * fexit trampolines do: the return address into the caller stays on the
 * stack above our frame) and adds the duration to a per-CPU log2
 * histogram when the body returns.  No record, no ring, no lock, no
 * atomic: one clock read at each end (under ftrace's recursion guard) and
 * a few per-CPU increments.
 *
 * Lifetime.  Tasks can sleep inside the body with our trampoline's return
 * address on their stack, which RCU tasks counts as quiescent, so
 * unregistering is not enough (hook.c has the same problem).  Every call
 * through the trampoline counts itself in a per-CPU inflight counter
 * (this_cpu_inc at entry, this_cpu_dec at exit, maybe on another CPU);
 * once unregistered only decrements happen, so a sum read CPU by CPU is
 * never below the true count and 0 means no call is left.  A probe
 * released with calls inside hands its histogram to a work item that
 * frees it, and drops a module reference, once they have returned.
 */
#include "fhook.h"
#include "lathist.h"
#include "tramp.h"

#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

struct fhook_lat_cpu {
	long inflight;			/* entries - exits on this CPU */
	struct fhook_lathist h;
};

struct fhook_lat {
	struct fhook_probe *probe;	/* for the filters; not used once released */
	struct fhook_lat_cpu __percpu *cpu;
	bool unfiltered;		/* time every call: no filter to apply */
	bool armed_once;
	u32 stack_args;			/* words copied for the body */
	struct list_head drain_node;
};

/* What the latency trampoline keeps on its stack (arch/<arch>/tramp.h). */
struct fhook_lat_frame {
	u64 regs[FHOOK_LF_NREGS];	/* the argument registers, saved by tramp.S */
	u64 lat;			/* struct fhook_lat *, from the slot */
	u64 ts;				/* entry time */
	u64 stack[FHOOK_HOOK_MAX_STACK_ARGS];	/* copied for the body */
	u64 timed;			/* this call is timed */
	u64 pad[FHOOK_LF_PAD];		/* the body's stack aligned as at its entry */
};

/* slot -> struct fhook_lat *, read by the slots' entry stubs */
unsigned long fhook_lat_ctxs[FHOOK_NR_SLOTS];

static DEFINE_MUTEX(fhook_lat_lock);
static LIST_HEAD(fhook_lat_draining);
static unsigned long fhook_lat_drain_delay = HZ / 20;	/* grows while calls stay inside */
static bool fhook_lat_used;		/* a probe was armed: sync at module exit */
static void fhook_lat_drain(struct work_struct *work);
static DECLARE_DELAYED_WORK(fhook_lat_drain_work, fhook_lat_drain);

/*
 * The clock under ftrace's recursion lock: ktime_get_mono_fast_ns() calls
 * the clocksource's read through a pointer, and some (hpet, acpi_pm,
 * jiffies) are traceable: a probe on one of them would recurse here.
 */
static notrace __always_inline bool fhook_lat_clock(u64 *now, unsigned long ip,
						    unsigned long parent)
{
	int bit = ftrace_test_recursion_trylock(ip, parent);

	if (bit < 0)
		return false;
	*now = ktime_get_mono_fast_ns();
	ftrace_test_recursion_unlock(bit);
	return true;
}

/*
 * The trampoline before the body: count the call in, decide whether it
 * is timed, copy the caller's stack arguments.  Preemptible.
 */
asmlinkage notrace void fhook_lat_enter(struct fhook_lat_frame *f)
{
	struct fhook_lat *l = (struct fhook_lat *)f->lat;
	unsigned long body, parent, ip;
	const u64 *args = fhook_arch_lat_site(f, &body, &parent);

	ip = body - MCOUNT_INSN_SIZE;
	this_cpu_inc(l->cpu->inflight);
	fhook_stack_args_copy(f->stack, args, l->stack_args);
	f->timed = (likely(l->unfiltered) || fhook_probe_filter_guarded(l->probe, ip, parent)) &&
		   fhook_lat_clock(&f->ts, ip, parent);
}

/* After the body returned: account the call (on this CPU, maybe not the entry's). */
asmlinkage notrace void fhook_lat_exit(struct fhook_lat_frame *f)
{
	struct fhook_lat_cpu __percpu *c = ((struct fhook_lat *)f->lat)->cpu;
	u64 now;

	if (f->timed && fhook_lat_clock(&now, (unsigned long)fhook_lat_exit, 0)) {
		u64 d = now - f->ts;

		/* (across CPUs the fast clock may step back by a little) */
		if ((s64)d < 0)
			d = 0;
		preempt_disable_notrace();
		fhook_lathist_add(&c->h, d);
		preempt_enable_notrace();
	}
	/* the last access to the histogram from this call */
	barrier();
	this_cpu_dec(c->inflight);
}

/*
 * frames.c: the task exits inside the call of @frame, which never comes
 * back: counted out untimed.
 */
static notrace void fhook_lat_abandon(void *frame)
{
	struct fhook_lat_frame *f = frame;

	this_cpu_dec(((struct fhook_lat *)f->lat)->cpu->inflight);
}

const struct fhook_frame_kind fhook_lat_frame_kind = {
	.abandon	= fhook_lat_abandon,
};

static long fhook_lat_inflight(struct fhook_lat *l)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(l->cpu, cpu)->inflight);
	return n;
}

/* The histogram of @p, a direct probe on trampoline slot @slot. */
struct fhook_lat *fhook_lat_create(struct fhook_probe *p, int slot, u32 stack_args)
{
	struct fhook_lat *l;

	if (stack_args > FHOOK_HOOK_MAX_STACK_ARGS)
		return ERR_PTR(-EINVAL);
	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return ERR_PTR(-ENOMEM);
	l->cpu = alloc_percpu_gfp(struct fhook_lat_cpu, GFP_KERNEL_ACCOUNT);
	if (!l->cpu) {
		kfree(l);
		return ERR_PTR(-ENOMEM);
	}
	l->probe = p;
	l->stack_args = stack_args;
	INIT_LIST_HEAD(&l->drain_node);
	fhook_frames_get();
	/* the slot's stub reads it; the slot is the probe's until release */
	WRITE_ONCE(fhook_lat_ctxs[slot], (unsigned long)l);
	return l;
}

/* Before the probe is registered: may every call be timed, unfiltered? */
void fhook_lat_arm(struct fhook_lat *l, bool unfiltered)
{
	l->unfiltered = unfiltered;
	l->armed_once = true;
	WRITE_ONCE(fhook_lat_used, true);
}

static void fhook_lat_free(struct fhook_lat *l)
{
	free_percpu(l->cpu);
	kfree(l);
	fhook_frames_put();
}

/* Tasks preempted in our text after their last decrement. */
static void fhook_lat_sync(void)
{
	synchronize_rcu_tasks_rude();
	synchronize_rcu_tasks();
}

static void fhook_lat_drain(struct work_struct *work)
{
	struct fhook_lat *l, *tmp;
	LIST_HEAD(done);
	bool left;

	mutex_lock(&fhook_lat_lock);
	list_for_each_entry_safe(l, tmp, &fhook_lat_draining, drain_node)
		if (!fhook_lat_inflight(l))
			list_move(&l->drain_node, &done);
	left = !list_empty(&fhook_lat_draining);
	/* a call can stay inside for long (a blocking wait): poll less and less */
	fhook_lat_drain_delay = left ? min_t(unsigned long, fhook_lat_drain_delay * 2, 2 * HZ) :
				       HZ / 20;
	mutex_unlock(&fhook_lat_lock);
	if (!list_empty(&done)) {
		fhook_lat_sync();
		list_for_each_entry_safe(l, tmp, &done, drain_node) {
			list_del(&l->drain_node);
			pr_info("latency: the last call has left a removed probe\n");
			fhook_lat_free(l);
			module_put(THIS_MODULE);
		}
	}
	if (left)
		queue_delayed_work(system_long_wq, &fhook_lat_drain_work,
				   READ_ONCE(fhook_lat_drain_delay));
}

/*
 * The probe is unregistered (or never was) and its @slot about to be
 * released: no call enters the trampoline any more.  @l may be NULL.
 */
void fhook_lat_release(struct fhook_lat *l, int slot)
{
	long n;

	if (!l)
		return;
	WRITE_ONCE(fhook_lat_ctxs[slot], 0);
	WRITE_ONCE(l->probe, NULL);
	if (!l->armed_once) {
		fhook_lat_free(l);
		return;
	}
	n = fhook_lat_inflight(l);
	if (!n) {
		/*
		 * each call's decrement was its last access to @l; a task
		 * still on the trampoline's epilogue only needs our text,
		 * which module exit keeps until an RCU tasks grace period
		 */
		fhook_lat_free(l);
		return;
	}
	pr_info("latency: %ld calls still inside the probed function, freed when they return\n",
		n);
	__module_get(THIS_MODULE);
	mutex_lock(&fhook_lat_lock);
	list_add_tail(&l->drain_node, &fhook_lat_draining);
	mutex_unlock(&fhook_lat_lock);
	queue_delayed_work(system_long_wq, &fhook_lat_drain_work, HZ / 20);
}

/* Timed calls on @cpu (FHOOK_IOC_STATS: a latency probe's hits). */
u64 fhook_lat_hits(struct fhook_lat *l, int cpu)
{
	return READ_ONCE(per_cpu_ptr(l->cpu, cpu)->h.count);
}

/* FHOOK_IOC_LATENCY, under the session lock: @cpu's histogram or all (< 0). */
void fhook_lat_read(struct fhook_lat *l, int cpu, struct fhook_latency *out)
{
	int c;

	fhook_lathist_read(&l->cpu->h, cpu, out);
	/* calls enter on one CPU and leave on another: only the sum says */
	if (cpu >= 0)
		return;
	for_each_possible_cpu(c)
		out->inflight += READ_ONCE(per_cpu_ptr(l->cpu, c)->inflight);
	/* (entries and exits on different CPUs, read at different times) */
	if ((s64)out->inflight < 0)
		out->inflight = 0;
}

void fhook_lat_setup(void)
{
	BUILD_BUG_ON(offsetof(struct fhook_lat_frame, lat) != FHOOK_LF_LAT);
	BUILD_BUG_ON(offsetof(struct fhook_lat_frame, stack) != FHOOK_LF_STACK);
	BUILD_BUG_ON(offsetof(struct fhook_lat_frame, timed) != FHOOK_LF_TIMED);
	BUILD_BUG_ON(sizeof(struct fhook_lat_frame) != FHOOK_LF_SIZE);
	BUILD_BUG_ON(FHOOK_LF_SIZE % 16 != FHOOK_LF_SIZE_MOD_16);
}

/* Module exit: every probe is gone (each draining one held a reference). */
void fhook_lat_exit_module(void)
{
	cancel_delayed_work_sync(&fhook_lat_drain_work);
	/* tasks preempted on a latency trampoline's epilogue */
	if (READ_ONCE(fhook_lat_used))
		fhook_lat_sync();
}
