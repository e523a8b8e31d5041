// SPDX-License-Identifier: GPL-2.0
/*
 * The irqsoff, preemptoff and preemptirqsoff tracers (FHOOK_PROBE_IRQSOFF):
 * what kernel/trace/trace_irqsoff.c measures, for kernels built without
 * CONFIG_IRQSOFF_TRACER and CONFIG_PREEMPT_TRACER but with the tracepoints
 * they stand on: irq_disable and irq_enable (CONFIG_PREEMPTIRQ_TRACEPOINTS,
 * which lockdep's TRACE_IRQFLAGS brings), preempt_disable and
 * preempt_enable (CONFIG_TRACE_PREEMPT_TOGGLE).  Debian's kernels have
 * neither; a probe asking for what this kernel lacks is refused.
 *
 * A section starts on a CPU when the first of the kinds watched is turned
 * off there (interrupts, preemption, or either) and ends when the last is
 * back on: trace_hardirqs_off() and trace_hardirqs_on() call the
 * tracepoints once for the outermost disable and the final enable.  Idle
 * is not a section: the kernel's tracer stops timing around it
 * (stop_critical_timings()), which no tracepoint shows, so the cpu_idle
 * tracepoint next to it drops the section open; nor is the time a CPU is
 * offline (one open when it went down is dropped when it comes back).  A
 * section longer than every one before (all CPUs: the kernel's
 * max_latency), or with a threshold every one at least that long
 * (tracing_thresh), is a FHOOK_REC_IRQSOFF record with where it started
 * and ended and the stack where it ended.  Sections already open at START
 * are not measured.
 *
 * The callbacks run on every disable and enable of the kinds watched, with
 * interrupts (preemption) off: they touch only this CPU's state, the clock
 * is NMI-safe, and nothing the report does (stack, ring) turns interrupts
 * on or preemption to 0 again, which trace_hardirqs_on()'s tracing_irq_cpu
 * and the preempt tracepoints' outermost-only calls would need to re-enter.
 * NMIs (whose entry and exit fire the irq tracepoints in newer kernels)
 * are left out.  A CAP_PERFMON user may add one per session.
 */
#include "fhook.h"

#include <linux/cpuhotplug.h>
#include <linux/percpu.h>
#include <linux/tracepoint.h>
#include <trace/events/power.h>

/* One CPU's open section. */
struct fhook_isoff_cpu {
	u64 start;			/* CLOCK_MONOTONIC ns */
	unsigned long ip, parent_ip;	/* where it started */
	u32 off;			/* the kinds off now (FHOOK_IRQSOFF_*) */
	bool dying;			/* it started while the CPU went offline */
};

/*
 * This CPU is going offline (from the hotplug teardown on it to its
 * startup when it is back): a section started meanwhile ends when the CPU
 * runs again, after the time it was off, and is dropped.
 */
static DEFINE_PER_CPU(bool, fhook_isoff_dying);
static int fhook_isoff_hp = -1;

struct fhook_irqsoff_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct fhook_irqsoff cfg;
	struct fhook_isoff_cpu __percpu *cpus;
	u64 max_ns;			/* the longest section reported */
	atomic64_t seq;			/* sections reported */
	u32 registered;			/* BIT(i): fhook_isoff_tps[i] registered */
};

static_assert(offsetof(struct fhook_irqsoff_probe, p) == 0);

static inline struct fhook_irqsoff_probe *to_irqsoff(struct fhook_probe *p)
{
	return container_of(p, struct fhook_irqsoff_probe, p);
}

/* A kind watched is turned off: the section starts with the first. */
static __always_inline void fhook_isoff_off(struct fhook_irqsoff_probe *io, u32 kind,
					    unsigned long ip, unsigned long parent_ip)
{
	struct fhook_isoff_cpu *c = this_cpu_ptr(io->cpus);

	if (in_nmi())
		return;
	if (!c->off) {
		c->start = fhook_clock();
		c->ip = ip;
		c->parent_ip = parent_ip;
		c->dying = this_cpu_read(fhook_isoff_dying);
	}
	c->off |= kind;
}

