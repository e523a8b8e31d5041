// SPDX-License-Identifier: GPL-2.0
/*
 * A set of functions by address, looked up by the ip ftrace passes a
 * callback: the fentry call site, the function's first byte or the one
 * after its ENDBR.  The per-function counters of a counting probe
 * (func_counts.c) and the return types of failing call chains
 * (graph_errors.c) are kept by it.  Where most lookups miss (the return
 * types: most functions are of none), a bitmap of the functions' 16-byte
 * blocks answers most misses before the binary search.
 */
#include "fhook.h"

#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/sort.h>

/* the fentry call site lies within this many bytes of the function's start */
#define FHOOK_FENTRY_MAX_OFFSET	16
/* bits of the bitmap per function: about one miss in ten looks further */
#define FHOOK_FUNCSET_BITS_PER	16

static int fhook_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* @set takes @ips[@nr] (kvmalloc()ed): sorted, each address once */
void fhook_funcset_take(struct fhook_funcset *set, u64 *ips, u32 nr)
{
	u32 i, n = 0;

	sort(ips, nr, sizeof(*ips), fhook_u64_cmp, NULL);
	for (i = 0; i < nr; i++)
		if (!n || ips[i] != ips[n - 1])
			ips[n++] = ips[i];
	set->ips = ips;
	set->nr = n;
}

/*
 * The bitmap of @set's 16-byte blocks, each function's first two (see the
 * top), for fhook_funcset_has()
 */
int fhook_funcset_filter(struct fhook_funcset *set)
{
	u32 bits = ilog2(roundup_pow_of_two(max_t(u32, set->nr, 4) * FHOOK_FUNCSET_BITS_PER));
	u32 i;

	set->bloom = kvcalloc(BITS_TO_LONGS(1UL << bits), sizeof(long), GFP_KERNEL_ACCOUNT);
	if (!set->bloom)
		return -ENOMEM;
	set->bloom_bits = bits;
	for (i = 0; i < set->nr; i++) {
		__set_bit(hash_64(set->ips[i] >> 4, bits), set->bloom);
		__set_bit(hash_64((set->ips[i] + FHOOK_FENTRY_MAX_OFFSET - 1) >> 4, bits),
			  set->bloom);
	}
	return 0;
}

void fhook_funcset_free(struct fhook_funcset *set)
{
	kvfree(set->ips);
	kvfree(set->bloom);
	set->ips = NULL;
	set->bloom = NULL;
	set->nr = 0;
}

/* The index of the function @ip is the fentry call of, or -1 */
notrace s32 fhook_funcset_find(const struct fhook_funcset *set, unsigned long ip)
{
	u32 lo = 0, hi = set->nr;

	/* the last function starting at or before @ip */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (set->ips[mid] <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip - set->ips[lo - 1] < FHOOK_FENTRY_MAX_OFFSET ? lo - 1 : -1;
}
