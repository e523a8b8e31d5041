// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU rings shared with userspace through mmap.
 *
 * Layout of one CPU's ring (one vmap(), pages listed in this order):
 *   meta page    struct fhook_ring_meta, written by producers, user RO
 *   cons page    struct fhook_ring_cons, data_tail written by the consumer
 *   data pages   size bytes, then the same pages again, so a record that
 *                wraps at the end is contiguous (BPF ringbuf's trick)
 *
 * Producer protocol (perf's, kernel/events/ring_buffer.c): a writer runs on
 * its own CPU with preemption off, in any context including NMI.  It bumps
 * ->nest, reserves with a local_cmpxchg loop on ->head against the user's
 * data_tail, writes, and only the outermost writer publishes data_head.
 * Writers nested on top of it (irq, NMI) always finish first, so everything
 * below data_head is complete.  No locks, no atomics across CPUs.
 *
 * Losses are exact: every record a probe tries to write takes the CPU's
 * next sequence number (meta->seq_next, copied into the record but for
 * an FHOOK_REC_FN record, which the reader numbers), written or not.
 * Every drop is counted per probe (->lost_probe[], the stats area)
 * and reported in band by the next writer that gets space, as a
 * FHOOK_REC_LOST record placed where the drop happened, with the count
 * broken down by probe.  Each drop lands in exactly one LOST record: the
 * reporter takes each probe's count with local_xchg().
 *
 * Records carry no task name: a writer whose task this ring has not named
 * yet (a 64-slot cache by pid, ->comms, compared with current->comm on
 * every record) prepends a FHOOK_REC_COMM record in the same reservation,
 * as it prepends a LOST record, and marks the record's type COMM so that
 * fhook_rec_init_ts() gives the name the record's timestamp; the cache
 * takes the name only once the space is won, so a dropped record never
 * leaves a name unwritten.
 *
 * Overwrite mode keeps the newest records: a writer that needs space
 * advances meta->data_oldest record by record (local_cmpxchg, so nested
 * writers never evict the same record twice) before it reserves, and
 * counts each evicted record the consumer had not read against its probe.
 * It never evicts past data_head, i.e. a record still being written by a
 * writer it interrupted; that writer drops instead (rings are at least
 * FHOOK_RING_MIN_OVERWRITE bytes, so this needs 8 nested writers).
 *
 * Barriers: (A) the control dependency from reading data_tail to writing
 * data pairs with the consumer's release store of data_tail (D); (B) the
 * smp_wmb() before publishing data_head pairs with the consumer's acquire
 * load of data_head (C).  Overwrite mode: (E) the smp_wmb() between
 * advancing data_oldest and writing the space pairs with the reader's
 * smp_rmb() between copying records and re-reading data_oldest (F).
 *
 * Wakeups never happen from the producer: it queues an irq_work once a CPU
 * has at least ->watermark bytes pending (irq_work_queue() is NMI-safe and
 * a no-op while already queued), and then not again on that CPU until the
 * reader has moved data_tail (->wake_tail).  A reader that cannot read
 * (busy in an ioctl arming '*', stopped, slow) thus costs one irq_work per
 * CPU, not one per event.  A record made inside the wakeup (its path
 * traced) queues none at all (fhook_ring_kick(), fhook_ring_wake()):
 * otherwise the irq_work re-queues itself from inside forever (an irq_work storm, RCU stalls),
 * which data_tail alone cannot stop, a reader being free to keep moving
 * it.  Data below the watermarks is flushed by the
 * session's timer (session.c) every flush_ms, so tracing the scheduler
 * cannot make the consumer wake itself in a loop either.
 */
#include "fhook.h"
#include "compat.h"

#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/smp.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

/*
 * The task inside fhook_ring_wakeup() on each CPU (the interrupted one, or
 * PREEMPT_RT's irq_work thread).  A record made inside its wake_up_all()
 * (a probe on the wakeup path, any session's) queues no wakeup: the one
 * running covers it, the flush timer the rest.  Otherwise each run queues
 * the next and the CPU never leaves the irq_work: whether a run queues
 * again must not depend on data_tail, which the reader writes.
 */
static DEFINE_PER_CPU(struct task_struct *, fhook_waking);

static void fhook_ring_wakeup(struct irq_work *work)
{
	struct fhook_ring *rb = container_of(work, struct fhook_ring, work);

	this_cpu_write(fhook_waking, current);
	wake_up_all(&rb->session->waitq);
	this_cpu_write(fhook_waking, NULL);
}

/* Wake @rb's reader, unless this is the wakeup path itself (above) */
notrace void fhook_ring_kick(struct fhook_ring *rb)
{
	if (this_cpu_read(fhook_waking) != current)
		irq_work_queue(&rb->work);
}

static void fhook_ring_free(struct fhook_ring *rb)
{
	unsigned int i;

	if (!rb)
		return;
	irq_work_sync(&rb->work);
	if (rb->base)
		vunmap(rb->base);
	for (i = 0; i < rb->nr_pages; i++)
		if (rb->pages[i])
			__free_page(rb->pages[i]);
	kvfree(rb->pages);
	kfree(rb);
}

static struct fhook_ring *fhook_ring_alloc(struct fhook_session *s, int cpu,
					   const struct fhook_ring_setup *rs)
{
	u64 size = rs->buf_size;
	unsigned int nr_data = size >> PAGE_SHIFT;
	unsigned int nr_map = 2 + 2 * nr_data;
	struct page **map;
	struct fhook_ring *rb;
	unsigned int i;

	rb = kzalloc_node(sizeof(*rb), GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));
	if (!rb)
		return NULL;
	rb->session = s;
	rb->cpu = cpu;
	rb->size = size;
	rb->mask = size - 1;
	rb->watermark = rs->watermark;
	rb->wakeup_events = rs->wakeup_events;
	rb->overwrite = rs->flags & FHOOK_RING_OVERWRITE;
	rb->wake_tail = U64_MAX;	/* data_tail starts at 0: wake the first time */
	init_irq_work(&rb->work, fhook_ring_wakeup);
	local_set(&rb->head, 0);
	local_set(&rb->nest, 0);
	local_set(&rb->lost_pending, 0);
	for (i = 0; i < FHOOK_MAX_PROBES; i++)
		local_set(&rb->lost_probe[i], 0);

	/* pages[] holds the vmap order: meta, cons, data, data again */
	rb->pages = kvcalloc(nr_map, sizeof(*rb->pages), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!rb->pages)
		goto err_free_rb;
	map = rb->pages;
	rb->nr_pages = 2 + nr_data;
	for (i = 0; i < rb->nr_pages; i++) {
		/* fail with ENOMEM rather than OOM-kill someone for a ring */
		map[i] = alloc_pages_node(cpu_to_node(cpu),
					  GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NORETRY |
					  __GFP_NOWARN, 0);
		if (!map[i])
			goto err_free_pages;
	}
	for (i = 0; i < nr_data; i++)
		map[2 + nr_data + i] = map[2 + i];

	rb->base = vmap(map, nr_map, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!rb->base)
		goto err_free_pages;
	rb->meta = rb->base;
	rb->cons = rb->base + PAGE_SIZE;
	rb->data = rb->base + 2 * PAGE_SIZE;

	rb->meta->abi_version = FHOOK_ABI_VERSION;
	rb->meta->cpu = cpu;
	rb->meta->data_size = size;
	rb->meta->watermark = rs->watermark;
	rb->meta->flags = rs->flags;
	rb->meta->wakeup_events = rs->wakeup_events;
	rb->meta->flush_ms = rs->flush_ms;
	return rb;

err_free_pages:
	/* only the first nr_pages entries own a page; the aliases do not */
	for (i = 0; i < rb->nr_pages; i++)
		if (map[i])
			__free_page(map[i]);
	kvfree(rb->pages);
err_free_rb:
	kfree(rb);
	return NULL;
}

static void fhook_ring_array_free(struct fhook_ring **rings)
{
	int cpu;

	for_each_possible_cpu(cpu)
		fhook_ring_free(rings[cpu]);
	kfree(rings);
}

/*
 * What fhook allocates for its sessions (ring pages, kretprobe instances)
 * may take at most this fraction (1/N) of the memory, module-wide.
 */
#define FHOOK_MEM_DIV	2

static atomic_long_t fhook_mem_pages = ATOMIC_LONG_INIT(0);

/*
 * Reserve @pages of the module-wide budget for a session of @u: -ENOMEM
 * if the machine cannot afford them now (half of what is available) or if
 * fhook's sessions would hold more than half of the memory between them;
 * -EDQUOT past @u's share of it (priv.c).
 */
int fhook_mem_reserve(struct fhook_user *u, u64 pages)
{
	u64 budget = totalram_pages() / FHOOK_MEM_DIV;
	long avail = si_mem_available();
	int ret;

	if (avail < 0 || pages > (u64)avail / FHOOK_MEM_DIV)
		return -ENOMEM;
	if (atomic_long_add_return(pages, &fhook_mem_pages) > budget) {
		atomic_long_sub(pages, &fhook_mem_pages);
		return -ENOMEM;
	}
	ret = fhook_user_mem_charge(u, pages, budget);
	if (ret)
		atomic_long_sub(pages, &fhook_mem_pages);
	return ret;
}

void fhook_mem_unreserve(struct fhook_user *u, u64 pages)
{
	fhook_user_mem_uncharge(u, pages);
	atomic_long_sub(pages, &fhook_mem_pages);
}

static u64 fhook_rings_pages(u64 size)
{
	return (2 + (size >> PAGE_SHIFT)) * num_possible_cpus();
}

int fhook_rings_alloc(struct fhook_session *s, const struct fhook_ring_setup *rs)
{
	u64 size = rs->buf_size;
	u64 pages = fhook_rings_pages(size);
	struct fhook_ring **rings;
	int cpu, ret;

	/*
	 * A request the machine cannot afford is refused up front with
	 * ENOMEM (EDQUOT past the user's share), not satisfied by reclaiming
	 * everything else.  The pages are charged to the caller's memory
	 * cgroup.
	 */
	ret = fhook_mem_reserve(s->user, pages);
	if (ret)
		return ret;

	rings = kcalloc(nr_cpu_ids, sizeof(*rings), GFP_KERNEL_ACCOUNT);
	if (!rings)
		goto err_unaccount;
	for_each_possible_cpu(cpu) {
		rings[cpu] = fhook_ring_alloc(s, cpu, rs);
		if (!rings[cpu]) {
			fhook_ring_array_free(rings);
			goto err_unaccount;
		}
	}
	s->buf_size = size;
	s->watermark = rs->watermark;
	s->ring_flags = rs->flags;
	/* mmap and poll run without the session lock: publish complete */
	smp_store_release(&s->rings, rings);
	return 0;

err_unaccount:
	fhook_mem_unreserve(s->user, pages);
	return -ENOMEM;
}

/* Only after every probe is unregistered and synchronised. */
void fhook_rings_free(struct fhook_session *s)
{
	if (!s->rings)
		return;
	fhook_ring_array_free(s->rings);
	s->rings = NULL;
	fhook_mem_unreserve(s->user, fhook_rings_pages(s->buf_size));
}

#define FHOOK_LOST_SIZE(n) \
	(sizeof(struct fhook_rec_lost) + (n) * sizeof(struct fhook_lost_probe))

notrace void fhook_ring_drop(struct fhook_ring *rb, u32 probe_id, u64 seq)
{
	unsigned int slot = probe_id - 1;

	if (local_inc_return(&rb->lost_pending) == 1)
		WRITE_ONCE(rb->lost_first, seq);
	WRITE_ONCE(rb->lost_last, seq);
	local_inc(&rb->lost_probe[slot]);
	/* a locked op, but drops are the slow path */
	set_bit(slot, &rb->lost_mask);
	local_inc(fhook_meta_local(&rb->meta->lost_total));
	fhook_count(&fhook_counters(rb->session, rb->cpu, probe_id)->dropped);
}

/*
 * Overwrite mode: advance data_oldest until [data_oldest, @end) fits.
 * Fails rather than evict a record at or past data_head, which a writer
 * this one interrupted may still be writing.
 */
static notrace bool fhook_ring_evict(struct fhook_ring *rb, u64 end)
{
	local_t *oldest = fhook_meta_local(&rb->meta->data_oldest);
	u64 done = READ_ONCE(rb->meta->data_head);

	for (;;) {
		u64 o = local_read(oldest);
		const struct fhook_rec *r;
		unsigned int sz;
		u32 id;
		u16 type;

		if (end - o <= rb->size)
			return true;
		if (o >= done)
			return false;
		r = rb->data + (o & rb->mask);
		sz = ALIGN(READ_ONCE(r->size), 8);
		type = READ_ONCE(r->type);
		/* (an FN record's probe id has a slot of its own) */
		id = type == FHOOK_REC_FN ? READ_ONCE(((struct fhook_rec_fn *)r)->probe_id) :
					    READ_ONCE(r->probe_id);
		if (unlikely(sz < sizeof(*r) || o + sz > done))
			return false;	/* cannot happen: never walk garbage */
		/* read the victim before it can be overwritten, then claim it */
		if (local_cmpxchg(oldest, o, o + sz) != o)
			continue;	/* a nested writer evicted it */
		if (type != FHOOK_REC_LOST && id && id <= FHOOK_MAX_PROBES &&
		    o >= READ_ONCE(rb->cons->data_tail)) {
			local_inc(fhook_meta_local(&rb->meta->overwritten_total));
			fhook_count(&fhook_counters(rb->session, rb->cpu, id)->overwritten);
		}
	}
}

/*
 * Write the LOST record for the drops in @mask at @l, which has room for
 * hweight(@mask) entries.  Bits set by nested drops after @mask was read
 * stay for the next LOST record.
 */
static notrace void fhook_ring_put_lost(struct fhook_ring *rb, struct fhook_rec_lost *l,
					unsigned int sz, unsigned long mask)
{
	unsigned int n = 0;
	u64 total = 0;
	int bit;

	memset(l, 0, sz);
	l->hdr.size = sz;
	l->hdr.type = FHOOK_REC_LOST;
	l->hdr.ts = fhook_clock();
	l->hdr.cpu = rb->cpu;
	l->first_seq = READ_ONCE(rb->lost_first);
	l->last_seq = READ_ONCE(rb->lost_last);
	l->hdr.seq = l->first_seq;
	for_each_set_bit(bit, &mask, FHOOK_MAX_PROBES) {
		long v;

		/* clear, then take: a drop in between sets the bit again */
		clear_bit(bit, &rb->lost_mask);
		v = local_xchg(&rb->lost_probe[bit], 0);
		if (!v)
			continue;
		l->probes[n].probe_id = bit + 1;
		l->probes[n].count = v;
		total += v;
		n++;
	}
	l->nr_probes = n;
	l->lost = total;
	/*
	 * Drops that came in while we reported (nested) saw lost_pending
	 * non-zero and left lost_first alone: the next record starts at the
	 * latest one.
	 */
	if (local_sub_return(total, &rb->lost_pending))
		WRITE_ONCE(rb->lost_first, READ_ONCE(rb->lost_last));
}

static noinline notrace struct fhook_rec_comm *
fhook_ring_put_comm(struct fhook_ring *rb, u64 pos, u32 seq, struct fhook_comm_slot *cs,
		    const struct task_struct *t, u64 name0, u64 name1)
{
	struct fhook_rec_comm *c = rb->data + (pos & rb->mask);

	memset(&c->hdr, 0, sizeof(c->hdr));
	c->hdr.size = sizeof(*c);
	c->hdr.type = FHOOK_REC_COMM;
	c->hdr.pid = t->pid;
	c->hdr.tgid = t->tgid;
	c->hdr.cpu = rb->cpu;
	c->hdr.seq = seq;
	memcpy(c->comm, &name0, sizeof(name0));
	memcpy(c->comm + sizeof(name0), &name1, sizeof(name1));
	/* a nested writer may have missed too and written its own: harmless */
	cs->pid = t->pid;
	cs->tgid = t->tgid;
	cs->name[0] = name0;
	cs->name[1] = name1;
	cs->pos = pos;
	return c;
}

notrace void fhook_ring_count_frozen(struct fhook_ring *rb, u32 probe_id)
{
	fhook_count(&fhook_counters(rb->session, rb->cpu, probe_id)->frozen);
}

/*
 * fhook_ring_reserve() (ring.h) in every case: a drop to report first, the
 * task's name to write first, an overwrite ring to make room in, a call
 * graph entry held back.  @fn_entry: a function entry's record, of the
 * size fhook_ring_fn_choose() picks (never on an overwrite ring).
 */
notrace void *__fhook_ring_reserve_full(struct fhook_ring *rb, unsigned int size, u32 probe_id,
					bool fn_entry)
{
	struct task_struct *t = current;
	struct fhook_comm_slot *cs = &rb->comms[t->pid & (FHOOK_COMM_SLOTS - 1)];
	unsigned int need = ALIGN(size, 8);
	unsigned int lost_sz = 0, comm_sz = 0;
	unsigned long lost_mask;
	long head, new, old;
	u64 name0, name1;	/* current->comm, as two words (no array: no canary) */
	u64 nr, ts = 0;
	bool may_fn = false;
	void *rec;
	int ret;

	BUILD_BUG_ON(sizeof(t->comm) != 2 * sizeof(u64) ||
		     sizeof(((struct fhook_rec_comm *)0)->comm) != 2 * sizeof(u64));

	/* a call graph's entry held back on this CPU goes first (probe_graph.c) */
	if (unlikely(this_cpu_read(fhook_fgraph_pending)))
		fhook_fgraph_flush();

	ret = fhook_ring_enter(rb, probe_id, &nr);
	if (ret == -EAGAIN)
		return ERR_PTR(-EAGAIN);
	if (ret)
		goto drop;
	lost_mask = READ_ONCE(rb->lost_mask);
	if (lost_mask)
		lost_sz = FHOOK_LOST_SIZE(hweight_long(lost_mask));
	memcpy(&name0, t->comm, sizeof(name0));
	memcpy(&name1, t->comm + sizeof(name0), sizeof(name1));
	if (unlikely(!fhook_comm_known(rb, cs, t, name0, name1)))
		comm_sz = sizeof(struct fhook_rec_comm);

	/* (once the number is taken: fhook_ring_fn_may()) */
	if (fn_entry) {
		may_fn = fhook_ring_fn_may(rb);
		ts = fhook_clock();
	}
	old = local_read(&rb->head);
	do {
		head = old;
		/* a function entry's record: FN or FUNC (sizes multiples of 8) */
		if (fn_entry)
			size = need = fhook_ring_fn_choose(rb, nr, may_fn);
		new = head + need + lost_sz + comm_sz;
		if (rb->overwrite) {
			if (unlikely(!fhook_ring_evict(rb, new)))
				goto drop;
		} else if (unlikely(!fhook_ring_room(rb, head, new - head))) {
			goto drop;
		}
	} while ((old = local_cmpxchg(&rb->head, head, new)) != head);
	if (rb->overwrite)
		smp_wmb();	/* (E): data_oldest before the data */

	if (lost_sz) {
		fhook_ring_put_lost(rb, rb->data + (head & rb->mask), lost_sz, lost_mask);
		head += lost_sz;
	}
	if (comm_sz) {
		/* the record right after it, through the alias at the wrap */
		rec = fhook_ring_put_comm(rb, head, nr, cs, t, name0, name1) + 1;
	} else {
		rec = rb->data + (head & rb->mask);
	}
	rec = fhook_ring_rec_begin(rec, size, nr, comm_sz);
	return fn_entry ? fhook_ring_fn_mark(rec, size, ts) : rec;

drop:
	fhook_ring_drop(rb, probe_id, nr);
	return NULL;
}

notrace void fhook_ring_commit(struct fhook_ring *rb)
{
	if (local_read(&rb->nest) > 1) {
		local_dec(&rb->nest);
		return;
	}
	fhook_ring_publish(rb);
}

/*
 * The reader is due a wakeup (fhook_ring_publish()): one per reader pass
 * (@tail, the tail it had reached, is remembered), none from the wakeup
 * itself (above).
 */
notrace void fhook_ring_wake(struct fhook_ring *rb, u64 tail)
{
	if (this_cpu_read(fhook_waking) == current)
		return;
	WRITE_ONCE(rb->wake_tail, tail);
	irq_work_queue(&rb->work);
}

/*
 * Wait for writers still inside reserve/commit; false after 100 ms (a
 * writer holds ->nest for a few hundred instructions).
 */
static bool fhook_rings_wait_nest(struct fhook_session *s)
{
	int cpu, tries;

	for_each_possible_cpu(cpu) {
		struct fhook_ring *rb = s->rings[cpu];

		for (tries = 0; local_read(&rb->nest) && tries < 1000; tries++)
			usleep_range(100, 200);
		if (local_read(&rb->nest))
			return false;
	}
	return true;
}

static void fhook_nop(void *unused)
{
}

/*
 * Freeze: after this returns 0, no writer is inside a ring of @s and every
 * later one sees ->frozen (see fhook_ring_enter()).  RCU is no help: a
 * probe called where RCU is not watching is not covered by a grace period.
 * The IPI makes each CPU's ->nest store visible (an interrupt drains the
 * store buffer) and orders its later loads of ->frozen after our store.
 */
int fhook_rings_freeze(struct fhook_session *s)
{
	WRITE_ONCE(s->frozen, true);
	if (!s->rings)
		return 0;
	/* frozen before the IPIs; pairs with the barrier() in reserve */
	smp_mb();
	on_each_cpu(fhook_nop, NULL, 1);
	return fhook_rings_wait_nest(s) ? 0 : -EBUSY;
}

/*
 * Readable when some CPU has @any data pending, or with !@any, at least a
 * watermark's worth.
 */
bool fhook_rings_readable(struct fhook_session *s, bool any)
{
	/* pairs with the release in fhook_rings_alloc() */
	struct fhook_ring **rings = smp_load_acquire(&s->rings);
	int cpu;

	if (!rings)
		return false;
	for_each_possible_cpu(cpu) {
		struct fhook_ring *rb = rings[cpu];
		u64 pending = READ_ONCE(rb->meta->data_head) - READ_ONCE(rb->cons->data_tail);

		if (!pending)
			continue;
		if (any)
			return true;
		if (rb->overwrite)
			continue;	/* read on demand: never "full" */
		if (pending >= rb->watermark)
			return true;
		if (rb->wakeup_events &&
		    (u32)(READ_ONCE(rb->meta->seq_next) - READ_ONCE(rb->cons->seq_read)) >=
		    rb->wakeup_events)
			return true;
	}
	return false;
}

static int fhook_vma_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;		/* keep each mapping whole */
}

