/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writers' fast path of the per-CPU rings (ring.c has the protocol):
 * the inline reservation, and the outermost writer's publish
 * (fhook_ring_publish(), barrier (B)).
 *
 * Most reservations need nothing but the space: no drop to report, the
 * task's name already in the ring, no overwriting, no call graph entry held
 * back.  fhook_ring_reserve() handles those inline in the probe's own frame
 * and leaves every other case to fhook_ring_reserve_full(), which decides
 * the same things again with the ring's whole state.
 */
#ifndef FHOOK_RING_H
#define FHOOK_RING_H

void *__fhook_ring_reserve_full(struct fhook_ring *rb, unsigned int size, u32 probe_id,
				bool fn_entry);
void fhook_ring_drop(struct fhook_ring *rb, u32 probe_id, u64 seq);
void fhook_ring_count_frozen(struct fhook_ring *rb, u32 probe_id);
void fhook_ring_commit(struct fhook_ring *rb);
void fhook_ring_wake(struct fhook_ring *rb, u64 tail);
void fhook_ring_kick(struct fhook_ring *rb);

/*
 * The context a writer runs in, from the preempt count and the irq state
 * it saw on entry (task, softirq, hardirq, NMI; irqs off or on), never 0:
 * rb->fast_ctx.  The irq state tells an interrupt's tail from recursion:
 * an interrupt lands in a writer's window only where irqs are on, and the
 * code of its exit (irqentry_exit(): the preempt count back to the
 * writer's, irqs off) is a new hit to record, as ftrace's recursion lock
 * lets such a transition through; a traceable function the writer itself
 * calls (its clock read) runs with the writer's irq state.
 */
static __always_inline unsigned int fhook_ring_ctx(unsigned int pc, bool irqs_off)
{
	return (pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET)) | (irqs_off ? 2 : 0) | 1;
}

/* meta fields producers update with local ops (one CPU, NMI-safe) */
static __always_inline local_t *fhook_meta_local(u64 *field)
{
	BUILD_BUG_ON(sizeof(local_t) != sizeof(u64));
	return (local_t *)field;
}

/*
 * Does @rb hold the name of @t as @name (the FHOOK_REC_COMM record that
 * tells it)?  In an overwrite ring only while that record was not evicted.
 */
static __always_inline bool fhook_comm_known(struct fhook_ring *rb,
					     const struct fhook_comm_slot *cs,
					     const struct task_struct *t, u64 name0, u64 name1)
{
	if (cs->pid != t->pid || cs->tgid != t->tgid || cs->name[0] != name0 ||
	    cs->name[1] != name1)
		return false;
	return !rb->overwrite ||
	       cs->pos >= local_read(fhook_meta_local(&rb->meta->data_oldest));
}

/*
 * A writer enters @rb.  ->nest before ->frozen: a freezer that sets frozen,
 * then runs an IPI on every CPU (a full barrier there) and then finds
 * ->nest zero knows this writer will see frozen (fhook_rings_freeze()).
 * Returns -EAGAIN when the session is frozen (counted, no sequence number
 * taken), -ENOSPC when too many writers nest (a drop of the record
 * numbered *@nr), else 0 and the record's sequence number in *@nr.
 */
static __always_inline int fhook_ring_enter(struct fhook_ring *rb, u32 probe_id, u64 *nr)
{
	long nest = local_inc_return(&rb->nest);

	barrier();
	if (unlikely(READ_ONCE(rb->session->frozen) || READ_ONCE(rb->session->traced_off))) {
		fhook_ring_count_frozen(rb, probe_id);
		return -EAGAIN;
	}
	*nr = local_inc_return(fhook_meta_local(&rb->meta->seq_next)) - 1;
	return nest > FHOOK_RING_MAX_NEST ? -ENOSPC : 0;
}

/*
 * The record of @size bytes just reserved at @rec, its sequence number @nr:
 * what the probe does not fill in.
 */
static __always_inline void *fhook_ring_rec_begin(void *rec, unsigned int size, u64 nr,
						  bool named)
{
	/* for fhook_rec_init_ts(): is there a name to stamp? */
	((struct fhook_rec *)rec)->type = named ? FHOOK_REC_COMM : 0;
	((struct fhook_rec *)rec)->seq = nr;
	/* zero the alignment padding: no stale bytes after a wrap */
	if (ALIGN(size, 8) != size)
		*(u64 *)(rec + ALIGN(size, 8) - 8) = 0;
	return rec;
}

