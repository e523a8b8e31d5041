// SPDX-License-Identifier: GPL-2.0
/*
 * Histograms kept in the module (FHOOK_IOC_HIST_SET, fhook hist): a
 * probe's hits aggregated by key, as the kernel's hist triggers aggregate
 * them (kernel/trace/tracing_map.c), so that no event crosses to user
 * space.
 *
 * The table is tracing_map's design, smaller: 2 x entries slots of
 * (hash, element) and a pool of `entries` elements, shared by all CPUs and
 * written without locks, from any context (kprobes run in NMI context).
 * A hit hashes its key (64-bit words, multiplied by the golden ratio as
 * hash_64() does) and probes the slots linearly:
 *   - a slot with its hash and a published element with its key: found;
 *   - an empty slot: claimed with cmpxchg on its hash, an element taken
 *     from the pool (atomic counter), filled, then published (release);
 *     the pool used up: the hit is dropped (counted), before claiming;
 *   - a slot with its hash whose element is not published yet (another
 *     CPU is making it): dropped, as tracing_map drops a hit it cannot
 *     place.
 * Found: the hit count and the sums are atomic64 adds on the element
 * (Hits is their total, added up when read).
 * Barriers: (A) the smp_store_release() of slot->elt after filling the
 * element pairs with the smp_load_acquire() of it in a lookup and in the
 * reader (B).
 * Elements are never taken back while the probe lives: reading is a copy
 * of the published ones, any time; a reader wanting intervals subtracts.
 *
 * A probe's tables are a list (p->hist, then ->next), each hit counted in
 * every one.  Stack keys (FHOOK_HIST_SRC_STACK, _USTACK) are taken once
 * per hit, in a frame of its own (fhook_hist_add_stack()): the key buffer
 * of the other hits stays small, and the kernel zeroes locals at every
 * entry (CONFIG_INIT_STACK_ALL_ZERO).
 */
#include "fhook.h"

#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/random.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/* a key is 64-bit words (COMM: two): hashed and compared a word at a time */
#define FHOOK_HIST_KEY_WORDS	(FHOOK_HIST_MAX_KEYS * 2)
/* a user stack key: the tgid, then the frames */
#define FHOOK_HIST_USTACK_WORDS	(1 + FHOOK_HIST_STACK_DEPTH)
/* ... with stacks: a kernel and a user one at most, and a COMM */
#define FHOOK_HIST_STACK_KEY_WORDS	(FHOOK_HIST_STACK_DEPTH + FHOOK_HIST_USTACK_WORDS + 2)
/* frames taken to find the probed function's caller among fhook's own */
#define FHOOK_HIST_STACK_TAKEN	(FHOOK_HIST_STACK_DEPTH + 16)

struct fhook_hist_slot {
	u32 hash;		/* 0: empty */
	u32 elt;		/* element index + 1; 0: not published yet */
};

struct fhook_hist {
	struct fhook_hist *next;	/* the probe's next table */
	struct fhook_hist_set def;
	u8 stack;			/* FHOOK_HIST_KSTACK, _USTACK: its stack keys */
	u16 comm_offset;		/* FHOOK_HIST_F_COMM's name: in the data, or current's */
	u8 chain_stack;			/* the probe's first table: all tables' */
	u32 key_size;
	u32 elt_size;		/* key, hitcount, sums, comm */
	u32 slot_mask;		/* 2 x entries - 1 */
	u64 seed;		/* of the hash: nobody picks keys that collide */
	u64 pages;		/* fhook_mem_reserve()d for the slots and elements */
	struct fhook_user *user;	/* ... for this user's session */
	atomic_t used;		/* elements taken from the pool */
	atomic64_t drops;	/* (hits: the elements' counts added up) */
	struct fhook_hist_slot *slots;
	u8 *elts;
};

/* fhook_hist.comm_offset: the name kept is current's */
#define FHOOK_HIST_COMM_CURRENT	0xffff

#define FHOOK_HIST_KSTACK	BIT(0)
#define FHOOK_HIST_USTACK	BIT(1)

static inline u8 *fhook_hist_elt(struct fhook_hist *h, u32 i)
{
	return h->elts + (size_t)i * h->elt_size;
}

