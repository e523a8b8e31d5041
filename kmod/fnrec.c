// SPDX-License-Identifier: GPL-2.0
/*
 * The function recorder of the common case: a function entry (an
 * ftrace_ops probe's or a direct probe's) whose probe has nothing to
 * decide per call, no predicate, trigger, histogram or stack (decided
 * once, when it is armed: fhook_fnrec_ok()), recorded as one
 * FHOOK_REC_FUNC record in a few dozen instructions and one pass over
 * the ring's state.  Every case it does not handle (another writer
 * inside this CPU's ring, a drop to report, a task the ring does not
 * name yet, an overwriting ring, a call graph entry held back, a paused
 * probe, the session's filters saying no) it leaves untouched to
 * fhook_func_hit()'s full path, which decides them all again.
 *
 * No recursion lock: until the ring's ->nest is raised nothing here
 * calls traceable code, and from then on a hit on this CPU (an
 * interrupt, or a traceable clocksource read below us) sees ->nest set
 * and takes the full path, which counts a hit of our own context as
 * missed (->fast_ctx) as ftrace's recursion lock would have.
 */
#include "fhook.h"

/*
 * May @p's hits go to fhook_fnrec()?  Its predicate, triggers, histogram
 * and stack are set before the session is armed and stay.
 */
bool fhook_fnrec_ok(const struct fhook_probe *p)
{
	return !p->pred && !p->nr_triggers && !p->hist && !p->stack;
}

/*
 * Record a function entry at @ip called from @parent_ip.  False, having
 * done nothing, when fhook_func_hit()'s full path must decide.
 */
notrace bool fhook_fnrec(struct fhook_probe *p, unsigned long ip, unsigned long parent_ip)
{
	struct fhook_session *s = p->session;
	struct task_struct *t = current;
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	const struct fhook_comm_slot *cs;
	struct fhook_probe_counters *c;
	struct fhook_rec_func *r;
	struct fhook_ring *rb;
	u64 name0, name1, nr;
	unsigned int outer;
	long head, old;
	int cpu, ret;

	preempt_disable_notrace();
	cpu = raw_smp_processor_id();
	rb = s->rings[cpu];
	cs = &rb->comms[t->pid & (FHOOK_COMM_SLOTS - 1)];
	memcpy(&name0, t->comm, sizeof(name0));
	memcpy(&name1, t->comm + sizeof(name0), sizeof(name1));
	if (unlikely(local_read(&rb->nest) || rb->overwrite || READ_ONCE(rb->lost_mask) ||
		     this_cpu_read(fhook_fgraph_pending) || READ_ONCE(p->paused) ||
		     (!p->any_task && !fhook_session_wants_task(s, t, cpu)) ||
		     !fhook_comm_known(rb, cs, t, name0, name1))) {
		preempt_enable_notrace();
		return false;
	}
	/* an NMI's hit between the test of nest and here restores ours */
	outer = READ_ONCE(rb->fast_ctx);
	WRITE_ONCE(rb->fast_ctx, fhook_ring_ctx(pc));
	c = fhook_counters(s, cpu, p->id);
	fhook_count(&c->hits);
	/* nest 0 -> 1 (an interrupt since the test left it as it found it) */
	ret = fhook_ring_enter(rb, p->id, &nr);
	if (unlikely(ret == -EAGAIN))
		goto publish;
	if (unlikely(ret))
		goto drop;
	head = local_read(&rb->head);
	do {
		old = head;
		if (unlikely(!fhook_ring_room(rb, old, sizeof(*r))))
			goto drop;
	} while ((head = local_cmpxchg(&rb->head, old, old + sizeof(*r))) != old);

	BUILD_BUG_ON(sizeof(*r) % 8);
	r = rb->data + (old & rb->mask);
	r->hdr.size = sizeof(*r);
	r->hdr.type = FHOOK_REC_FUNC;
	r->hdr.probe_id = p->id;
	r->hdr.ts = ktime_get_mono_fast_ns();
	r->hdr.pid = t->pid;
	r->hdr.tgid = t->tgid;
	r->hdr.cpu = cpu;
	r->hdr.flags = fhook_rec_ctx(pc, irqs_off);
	r->hdr.preempt = fhook_rec_preempt(pc);
	r->hdr.seq = nr;
	r->ip = ip;
	r->parent_ip = parent_ip;
	fhook_count(&c->written);
	goto publish;
drop:
	fhook_ring_drop(rb, p->id, nr);
publish:
	fhook_ring_publish(rb);
	WRITE_ONCE(rb->fast_ctx, outer);
	preempt_enable_notrace();
	return true;
}
