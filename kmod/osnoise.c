// SPDX-License-Identifier: GPL-2.0
/*
 * The operating system noise tracer (FHOOK_PROBE_OSNOISE): what the
 * kernel's osnoise tracer (kernel/trace/trace_osnoise.c) measures, for
 * kernels built without CONFIG_OSNOISE_TRACER.
 *
 * One kernel thread per CPU of the session (cputhreads.c), bound to it,
 * reads the clock in a loop for the runtime of every period, with
 * interrupts and preemption on, as a busy task would.  A gap of at least
 * the threshold between two reads is noise: time the CPU spent elsewhere.
 * The kernel's tracepoints on that CPU count what ran meanwhile
 * (interference): NMI handlers (nmi_handler), interrupts
 * (irq_handler_entry and the architecture's vector tracepoints, the
 * timer's among them), softirqs (softirq_entry, but on PREEMPT_RT, where
 * they run in threads) and other threads (sched_switch).  A gap with none
 * is hardware noise.  Each period ends in a FHOOK_REC_OSNOISE record (the
 * kernel's osnoise_sample), each gap is a FHOOK_REC_OSNOISE_NOISE record
 * with FHOOK_OSNOISE_EACH (its sample_threshold).
 *
 * The clock and the interference count are read together so that no
 * interference falls between them (the kernel's set_int_safe_time()):
 * the count is read before and after the clock, again if they differ.
 *
 * With a stop threshold, the first gap (period's noise) that reaches it
 * is marked FHOOK_OSNOISE_STOPPED and the tracer stops sampling.

 *
 * It takes up to all of every CPU's time: CAP_SYS_ADMIN (priv.c).
 */
#include "fhook.h"

#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <asm/local.h>
#include <uapi/linux/sched/types.h>

/* the kernel's default noise threshold, in ns (tracing_thresh unset) */
#define FHOOK_OSN_DEF_THRESH	(5 * NSEC_PER_USEC)

enum fhook_osn_kind { FHOOK_OSN_NMI, FHOOK_OSN_IRQ, FHOOK_OSN_SOFTIRQ, FHOOK_OSN_THREAD,
		      FHOOK_OSN_KINDS };

/* One CPU's thread and its interference counters. */
struct fhook_osn_cpu {
	struct fhook_osnoise_probe *on;
	struct task_struct *thread;	/* the CPU's thread, while it runs */
	/*
	 * Written by the tracepoints' callbacks on this CPU while sampling,
	 * read by its thread: count[] in any context, int_counter summing
	 * them as a local_t (an NMI may come in the middle of an interrupt's
	 * increment).
	 */
	bool sampling;
	local_t int_counter;
	u32 count[FHOOK_OSN_KINDS];
	u64 seq;			/* periods so far */
	int cpu;
};

struct fhook_osnoise_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct fhook_osnoise cfg;
	int stopped;			/* a stop threshold was reached */
	struct fhook_osn_cpu *cpus;	/* [nr_cpu_ids] */
	struct fhook_cpu_threads threads;
	unsigned long registered;	/* BIT(i): fhook_osn_found[i] registered */
};

static_assert(offsetof(struct fhook_osnoise_probe, p) == 0);

static inline struct fhook_osnoise_probe *to_osnoise(struct fhook_probe *p)
{
	return container_of(p, struct fhook_osnoise_probe, p);
}

/* Something of @kind runs on this CPU: interference if it is sampled. */
static __always_inline void fhook_osn_enter(struct fhook_osnoise_probe *on, enum fhook_osn_kind kind)
{
	struct fhook_osn_cpu *oc = &on->cpus[raw_smp_processor_id()];

	/* pairs with the barrier()s around sampling in fhook_osn_run() */
	if (!READ_ONCE(oc->sampling))
		return;
	oc->count[kind]++;
	local_inc(&oc->int_counter);
}

static notrace void fhook_osn_on_nmi(void *data, void *handler, s64 delta_ns, int handled)
{
	fhook_osn_enter(data, FHOOK_OSN_NMI);
}

static notrace void fhook_osn_on_irq(void *data, int irq, struct irqaction *action)
{
	fhook_osn_enter(data, FHOOK_OSN_IRQ);
}

