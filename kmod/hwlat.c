// SPDX-License-Identifier: GPL-2.0
/*
 * The hardware latency detector (FHOOK_PROBE_HWLAT): what the kernel's
 * hwlat tracer (kernel/trace/trace_hwlat.c) measures, for kernels built
 * without CONFIG_HWLAT_TRACER.
 *
 * One kernel thread moves round-robin over the CPUs of the session (its
 * CPU filter, or every CPU online), one CPU per window.  In each window it
 * spins for `width` with interrupts off, reading the clock twice per loop:
 * nothing of the kernel's may run on that CPU meanwhile, so a gap between
 * two reads (inner) or between two loops (outer) longer than the
 * threshold is time the CPU was taken away below the kernel: an SMI, the
 * hypervisor, firmware, or an NMI (counted, from the nmi_handler
 * tracepoint where the kernel has it).  A window with such a gap is a
 * FHOOK_REC_HWLAT record; the thread then sleeps for the rest of the
 * window.
 *
 * It disables interrupts on every CPU in turn: a change to what the
 * kernel does, so it needs CAP_SYS_ADMIN (priv.c); width is at most a
 * second (the kernel's default is half of one), and at least a
 * millisecond of each window is left to the CPU, as the kernel leaves.
 */
#include "fhook.h"

#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>

/* the kernel's DEFAULT_LAT_THRESHOLD, in ns */
#define FHOOK_HWLAT_DEF_THRESH	(10 * NSEC_PER_USEC)
/* the least sleep between windows (the kernel's: a millisecond) */
#define FHOOK_HWLAT_MIN_REST	NSEC_PER_MSEC
/* reads of a clock that did not move before a window gives up */
#define FHOOK_HWLAT_MAX_STILL	10000000

struct fhook_hwlat_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct fhook_hwlat cfg;
	cpumask_var_t cpus;		/* the session's CPUs at START */
	struct task_struct *thread;	/* referenced while armed; NULL: none */
	u64 seq;			/* windows reported */
	/* the NMIs on the CPU sampling now (written there, in NMI context) */
	int sampling_cpu;		/* -1: none */
	u32 nmi_count;
	u64 nmi_total;
	bool nmi_registered;
};

static_assert(offsetof(struct fhook_hwlat_probe, p) == 0);

static inline struct fhook_hwlat_probe *to_hwlat(struct fhook_probe *p)
{
	return container_of(p, struct fhook_hwlat_probe, p);
}

static struct tracepoint *fhook_hwlat_nmi_tp;

/*
 * TP_PROTO(void *handler, s64 delta_ns, int handled): nmi_handler, after
 * each NMI handler ran; on the sampling CPU its time is the window's.
 */
static notrace void fhook_hwlat_on_nmi(void *data, void *handler, s64 delta_ns, int handled)
{
	struct fhook_hwlat_probe *hw = data;

	if (READ_ONCE(hw->sampling_cpu) != smp_processor_id())
		return;
	hw->nmi_count++;
	hw->nmi_total += delta_ns > 0 ? delta_ns : 0;
}

struct fhook_hwlat_sample {
	s64 inner;	/* the longest gap inside a loop */
	s64 outer;	/* ... between two loops */
	u32 count;	/* gaps over the threshold */
	bool still;	/* the clock stopped: the window was given up */
};

/*
 * The kernel's get_sample(), with interrupts off: spin for the width,
 * reading the clock twice per loop.  The clock is CLOCK_MONOTONIC's, as
 * the records' timestamps (the kernel's tracer reads trace_clock_local(),
 * which under TCG was seen ending a spin early by the monotonic clock).
 */