/*
 * Is there room for @need bytes at @head?  data_tail comes from the
 * consumer page, which the reader writes: a tail ahead of @head, or more
 * than a ring behind it, is a forged one (the space it claims does not
 * exist), and a record larger than the free space is never written.  So a
 * write stays within [head, head + size): inside the double mapping,
 * whatever the reader wrote.  (A): the tail is only ever compared.
 */
static __always_inline bool fhook_ring_room(const struct fhook_ring *rb, u64 head, u64 need)
{
	u64 used = head - READ_ONCE(rb->cons->data_tail);

	return used <= rb->size && need <= rb->size - used;
}

/* fhook_ring_reserve()'s slow path: every record but a function entry's */
static __always_inline void *fhook_ring_reserve_full(struct fhook_ring *rb, unsigned int size,
						     u32 probe_id)
{
	return __fhook_ring_reserve_full(rb, size, probe_id, false);
}

/*
 * A function entry's record: an FHOOK_REC_FN record carries no number (the
 * reader counts it: one more than the highest number before it in the
 * ring), so it may only go where that count is its number @nr.  Asked once
 * the number is taken (fhook_ring_fn_may()): is this the outermost writer
 * (every writer that took a lower number has left: its record is in the
 * ring) with no drop waiting to be reported (its number would come later
 * in the ring)?  A writer nesting later takes a higher number (a drop of
 * its own then too), which fhook_ring_fn_choose() finds inside the
 * reservation's loop, before the cmpxchg that places the record: one that
 * nests between that test and the cmpxchg and reserves makes the cmpxchg
 * fail and the loop choose again; one that only drops is reported after
 * this record.  The record's time is read after @nr is taken and before the
 * loop: a writer nesting since makes the record FUNC, so FN records are in
 * time order within the ring, and the reader's stable time sort keeps each
 * after every record numbered before it and before every one numbered
 * after.  fhook_ring_fn_choose() returns the record's size, FN's or FUNC's.
 */
static __always_inline bool fhook_ring_fn_may(struct fhook_ring *rb)
{
	return local_read(&rb->nest) == 1 && !READ_ONCE(rb->lost_mask);
}

static __always_inline unsigned int fhook_ring_fn_pick(struct fhook_ring *rb, u64 nr, bool may,
						     unsigned int fn_size, unsigned int size)
{
	if (may && (u64)local_read(fhook_meta_local(&rb->meta->seq_next)) == nr + 1)
		return fn_size;
	return size;
}

static __always_inline unsigned int fhook_ring_fn_choose(struct fhook_ring *rb, u64 nr, bool may)
{
	BUILD_BUG_ON(!IS_ALIGNED(sizeof(struct fhook_rec_fn), 8) ||
		     !IS_ALIGNED(sizeof(struct fhook_rec_func), 8));
	return fhook_ring_fn_pick(rb, nr, may, sizeof(struct fhook_rec_fn),
				  sizeof(struct fhook_rec_func));
}

/*
 * A function entry's reservation tells its writer in the record what it
 * chose: the size (FN's or FUNC's) and the time, at the offsets both
 * records share with the generic header.
 */
static __always_inline void *fhook_ring_fn_mark(void *rec, unsigned int size, u64 ts)
{
	BUILD_BUG_ON(offsetof(struct fhook_rec_fn, size) != offsetof(struct fhook_rec, size) ||
		     offsetof(struct fhook_rec_fn, ts) != offsetof(struct fhook_rec, ts));
	((struct fhook_rec *)rec)->size = size;
	((struct fhook_rec *)rec)->ts = ts;
	return rec;
}

/*
 * The reservation once the writer entered @rb and took number @nr (the
 * rest of __fhook_ring_reserve() below).  A function entry's (@fn_size
 * not 0) is of @fn_size bytes (an FN-layout record) or of @size as
 * fhook_ring_fn_pick() decides, with fhook_ring_fn_may()'s answer @may_fn
 * and its time @ts, which the assembly recorder's rare endings give as
 * they found them (fhook_fnrec_finish(), fhook_fnk_finish()).
 */
static __always_inline void *fhook_ring_reserve_loop(struct fhook_ring *rb, unsigned int size,
						     u32 probe_id, u64 nr, unsigned int fn_size,
						     bool may_fn, u64 ts)
{
	const unsigned int full = size;
	unsigned int need = ALIGN(size, 8);
	long head, old;
	void *rec;

	old = local_read(&rb->head);
	do {
		head = old;
		/* (both sizes are multiples of 8) */
		if (fn_size)
			size = need = fhook_ring_fn_pick(rb, nr, may_fn, fn_size, full);
		if (unlikely(!fhook_ring_room(rb, head, need))) {
			fhook_ring_drop(rb, probe_id, nr);
			return NULL;
		}
	} while ((old = local_cmpxchg(&rb->head, head, head + need)) != head);

	rec = fhook_ring_rec_begin(rb->data + (head & rb->mask), size, nr, false);
	return fn_size ? fhook_ring_fn_mark(rec, size, ts) : rec;
}

