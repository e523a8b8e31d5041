// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU x per-probe counters (struct fhook_stats_area): one vmap'd
 * area per session, allocated at open() and mapped read-only by userspace,
 * so a tool reads hits, drops and overwrites of every probe on every CPU
 * without an ioctl.  Each probe updates only its own CPU's entries, one
 * cache line per (CPU, probe), with unlocked increments (fhook_count()).
 */
#include "fhook.h"
#include "compat.h"

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

/*
 * Pages charged to the caller's memory cgroup, as the rings' are, mapped
 * VM_USERMAP so that remap_vmalloc_range() may map them to userspace.
 */
int fhook_stats_alloc(struct fhook_session *s)
{
	size_t entries = (size_t)nr_cpu_ids * FHOOK_MAX_PROBES;
	size_t off = PAGE_SIZE;
	size_t size = PAGE_ALIGN(off + entries * sizeof(struct fhook_probe_counters));
	unsigned int i, nr = size >> PAGE_SHIFT;
	struct fhook_stats_area *a;
	struct page **pages;

	BUILD_BUG_ON(sizeof(struct fhook_probe_counters) != 64);
	BUILD_BUG_ON(FHOOK_MAX_PROBES > BITS_PER_LONG);	/* ring->lost_mask, hits_elsewhere */
	pages = kvcalloc(nr, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto err_free_pages;
	}
	a = vmap(pages, nr, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!a)
		goto err_free_pages;
	a->abi_version = FHOOK_ABI_VERSION;
	a->nr_cpus = nr_cpu_ids;
	a->max_probes = FHOOK_MAX_PROBES;
	a->entry_size = sizeof(struct fhook_probe_counters);
	a->entries_offset = off;
	a->map_size = size;
	s->stats = a;
	s->stats_pages = pages;
	s->counters = (void *)a + off;
	return 0;

err_free_pages:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return -ENOMEM;
}

void fhook_stats_free(struct fhook_session *s)
{
	unsigned int i, nr;

	if (!s->stats)
		return;
	nr = s->stats->map_size >> PAGE_SHIFT;
	vunmap(s->stats);
	for (i = 0; i < nr; i++)
		__free_page(s->stats_pages[i]);
	kvfree(s->stats_pages);
	s->stats = NULL;
	s->stats_pages = NULL;
	s->counters = NULL;
}

/*
 * A probe's hits are counted outside the area (hits_elsewhere), or no
 * longer: cleared with release semantics after the fold, so a reader that
 * sees the bit clear with acquire sees the folded hits.
 */
void fhook_stats_elsewhere(struct fhook_session *s, u32 id, bool elsewhere)
{
	unsigned long *mask = (unsigned long *)&s->stats->hits_elsewhere;

	if (elsewhere)
		set_bit(id - 1, mask);
	else
		clear_bit_unlock(id - 1, mask);
}

int fhook_stats_mmap(struct fhook_session *s, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff != (FHOOK_MMAP_STATS_REGION << (32 - PAGE_SHIFT)))
		return -EINVAL;
	/* the whole area, or a prefix (the header, to learn map_size) */
	if (vma->vm_end - vma->vm_start > s->stats->map_size)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	fhook_vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	fhook_vm_flags_set(vma, VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	return remap_vmalloc_range(vma, s->stats, 0);
}

/*
 * The ioctl view (FHOOK_IOC_STATS), where hits == written + lost: hits
 * recorded or lost (not frozen), written = still for the reader (not
 * overwritten), lost = dropped + overwritten.
 */
void fhook_stats_sum(struct fhook_session *s, int cpu, u32 id, struct fhook_cpu_stats *sum)
{
	const struct fhook_probe_counters *c = fhook_counters(s, cpu, id);
	u64 overwritten = READ_ONCE(c->overwritten);

	sum->hits += READ_ONCE(c->hits) - READ_ONCE(c->frozen);
	sum->written += READ_ONCE(c->written) - overwritten;
	sum->lost += READ_ONCE(c->dropped) + overwritten;
	sum->missed += READ_ONCE(c->missed);
}
