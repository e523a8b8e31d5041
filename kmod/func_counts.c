// SPDX-License-Identifier: GPL-2.0
/*
 * Per-function counters of a counting function probe
 * (FHOOK_PROBE_F_COUNT_IPS): funccount and bpftrace's @[func] = count()
 * in the module.  The probe's functions are a set by address (funcset.c);
 * a hit's ip is looked up in it, and one counter of this CPU's row is
 * incremented.  FHOOK_IOC_COUNTS sums the rows.
 */
#include "fhook.h"

#include <linux/slab.h>
#include <linux/uaccess.h>

/* the counters of one probe, all CPUs */
#define FHOOK_COUNTS_MAX_BYTES	(64UL << 20)

struct fhook_func_counts {
	struct fhook_funcset set;	/* the functions, ascending */
	u64 *counts;			/* [nr_cpu_ids][set.nr] */
};

/* The counters of the functions @ips[@nr] (taken over: freed with them). */
struct fhook_func_counts *fhook_func_counts_create(u64 *ips, u32 nr)
{
	struct fhook_func_counts *fc;

	if (!nr || nr > FHOOK_MAX_COUNT_IPS)
		return ERR_PTR(-EINVAL);
	if (array3_size(nr_cpu_ids, nr, sizeof(u64)) > FHOOK_COUNTS_MAX_BYTES)
		return ERR_PTR(-E2BIG);
	fc = kzalloc(sizeof(*fc), GFP_KERNEL_ACCOUNT);
	if (!fc)
		return ERR_PTR(-ENOMEM);
	/* one counter per function, however often named (@ips: the caller's on failure) */
	fhook_funcset_take(&fc->set, ips, nr);
	fc->counts = kvcalloc(array_size(nr_cpu_ids, fc->set.nr), sizeof(u64), GFP_KERNEL_ACCOUNT);
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
	fhook_funcset_free(&fc->set);
	kfree(fc);
}

/* Count a hit at @ip on this CPU (preemption disabled). */
notrace void fhook_func_counts_hit(struct fhook_func_counts *fc, unsigned long ip)
{
	s32 i = fhook_funcset_find(&fc->set, ip);

	if (i >= 0)
		fhook_count(&fc->counts[smp_processor_id() * fc->set.nr + i]);
}

/* FHOOK_IOC_COUNTS of @fc, under the session lock. */
int fhook_func_counts_read(struct fhook_func_counts *fc, struct fhook_counts *arg)
{
	u64 *sum;
	u32 i;
	int cpu, ret = 0;

	if (arg->nr < fc->set.nr) {
		arg->nr = fc->set.nr;
		return -ENOSPC;
	}
	arg->nr = fc->set.nr;
	sum = kvcalloc(fc->set.nr, sizeof(u64), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		for (i = 0; i < fc->set.nr; i++)
			sum[i] += READ_ONCE(fc->counts[cpu * fc->set.nr + i]);
	if (copy_to_user(u64_to_user_ptr(arg->ips), fc->set.ips, array_size(fc->set.nr, sizeof(u64))) ||
	    copy_to_user(u64_to_user_ptr(arg->counts), sum, array_size(fc->set.nr, sizeof(u64))))
		ret = -EFAULT;
	kvfree(sum);
	return ret;
}
