// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoints, as their trace events: the event's own TP_fast_assign fills
 * the entry its format file describes, which only ftrace's buffer and perf
 * receive.  fhook takes the perf path: one in-kernel counter per online CPU
 * (perf_event_create_kernel_counter(), PERF_TYPE_TRACEPOINT, period 1,
 * PERF_SAMPLE_RAW) whose overflow handler gets the raw entry and writes it
 * to the session's ring.  Counters are made at START for the online CPUs
 * and released at STOP.  A CPU that comes online in between gets one too:
 * a CPU hotplug callback (an instance per armed probe) queues a work item
 * that makes the missing counters, outside the hotplug lock (perf takes
 * event_mutex, which ranks above it).  perf turns off the counters of a
 * CPU that goes offline; the work item frees those and makes new ones.
 */
#include "fhook.h"

#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include <linux/workqueue.h>

/* A tracepoint probe: the common part and its perf counters. */
struct fhook_tp_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct perf_event **events;	/* [nr_cpu_ids] */
	u64 id;				/* the trace event's id */
	u32 size;			/* fixed entry size: predicate bounds */
	bool hotplug;			/* an instance of the CPU callbacks */
	struct hlist_node cpu_node;
	struct work_struct work;	/* counters for new CPUs */
};

static_assert(offsetof(struct fhook_tp_probe, p) == 0);

static inline struct fhook_tp_probe *to_tp(struct fhook_probe *p)
{
	return container_of(p, struct fhook_tp_probe, p);
}

static int fhook_tp_cpuhp = -1;		/* the dynamic hotplug state */
static void fhook_tp_work(struct work_struct *work);

/* enum trace_flag_type (a trace entry's common_flags) and FHOOK_CTX_* */
static const struct {
	u8 trace;
	u8 ctx;
} fhook_tp_ctx_map[] = {
	{ TRACE_FLAG_IRQS_OFF,		FHOOK_CTX_IRQS_OFF },
	{ TRACE_FLAG_NEED_RESCHED,	FHOOK_CTX_NEED_RESCHED },
	{ TRACE_FLAG_HARDIRQ,		FHOOK_CTX_HARDIRQ },
	{ TRACE_FLAG_SOFTIRQ,		FHOOK_CTX_SOFTIRQ },
	{ TRACE_FLAG_PREEMPT_RESCHED,	FHOOK_CTX_PREEMPT_RESCHED },
	{ TRACE_FLAG_NMI,		FHOOK_CTX_NMI },
	{ TRACE_FLAG_BH_OFF,		FHOOK_CTX_BH_OFF },
};

static notrace u8 fhook_tp_ctx(u8 trace_flags)
{
	u8 ctx = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(fhook_tp_ctx_map); i++)
		if (trace_flags & fhook_tp_ctx_map[i].trace)
			ctx |= fhook_tp_ctx_map[i].ctx;
	return ctx;
}

static notrace void fhook_tp_handler(struct perf_event *event, struct perf_sample_data *data,
				     struct pt_regs *regs)
{
	struct fhook_probe *p = event->overflow_handler_context;
	struct fhook_tp_probe *tp = to_tp(p);
	struct fhook_session *s = p->session;
	const struct trace_entry *head;
	struct fhook_probe_counters *c;
	struct fhook_rec_probe *r;
	struct fhook_ring *rb;
	unsigned int len, size;
	const u8 *entry;
	int cpu;

	/* raw is valid only when flagged (perf_sample_data_init() leaves it) */
	if (!READ_ONCE(p->enabled) || !(data->sample_flags & PERF_SAMPLE_RAW) || !data->raw)
		return;
	entry = data->raw->frag.data;
	len = min_t(u32, data->raw->frag.size, FHOOK_MAX_PROBE_DATA);
	head = (const struct trace_entry *)entry;
	cpu = smp_processor_id();
	c = fhook_counters(s, cpu, p->id);
	rb = s->rings[cpu];
	/* (every trace event's entry starts with its header) */
	if (unlikely(len < sizeof(*head)) || !fhook_session_wants(s)) {
		fhook_count(&c->filtered);
		return;
	}
	/* predicates read fields up to its size: a shorter entry fails them */
	if (p->nr_triggers && len >= tp->size)
		fhook_triggers_run(p, rb, entry, len);
	if ((p->pred && (len < tp->size || !fhook_pred_run(p->pred, entry, len))) ||
	    READ_ONCE(p->paused)) {
		fhook_count(&c->filtered);
		return;
	}
	fhook_count(&c->hits);
	if (p->hist) {
		fhook_hist_add(p->hist, entry, len, 0, tp->id, 0, NULL);
		return;
	}
	size = sizeof(*r) + len;
	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		/*
		 * The context the tracepoint saw, not this handler's (perf calls
		 * it with irqs off): perf_tp_event() filled the entry's header
		 * with tracing_gen_ctx() inside the tracepoint, whose own
		 * preempt_disable is in the count (userspace prints it as
		 * tracefs does).
		 */
		fhook_rec_init_ctx(&r->hdr, FHOOK_REC_TRACEPOINT, size, p->id,
				   fhook_clock(), fhook_tp_ctx(head->flags),
				   head->preempt_count);
		r->ip = tp->id;
		r->ret_ip = 0;
		r->faults = 0;
		memcpy(r->data, entry, len);
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

static int fhook_tp_init(struct fhook_probe *p, const struct fhook_probe_add *arg, s32 *err_index)
{
	/* the event's id; the fixed size of its entries, for the predicate */
	struct fhook_tp_probe *tp = to_tp(p);

	if (!arg->addr || arg->addr > U32_MAX || arg->data_size > FHOOK_MAX_PROBE_DATA)
		return -EINVAL;
	tp->id = arg->addr;
	tp->size = arg->data_size;
	p->data_size = arg->data_size;
	INIT_WORK(&tp->work, fhook_tp_work);
	p->pred = fhook_pred_load(p, arg, arg->data_size, err_index);
	if (IS_ERR(p->pred)) {
		int ret = PTR_ERR(p->pred);

		p->pred = NULL;
		return ret;
	}
	tp->events = kcalloc(nr_cpu_ids, sizeof(*tp->events), GFP_KERNEL_ACCOUNT);
	return tp->events ? 0 : -ENOMEM;
}

static void fhook_tp_disarm(struct fhook_probe *p)
{
	struct fhook_tp_probe *tp = to_tp(p);
	int cpu;

	if (!tp->events)
		return;
	WRITE_ONCE(p->enabled, false);
	/* no callback runs for @p once this returns, nor its work */
	if (tp->hotplug) {
		cpuhp_state_remove_instance_nocalls(fhook_tp_cpuhp, &tp->cpu_node);
		tp->hotplug = false;
	}
	cancel_work_sync(&tp->work);
	for_each_possible_cpu(cpu) {
		if (tp->events[cpu]) {
			perf_event_release_kernel(tp->events[cpu]);
			tp->events[cpu] = NULL;
		}
	}
}

/*
 * The counter of @p on @cpu, made if missing or left by an offlined CPU.
 * From START or the work item: no lock held (freeing a counter may drop
 * the tracepoint's last perf user, which takes the hotplug lock).
 */
static int fhook_tp_cpu_counter(struct fhook_tp_probe *tp, unsigned int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = tp->id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
	};
	struct perf_event *e = tp->events[cpu];

