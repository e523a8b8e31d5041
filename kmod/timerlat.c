// SPDX-License-Identifier: GPL-2.0
/*
 * The timer latency tracer (FHOOK_PROBE_TIMERLAT): what the kernel's
 * timerlat tracer (kernel/trace/trace_osnoise.c) measures, for kernels
 * built without CONFIG_TIMERLAT_TRACER.
 *
 * One kernel thread per CPU of the session (its CPU filter, or every CPU
 * online at START), bound to it and run at SCHED_FIFO, arms a pinned
 * hard-interrupt hrtimer for the next period and sleeps.  The timer's
 * handler measures how late it runs (the IRQ latency: now minus the
 * expiry asked for) and wakes the thread, which measures how late it runs
 * (the thread latency, from the same expiry), and arms the next period,
 * skipping the periods already past, as the kernel's wait_next_period()
 * does.  Each measure is a FHOOK_REC_TIMERLAT record on that CPU's ring.
 *
 * CPUs that come online while it runs get their thread, CPUs that go
 * offline lose theirs (CPU hotplug callbacks, as the kernel's
 * osnoise_cpu_init() and osnoise_cpu_die()); the CPUs are the session's
 * at START.
 *
 * With a stop threshold, the first measure that reaches it is marked
 * FHOOK_TIMERLAT_STOPPED and the tracer stops: no more records, no more
 * timers (the kernel's stop_tracing_us and stop_tracing_total_us).
 *
 * It runs threads of its own at a real-time priority on every CPU: a
 * change to what the kernel does, so it needs CAP_SYS_ADMIN (priv.c).
 */
#include "fhook.h"

#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <uapi/linux/sched/types.h>

/* the kernel's DEFAULT_TIMERLAT_PRIO */
#define FHOOK_TLAT_DEF_PRIO	95

/* One CPU's thread and timer. */
struct fhook_tlat_cpu {
	struct fhook_timerlat_probe *tl;
	struct hrtimer timer;
	struct task_struct *thread;	/* the CPU's thread, while it runs */
	u64 abs_period;		/* the expiry asked for (CLOCK_MONOTONIC ns) */
	u64 seq;		/* activations so far */
	bool fired;		/* the timer ran since it was armed */
	int cpu;
};

struct fhook_timerlat_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct fhook_timerlat cfg;
	int stopped;			/* a stop threshold was reached */
	struct fhook_tlat_cpu *cpus;	/* [nr_cpu_ids] */
	struct fhook_cpu_threads threads;
};

static_assert(offsetof(struct fhook_timerlat_probe, p) == 0);

static inline struct fhook_timerlat_probe *to_timerlat(struct fhook_probe *p)
{
	return container_of(p, struct fhook_timerlat_probe, p);
}

/*
 * One measure on this CPU (preemption off): its record, and the stop
 * when it reaches @stop_ns.
 */