/* Report a section that passed: a new maximum, or over the threshold. */
static bool fhook_isoff_passes(struct fhook_irqsoff_probe *io, u64 ns)
{
	u64 max;

	if (io->cfg.threshold_ns)
		return ns >= io->cfg.threshold_ns;
	max = READ_ONCE(io->max_ns);
	do {
		if (ns <= max)
			return false;
	} while (!try_cmpxchg64(&io->max_ns, &max, ns));
	return true;
}

/*
 * The stack where a section ended: from @ip (the return address into
 * what called trace_hardirqs_on()) on, the frames of the tracepoint and
 * of fhook above it dropped (all kept if @ip is not among them).
 */
static unsigned int fhook_isoff_stack(u64 *ips, unsigned long ip)
{
	unsigned int n = fhook_stack_kernel(NULL, ips, FHOOK_MAX_STACK), i;

	for (i = 0; i < n && ips[i] != ip; i++)
		;
	if (i < n) {
		memmove(ips, ips + i, (n - i) * sizeof(u64));
		n -= i;
	}
	return n;
}

static void fhook_isoff_report(struct fhook_irqsoff_probe *io, const struct fhook_isoff_cpu *c,
			       u64 latency, u64 end, unsigned long ip, unsigned long parent_ip)
{
	struct fhook_session *s = io->p.session;
	int cpu = smp_processor_id();
	struct fhook_probe_counters *cnt = fhook_counters(s, cpu, io->p.id);
	struct fhook_ring *rb = s->rings[cpu];
	struct fhook_rec_irqsoff *r;
	unsigned int n = 0, size;
	u64 *ips = NULL;
	void *scratch;

	fhook_count(&cnt->hits);
	scratch = fhook_scratch_get();
	if (scratch) {
		ips = scratch;
		n = fhook_isoff_stack(ips, ip);
	}
	size = sizeof(*r) + (ips ? 8 * (n + 1) : 0);
	r = fhook_ring_reserve(rb, size, io->p.id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ts(&r->hdr, FHOOK_REC_IRQSOFF, size, io->p.id, preempt_count(),
				  irqs_disabled(), end);
		r->latency_ns = latency;
		r->start_ip = c->ip;
		r->start_parent_ip = c->parent_ip;
		r->end_ip = ip;
		r->end_parent_ip = parent_ip;
		r->seqnum = atomic64_inc_return(&io->seq);
		if (ips) {
			r->hdr.flags |= FHOOK_CTX_STACK;
			memcpy(r + 1, ips, 8 * n);
			fhook_stack_trailer((u64 *)(r + 1), n);
		}
		fhook_count(&cnt->written);
	}
	fhook_ring_commit(rb);
	if (scratch)
		fhook_scratch_put();
}

/* A kind watched is back on: the section ends with the last. */
static __always_inline void fhook_isoff_on(struct fhook_irqsoff_probe *io, u32 kind,
					   unsigned long ip, unsigned long parent_ip)
{
	struct fhook_isoff_cpu *c = this_cpu_ptr(io->cpus), start;
	u64 now;

	/* (off since before START, or since idle: not measured) */
	if (in_nmi() || !(c->off & kind))
		return;
	/*
	 * the section, copied before it is closed: from here on an interrupt
	 * (a preempt section ends with interrupts on) may open another
	 */
	start = *c;
	WRITE_ONCE(c->off, c->off & ~kind);
	if (start.off & ~kind || start.dying)
		return;
	/* (every task's sections: the session's CPU set only) */
	if (READ_ONCE(io->p.session->cpu_filter) &&
	    !cpumask_test_cpu(smp_processor_id(), io->p.session->cpus))
		return;
	now = fhook_clock();
	if ((s64)(now - start.start) > 0 && fhook_isoff_passes(io, now - start.start))
		fhook_isoff_report(io, &start, now - start.start, now, ip, parent_ip);
}