static void fhook_hwlat_spin(struct fhook_hwlat_probe *hw, struct fhook_hwlat_sample *smp)
{
	s64 width = hw->cfg.width_us * NSEC_PER_USEC, thresh = hw->cfg.threshold_ns;
	u64 start, t1, t2 = 0, moved = 0;
	unsigned int still = 0;
	s64 inner, outer;

	start = ktime_get_mono_fast_ns();
	do {
		t1 = ktime_get_mono_fast_ns();
		outer = t2 ? (s64)(t1 - t2) : 0;
		t2 = ktime_get_mono_fast_ns();
		inner = t2 - t1;
		if (inner > thresh || outer > thresh)
			smp->count++;
		smp->inner = max_t(s64, smp->inner, inner);
		smp->outer = max_t(s64, smp->outer, outer);
		/* a clock the tick drives (jiffies) stops with interrupts off */
		if (t2 != moved) {
			moved = t2;
			still = 0;
		} else if (++still > FHOOK_HWLAT_MAX_STILL) {
			smp->still = true;
			break;
		}
	} while ((s64)(t2 - start) <= width);
}

/* One window on this CPU: a record when a gap passed the threshold. */
static void fhook_hwlat_window(struct fhook_hwlat_probe *hw)
{
	struct fhook_session *s = hw->p.session;
	struct fhook_hwlat_sample smp = {};
	struct fhook_probe_counters *c;
	struct fhook_rec_hwlat *r;
	struct fhook_ring *rb;
	int cpu;

	local_irq_disable();
	cpu = smp_processor_id();
	hw->nmi_count = 0;
	hw->nmi_total = 0;
	/* pairs with the READ_ONCE in fhook_hwlat_on_nmi() (same CPU) */
	WRITE_ONCE(hw->sampling_cpu, cpu);
	barrier();
	fhook_hwlat_spin(hw, &smp);
	barrier();
	WRITE_ONCE(hw->sampling_cpu, -1);
	if (smp.still)
		pr_warn_once("hwlat: the clock does not advance with interrupts off: windows given up\n");
	else if (smp.inner > (s64)hw->cfg.threshold_ns || smp.outer > (s64)hw->cfg.threshold_ns) {
		c = fhook_counters(s, cpu, hw->p.id);
		rb = s->rings[cpu];
		fhook_count(&c->hits);
		/* (numbered before the ring: a window lost leaves a gap) */
		hw->seq++;
		r = fhook_ring_reserve(rb, sizeof(*r), hw->p.id);
		if (!IS_ERR_OR_NULL(r)) {
			fhook_rec_init(&r->hdr, FHOOK_REC_HWLAT, sizeof(*r), hw->p.id,
				       preempt_count(), true);
			r->inner_ns = smp.inner;
			r->outer_ns = smp.outer;
			r->nmi_total_ns = hw->nmi_total;
			r->seqnum = hw->seq;
			r->nmi_count = hw->nmi_count;
			r->count = smp.count;
			fhook_count(&c->written);
		}
		fhook_ring_commit(rb);
	}
	local_irq_enable();
}

/* The next CPU of the session after @cpu that is online, or -1. */
static int fhook_hwlat_next_cpu(struct fhook_hwlat_probe *hw, int cpu)
{
	int next = cpumask_next_and(cpu, hw->cpus, cpu_online_mask);

	if (next >= nr_cpu_ids)
		next = cpumask_first_and(hw->cpus, cpu_online_mask);
	return next < nr_cpu_ids ? next : -1;
}