/*
 * Reserve @size bytes (header + payload) on @rb for probe @probe_id, the
 * record's hdr.seq set to its sequence number.  Must be called on @rb's
 * CPU with preemption disabled; every call must be followed by
 * fhook_ring_commit() (or fhook_ring_publish() by a writer that found
 * ->nest 0), whatever it returned: a record, NULL (a drop, which
 * this function has counted) or ERR_PTR(-EAGAIN) (the session is frozen:
 * counted as frozen, no sequence number taken).
 *
 * A drop to report or a writer nested on this CPU can appear between the
 * checks below and the reservation (an interrupt that came and went):
 * the LOST record then follows this record instead of preceding it, as it
 * does when the same happens inside fhook_ring_reserve_full().
 */
static __always_inline void *__fhook_ring_reserve(struct fhook_ring *rb, unsigned int size,
						  u32 probe_id, bool fn_entry)
{
	const struct task_struct *t = current;
	const struct fhook_comm_slot *cs = &rb->comms[t->pid & (FHOOK_COMM_SLOTS - 1)];
	u64 name0, name1, nr;
	bool may_fn;
	int ret;

	memcpy(&name0, t->comm, sizeof(name0));
	memcpy(&name1, t->comm + sizeof(name0), sizeof(name1));
	if (unlikely(rb->overwrite || READ_ONCE(rb->lost_mask) ||
		     this_cpu_read(fhook_fgraph_pending) ||
		     !fhook_comm_known(rb, cs, t, name0, name1)))
		return __fhook_ring_reserve_full(rb, size, probe_id, fn_entry);

	ret = fhook_ring_enter(rb, probe_id, &nr);
	if (unlikely(ret == -EAGAIN))
		return ERR_PTR(-EAGAIN);
	if (unlikely(ret)) {
		fhook_ring_drop(rb, probe_id, nr);
		return NULL;
	}
	if (!fn_entry)
		return fhook_ring_reserve_loop(rb, size, probe_id, nr, 0, false, 0);
	/* (fhook_ring_fn_may(), then the time: before the loop, after @nr) */
	may_fn = fhook_ring_fn_may(rb);
	return fhook_ring_reserve_loop(rb, size, probe_id, nr, sizeof(struct fhook_rec_fn), may_fn,
				       fhook_clock());
}

static __always_inline void *fhook_ring_reserve(struct fhook_ring *rb, unsigned int size,
						u32 probe_id)
{
	return __fhook_ring_reserve(rb, size, probe_id, false);
}

/*
 * A function entry's record on @rb: an FHOOK_REC_FN or an FHOOK_REC_FUNC
 * record as fhook_ring_fn_choose() decides, its size and time in the
 * record (fhook_ring_fn_mark()); returns as fhook_ring_reserve() does.
 */
static __always_inline struct fhook_rec *fhook_ring_reserve_fn(struct fhook_ring *rb,
							       u32 probe_id)
{
	return __fhook_ring_reserve(rb, sizeof(struct fhook_rec_func), probe_id, true);
}

/*
 * The outermost writer on this CPU (->nest 1) leaves: publish every
 * record reserved so far, its own and those of writers that nested in
 * it, then wake the reader if it is due.  fhook_ring_commit() when the
 * nesting is not known.
 */
static __always_inline void fhook_ring_publish(struct fhook_ring *rb)
{
	long head;
	u64 tail;

again:
	head = local_read(&rb->head);
	smp_wmb();	/* (B): record contents before data_head */
	WRITE_ONCE(rb->meta->data_head, head);
	barrier();
	local_set(&rb->nest, 0);
	barrier();
	/* a nested writer reserved after we read head: publish it too */
	if (unlikely(head != local_read(&rb->head))) {
		local_set(&rb->nest, 1);
		goto again;
	}
	if (rb->overwrite)
		return;		/* read on demand (snapshot), never woken */

	/* one wakeup per reader pass: none until the reader moved its tail */
	tail = READ_ONCE(rb->cons->data_tail);
	if (tail == READ_ONCE(rb->wake_tail))
		return;
	if ((u64)head - tail >= rb->watermark ||
	    (rb->wakeup_events &&
	     (u32)(local_read(fhook_meta_local(&rb->meta->seq_next)) -
		   READ_ONCE(rb->cons->seq_read)) >= rb->wakeup_events))
		fhook_ring_wake(rb, tail);
}

#endif /* FHOOK_RING_H */
