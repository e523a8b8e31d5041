// SPDX-License-Identifier: GPL-2.0
/*
 * The transport benchmark (FHOOK_IOC_BENCH): a loop that writes records
 * through the same reserve/commit path as the probes, so the ring's cost
 * per record and what a consumer keeps up with can be measured without
 * any hook in the way (vmtests/bench, docs/benchmarks.md).
 */
#include "fhook.h"

#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#define FHOOK_BENCH_BATCH	1024

/* 1: written, 0: dropped, -1: frozen */
static notrace int fhook_bench_one(struct fhook_session *s, u32 id, u32 payload, u64 i)
{
	struct fhook_probe_counters *c;
	struct fhook_ring *rb;
	struct fhook_rec *r;
	unsigned int cpu = smp_processor_id();
	int ret = 0;
	u64 *p, *end;

	c = fhook_counters(s, cpu, id);
	fhook_count(&c->hits);
	rb = s->rings[cpu];
	r = fhook_ring_reserve(rb, sizeof(*r) + payload, id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init(r, FHOOK_REC_BENCH, sizeof(*r) + payload, id, preempt_count(),
			       irqs_disabled());
		end = (void *)(r + 1) + payload;
		for (p = (u64 *)(r + 1); p < end; p++)
			*p = i++;
		fhook_count(&c->written);
		ret = 1;
	} else if (IS_ERR(r)) {
		ret = -1;	/* frozen */
	}
	fhook_ring_commit(rb);
	return ret;
}

/*
 * Called without the session lock, counted in s->benches (STOP waits for
 * it); @id was checked by the caller.  Ends early, with written + dropped
 * < nr_events, once the session is stopped.
 */
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
			if (!READ_ONCE(s->armed))
				goto out;
			preempt_disable();
		}
		switch (fhook_bench_one(s, b->probe_id, b->payload, i)) {
		case 1:
			b->written++;
			break;
		case 0:
			b->dropped++;
			break;
		}
	}
	preempt_enable();
out:
	b->ns = ktime_get_ns() - t0;
	return 0;
}
