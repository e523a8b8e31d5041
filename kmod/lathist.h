/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A per-CPU log2 latency histogram (FHOOK_IOC_LATENCY's): latency probes
 * (latency.c) and the latency tracers (wakeup.c) add to it, the ioctl
 * reads one CPU's or their sum.  Every update is a this_cpu operation,
 * safe against interrupts on the same CPU; callers keep preemption off so
 * that one sample goes to one CPU's histogram.  The extremes go before
 * the count, so that a CPU with a count has them (a reader may still see
 * them without the count: that sample is not in the sum yet).
 */
#ifndef _FHOOK_LATHIST_H
#define _FHOOK_LATHIST_H

#include <linux/bitops.h>
#include <linux/minmax.h>
#include <linux/percpu.h>

#include "../shared/fhook_abi.h"

struct fhook_lathist {
	u64 count;
	u64 sum;
	u64 max;
	u64 not_min;	/* ~shortest: a zeroed histogram has none */
	u64 buckets[FHOOK_LAT_BUCKETS];
};

/*
 * Raise this CPU's @field to @v: a this_cpu_cmpxchg() from the value
 * read, which fails (and is retried with the value it found) when an
 * interrupt came in between.
 */
#define fhook_lathist_raise(field, v)					\
do {									\
	u64 __old = this_cpu_read(field);				\
									\
	while ((v) > __old) {						\
		u64 __was = this_cpu_cmpxchg(field, __old, (v));	\
									\
		if (__was == __old)					\
			break;						\
		__old = __was;						\
	}								\
} while (0)

/* Preemption off. */
static __always_inline void fhook_lathist_add(struct fhook_lathist __percpu *h, u64 d)
{
	unsigned int b = min_t(unsigned int, fls64(d), FHOOK_LAT_BUCKETS - 1);

	fhook_lathist_raise(h->max, d);
	fhook_lathist_raise(h->not_min, ~d);
	this_cpu_inc(h->buckets[b]);
	this_cpu_add(h->sum, d);
	this_cpu_inc(h->count);
}

/* @cpu's histogram into @out, or every CPU's (@cpu < 0); adds to @out */
void fhook_lathist_read(struct fhook_lathist __percpu *h, int cpu, struct fhook_latency *out);

#endif /* _FHOOK_LATHIST_H */