/* the x86 APIC vectors' entries: TP_PROTO(int vector) */
static notrace void fhook_osn_on_vector(void *data, int vector)
{
	fhook_osn_enter(data, FHOOK_OSN_IRQ);
}

static notrace void fhook_osn_on_softirq(void *data, unsigned int vec_nr)
{
	fhook_osn_enter(data, FHOOK_OSN_SOFTIRQ);
}

static notrace void fhook_osn_on_switch(void *data, bool preempt, struct task_struct *prev,
					struct task_struct *next, unsigned int prev_state)
{
	struct fhook_osnoise_probe *on = data;

	/* (the kernel's OSN_WORKLOAD: its own thread is no noise) */
	if (next != READ_ONCE(on->cpus[raw_smp_processor_id()].thread))
		fhook_osn_enter(on, FHOOK_OSN_THREAD);
}

/* the tracepoints counted, and their callbacks */
struct fhook_osn_tp {
	const char *name;
	void *probe;
};

static const struct fhook_osn_tp fhook_osn_tps[] = {
	{ "nmi_handler", fhook_osn_on_nmi },
	{ "irq_handler_entry", fhook_osn_on_irq },
	/* (PREEMPT_RT runs softirqs in threads: thread noise, as the kernel's) */
	{ "softirq_entry", fhook_osn_on_softirq },
	{ "sched_switch", fhook_osn_on_switch },
};

#define FHOOK_OSN_MAX_TPS	(ARRAY_SIZE(fhook_osn_tps) + FHOOK_ARCH_NR_IRQ_VECTORS)

/* those this kernel has, found at load */
static struct {
	struct tracepoint *tp;
	void *probe;
} fhook_osn_found[FHOOK_OSN_MAX_TPS];
static unsigned int fhook_osn_nr_found;

/* The clock, and the interference so far with nothing between them. */
static notrace u64 fhook_osn_time(struct fhook_osn_cpu *oc, u32 count[FHOOK_OSN_KINDS],
				  long *ints)
{
	u64 now;
	long n;
	int i;

	do {
		n = local_read(&oc->int_counter);
		/* against the callbacks on this CPU */
		barrier();
		now = ktime_get_mono_fast_ns();
		for (i = 0; i < FHOOK_OSN_KINDS; i++)
			count[i] = READ_ONCE(oc->count[i]);
		barrier();
	} while (n != local_read(&oc->int_counter));
	*ints = n;
	return now;
}

/* Past a stop threshold: the first to get there marks its record. */
static bool fhook_osn_stop(struct fhook_osnoise_probe *on, u64 ns, u64 stop_ns)
{
	return stop_ns && ns >= stop_ns && !cmpxchg(&on->stopped, 0, 1);
}

/*
 * A record of @type on this CPU's ring, its header written, NULL (the ring
 * full: counted) or, off the thread's CPU, an error (no ring touched);
 * preemption off until fhook_osn_commit().
 */
static void *fhook_osn_reserve(struct fhook_osn_cpu *oc, u16 type, u16 size, u64 ts)
{
	struct fhook_session *s = oc->on->p.session;
	struct fhook_probe_counters *c;
	struct fhook_rec *r;

	preempt_disable();
	/* (a CPU going offline moves its thread away before it is stopped) */
	if (smp_processor_id() != oc->cpu)
		return ERR_PTR(-EXDEV);
	c = fhook_counters(s, oc->cpu, oc->on->p.id);
	fhook_count(&c->hits);
	r = fhook_ring_reserve(s->rings[oc->cpu], size, oc->on->p.id);
	if (IS_ERR_OR_NULL(r))
		return NULL;	/* (committed all the same) */
	fhook_rec_init_ts(r, type, size, oc->on->p.id, preempt_count(), irqs_disabled(), ts);
	fhook_count(&c->written);
	return r;
}

static void fhook_osn_commit(struct fhook_osn_cpu *oc, void *r)
{
	if (!IS_ERR(r))
		fhook_ring_commit(oc->on->p.session->rings[oc->cpu]);
	preempt_enable();
}