	/* perf turns a CPU's counters off when it goes offline */
	if (e && READ_ONCE(e->state) > PERF_EVENT_STATE_OFF)
		return 0;
	if (e) {
		tp->events[cpu] = NULL;
		perf_event_release_kernel(e);
	}
	e = perf_event_create_kernel_counter(&attr, cpu, NULL, fhook_tp_handler, &tp->p);
	if (IS_ERR(e))
		return PTR_ERR(e);
	tp->events[cpu] = e;
	return 0;
}

/* The counters of the CPUs online now; never runs with the arming itself. */
static void fhook_tp_work(struct work_struct *work)
{
	struct fhook_tp_probe *tp = container_of(work, struct fhook_tp_probe, work);
	unsigned int cpu;
	int ret;

	for_each_online_cpu(cpu) {
		ret = fhook_tp_cpu_counter(tp, cpu);
		/* -ENODEV: offline again already */
		if (ret && ret != -ENODEV)
			pr_warn("probe %u: no tracepoint counter on CPU %u, which came online: %d\n",
				tp->p.id, cpu, ret);
	}
}

/* CPU hotplug: @cpu is online (the callback runs for every armed probe). */
static int fhook_tp_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct fhook_tp_probe *tp = hlist_entry(node, struct fhook_tp_probe, cpu_node);

	schedule_work(&tp->work);
	return 0;
}

static int fhook_tp_arm(struct fhook_probe *p)
{
	struct fhook_tp_probe *tp = to_tp(p);
	int cpu, ret = 0;

	WRITE_ONCE(p->enabled, true);
	/*
	 * No cpus_read_lock() here: the first perf user of a tracepoint
	 * enables its static key, which takes it again.  A CPU that goes
	 * offline meanwhile gives -ENODEV: skipped.
	 */
	for_each_online_cpu(cpu) {
		ret = fhook_tp_cpu_counter(tp, cpu);
		if (ret == -ENODEV)
			ret = 0;
		if (ret)
			break;
	}
	/*
	 * From here on every CPU that comes online gets one; the work item
	 * runs once now for those that came or went during the loop above.
	 */
	if (!ret) {
		ret = cpuhp_state_add_instance_nocalls(fhook_tp_cpuhp, &tp->cpu_node);
		tp->hotplug = !ret;
	}
	if (ret)
		fhook_tp_disarm(p);
	else
		schedule_work(&tp->work);
	return ret;
}

int fhook_tp_setup(void)
{
	int ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "fhook/tracepoint:online",
					  fhook_tp_cpu_online, NULL);

	if (ret < 0)
		return ret;
	fhook_tp_cpuhp = ret;
	return 0;
}

void fhook_tp_teardown(void)
{
	cpuhp_remove_multi_state(fhook_tp_cpuhp);
}

static void fhook_tp_release(struct fhook_probe *p)
{
	fhook_tp_disarm(p);
	kfree(to_tp(p)->events);
	kfree(p->pred);
}

const struct fhook_probe_kind fhook_tp_kind = {
	.size		= sizeof(struct fhook_tp_probe),
	.fields		= FHOOK_ADD_ADDR | FHOOK_ADD_DATA_SIZE | FHOOK_ADD_PRED,
	.init		= fhook_tp_init,
	.arm		= fhook_tp_arm,
	.disarm		= fhook_tp_disarm,
	.release	= fhook_tp_release,
	.sync_rcu	= true,
};