/*
 * TP_PROTO(unsigned int state, unsigned int cpu_id): cpu_idle, at the
 * kernel's stop_critical_timings() (and PWR_EVENT_EXIT at its start): the
 * section open is the idle loop's, dropped
 */
static notrace void fhook_isoff_idle(void *data, unsigned int state, unsigned int cpu_id)
{
	struct fhook_irqsoff_probe *io = data;

	if (state != PWR_EVENT_EXIT)
		this_cpu_ptr(io->cpus)->off = 0;
}

/* TP_PROTO(unsigned long ip, unsigned long parent_ip), each of the four */
static notrace void fhook_isoff_irq_off(void *data, unsigned long ip, unsigned long parent_ip)
{
	fhook_isoff_off(data, FHOOK_IRQSOFF_IRQ, ip, parent_ip);
}

static notrace void fhook_isoff_irq_on(void *data, unsigned long ip, unsigned long parent_ip)
{
	fhook_isoff_on(data, FHOOK_IRQSOFF_IRQ, ip, parent_ip);
}

static notrace void fhook_isoff_preempt_off(void *data, unsigned long ip,
					    unsigned long parent_ip)
{
	fhook_isoff_off(data, FHOOK_IRQSOFF_PREEMPT, ip, parent_ip);
}

static notrace void fhook_isoff_preempt_on(void *data, unsigned long ip, unsigned long parent_ip)
{
	fhook_isoff_on(data, FHOOK_IRQSOFF_PREEMPT, ip, parent_ip);
}

/*
 * The tracepoints, in the order they are registered: each enable before
 * its disable, so that no section starts before its end can be seen
 * (kind 0: needed by every kind)
 */
static const struct {
	const char *name;
	void *probe;
	u32 kind;
} fhook_isoff_tps[] = {
	{ "cpu_idle", fhook_isoff_idle, 0 },
	{ "irq_enable", fhook_isoff_irq_on, FHOOK_IRQSOFF_IRQ },
	{ "irq_disable", fhook_isoff_irq_off, FHOOK_IRQSOFF_IRQ },
	{ "preempt_enable", fhook_isoff_preempt_on, FHOOK_IRQSOFF_PREEMPT },
	{ "preempt_disable", fhook_isoff_preempt_off, FHOOK_IRQSOFF_PREEMPT },
};

static struct tracepoint *fhook_isoff_tp[ARRAY_SIZE(fhook_isoff_tps)];
/* the kinds whose both tracepoints this kernel has */
static u32 fhook_isoff_kinds;

/* each runs on every toggle of its kinds: one per session */
static int fhook_irqsoff_validate(struct fhook_session *s, const struct fhook_probe_add *arg)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node)
		if (p->type == FHOOK_PROBE_IRQSOFF)
			return fhook_refuse(s, FHOOK_R_IRQSOFF_ONE, -1, -EBUSY);
	return 0;
}

static int fhook_irqsoff_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			      s32 *err_index)
{
	struct fhook_irqsoff_probe *io = to_irqsoff(p);
	struct fhook_irqsoff *cfg = &io->cfg;
	int ret;

	if (!arg->hook)
		return fhook_refuse(p->session, FHOOK_R_IRQSOFF_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), sizeof(*cfg), arg->hook);
	if (ret < 0)
		return fhook_refuse(p->session, FHOOK_R_IRQSOFF_CFG, -1, ret);
	if (cfg->reserved[0] || cfg->reserved[1])
		return fhook_refuse(p->session, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!cfg->kinds || cfg->kinds & ~(FHOOK_IRQSOFF_IRQ | FHOOK_IRQSOFF_PREEMPT))
		return fhook_refuse(p->session, FHOOK_R_IRQSOFF_CFG, -1, -EINVAL);
	if (cfg->kinds & ~fhook_isoff_kinds)
		return fhook_refuse(p->session, FHOOK_R_IRQSOFF_TPS, -1, -EOPNOTSUPP);
	io->cpus = alloc_percpu_gfp(struct fhook_isoff_cpu, GFP_KERNEL_ACCOUNT);
	return io->cpus ? 0 : -ENOMEM;
}

