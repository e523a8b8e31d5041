// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoints, as their trace events: the event's own TP_fast_assign fills
 * the entry its format file describes, which only ftrace's buffer and perf
 * receive.  fhook takes the perf path: one in-kernel counter per online CPU
 * (perf_event_create_kernel_counter(), PERF_TYPE_TRACEPOINT, period 1,
 * PERF_SAMPLE_RAW) whose overflow handler gets the raw entry and writes it
 * to the session's ring.  Counters are made at START and released at STOP;
 * a CPU that comes online in between is not covered.
 */
#include "fhook.h"

#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/slab.h>

static notrace void fhook_tp_handler(struct perf_event *event, struct perf_sample_data *data,
				     struct pt_regs *regs)
{
	struct fhook_probe *p = event->overflow_handler_context;
	struct fhook_session *s = p->session;
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_probe_counters *c;
	struct fhook_rec_probe *r;
	struct fhook_ring *rb;
	unsigned int len, size;
	const u8 *entry;
	int cpu;
	u32 seq;

	/* raw is valid only when flagged (perf_sample_data_init() leaves it) */
	if (!READ_ONCE(p->enabled) || !(data->sample_flags & PERF_SAMPLE_RAW) || !data->raw)
		return;
	entry = data->raw->frag.data;
	len = min_t(u32, data->raw->frag.size, FHOOK_MAX_PROBE_DATA);
	cpu = smp_processor_id();
	c = fhook_counters(s, cpu, p->id);
	rb = s->rings[cpu];
	if (!fhook_session_wants(s)) {
		fhook_count(&c->filtered);
		return;
	}
	/* predicates read fields up to tp_size: a shorter entry fails them */
	if (p->nr_triggers && len >= p->tp_size)
		fhook_triggers_run(p, rb, entry, len);
	if ((p->pred && (len < p->tp_size || !fhook_pred_run(p->pred, entry, len))) ||
	    READ_ONCE(p->paused)) {
		fhook_count(&c->filtered);
		return;
	}
	fhook_count(&c->hits);
	size = sizeof(*r) + len;
	r = fhook_ring_reserve(rb, size, p->id, &seq);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init(&r->hdr, FHOOK_REC_TRACEPOINT, size, p->id, seq, pc, irqs_off);
		r->ip = p->tp_id;
		r->ret_ip = 0;
		r->faults = 0;
		memcpy(r->data, entry, len);
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

static int fhook_tp_init(struct fhook_probe *p, const struct fhook_probe_add *arg, s32 *err_index)
{
	if (arg->filter_len || arg->exclude_len || arg->nr_ips || arg->symbol_len || arg->symbol ||
	    arg->offset || arg->maxactive || arg->prog_len || arg->prog || arg->entry_len ||
	    arg->flags || arg->__pad || !arg->addr || arg->addr > U32_MAX ||
	    arg->data_size > FHOOK_MAX_PROBE_DATA)
		return -EINVAL;
	p->tp_id = arg->addr;
	p->tp_size = arg->data_size;
	p->pred = fhook_pred_load(arg, arg->data_size, err_index);
	if (IS_ERR(p->pred)) {
		int ret = PTR_ERR(p->pred);

		p->pred = NULL;
		return ret;
	}
	p->tp_events = kcalloc(nr_cpu_ids, sizeof(*p->tp_events), GFP_KERNEL);
	return p->tp_events ? 0 : -ENOMEM;
}

static void fhook_tp_disarm(struct fhook_probe *p)
{
	int cpu;

	if (!p->tp_events)
		return;
	WRITE_ONCE(p->enabled, false);
	for_each_possible_cpu(cpu) {
		if (p->tp_events[cpu]) {
			perf_event_release_kernel(p->tp_events[cpu]);
			p->tp_events[cpu] = NULL;
		}
	}
}

static int fhook_tp_arm(struct fhook_probe *p)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = p->tp_id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
	};
	int cpu, ret = 0;

	WRITE_ONCE(p->enabled, true);
	/*
	 * No cpus_read_lock() here: the first perf user of a tracepoint
	 * enables its static key, which takes it again.  A CPU that goes
	 * offline meanwhile gives -ENODEV: skipped.
	 */
	for_each_online_cpu(cpu) {
		struct perf_event *e;

		e = perf_event_create_kernel_counter(&attr, cpu, NULL, fhook_tp_handler, p);
		if (IS_ERR(e)) {
			if (PTR_ERR(e) == -ENODEV)
				continue;
			ret = PTR_ERR(e);
			break;
		}
		p->tp_events[cpu] = e;
	}
	if (ret)
		fhook_tp_disarm(p);
	return ret;
}

static void fhook_tp_release(struct fhook_probe *p)
{
	fhook_tp_disarm(p);
	kfree(p->tp_events);
	fhook_triggers_free(p);
	kfree(p->pred);
}

const struct fhook_probe_kind fhook_tp_kind = {
	.init		= fhook_tp_init,
	.arm		= fhook_tp_arm,
	.disarm		= fhook_tp_disarm,
	.release	= fhook_tp_release,
	.sync_rcu	= true,
};
