// SPDX-License-Identifier: GPL-2.0
/*
 * Triggers (FHOOK_IOC_TRIGGER_ADD): actions run by a probe's hits, as
 * tracefs' events/.../trigger: traceoff/traceon (the session stops or
 * resumes recording), stacktrace (this event carries its stack), snapshot
 * (the session freezes itself and tells the reader), enable/disable
 * (another probe records or not).  They run in the probe handler, possibly
 * in NMI: only flag writes, an atomic count and an irq_work.
 */
#include "fhook.h"

#include <linux/err.h>
#include <linux/slab.h>

struct fhook_trigger_k {
	u32 action;
	bool counted;
	u64 count;			/* as given: START restarts from it */
	atomic64_t left;		/* counted: runs left */
	struct fhook_probe *target;	/* ENABLE, DISABLE */
	struct fhook_pred *pred;
};

int fhook_trigger_add(struct fhook_session *s, const struct fhook_trigger *arg)
{
	struct fhook_probe *p, *target;
	struct fhook_trigger_k *t;
	s32 bad = -1;
	u32 data_size;

	if (arg->action == 0 || arg->action >= FHOOK_TRIG_MAX || arg->__pad)
		return fhook_refuse(s, FHOOK_R_TRIGGER, -1, -EINVAL);
	p = fhook_probe_find(s, arg->probe_id);
	target = fhook_probe_find(s, arg->target_id);
	/* counting probes and hooks have no records to act on */
	if (!p || p->type == FHOOK_PROBE_BENCH || p->type == FHOOK_PROBE_HOOK || p->count_only ||
	    p->lat || p->kind->no_triggers)
		return fhook_refuse(s, FHOOK_R_TRIGGER, -1, -ENOENT);
	if (arg->action == FHOOK_TRIG_ENABLE || arg->action == FHOOK_TRIG_DISABLE) {
		if (!target || target->type == FHOOK_PROBE_BENCH || target->kind->no_triggers)
			return fhook_refuse(s, FHOOK_R_TRIGGER, -1, -ENOENT);
	} else if (arg->target_id) {
		return fhook_refuse(s, FHOOK_R_TRIGGER, -1, -EINVAL);
	}
	if (p->nr_triggers >= FHOOK_MAX_TRIGGERS)
		return fhook_refuse(s, FHOOK_R_MAX_TRIGGERS, -1, -ENOSPC);
	/* a tracepoint's handler has no registers to unwind from */
	if (arg->action == FHOOK_TRIG_STACKTRACE && p->type == FHOOK_PROBE_TRACEPOINT)
		return fhook_refuse(s, FHOOK_R_TRIGGER, -1, -EOPNOTSUPP);

	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	t->action = arg->action;
	t->target = target;
	t->counted = arg->count != 0;
	t->count = min_t(u64, arg->count, S64_MAX);
	atomic64_set(&t->left, t->count);
	data_size = p->prog ? p->prog->data_size : p->data_size;
	t->pred = fhook_pred_copy(arg->pred, arg->pred_len, data_size, &bad);
	if (IS_ERR(t->pred)) {
		int ret = PTR_ERR(t->pred);

		kfree(t);
		return ret;
	}
	p->triggers[p->nr_triggers++] = t;
	return 0;
}

/* START: every count starts again (the probe is not armed) */
void fhook_triggers_reset(struct fhook_probe *p)
{
	u32 i;

	for (i = 0; i < p->nr_triggers; i++)
		atomic64_set(&p->triggers[i]->left, p->triggers[i]->count);
}

void fhook_triggers_free(struct fhook_probe *p)
{
	while (p->nr_triggers) {
		struct fhook_trigger_k *t = p->triggers[--p->nr_triggers];

		kfree(t->pred);
		kfree(t);
	}
}

/*
 * Run @p's triggers on a hit whose fetched data is @data (@len bytes, NULL
 * for function probes).  Returns FHOOK_TRIGGERED_STACK when a stacktrace
 * trigger ran.  Preemption is off; @rb is this CPU's ring.
 */
notrace unsigned int fhook_triggers_run(struct fhook_probe *p, struct fhook_ring *rb,
					const u8 *data, u32 len)
{
	struct fhook_session *s = p->session;
	unsigned int ret = 0;
	u32 i;

	for (i = 0; i < p->nr_triggers; i++) {
		struct fhook_trigger_k *t = p->triggers[i];

		if (t->pred && !fhook_pred_run(t->pred, data, len))
			continue;
		if (t->counted && atomic64_dec_if_positive(&t->left) < 0)
			continue;
		switch (t->action) {
		case FHOOK_TRIG_TRACEOFF:
			WRITE_ONCE(s->traced_off, true);
			break;
		case FHOOK_TRIG_TRACEON:
			WRITE_ONCE(s->traced_off, false);
			break;
		case FHOOK_TRIG_STACKTRACE:
			ret |= FHOOK_TRIGGERED_STACK;
			break;
		case FHOOK_TRIG_SNAPSHOT:
			/*
			 * Writers see frozen at their next reserve; the reader
			 * freezes with the ioctl (which waits for them) before
			 * it reads, so nobody waits here.
			 */
			WRITE_ONCE(s->frozen, true);
			atomic64_inc((atomic64_t *)&s->stats->snapshots);
			/* one wakeup until the reader has taken the snapshot */
			if (!xchg(&s->snapshot_due, true))
				fhook_ring_kick(rb);
			break;
		case FHOOK_TRIG_ENABLE:
			WRITE_ONCE(t->target->paused, false);
			break;
		case FHOOK_TRIG_DISABLE:
			WRITE_ONCE(t->target->paused, true);
			break;
		}
	}
	return ret;
}

/* Can a trigger of the session pause or resume @p (ENABLE, DISABLE)? */
bool fhook_trigger_targets(struct fhook_session *s, struct fhook_probe *p)
{
	struct fhook_probe *it;
	u32 i;

	list_for_each_entry(it, &s->probes, node)
		for (i = 0; i < it->nr_triggers; i++)
			if (it->triggers[i]->target == p)
				return true;
	return false;
}