/* the kernel's kthread_fn(): a window on each CPU in turn */
static int fhook_hwlat_main(void *data)
{
	struct fhook_hwlat_probe *hw = data;
	u64 rest = max((hw->cfg.window_us - hw->cfg.width_us) * NSEC_PER_USEC,
		       FHOOK_HWLAT_MIN_REST);
	ktime_t to;
	int cpu = -1;

	while (!kthread_should_stop()) {
		cpu = fhook_hwlat_next_cpu(hw, cpu);
		/* (none of the session's CPUs online: wait a window) */
		if (cpu >= 0 && !set_cpus_allowed_ptr(current, cpumask_of(cpu)))
			fhook_hwlat_window(hw);
		set_current_state(TASK_INTERRUPTIBLE);
		to = ns_to_ktime(rest);
		if (!kthread_should_stop())
			schedule_hrtimeout_range(&to, 0, HRTIMER_MODE_REL);
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static int fhook_hwlat_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			    s32 *err_index)
{
	struct fhook_hwlat_probe *hw = to_hwlat(p);
	struct fhook_hwlat *cfg = &hw->cfg;
	int ret;

	if (!arg->hook)
		return fhook_refuse(p->session, FHOOK_R_HWLAT_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), sizeof(*cfg), arg->hook);
	if (ret < 0)
		return fhook_refuse(p->session, FHOOK_R_HWLAT_CFG, -1, ret);
	if (cfg->flags || cfg->reserved[0] || cfg->reserved[1])
		return fhook_refuse(p->session, FHOOK_R_RESERVED, -1, -EINVAL);
	if (cfg->window_us < FHOOK_HWLAT_MIN_WINDOW_US || cfg->window_us > FHOOK_HWLAT_MAX_WINDOW_US ||
	    !cfg->width_us || cfg->width_us > FHOOK_HWLAT_MAX_WIDTH_US ||
	    cfg->width_us >= cfg->window_us)
		return fhook_refuse(p->session, FHOOK_R_HWLAT_CFG, -1, -EINVAL);
	if (!cfg->threshold_ns)
		cfg->threshold_ns = FHOOK_HWLAT_DEF_THRESH;
	/* (a gap that long could never be seen inside the width) */
	if (cfg->threshold_ns >= cfg->width_us * NSEC_PER_USEC)
		return fhook_refuse(p->session, FHOOK_R_HWLAT_CFG, -1, -EINVAL);
	ret = fhook_priv_require(p, FHOOK_PRIV_ADMIN);
	if (ret)
		return ret;
	return zalloc_cpumask_var(&hw->cpus, GFP_KERNEL_ACCOUNT) ? 0 : -ENOMEM;
}

static void fhook_hwlat_disarm(struct fhook_probe *p)
{
	struct fhook_hwlat_probe *hw = to_hwlat(p);

	if (hw->thread) {
		/* it ends its window first: at most the width */
		kthread_stop(hw->thread);
		put_task_struct(hw->thread);
		hw->thread = NULL;
	}
	if (hw->nmi_registered) {
		tracepoint_probe_unregister(fhook_hwlat_nmi_tp, fhook_hwlat_on_nmi, hw);
		tracepoint_synchronize_unregister();
		hw->nmi_registered = false;
	}
	p->registered = false;
}

static int fhook_hwlat_arm(struct fhook_probe *p)
{
	struct fhook_hwlat_probe *hw = to_hwlat(p);
	struct task_struct *t;

	hw->seq = 0;
	hw->sampling_cpu = -1;
	/* the CPUs visited are the session's at START (CPU_FILTER may change) */
	cpumask_copy(hw->cpus, p->session->cpu_filter ? p->session->cpus : cpu_possible_mask);
	/* NMIs are counted where the kernel has the tracepoint: 0 elsewhere */
	if (fhook_hwlat_nmi_tp &&
	    !tracepoint_probe_register(fhook_hwlat_nmi_tp, fhook_hwlat_on_nmi, hw))
		hw->nmi_registered = true;
	t = kthread_create(fhook_hwlat_main, hw, "fhook-hwlat");
	if (IS_ERR(t)) {
		fhook_hwlat_disarm(p);
		return PTR_ERR(t);
	}
	hw->thread = get_task_struct(t);
	wake_up_process(t);
	p->registered = true;
	return 0;
}

static void fhook_hwlat_release(struct fhook_probe *p)
{
	free_cpumask_var(to_hwlat(p)->cpus);
}

const struct fhook_probe_kind fhook_hwlat_kind = {
	.size		= sizeof(struct fhook_hwlat_probe),
	.fields		= FHOOK_ADD_HOOK,
	.init		= fhook_hwlat_init,
	.arm		= fhook_hwlat_arm,
	.disarm		= fhook_hwlat_disarm,
	.release	= fhook_hwlat_release,
	.disarm_unregisters = true,
	.no_triggers	= true,
};

void fhook_hwlat_setup(void)
{
	fhook_hwlat_nmi_tp = fhook_tracepoint("nmi_handler");
}