static void fhook_irqsoff_disarm(struct fhook_probe *p)
{
	struct fhook_irqsoff_probe *io = to_irqsoff(p);
	int i;

	for (i = 0; i < ARRAY_SIZE(fhook_isoff_tps); i++) {
		if (io->registered & BIT(i))
			tracepoint_probe_unregister(fhook_isoff_tp[i], fhook_isoff_tps[i].probe, io);
	}
	if (io->registered)
		tracepoint_synchronize_unregister();
	io->registered = 0;
	p->registered = false;
}

static int fhook_irqsoff_arm(struct fhook_probe *p)
{
	struct fhook_irqsoff_probe *io = to_irqsoff(p);
	int ret = 0, i, cpu;

	/* no section open: those open now end unmeasured */
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(io->cpus, cpu), 0, sizeof(struct fhook_isoff_cpu));
	io->max_ns = 0;
	atomic64_set(&io->seq, 0);
	p->registered = true;
	for (i = 0; i < ARRAY_SIZE(fhook_isoff_tps) && !ret; i++) {
		if (fhook_isoff_tps[i].kind && !(io->cfg.kinds & fhook_isoff_tps[i].kind))
			continue;
		ret = tracepoint_probe_register(fhook_isoff_tp[i], fhook_isoff_tps[i].probe, io);
		if (!ret)
			io->registered |= BIT(i);
	}
	if (ret)
		fhook_irqsoff_disarm(p);
	return ret;
}

static void fhook_irqsoff_release(struct fhook_probe *p)
{
	free_percpu(to_irqsoff(p)->cpus);
}

const struct fhook_probe_kind fhook_irqsoff_kind = {
	.size		= sizeof(struct fhook_irqsoff_probe),
	.fields		= FHOOK_ADD_HOOK,
	.validate	= fhook_irqsoff_validate,
	.init		= fhook_irqsoff_init,
	.arm		= fhook_irqsoff_arm,
	.disarm		= fhook_irqsoff_disarm,
	.release	= fhook_irqsoff_release,
	.disarm_unregisters = true,
	.no_triggers	= true,
};

/* FHOOK_FEAT_IRQSOFF and _PREEMPTOFF: what this kernel's tracepoints allow */
u64 fhook_irqsoff_features(void)
{
	return (fhook_isoff_kinds & FHOOK_IRQSOFF_IRQ ? FHOOK_FEAT_IRQSOFF : 0) |
	       (fhook_isoff_kinds & FHOOK_IRQSOFF_PREEMPT ? FHOOK_FEAT_PREEMPTOFF : 0);
}

/* CPU hotplug, on the CPU: going offline (teardown), back (startup) */
static int fhook_isoff_cpu_down(unsigned int cpu)
{
	this_cpu_write(fhook_isoff_dying, true);
	return 0;
}

static int fhook_isoff_cpu_up(unsigned int cpu)
{
	this_cpu_write(fhook_isoff_dying, false);
	return 0;
}

void fhook_irqsoff_setup(void)
{
	u32 missing = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(fhook_isoff_tps); i++) {
		fhook_isoff_tp[i] = fhook_tracepoint(fhook_isoff_tps[i].name);
		if (fhook_isoff_tp[i])
			fhook_isoff_kinds |= fhook_isoff_tps[i].kind;
		else
			missing |= fhook_isoff_tps[i].kind ?: ~0U;
	}
	fhook_isoff_kinds &= ~missing;
	/* (without it a section across an offline CPU would be reported) */
	fhook_isoff_hp = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "fhook/irqsoff:online",
						   fhook_isoff_cpu_up, fhook_isoff_cpu_down);
	if (fhook_isoff_hp < 0)
		fhook_isoff_kinds = 0;
}

void fhook_irqsoff_exit(void)
{
	if (fhook_isoff_hp >= 0)
		cpuhp_remove_state_nocalls(fhook_isoff_hp);
}
