// SPDX-License-Identifier: GPL-2.0
/*
 * The transport benchmark (FHOOK_IOC_BENCH): a loop that writes records
 * through the same reserve/commit path as the probes, so the ring's cost
 * per record and what a consumer keeps up with can be measured without
 * any hook in the way (vmtests/bench, docs/benchmarks.md).
 */
#include "fhook.h"

#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#define FHOOK_BENCH_BATCH	1024

static notrace bool fhook_bench_one(struct fhook_session *s, u32 id, u32 payload, u64 i)
{
	struct fhook_probe_counters *c;
	struct fhook_ring *rb;
	struct fhook_rec *r;
	unsigned int cpu = smp_processor_id();
	bool ok = false;
	u64 *p, *end;
	u32 seq;

	c = fhook_counters(s, cpu, id);
	fhook_count(&c->hits);
	if (unlikely(READ_ONCE(s->frozen))) {
		fhook_count(&c->frozen);
		return false;
	}
	rb = s->rings[cpu];
	r = fhook_ring_reserve(rb, sizeof(*r) + payload, id, &seq);
	if (r) {
		fhook_rec_init(r, FHOOK_REC_BENCH, sizeof(*r) + payload, id, seq, preempt_count(),
			       irqs_disabled());
		end = (void *)(r + 1) + payload;
		for (p = (u64 *)(r + 1); p < end; p++)
			*p = i++;
		fhook_count(&c->written);
		ok = true;
	}
	fhook_ring_commit(rb);
	return ok;
}

/* Called without the session lock; @id was checked by the caller. */
long fhook_bench_run(struct fhook_session *s, struct fhook_bench *b)
{
	u64 i, t0 = ktime_get_ns();

	b->written = 0;
	b->dropped = 0;
	for (i = 0; i < b->nr_events; i++) {
		if (!(i % FHOOK_BENCH_BATCH)) {
			if (i) {
				preempt_enable();
				cond_resched();
				if (fatal_signal_pending(current))
					return -EINTR;
			}
			preempt_disable();
		}
		if (fhook_bench_one(s, b->probe_id, b->payload, i))
			b->written++;
		else
			b->dropped++;
	}
	preempt_enable();
	b->ns = ktime_get_ns() - t0;
	return 0;
}