static const struct vm_operations_struct fhook_vm_ops = {
	.may_split = fhook_vma_may_split,
};

#define FHOOK_PGOFF_CPU_SHIFT	(32 - PAGE_SHIFT)

int fhook_rings_mmap(struct fhook_session *s, struct vm_area_struct *vma)
{
	unsigned long cpu = vma->vm_pgoff >> FHOOK_PGOFF_CPU_SHIFT;
	unsigned long pg = vma->vm_pgoff & ((1UL << FHOOK_PGOFF_CPU_SHIFT) - 1);
	unsigned long pages = vma_pages(vma);
	/* pairs with the release in fhook_rings_alloc() */
	struct fhook_ring **rings = smp_load_acquire(&s->rings);
	struct fhook_ring *rb;
	int ret;

	BUILD_BUG_ON(FHOOK_MMAP_STRIDE != 1ULL << 32);
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (cpu == FHOOK_MMAP_STATS_REGION)
		return fhook_stats_mmap(s, vma);
	if (!rings)
		return -ENODEV;
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	rb = rings[cpu];
	if (!rb)
		return -ENODEV;

	switch (pg) {
	case FHOOK_MMAP_META:
		if (pages != 1)
			return -EINVAL;
		break;
	case FHOOK_MMAP_CONS:
		if (pages != 1)
			return -EINVAL;
		break;
	case FHOOK_MMAP_DATA:
		if (pages != 2 * (rb->size >> PAGE_SHIFT))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (pg != FHOOK_MMAP_CONS) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		fhook_vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	} else {
		fhook_vm_flags_clear(vma, VM_MAYEXEC);
	}

	/*
	 * VM_IO: no get_user_pages() on the ring (no /proc/PID/mem,
	 * process_vm_readv() or O_DIRECT from it) and madvise(MADV_DOFORK)
	 * fails, so VM_DONTCOPY really keeps the ring out of fork children
	 * that may drop their privileges.
	 */
	fhook_vm_flags_set(vma, VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	ret = remap_vmalloc_range(vma, rb->base, pg);
	if (ret)
		return ret;
	vma->vm_ops = &fhook_vm_ops;
	return 0;
}
