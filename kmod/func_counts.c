// SPDX-License-Identifier: GPL-2.0
/*
 * Per-function counters of a counting function probe
 * (FHOOK_PROBE_F_COUNT_IPS): funccount and bpftrace's @[func] = count()
 * in the module.  The probe's functions are sorted by address; a hit's ip
 * (the fentry call site: the function's first byte, or the one after its
 * ENDBR) is looked up by binary search, and one counter of this CPU's row
 * is incremented.  FHOOK_IOC_COUNTS sums the rows.
 */
#include "fhook.h"

#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

/* the fentry call site lies within this many bytes of the function's start */
#define FHOOK_FENTRY_MAX_OFFSET	16
/* the counters of one probe, all CPUs */
#define FHOOK_COUNTS_MAX_BYTES	(64UL << 20)

struct fhook_func_counts {
	u32 nr;
	u64 *ips;			/* [nr], ascending */
	u64 *counts;			/* [nr_cpu_ids][nr] */
};

static int fhook_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The counters of the functions @ips[@nr] (taken over: freed with them). */
struct fhook_func_counts *fhook_func_counts_create(u64 *ips, u32 nr)
{
	struct fhook_func_counts *fc;
	u32 i, n = 0;

	if (!nr || nr > FHOOK_MAX_COUNT_IPS)
		return ERR_PTR(-EINVAL);
	if (array3_size(nr_cpu_ids, nr, sizeof(u64)) > FHOOK_COUNTS_MAX_BYTES)
		return ERR_PTR(-E2BIG);
	fc = kzalloc(sizeof(*fc), GFP_KERNEL_ACCOUNT);
	if (!fc)
		return ERR_PTR(-ENOMEM);
	/* one counter per function, however often userspace named it */
	sort(ips, nr, sizeof(*ips), fhook_u64_cmp, NULL);
	for (i = 0; i < nr; i++)
		if (!n || ips[i] != ips[n - 1])
			ips[n++] = ips[i];
	fc->ips = ips;
	fc->nr = n;
	fc->counts = kvcalloc(array_size(nr_cpu_ids, n), sizeof(u64), GFP_KERNEL_ACCOUNT);
	if (!fc->counts) {
		kfree(fc);
		return ERR_PTR(-ENOMEM);
	}
	return fc;
}

void fhook_func_counts_free(struct fhook_func_counts *fc)
{
	if (IS_ERR_OR_NULL(fc))
		return;
	kvfree(fc->counts);
	kvfree(fc->ips);
	kfree(fc);
}

/* Count a hit at @ip on this CPU (preemption disabled). */
notrace void fhook_func_counts_hit(struct fhook_func_counts *fc, unsigned long ip)
{
	u32 lo = 0, hi = fc->nr;

	/* the last function starting at or before @ip */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (fc->ips[mid] <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip - fc->ips[lo - 1] < FHOOK_FENTRY_MAX_OFFSET)
		fhook_count(&fc->counts[smp_processor_id() * fc->nr + lo - 1]);
}

/* FHOOK_IOC_COUNTS of @fc, under the session lock. */
int fhook_func_counts_read(struct fhook_func_counts *fc, struct fhook_counts *arg)
{
	u64 *sum;
	u32 i;
	int cpu, ret = 0;

	if (arg->nr < fc->nr) {
		arg->nr = fc->nr;
		return -ENOSPC;
	}
	arg->nr = fc->nr;
	sum = kvcalloc(fc->nr, sizeof(u64), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		for (i = 0; i < fc->nr; i++)
			sum[i] += READ_ONCE(fc->counts[cpu * fc->nr + i]);
	if (copy_to_user(u64_to_user_ptr(arg->ips), fc->ips, array_size(fc->nr, sizeof(u64))) ||
	    copy_to_user(u64_to_user_ptr(arg->counts), sum, array_size(fc->nr, sizeof(u64))))
		ret = -EFAULT;
	kvfree(sum);
	return ret;
}