static notrace void fhook_tlat_sample(struct fhook_tlat_cpu *tc, u32 context, u64 now,
				      u64 stop_ns)
{
	struct fhook_timerlat_probe *tl = tc->tl;
	struct fhook_session *s = tl->p.session;
	int cpu = smp_processor_id();
	struct fhook_ring *rb = s->rings[cpu];
	struct fhook_probe_counters *c = fhook_counters(s, cpu, tl->p.id);
	struct fhook_rec_timerlat *r;
	u64 latency = (s64)(now - tc->abs_period) > 0 ? now - tc->abs_period : 0;
	u32 tflags = 0;

	/* (defensive: a CPU going offline stops its thread first) */
	if (READ_ONCE(tl->stopped) || cpu != tc->cpu)
		return;
	/* the first to reach it says so: the others are past the stop */
	if (stop_ns && latency >= stop_ns) {
		if (cmpxchg(&tl->stopped, 0, 1))
			return;
		tflags = FHOOK_TIMERLAT_STOPPED;
	}
	fhook_count(&c->hits);
	r = fhook_ring_reserve(rb, sizeof(*r), tl->p.id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ts(&r->hdr, FHOOK_REC_TIMERLAT, sizeof(*r), tl->p.id,
				  preempt_count(), irqs_disabled(), now);
		r->latency = latency;
		r->seqnum = tc->seq;
		r->context = context;
		r->tflags = tflags;
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/* the kernel's timerlat_irq(): how late the timer runs; wake the thread */
static notrace enum hrtimer_restart fhook_tlat_irq(struct hrtimer *timer)
{
	struct fhook_tlat_cpu *tc = container_of(timer, struct fhook_tlat_cpu, timer);

	tc->seq++;
	fhook_tlat_sample(tc, FHOOK_TIMERLAT_IRQ, ktime_get_ns(), tc->tl->cfg.stop_irq_ns);
	/* pairs with set_current_state() in fhook_tlat_wait() */
	WRITE_ONCE(tc->fired, true);
	wake_up_process(tc->thread);
	return HRTIMER_NORESTART;
}

/*
 * Arm the timer for the next period not yet past (none once stopped, or
 * off its CPU) and sleep until it fires or the thread is stopped.
 */
static void fhook_tlat_wait(struct fhook_tlat_cpu *tc)
{
	u64 period = (u64)tc->tl->cfg.period_us * NSEC_PER_USEC;
	u64 now = ktime_get_ns();

	do {
		tc->abs_period += period;
	} while ((s64)(now - tc->abs_period) > 0);
	WRITE_ONCE(tc->fired, false);
	if (!READ_ONCE(tc->tl->stopped) && raw_smp_processor_id() == tc->cpu)
		hrtimer_start(&tc->timer, ns_to_ktime(tc->abs_period),
			      HRTIMER_MODE_ABS_PINNED_HARD);
	for (;;) {
		/* pairs with the wake_up_process() in fhook_tlat_irq() */
		set_current_state(TASK_INTERRUPTIBLE);
		if (READ_ONCE(tc->fired) || kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/* the kernel's timerlat_main(): how late the thread runs after the timer */
static int fhook_tlat_main(void *data)
{
	struct fhook_tlat_cpu *tc = data;
	struct sched_attr attr = {
		.size		= sizeof(attr),
		.sched_policy	= SCHED_FIFO,
		.sched_priority	= tc->tl->cfg.prio,
	};

	if (sched_setattr_nocheck(current, &attr))
		pr_warn_once("timerlat threads run at SCHED_OTHER: SCHED_FIFO refused\n");
	tc->thread = current;
	tc->abs_period = ktime_get_ns();
	fhook_tlat_wait(tc);
	while (!kthread_should_stop()) {
		preempt_disable();
		fhook_tlat_sample(tc, FHOOK_TIMERLAT_THREAD, ktime_get_ns(),
				  tc->tl->cfg.stop_thread_ns);
		preempt_enable();
		fhook_tlat_wait(tc);
	}
	hrtimer_cancel(&tc->timer);
	return 0;
}

/* the argument of @cpu's thread, from its first activation */
static void *fhook_tlat_arg(struct fhook_cpu_threads *ct, unsigned int cpu)
{
	struct fhook_timerlat_probe *tl = container_of(ct, struct fhook_timerlat_probe, threads);

	tl->cpus[cpu].seq = 0;
	return &tl->cpus[cpu];
}

static int fhook_timerlat_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			       s32 *err_index)
{
	struct fhook_timerlat_probe *tl = to_timerlat(p);
	struct fhook_timerlat *cfg = &tl->cfg;
	int ret, cpu;

	if (!arg->hook)
		return fhook_refuse(p->session, FHOOK_R_TIMERLAT_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), sizeof(*cfg), arg->hook);
	if (ret < 0)
		return fhook_refuse(p->session, FHOOK_R_TIMERLAT_CFG, -1, ret);
	if (cfg->__pad || cfg->reserved[0] || cfg->reserved[1])
		return fhook_refuse(p->session, FHOOK_R_RESERVED, -1, -EINVAL);
	if (cfg->period_us < FHOOK_TIMERLAT_MIN_PERIOD_US ||
	    cfg->period_us > FHOOK_TIMERLAT_MAX_PERIOD_US || cfg->prio >= MAX_RT_PRIO)
		return fhook_refuse(p->session, FHOOK_R_TIMERLAT_CFG, -1, -EINVAL);
	if (!cfg->prio)
		cfg->prio = FHOOK_TLAT_DEF_PRIO;
	ret = fhook_priv_require(p, FHOOK_PRIV_ADMIN);
	if (ret)
		return ret;
	tl->cpus = kcalloc(nr_cpu_ids, sizeof(*tl->cpus), GFP_KERNEL_ACCOUNT);
	if (!tl->cpus || fhook_cpu_threads_alloc(&tl->threads))
		return -ENOMEM;
	tl->threads.fn = fhook_tlat_main;
	tl->threads.arg = fhook_tlat_arg;
	tl->threads.name = "fhook-tlat/%u";
	for_each_possible_cpu(cpu) {
		struct fhook_tlat_cpu *tc = &tl->cpus[cpu];

		tc->tl = tl;
		tc->cpu = cpu;
		hrtimer_init(&tc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED_HARD);
		tc->timer.function = fhook_tlat_irq;
	}
	return 0;
}

static void fhook_timerlat_disarm(struct fhook_probe *p)
{
	fhook_cpu_threads_stop(&to_timerlat(p)->threads);
	p->registered = false;
}

static int fhook_timerlat_arm(struct fhook_probe *p)
{
	struct fhook_timerlat_probe *tl = to_timerlat(p);
	struct fhook_session *s = p->session;
	int ret;

	WRITE_ONCE(tl->stopped, 0);
	ret = fhook_cpu_threads_start(&tl->threads, s->cpu_filter ? s->cpus : cpu_possible_mask);
	p->registered = !ret;
	return ret;
}

static void fhook_timerlat_release(struct fhook_probe *p)
{
	kfree(to_timerlat(p)->cpus);
	fhook_cpu_threads_free(&to_timerlat(p)->threads);
}

const struct fhook_probe_kind fhook_timerlat_kind = {
	.size		= sizeof(struct fhook_timerlat_probe),
	.fields		= FHOOK_ADD_HOOK,
	.init		= fhook_timerlat_init,
	.arm		= fhook_timerlat_arm,
	.disarm		= fhook_timerlat_disarm,
	.release	= fhook_timerlat_release,
	.disarm_unregisters = true,
	.no_triggers	= true,
};