/* The kernel's sample_threshold: one gap, and what ran in it. */
static void fhook_osn_noise(struct fhook_osn_cpu *oc, u64 start, u64 end,
			    const u32 before[FHOOK_OSN_KINDS], const u32 after[FHOOK_OSN_KINDS],
			    u32 oflags)
{
	struct fhook_rec_osnoise_noise *r;

	r = fhook_osn_reserve(oc, FHOOK_REC_OSNOISE_NOISE, sizeof(*r), end);
	if (!IS_ERR_OR_NULL(r)) {
		r->start_ns = start;
		r->duration_ns = end - start;
		r->nmi_count = after[FHOOK_OSN_NMI] - before[FHOOK_OSN_NMI];
		r->irq_count = after[FHOOK_OSN_IRQ] - before[FHOOK_OSN_IRQ];
		r->softirq_count = after[FHOOK_OSN_SOFTIRQ] - before[FHOOK_OSN_SOFTIRQ];
		r->thread_count = after[FHOOK_OSN_THREAD] - before[FHOOK_OSN_THREAD];
		r->oflags = oflags;
		r->__pad = 0;
	}
	fhook_osn_commit(oc, r);
}

/* What one period measured, for its record. */
struct fhook_osn_period {
	u64 start, end;
	u64 noise, max_single;
	u32 hw;
	u32 first[FHOOK_OSN_KINDS];	/* the counters at its start ... */
	u32 last[FHOOK_OSN_KINDS];	/* ... and end */
	u32 oflags;
};

/* The kernel's osnoise_sample: one period. */
static void fhook_osn_sample(struct fhook_osn_cpu *oc, const struct fhook_osn_period *pd)
{
	struct fhook_rec_osnoise *r;

	r = fhook_osn_reserve(oc, FHOOK_REC_OSNOISE, sizeof(*r), pd->end);
	if (!IS_ERR_OR_NULL(r)) {
		r->runtime_ns = pd->end - pd->start;
		r->noise_ns = pd->noise;
		r->max_single_ns = pd->max_single;
		r->seqnum = oc->seq;
		r->hw_count = pd->hw;
		r->nmi_count = pd->last[FHOOK_OSN_NMI] - pd->first[FHOOK_OSN_NMI];
		r->irq_count = pd->last[FHOOK_OSN_IRQ] - pd->first[FHOOK_OSN_IRQ];
		r->softirq_count = pd->last[FHOOK_OSN_SOFTIRQ] - pd->first[FHOOK_OSN_SOFTIRQ];
		r->thread_count = pd->last[FHOOK_OSN_THREAD] - pd->first[FHOOK_OSN_THREAD];
		r->oflags = pd->oflags;
	}
	fhook_osn_commit(oc, r);
}

/* The kernel's run_osnoise(): sample one period's runtime. */
static void fhook_osn_run(struct fhook_osn_cpu *oc)
{
	const struct fhook_osnoise *cfg = &oc->on->cfg;
	u64 runtime = (u64)cfg->runtime_us * NSEC_PER_USEC;
	struct fhook_osn_period pd = {};
	u32 before[FHOOK_OSN_KINDS];
	u64 last, now, gap;
	long last_ints, ints;
	u32 oflags;

	WRITE_ONCE(oc->sampling, true);
	/* pairs with the READ_ONCE in fhook_osn_enter() (same CPU) */
	barrier();
	last = pd.start = fhook_osn_time(oc, pd.first, &last_ints);
	memcpy(before, pd.first, sizeof(before));
	do {
		now = fhook_osn_time(oc, pd.last, &ints);
		/* (the fast clock may step back a little around an update) */
		gap = (s64)(now - last) > 0 ? now - last : 0;
		if (gap >= cfg->threshold_ns) {
			pd.noise += gap;
			pd.max_single = max(pd.max_single, gap);
			if (ints == last_ints)
				pd.hw++;
			oflags = fhook_osn_stop(oc->on, gap, cfg->stop_single_ns) ?
				 FHOOK_OSNOISE_STOPPED : 0;
			if ((cfg->flags & FHOOK_OSNOISE_EACH) || oflags)
				fhook_osn_noise(oc, last, now, before, pd.last, oflags);
			if (oflags)
				break;
		}
		/*
		 * a quiescent state for RCU, which on a nohz_full CPU with its
		 * tick stopped would otherwise force one (an IPI: noise), as
		 * the kernel's loop does; and a busy task lets others run
		 * where the kernel does not preempt
		 */
		local_irq_disable();
		fhook_rcu_momentary_qs();
		local_irq_enable();
		cond_resched();
		last = now;
		last_ints = ints;
		memcpy(before, pd.last, sizeof(before));
	} while (now - pd.start < runtime && !READ_ONCE(oc->on->stopped) &&
		 !kthread_should_stop() && raw_smp_processor_id() == oc->cpu);
	barrier();
	WRITE_ONCE(oc->sampling, false);
	pd.end = now;
	/* once stopped, only the record that stopped it (not a part period) */
	if (fhook_osn_stop(oc->on, pd.noise, cfg->stop_total_ns))
		pd.oflags = FHOOK_OSNOISE_STOPPED;
	else if (READ_ONCE(oc->on->stopped))
		return;
	oc->seq++;
	fhook_osn_sample(oc, &pd);
}