/*
 * Multiplicative hashing by the golden ratio (hash_64()), word by word,
 * from the table's random seed, the high half folded in once more: one
 * number a tracer controls (a syscall's argument) cannot be chosen to
 * land in one slot without the seed.  Keys of several words still can
 * (the same top bit flipped in two words cancels out whatever the seed):
 * the probe limit below bounds what any cluster costs a hit.
 */
static __always_inline u32 fhook_hist_hash(const u64 *key, unsigned int words, u64 seed)
{
	u64 x = seed;
	unsigned int i;

	for (i = 0; i < words; i++)
		x = (x ^ key[i]) * 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 32)) * 0x9e3779b97f4a7c15ULL;
	return (u32)(x >> 32) ?: 1;
}

/*
 * Slots a key is looked for in from its own on: a new key past them is
 * dropped (counted).  At most half the slots are taken, so a key with a
 * random hash is within a few of its own.
 */
#define FHOOK_HIST_MAX_PROBE	64

static __always_inline bool fhook_hist_same(const u64 *a, const u64 *b, unsigned int words)
{
	unsigned int i;

	if (words == 1)
		return a[0] == b[0];
	for (i = 0; i < words; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The element's counters: the hit count, then the sums */
static inline atomic64_t *fhook_hist_ctr(struct fhook_hist *h, u8 *e, unsigned int i)
{
	return (atomic64_t *)(e + h->key_size) + i;
}

/*
 * @data_max: the bytes of data a hit has at most (a probe's fixed area:
 * a key past it would read another hit's or session's scratch bytes).
 */
static int fhook_hist_check_field(const struct fhook_hist_field *f, bool key, u32 src_mask,
				  u32 data_max)
{
	bool wide;

	if (f->flags & ~FHOOK_HIST_F_SIGNED)
		return -EINVAL;
	/* strings and stacks: keys, as they are */
	wide = f->src == FHOOK_HIST_SRC_COMM || f->src == FHOOK_HIST_SRC_STACK ||
	       f->src == FHOOK_HIST_SRC_USTACK;
	if (f->src >= 32 || !(src_mask & BIT(f->src)) || (!key && wide))
		return -EINVAL;
	if (f->src == FHOOK_HIST_SRC_DATA) {
		if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
			return -EINVAL;
		if (f->offset + f->size > data_max ||
		    (f->store != FHOOK_HIST_NO_STORE && f->store >= 64))
			return -EINVAL;
	} else if (f->size || f->offset || f->store != FHOOK_HIST_NO_STORE ||
		   (f->flags & FHOOK_HIST_F_SIGNED)) {
		return -EINVAL;
	}
	switch (f->op) {
	case FHOOK_HIST_OP_NONE:
	case FHOOK_HIST_OP_LOG2:
		return f->param || (f->op && wide) ? -EINVAL : 0;
	case FHOOK_HIST_OP_BUCKETS:
	case FHOOK_HIST_OP_DIV:
		return !f->param || wide ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

/*
 * The sources a table of @p may take in *@src_mask (FHOOK_HIST_SRC_* bits),
 * in *@data_max the bytes of data its hits have at most, and in
 * *@comm_offset where in the data the task's name is (FHOOK_HIST_F_COMM),
 * FHOOK_HIST_COMM_CURRENT: current's.
 */
static int fhook_hist_sources(struct fhook_session *s, struct fhook_probe *p, u32 *src_mask,
			      u32 *data_max, u16 *comm_offset)
{
	*comm_offset = FHOOK_HIST_COMM_CURRENT;
	*src_mask = BIT(FHOOK_HIST_SRC_PID) | BIT(FHOOK_HIST_SRC_CPU) | BIT(FHOOK_HIST_SRC_COMM) |
		    BIT(FHOOK_HIST_SRC_USTACK);
	/* a tracepoint's entry: each hit's own length bounds the keys */
	*data_max = FHOOK_MAX_PROBE_DATA;
	/*
	 * Probes that make one record of their data per hit.  (One with
	 * FHOOK_PROBE_F_STACK: its hits are counted, never recorded; the flag
	 * is the caller's fallback for a table refused.)
	 */
	switch (p->type) {
	case FHOOK_PROBE_FUNC:
		if (p->kind != &fhook_func_kind || p->count_only || p->nr_triggers ||
		    to_func(p)->counts)
			return fhook_refuse(s, FHOOK_R_HIST_PROBE, -1, -EINVAL);
		*src_mask |= BIT(FHOOK_HIST_SRC_IP) | BIT(FHOOK_HIST_SRC_PARENT_IP) |
			     BIT(FHOOK_HIST_SRC_STACK);
		return 0;
	case FHOOK_PROBE_KPROBE:
		*src_mask |= BIT(FHOOK_HIST_SRC_STACK);
		fallthrough;
	case FHOOK_PROBE_KRETPROBE:
	case FHOOK_PROBE_UPROBE:
	case FHOOK_PROBE_URETPROBE:
		/* the fields' fixed area (strings are never keys) */
		*data_max = p->prog ? p->prog->data_size : 0;
		fallthrough;
	case FHOOK_PROBE_TRACEPOINT:
		if (p->count_only)
			return fhook_refuse(s, FHOOK_R_HIST_PROBE, -1, -EINVAL);
		*src_mask |= BIT(FHOOK_HIST_SRC_DATA);
		return 0;
	case FHOOK_PROBE_WAKEUP:
		/* at a switch, current is the task switched out: the sample's task only */
		*src_mask = BIT(FHOOK_HIST_SRC_DATA) | BIT(FHOOK_HIST_SRC_CPU);
		*data_max = sizeof(struct fhook_wakeup_sample);
		*comm_offset = offsetof(struct fhook_wakeup_sample, comm);
		return 0;
	default:
		return fhook_refuse(s, FHOOK_R_PROBE_KIND, -1, -EOPNOTSUPP);
	}
}

/*
 * The keys and values of @hs against the sources @p has (@src_mask,
 * @data_max); its stack keys (FHOOK_HIST_KSTACK, _USTACK) in *@stacks.
 */
static int fhook_hist_check_fields(struct fhook_session *s, const struct fhook_hist_set *hs,
				   u32 src_mask, u32 data_max, u8 *stacks)
{
	unsigned int i;
	int ret;

	*stacks = 0;
	for (i = 0; i < hs->nr_keys + hs->nr_vals; i++) {
		bool key = i < hs->nr_keys;

		ret = fhook_hist_check_field(key ? &hs->keys[i] : &hs->vals[i - hs->nr_keys], key,
					     src_mask, data_max);
		if (ret)
			return fhook_refuse(s, FHOOK_R_HIST_FIELD, i, ret);
		if (key && (hs->keys[i].src == FHOOK_HIST_SRC_STACK ||
			    hs->keys[i].src == FHOOK_HIST_SRC_USTACK)) {
			u8 kind = hs->keys[i].src == FHOOK_HIST_SRC_STACK ? FHOOK_HIST_KSTACK
									  : FHOOK_HIST_USTACK;

			if (*stacks & kind)	/* one of each */
				return fhook_refuse(s, FHOOK_R_HIST_STACKS, i, -EINVAL);
			*stacks |= kind;
		}
	}
	for (i = hs->nr_keys; i < FHOOK_HIST_MAX_KEYS; i++)
		if (memchr_inv(&hs->keys[i], 0, sizeof(hs->keys[i])))
			return fhook_refuse(s, FHOOK_R_HIST_UNUSED, i, -EINVAL);
	for (i = hs->nr_vals; i < FHOOK_HIST_MAX_VALS; i++)
		if (memchr_inv(&hs->vals[i], 0, sizeof(hs->vals[i])))
			return fhook_refuse(s, FHOOK_R_HIST_UNUSED, FHOOK_HIST_MAX_KEYS + i, -EINVAL);
	return 0;
}

/* A table of @hs with the stack keys @stacks, its memory in fhook's budget for @user */
static struct fhook_hist *fhook_hist_create(const struct fhook_hist_set *hs, u8 stacks,
					    struct fhook_user *user)
{
	struct fhook_hist *h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	unsigned int i;
	int ret;

	if (!h)
		return ERR_PTR(-ENOMEM);
	h->def = *hs;
	h->stack = stacks;
	for (i = 0; i < hs->nr_keys; i++) {
		switch (hs->keys[i].src) {
		case FHOOK_HIST_SRC_COMM:
			h->key_size += TASK_COMM_LEN;
			break;
		case FHOOK_HIST_SRC_STACK:
			h->key_size += 8 * FHOOK_HIST_STACK_DEPTH;
			break;
		case FHOOK_HIST_SRC_USTACK:
			h->key_size += 8 * FHOOK_HIST_USTACK_WORDS;
			break;
		default:
			h->key_size += 8;
		}
	}
	h->elt_size = h->key_size + 8 * (1 + FHOOK_HIST_MAX_VALS) + TASK_COMM_LEN;
	h->slot_mask = 2 * hs->entries - 1;
	h->seed = get_random_u64();
	/* in fhook's memory budget, as the rings (up to 4 x 64 tables of MiBs) */
	h->pages = DIV_ROUND_UP(2 * hs->entries * sizeof(*h->slots) +
				(u64)hs->entries * h->elt_size, PAGE_SIZE);
	h->user = user;
	ret = fhook_mem_reserve(user, h->pages);
	if (ret) {
		h->pages = 0;
		fhook_hist_free(h);
		return ERR_PTR(ret);
	}
	h->slots = __vmalloc(array_size(2 * hs->entries, sizeof(*h->slots)),
			     GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	h->elts = __vmalloc(array_size(hs->entries, h->elt_size), GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!h->slots || !h->elts) {
		fhook_hist_free(h);
		return ERR_PTR(-ENOMEM);
	}
	return h;
}

/* FHOOK_IOC_HIST_SET, under the session lock, before START. */
int fhook_hist_set(struct fhook_session *s, const struct fhook_hist_set *hs)
{
	struct fhook_hist **tail, *h;
	u32 src_mask, data_max, tables = 0;
	struct fhook_probe *p;
	u16 comm_offset;
	u8 stacks;
	int ret;

	if (hs->flags & ~FHOOK_HIST_F_COMM)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (hs->__pad || hs->reserved)
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!hs->nr_keys || hs->nr_keys > FHOOK_HIST_MAX_KEYS || hs->nr_vals > FHOOK_HIST_MAX_VALS ||
	    !is_power_of_2(hs->entries) || hs->entries < FHOOK_HIST_MIN_SIZE ||
	    hs->entries > FHOOK_HIST_MAX_SIZE)
		return fhook_refuse(s, FHOOK_R_HIST_COUNTS, -1, -EINVAL);
	if (s->armed)
		return fhook_refuse(s, FHOOK_R_ARMED, -1, -EBUSY);
	p = fhook_probe_find(s, hs->probe_id);
	if (!p)
		return fhook_refuse(s, FHOOK_R_NO_PROBE, -1, -ENOENT);
	ret = fhook_hist_sources(s, p, &src_mask, &data_max, &comm_offset);
	if (ret)
		return ret;
	/* the tables in order: `table` says which one this is */
	for (tail = &p->hist; *tail; tail = &(*tail)->next)
		tables++;
	if (hs->table != tables)
		return fhook_refuse(s, FHOOK_R_HIST_TABLE, -1, tables > hs->table ? -EEXIST : -EINVAL);
	if (tables == FHOOK_HIST_MAX_TABLES)
		return fhook_refuse(s, FHOOK_R_HIST_TABLES, -1, -ENOSPC);
	ret = fhook_hist_check_fields(s, hs, src_mask, data_max, &stacks);
	if (ret)
		return ret;
	h = fhook_hist_create(hs, stacks, s->user);
	if (IS_ERR(h))
		return PTR_ERR(h);
	h->comm_offset = comm_offset;
	*tail = h;
	p->hist->chain_stack |= h->stack;
	return 0;
}

/* A probe's tables */
void fhook_hist_free(struct fhook_hist *h)
{
	while (h) {
		struct fhook_hist *next = h->next;

		vfree(h->slots);
		vfree(h->elts);
		fhook_mem_unreserve(h->user, h->pages);
		kfree(h);
		h = next;
	}
}

static __always_inline u64 fhook_hist_value(const struct fhook_hist_field *f, const u8 *data,
					    u32 len, u64 faults, unsigned long ip,
					    unsigned long parent_ip)
{
	u64 v = 0;

	switch (f->src) {
	case FHOOK_HIST_SRC_DATA:
		/* a fault, or past a short tracepoint entry: 0 */
		if ((f->store != FHOOK_HIST_NO_STORE && (faults & BIT_ULL(f->store))) ||
		    f->offset + f->size > len)
			break;
		/* little-endian; constant sizes: one load */
		switch (f->size) {
		case 1:
			memcpy(&v, data + f->offset, 1);
			break;
		case 2:
			memcpy(&v, data + f->offset, 2);
			break;
		case 4:
			memcpy(&v, data + f->offset, 4);
			break;
		default:
			memcpy(&v, data + f->offset, 8);
		}
		if ((f->flags & FHOOK_HIST_F_SIGNED) && f->size < 8)
			v = (u64)((s64)(v << (64 - 8 * f->size)) >> (64 - 8 * f->size));
		break;
	case FHOOK_HIST_SRC_PID:
		v = current->pid;
		break;
	case FHOOK_HIST_SRC_CPU:
		v = raw_smp_processor_id();
		break;
	case FHOOK_HIST_SRC_IP:
		v = ip;
		break;
	case FHOOK_HIST_SRC_PARENT_IP:
		v = parent_ip;
		break;
	}
	switch (f->op) {
	case FHOOK_HIST_OP_LOG2:
		/* ilog2(roundup_pow_of_two(v)), as hist_field_log2() */
		return v <= 1 ? 0 : fls64(v - 1);
	case FHOOK_HIST_OP_BUCKETS:
		return div64_u64(v, f->param) * f->param;
	case FHOOK_HIST_OP_DIV:
		return div64_u64(v, f->param);
	}
	return v;
}

/*
 * The key of a hit in @h, in @key; @stack, @ustack: its kernel and user
 * stacks, if it has such keys
 */
static __always_inline void fhook_hist_key(const struct fhook_hist *h, u64 *key,
					   const void *data, u32 len, u64 faults,
					   unsigned long ip, unsigned long parent_ip,
					   const u64 *stack, const u64 *ustack)
{
	const struct fhook_hist_set *d = &h->def;
	unsigned int i, w = 0;

	for (i = 0; i < d->nr_keys; i++) {
		const struct fhook_hist_field *f = &d->keys[i];

		if (f->src == FHOOK_HIST_SRC_COMM) {
			memcpy(&key[w], current->comm, TASK_COMM_LEN);
			w += TASK_COMM_LEN / 8;
		} else if (f->src == FHOOK_HIST_SRC_STACK) {
			/* (always given then: fhook_hist_add_stack()) */
			if (stack)
				memcpy(&key[w], stack, 8 * FHOOK_HIST_STACK_DEPTH);
			w += FHOOK_HIST_STACK_DEPTH;
		} else if (f->src == FHOOK_HIST_SRC_USTACK) {
			if (ustack)
				memcpy(&key[w], ustack, 8 * FHOOK_HIST_USTACK_WORDS);
			w += FHOOK_HIST_USTACK_WORDS;
		} else {
			key[w++] = fhook_hist_value(f, data, len, faults, ip, parent_ip);
		}
	}
}

/* @key's entry in @h found or made, and the hit counted there */
static __always_inline void fhook_hist_count(struct fhook_hist *h, const u64 *key,
					     const void *data, u32 len, u64 faults,
					     unsigned long ip, unsigned long parent_ip)
{
	const struct fhook_hist_set *d = &h->def;
	unsigned int words = h->key_size / 8;
	u32 hash, idx, n, i;
	u64 *e = NULL;

	hash = fhook_hist_hash(key, words, h->seed);
	idx = hash & h->slot_mask;
	for (i = 0; i <= min_t(u32, h->slot_mask, FHOOK_HIST_MAX_PROBE - 1);
	     i++, idx = (idx + 1) & h->slot_mask) {
		struct fhook_hist_slot *slot = &h->slots[idx];
		u32 sh = READ_ONCE(slot->hash);

		if (!sh) {
			if (atomic_read(&h->used) >= d->entries)
				break;	/* full: a new key is dropped */
			if (cmpxchg(&slot->hash, 0, hash) != 0) {
				/* another key took it meanwhile: look at it again */
				idx = (idx - 1) & h->slot_mask;
				i--;
				continue;
			}
			n = atomic_inc_return(&h->used);
			if (n > d->entries)
				break;	/* the slot stays claimed, never published */
			e = (u64 *)fhook_hist_elt(h, n - 1);
			memcpy(e, key, h->key_size);
			if (d->flags & FHOOK_HIST_F_COMM)
				memcpy((u8 *)e + h->elt_size - TASK_COMM_LEN,
				       h->comm_offset == FHOOK_HIST_COMM_CURRENT
					       ? current->comm
					       : (const char *)data + h->comm_offset,
				       TASK_COMM_LEN);
			/* (A): the element before its index */
			smp_store_release(&slot->elt, n);
			break;
		}
		if (sh != hash)
			continue;
		/* (B) */
		n = smp_load_acquire(&slot->elt);
		if (!n)
			break;	/* being made on another CPU */
		if (fhook_hist_same((u64 *)fhook_hist_elt(h, n - 1), key, words)) {
			e = (u64 *)fhook_hist_elt(h, n - 1);
			break;
		}
	}
	if (!e) {
		atomic64_inc(&h->drops);
		return;
	}
	atomic64_inc((atomic64_t *)(e + words));
	for (i = 0; i < d->nr_vals; i++)
		atomic64_add(fhook_hist_value(&d->vals[i], data, len, faults, ip, parent_ip),
			     (atomic64_t *)(e + words + 1 + i));
}

/*
 * The stack of a hit, FHOOK_HIST_STACK_DEPTH words, zeros after its last
 * frame, as a record's stack starts: a kprobe's from its registers; a
 * function probe's from the probed function, then its caller (the frames
 * of fhook and of the ftrace trampoline dropped, as fhook_func_stack()
 * does).  @stack has room for FHOOK_HIST_STACK_TAKEN.
 */
static notrace void fhook_hist_stack(u64 *stack, struct pt_regs *regs, unsigned long ip,
				     unsigned long parent_ip)
{
	unsigned int n;

	if (regs)
		n = fhook_stack_kernel(regs, stack, FHOOK_HIST_STACK_DEPTH);
	else
		n = min_t(unsigned int, fhook_stack_func(stack, FHOOK_HIST_STACK_TAKEN, ip, parent_ip),
			  FHOOK_HIST_STACK_DEPTH);
	memset(stack + n, 0, (FHOOK_HIST_STACK_DEPTH - n) * sizeof(u64));
}

/*
 * The user stack key of a hit: the tgid, then FHOOK_HIST_STACK_DEPTH
 * words, zeros after the last frame.  A uprobe's from its registers, as
 * its records' stacks; another probe's from the user registers the task
 * entered the kernel with, as perf_callchain_user() takes them (in an
 * interrupt: the interrupted task's; none for kernel threads and workers).  The frames are read with copy_from_user_nofault(),
 * which gives up where the task's pages are not there or not its own
 * (nmi_uaccess_okay()).
 */
static notrace void fhook_hist_ustack(u64 *ustack, struct pt_regs *regs)
{
	unsigned int n = 0;

	ustack[0] = current->tgid;
	if (!regs || !user_mode(regs))
		regs = current->mm && !(current->flags & FHOOK_PF_NO_USER_REGS) ?
		       task_pt_regs(current) : NULL;
	if (regs)
		n = fhook_stack_user(regs, ustack + 1, FHOOK_HIST_STACK_DEPTH);
	memset(ustack + 1 + n, 0, (FHOOK_HIST_STACK_DEPTH - n) * sizeof(u64));
}

/* fhook_hist_add() of a probe with stack keys: a frame of its own */
static noinline notrace void fhook_hist_add_stack(struct fhook_hist *h, const void *data,
						  u32 len, u64 faults, unsigned long ip,
						  unsigned long parent_ip, struct pt_regs *regs)
{
	u64 key[FHOOK_HIST_STACK_KEY_WORDS] __uninitialized;
	u64 stack[FHOOK_HIST_STACK_TAKEN] __uninitialized;
	u64 ustack[FHOOK_HIST_USTACK_WORDS] __uninitialized;

	if (h->chain_stack & FHOOK_HIST_KSTACK)
		fhook_hist_stack(stack, regs, ip, parent_ip);
	if (h->chain_stack & FHOOK_HIST_USTACK)
		fhook_hist_ustack(ustack, regs);
	for (; h; h = h->next) {
		fhook_hist_key(h, key, data, len, faults, ip, parent_ip, stack, ustack);
		fhook_hist_count(h, key, data, len, faults, ip, parent_ip);
	}
}

/*
 * A hit: counted in each of the probe's tables @h (its key's entry found
 * or made).  Any context, preemption off; @data is the record's data,
 * @len bytes (function probes: none); @regs: a kprobe's or uprobe's
 * registers (NULL: a function probe's or tracepoint's hit, the stack taken
 * from here).
 */
notrace void fhook_hist_add(struct fhook_hist *h, const void *data, u32 len, u64 faults,
			    unsigned long ip, unsigned long parent_ip, struct pt_regs *regs)
{
	u64 key[FHOOK_HIST_KEY_WORDS] __uninitialized;	/* fhook_hist_key() fills it */

	if (unlikely(h->chain_stack)) {
		fhook_hist_add_stack(h, data, len, faults, ip, parent_ip, regs);
		return;
	}
	for (; h; h = h->next) {
		fhook_hist_key(h, key, data, len, faults, ip, parent_ip, NULL, NULL);
		fhook_hist_count(h, key, data, len, faults, ip, parent_ip);
	}
}

/* FHOOK_IOC_HIST_READ, under the session lock. */
int fhook_hist_read(struct fhook_session *s, struct fhook_hist_read *hr)
{
	struct fhook_probe *p = fhook_probe_find(s, hr->probe_id);
	struct fhook_hist *h = p ? p->hist : NULL;
	u8 __user *out = u64_to_user_ptr(hr->buf);
	u32 idx, n, count = 0;
	u8 *tmp;
	int ret = 0;

	if (!p)
		return fhook_refuse(s, FHOOK_R_NO_PROBE, -1, -ENOENT);
	for (n = 0; h && n < hr->table; n++)
		h = h->next;
	if (!h)
		return fhook_refuse(s, FHOOK_R_HIST_TABLE, -1, -EINVAL);
	hr->key_size = h->key_size;
	hr->elt_size = h->elt_size;
	hr->hits = 0;
	hr->drops = atomic64_read(&h->drops);
	n = min_t(u32, atomic_read(&h->used), h->def.entries);
	if (hr->buf_len < (u64)n * h->elt_size) {
		hr->nr = n;
		return -ENOSPC;
	}
	tmp = kmalloc(h->elt_size, GFP_KERNEL);
	if (!tmp)
		return -ENOMEM;
	for (idx = 0; idx <= h->slot_mask && count < n; idx++) {
		/* (B) pairs with (A): a published element is complete */
		u32 e = smp_load_acquire(&h->slots[idx].elt);
		u8 *src;
		unsigned int i;

		if (!e)
			continue;
		src = fhook_hist_elt(h, e - 1);
		memcpy(tmp, src, h->key_size);
		for (i = 0; i <= FHOOK_HIST_MAX_VALS; i++) {
			u64 v = atomic64_read(fhook_hist_ctr(h, src, i));

			memcpy(tmp + h->key_size + 8 * i, &v, 8);
			if (!i)
				hr->hits += v;
		}
		memcpy(tmp + h->elt_size - TASK_COMM_LEN, src + h->elt_size - TASK_COMM_LEN,
		       TASK_COMM_LEN);
		if (copy_to_user(out + (size_t)count * h->elt_size, tmp, h->elt_size)) {
			ret = -EFAULT;
			break;
		}
		count++;
	}
	kfree(tmp);
	hr->nr = count;
	return ret;
}
