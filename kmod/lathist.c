// SPDX-License-Identifier: GPL-2.0
/* FHOOK_IOC_LATENCY's read of a per-CPU histogram (lathist.h). */
#include "lathist.h"

#include <linux/cpumask.h>

static void fhook_lathist_read_cpu(const struct fhook_lathist *c, struct fhook_latency *out)
{
	u64 count = READ_ONCE(c->count), not_min = READ_ONCE(c->not_min);
	int b;

	if (!count || !not_min)
		return;
	if (!out->count || ~not_min < out->min_ns)
		out->min_ns = ~not_min;
	out->max_ns = max(out->max_ns, READ_ONCE(c->max));
	out->count += count;
	out->sum_ns += READ_ONCE(c->sum);
	for (b = 0; b < FHOOK_LAT_BUCKETS; b++)
		out->buckets[b] += READ_ONCE(c->buckets[b]);
}

void fhook_lathist_read(struct fhook_lathist __percpu *h, int cpu, struct fhook_latency *out)
{
	out->nr_buckets = FHOOK_LAT_BUCKETS;
	if (cpu >= 0) {
		fhook_lathist_read_cpu(per_cpu_ptr(h, cpu), out);
		return;
	}
	for_each_possible_cpu(cpu)
		fhook_lathist_read_cpu(per_cpu_ptr(h, cpu), out);
}