/* Sleep until @until (CLOCK_MONOTONIC ns), or without one, for ever. */
static void fhook_osn_sleep(u64 until)
{
	ktime_t to = ns_to_ktime(until);

	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_stop()) {
		if (until)
			schedule_hrtimeout(&to, HRTIMER_MODE_ABS);
		else
			schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/* the kernel's osnoise_main(): a period after the other */
static int fhook_osn_main(void *data)
{
	struct fhook_osn_cpu *oc = data;
	u64 period = (u64)oc->on->cfg.period_us * NSEC_PER_USEC, next;
	struct sched_attr attr = {
		.size		= sizeof(attr),
		.sched_policy	= SCHED_FIFO,
		.sched_priority	= oc->on->cfg.prio,
	};

	if (attr.sched_priority && sched_setattr_nocheck(current, &attr))
		pr_warn_once("osnoise threads run at SCHED_OTHER: SCHED_FIFO refused\n");
	WRITE_ONCE(oc->thread, current);
	next = ktime_get_ns();
	while (!kthread_should_stop()) {
		/* stopped, or moved off a CPU going offline: wait for the end */
		if (READ_ONCE(oc->on->stopped) || raw_smp_processor_id() != oc->cpu) {
			fhook_osn_sleep(0);
			continue;
		}
		next += period;
		fhook_osn_run(oc);
		/*
		 * The rest of the period; with none, a voluntary switch still,
		 * which RCU tasks (ftrace's trampolines) waits for.
		 */
		if ((s64)(ktime_get_ns() - next) < 0)
			fhook_osn_sleep(next);
		else
			cond_resched_tasks_rcu_qs();
		if ((s64)(ktime_get_ns() - next) > 0)
			next = ktime_get_ns();
	}
	return 0;
}

/* the argument of @cpu's thread, from its first period */
static void *fhook_osn_arg(struct fhook_cpu_threads *ct, unsigned int cpu)
{
	struct fhook_osnoise_probe *on = container_of(ct, struct fhook_osnoise_probe, threads);

	on->cpus[cpu].seq = 0;
	return &on->cpus[cpu];
}

static int fhook_osnoise_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			      s32 *err_index)
{
	struct fhook_osnoise_probe *on = to_osnoise(p);
	struct fhook_osnoise *cfg = &on->cfg;
	int ret, cpu;

	if (!arg->hook)
		return fhook_refuse(p->session, FHOOK_R_OSNOISE_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), sizeof(*cfg), arg->hook);
	if (ret < 0)
		return fhook_refuse(p->session, FHOOK_R_OSNOISE_CFG, -1, ret);
	if (cfg->__pad || cfg->reserved[0] || cfg->reserved[1])
		return fhook_refuse(p->session, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!cfg->threshold_ns)
		cfg->threshold_ns = FHOOK_OSN_DEF_THRESH;
	if (cfg->flags & ~FHOOK_OSNOISE_EACH ||
	    cfg->period_us < FHOOK_OSNOISE_MIN_RUNTIME_US ||
	    cfg->period_us > FHOOK_OSNOISE_MAX_PERIOD_US ||
	    cfg->runtime_us < FHOOK_OSNOISE_MIN_RUNTIME_US || cfg->runtime_us > cfg->period_us ||
	    cfg->threshold_ns > (u64)cfg->runtime_us * NSEC_PER_USEC || cfg->prio >= MAX_RT_PRIO)
		return fhook_refuse(p->session, FHOOK_R_OSNOISE_CFG, -1, -EINVAL);
	/* a real-time thread that never sleeps starves the CPU's own threads */
	if (cfg->prio && cfg->runtime_us == cfg->period_us)
		return fhook_refuse(p->session, FHOOK_R_OSNOISE_CFG, -1, -EINVAL);
	ret = fhook_priv_require(p, FHOOK_PRIV_ADMIN);
	if (ret)
		return ret;
	on->cpus = kcalloc(nr_cpu_ids, sizeof(*on->cpus), GFP_KERNEL_ACCOUNT);
	if (!on->cpus || fhook_cpu_threads_alloc(&on->threads))
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		on->cpus[cpu].on = on;
		on->cpus[cpu].cpu = cpu;
		local_set(&on->cpus[cpu].int_counter, 0);
	}
	on->threads.fn = fhook_osn_main;
	on->threads.arg = fhook_osn_arg;
	on->threads.name = "fhook-osn/%u";
	return 0;
}

static void fhook_osnoise_disarm(struct fhook_probe *p)
{
	struct fhook_osnoise_probe *on = to_osnoise(p);
	int i;

	fhook_cpu_threads_stop(&on->threads);
	for (i = 0; i < fhook_osn_nr_found; i++) {
		if (on->registered & BIT(i))
			tracepoint_probe_unregister(fhook_osn_found[i].tp,
						    fhook_osn_found[i].probe, on);
	}
	if (on->registered)
		tracepoint_synchronize_unregister();
	on->registered = 0;
	p->registered = false;
}

static int fhook_osnoise_arm(struct fhook_probe *p)
{
	struct fhook_osnoise_probe *on = to_osnoise(p);
	struct fhook_session *s = p->session;
	int ret, i;

	WRITE_ONCE(on->stopped, 0);
	/* each tracepoint the kernel has: what another lacks is not seen */
	for (i = 0; i < fhook_osn_nr_found; i++) {
		if (!tracepoint_probe_register(fhook_osn_found[i].tp, fhook_osn_found[i].probe, on))
			on->registered |= BIT(i);
		else
			pr_warn_ratelimited("osnoise: %s not counted (registration failed)\n",
					    fhook_osn_found[i].tp->name);
	}
	ret = fhook_cpu_threads_start(&on->threads, s->cpu_filter ? s->cpus : cpu_possible_mask);
	p->registered = true;
	if (ret)
		fhook_osnoise_disarm(p);
	return ret;
}

static void fhook_osnoise_release(struct fhook_probe *p)
{
	kfree(to_osnoise(p)->cpus);
	fhook_cpu_threads_free(&to_osnoise(p)->threads);
}

const struct fhook_probe_kind fhook_osnoise_kind = {
	.size		= sizeof(struct fhook_osnoise_probe),
	.fields		= FHOOK_ADD_HOOK,
	.init		= fhook_osnoise_init,
	.arm		= fhook_osnoise_arm,
	.disarm		= fhook_osnoise_disarm,
	.release	= fhook_osnoise_release,
	.disarm_unregisters = true,
	.no_triggers	= true,
};

/* One tracepoint counted, if this kernel has it. */
static void fhook_osn_find(const char *name, void *probe)
{
	struct tracepoint *tp = fhook_tracepoint(name);

	if (!tp)
		return;
	fhook_osn_found[fhook_osn_nr_found].tp = tp;
	fhook_osn_found[fhook_osn_nr_found++].probe = probe;
}

void fhook_osnoise_setup(void)
{
	int i;

	static_assert(FHOOK_OSN_MAX_TPS <= BITS_PER_LONG);
	for (i = 0; i < ARRAY_SIZE(fhook_osn_tps); i++) {
		if (!IS_ENABLED(CONFIG_PREEMPT_RT) || fhook_osn_tps[i].probe != fhook_osn_on_softirq)
			fhook_osn_find(fhook_osn_tps[i].name, fhook_osn_tps[i].probe);
	}
	for (i = 0; i < FHOOK_ARCH_NR_IRQ_VECTORS; i++)
		fhook_osn_find(fhook_arch_irq_vectors[i], fhook_osn_on_vector);
}
