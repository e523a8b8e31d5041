// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctls of /dev/fhook, one row each in fhook_iocs[]: the handler,
 * the argument's sizes, who may call it (CAP_PERFMON for all: observing;
 * more where the row says), the lockdown reason that refuses it, whether
 * it runs under the session lock, when the argument goes back, and the
 * feature bit the handshake announces it with.  fhook_ioctl() does what
 * the row says, so a handler only checks its own fields; adding an ioctl
 * is a row and its handler.
 *
 * What a probe needs (CAP_SYS_ADMIN and lab mode to change the kernel,
 * lockdown's kprobe and kernel-read reasons) depends on the probe and is
 * checked where it is added and armed (priv.c).
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/capability.h>
#include <linux/log2.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

/* fhook_ioc.flags */
#define FHOOK_IOCF_UNLOCKED	BIT(0)	/* not under the session lock */
#define FHOOK_IOCF_OUT		BIT(1)	/* the argument goes back on success */
#define FHOOK_IOCF_OUT_ENOSPC	BIT(2)	/* ... and with ENOSPC: how many there are */
#define FHOOK_IOCF_NO_RECORD	BIT(3)	/* its refusals are not the last error */
/* the capability checked without an audit record, as kallsyms_show_value() */
#define FHOOK_IOCF_CAP_NOAUDIT	BIT(4)

/*
 * What a handler gets: the argument copied in, and where it came from;
 * why it refused, when it runs outside the session lock (the others
 * name it in the session: fhook_refuse()).
 */
struct fhook_ioc_arg {
	void *karg;
	unsigned long uarg;
	u32 usize;			/* the caller's size of it */
	u32 why;			/* enum fhook_reason */
	s32 why_index;
};

/* fhook_refuse() for the dispatcher and the handlers outside the lock */
static long fhook_ioc_refuse(struct fhook_ioc_arg *a, u32 reason, s32 index, long err)
{
	a->why = reason;
	a->why_index = index;
	return err;
}

struct fhook_ioc {
	unsigned int cmd;		/* FHOOK_IOC_*, without the size bits */
	long (*handler)(struct fhook_session *s, struct fhook_ioc_arg *a);
	u16 size;			/* the argument (0: none, _IO) */
	u16 min_size;			/* its oldest layout */
	u8 flags;			/* FHOOK_IOCF_* */
	s8 cap;				/* needed beyond CAP_PERFMON, or -1 */
	u8 lockdown;			/* enum lockdown_reason refusing it, or LOCKDOWN_NONE */
	u64 feature;			/* FHOOK_FEAT_* announcing it (0: every version) */
};

/* Every argument struct, for the one on the stack */
union fhook_ioc_karg {
	struct fhook_handshake handshake;
	struct fhook_ring_setup ring_setup;
	struct fhook_probe_add probe_add;
	struct fhook_pid_filter pid_filter;
	struct fhook_cpu_filter cpu_filter;
	struct fhook_stats stats;
	struct fhook_snapshot snapshot;
	struct fhook_bench bench;
	struct fhook_trigger trigger;
	struct fhook_direct_modify direct_modify;
	struct fhook_read_text read_text;
	struct fhook_latency latency;
	struct fhook_counts counts;
	struct fhook_khooks khooks;
	struct fhook_hist_set hist_set;
	struct fhook_hist_read hist_read;
	struct fhook_last_error last_error;
	struct fhook_symbols symbols;
};

static bool fhook_zero(const u64 *words, size_t n)
{
	while (n--)
		if (*words++)
			return false;
	return true;
}

static int fhook_put_arg(unsigned long uarg, const void *karg, size_t ksize)
{
	return copy_to_user((void __user *)uarg, karg, ksize) ? -EFAULT : 0;
}

/* Feature bits of what no ioctl row announces (the rows add theirs) */
#define FHOOK_FEAT_NOT_IOCTL						\
	(FHOOK_FEAT_FUNC | FHOOK_FEAT_FUNC_IPS | FHOOK_FEAT_IGNORE_SELF |	\
	 FHOOK_FEAT_SEQ | FHOOK_FEAT_OVERWRITE | FHOOK_FEAT_STATS_MMAP |	\
	 FHOOK_FEAT_FLUSH | FHOOK_FEAT_KPROBE | FHOOK_FEAT_FETCH |		\
	 FHOOK_FEAT_PRED | FHOOK_FEAT_UPROBE | FHOOK_FEAT_STACK |		\
	 FHOOK_FEAT_TRACEPOINT | FHOOK_FEAT_HOOK | FHOOK_FEAT_COUNT |		\
	 FHOOK_FEAT_GRAPH | FHOOK_FEAT_HIST_STACK | FHOOK_FEAT_HIST_USTACK |	\
	 FHOOK_FEAT_GRAPH_ALL | FHOOK_FEAT_WAKEUP | FHOOK_FEAT_WAKEUP_HIST |	\
	 FHOOK_FEAT_WAKEUP_FUNCTION | FHOOK_FEAT_ERRORS |				\
	 FHOOK_FEAT_ERRORS_TYPES | FHOOK_FEAT_ERRORS_FRAMES | FHOOK_FEAT_TIMERLAT |	\
	 FHOOK_FEAT_HWLAT | FHOOK_FEAT_OSNOISE | FHOOK_FEAT_LATENCY)

static u64 fhook_ioc_features(void);

static long fhook_ioc_handshake(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_handshake *hs = a->karg;

	if (hs->__pad)
		return fhook_ioc_refuse(a, FHOOK_R_RESERVED, -1, -EINVAL);
	hs->abi_version = FHOOK_ABI_VERSION;
	hs->features = (FHOOK_FEAT_NOT_IOCTL | fhook_ioc_features() | fhook_irqsoff_features()) &
		       ~FHOOK_ARCH_NO_FEATURES;
	if (fhook_lab)
		hs->features |= FHOOK_FEAT_LAB;
	hs->nr_cpus = nr_cpu_ids;
	hs->nr_sessions = atomic_read(&fhook_nr_sessions);
	hs->page_size = PAGE_SIZE;
	hs->max_probes = FHOOK_MAX_PROBES;
	hs->nr_slots = FHOOK_NR_SLOTS;
	hs->khook_slots = FHOOK_KHOOK_SLOTS;
	hs->around_used = fhook_around_used();
	hs->direct_used = fhook_direct_used();
	hs->max_user_sessions = fhook_max_user_sessions;
	hs->max_user_slots = fhook_max_user_slots;
	hs->max_user_mem_pct = fhook_max_user_mem_pct;
	memset(hs->version, 0, sizeof(hs->version));
	strscpy(hs->version, FHOOK_VERSION, sizeof(hs->version));
	return 0;
}

static long fhook_ioc_ring_setup(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_ring_setup *rs = a->karg;
	int ret;

	if (rs->flags & ~FHOOK_RING_FLAGS)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (!fhook_zero(rs->reserved, ARRAY_SIZE(rs->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!rs->buf_size)
		rs->buf_size = FHOOK_RING_DEF_SIZE;
	if (rs->buf_size < PAGE_SIZE || rs->buf_size > FHOOK_RING_MAX_SIZE ||
	    !is_power_of_2(rs->buf_size))
		return fhook_refuse(s, FHOOK_R_RING_SIZE, -1, -EINVAL);
	if ((rs->flags & FHOOK_RING_OVERWRITE) && rs->buf_size < FHOOK_RING_MIN_OVERWRITE)
		return fhook_refuse(s, FHOOK_R_OVERWRITE_SIZE, -1, -EINVAL);
	if (!rs->watermark)
		rs->watermark = rs->buf_size / 4;
	if (rs->watermark > rs->buf_size)
		return fhook_refuse(s, FHOOK_R_WATERMARK, -1, -EINVAL);
	if (!rs->flush_ms)
		rs->flush_ms = FHOOK_FLUSH_DEF_MS;
	if (rs->flush_ms > FHOOK_FLUSH_MAX_MS)
		return fhook_refuse(s, FHOOK_R_FLUSH_MS, -1, -EINVAL);
	if (s->rings)
		return fhook_refuse(s, FHOOK_R_RINGS_SET, -1, -EBUSY);

	ret = fhook_rings_alloc(s, rs);
	if (ret)
		return ret;
	s->flush_jiffies = max(1UL, msecs_to_jiffies(rs->flush_ms));
	rs->nr_cpus = nr_cpu_ids;
	rs->mmap_stride = FHOOK_MMAP_STRIDE;
	return 0;
}

/* a bench probe: FHOOK_IOC_BENCH's target, nothing to read or filter */
static const struct fhook_probe_kind fhook_bench_kind = {};

static const struct fhook_probe_kind *const fhook_kinds[] = {
	[FHOOK_PROBE_FUNC]	= &fhook_func_kind,
	[FHOOK_PROBE_BENCH]	= &fhook_bench_kind,
	[FHOOK_PROBE_KPROBE]	= &fhook_kprobe_kind,
	[FHOOK_PROBE_KRETPROBE]	= &fhook_kprobe_kind,
	[FHOOK_PROBE_UPROBE]	= &fhook_uprobe_kind,
	[FHOOK_PROBE_URETPROBE]	= &fhook_uprobe_kind,
	[FHOOK_PROBE_TRACEPOINT] = &fhook_tp_kind,
	[FHOOK_PROBE_DIRECT]	= &fhook_direct_kind,
	[FHOOK_PROBE_HOOK]	= &fhook_hook_kind,
	[FHOOK_PROBE_GRAPH]	= &fhook_graph_kind,
	[FHOOK_PROBE_WAKEUP]	= &fhook_wakeup_kind,
	[FHOOK_PROBE_TIMERLAT]	= &fhook_timerlat_kind,
	[FHOOK_PROBE_HWLAT]	= &fhook_hwlat_kind,
	[FHOOK_PROBE_OSNOISE]	= &fhook_osnoise_kind,
	[FHOOK_PROBE_IRQSOFF]	= &fhook_irqsoff_kind,
};

/* The fields of @pa in the groups (FHOOK_ADD_*) outside @fields are zero. */
static bool fhook_probe_add_unused_zero(const struct fhook_probe_add *pa, u32 fields)
{
	if (!(fields & FHOOK_ADD_PATTERNS) &&
	    (pa->filter || pa->filter_len || pa->exclude || pa->exclude_len || pa->ips || pa->nr_ips))
		return false;
	if (!(fields & FHOOK_ADD_SYMBOL) && (pa->symbol || pa->symbol_len || pa->offset))
		return false;
	if (!(fields & FHOOK_ADD_ADDR) && pa->addr)
		return false;
	if (!(fields & FHOOK_ADD_MAXACTIVE) && pa->maxactive)
		return false;
	if (!(fields & FHOOK_ADD_PROG) && (pa->prog || pa->prog_len || pa->entry_len || pa->__pad))
		return false;
	if (!(fields & FHOOK_ADD_DATA_SIZE) && pa->data_size)
		return false;
	if (!(fields & FHOOK_ADD_PRED) && (pa->pred || pa->pred_len))
		return false;
	if (!(fields & FHOOK_ADD_HOOK) && pa->hook)
		return false;
	if (!(fields & FHOOK_ADD_STACK_ARGS) && pa->stack_args)
		return false;
	return true;
}

/*
 * The argument goes back (in the caller's layout) before the probe is
 * added: with err_index when its kind refused it, with its id when not;
 * a caller that cannot take the answer gets no probe.
 */
static long fhook_ioc_probe_add(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_probe_add *pa = a->karg;
	size_t usize = min_t(size_t, a->usize, sizeof(*pa));
	const struct fhook_probe_kind *kind;
	struct fhook_probe *p;
	s32 err_index = -1;
	int ret;

	/* a pointer without a length is a caller's bug, not "nothing" */
	if ((pa->filter && !pa->filter_len) || (pa->exclude && !pa->exclude_len) ||
	    (pa->ips && !pa->nr_ips) || (pa->symbol && !pa->symbol_len) ||
	    (pa->pred && !pa->pred_len) || (pa->prog && !pa->prog_len))
		return fhook_refuse(s, FHOOK_R_PTR_NO_LEN, -1, -EINVAL);
	if (!fhook_zero(pa->reserved, ARRAY_SIZE(pa->reserved)) || pa->__pad3 || pa->probe_addr)
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!pa->type || pa->type >= ARRAY_SIZE(fhook_kinds) || !fhook_kinds[pa->type])
		return fhook_refuse(s, FHOOK_R_PROBE_TYPE, -1, -EINVAL);
	kind = fhook_kinds[pa->type];
	if (kind->feature & FHOOK_ARCH_NO_FEATURES)
		return fhook_refuse(s, FHOOK_R_ARCH, -1, -EOPNOTSUPP);
	if (pa->flags & ~kind->flags)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (!fhook_probe_add_unused_zero(pa, kind->fields))
		return fhook_refuse(s, FHOOK_R_PROBE_FIELDS, -1, -EINVAL);
	if (kind->validate) {
		ret = kind->validate(s, pa);
		if (ret)
			return ret;
	}
	if (s->armed)
		return fhook_refuse(s, FHOOK_R_ARMED, -1, -EBUSY);
	if (s->nr_probes >= FHOOK_MAX_PROBES)
		return fhook_refuse(s, FHOOK_R_MAX_PROBES, -1, -ENOSPC);

	/* the kind's own struct, fhook_probe first (fhook_probe_free() frees it) */
	p = kzalloc(kind->size ?: sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	p->session = s;
	p->type = pa->type;
	p->kind = kind;
	p->id = s->next_probe_id;
	p->disarm_unregisters = kind->disarm_unregisters;
	INIT_LIST_HEAD(&p->watch_node);

	ret = p->kind->init ? p->kind->init(p, pa, &err_index) : 0;
	if (!ret && p->prog && p->prog->reads_kernel)
		ret = fhook_priv_require(p, FHOOK_PRIV_READ_KERNEL);
	pa->err_index = err_index;
	if (ret) {
		fhook_probe_free(p);
		/* tell userspace which pattern failed, keep the real error */
		if (fhook_put_arg(a->uarg, pa, usize))
			return -EFAULT;
		return ret;
	}
	pa->probe_id = p->id;
	if (p->type == FHOOK_PROBE_KPROBE || p->type == FHOOK_PROBE_KRETPROBE)
		pa->probe_addr = fhook_kprobe_addr(p);
	ret = fhook_put_arg(a->uarg, pa, usize);
	/* from now on every ioctl and mmap of @s needs what it needs */
	if (!ret && (p->priv & FHOOK_PRIV_CHANGE))
		ret = fhook_priv_may_change(s);
	if (ret) {
		fhook_probe_free(p);
		return ret;
	}
	s->next_probe_id++;
	s->nr_probes++;
	list_add_tail(&p->node, &s->probes);
	return 0;
}

static long fhook_ioc_trigger_add(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_trigger *t = a->karg;

	if (!fhook_zero(t->reserved, ARRAY_SIZE(t->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (s->armed)
		return fhook_refuse(s, FHOOK_R_ARMED, -1, -EBUSY);
	return fhook_trigger_add(s, t);
}

static long fhook_ioc_pid_filter(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_pid_filter *pf = a->karg;

	if (!fhook_zero(pf->reserved, ARRAY_SIZE(pf->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	/* a fast counting or unfiltered latency trampoline applies no filter */
	if (fhook_direct_fast_armed(s))
		return fhook_refuse(s, FHOOK_R_FAST_ARMED, -1, -EBUSY);
	return fhook_pidfilter_set(s, pf);
}

static long fhook_ioc_cpu_filter(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_cpu_filter *cf = a->karg;
	unsigned int nwords, cpu;
	u64 *mask;
	int ret;

	if (!fhook_zero(cf->reserved, ARRAY_SIZE(cf->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (fhook_direct_fast_armed(s))
		return fhook_refuse(s, FHOOK_R_FAST_ARMED, -1, -EBUSY);
	if (cf->nr_bits > FHOOK_MAX_CPUMASK * 8)
		return fhook_refuse(s, FHOOK_R_CPU_MASK, -1, -EINVAL);
	if (!cf->nr_bits) {
		WRITE_ONCE(s->cpu_filter, false);
		return 0;
	}
	nwords = DIV_ROUND_UP(cf->nr_bits, 64);
	mask = memdup_user(u64_to_user_ptr(cf->mask), nwords * sizeof(u64));
	if (IS_ERR(mask))
		return PTR_ERR(mask);

	ret = fhook_refuse(s, FHOOK_R_CPU_MASK, -1, -EINVAL);	/* (no CPU at all) */
	for (cpu = 0; cpu < cf->nr_bits; cpu++) {
		if (!(mask[cpu / 64] & BIT_ULL(cpu % 64)))
			continue;
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
			ret = fhook_refuse(s, FHOOK_R_CPU_MASK, cpu, -EINVAL);
			goto out;
		}
		ret = 0;
	}
	if (ret)
		goto out;
	/* the hot path reads the mask without locks: stop, update, restart */
	WRITE_ONCE(s->cpu_filter, false);
	synchronize_rcu();
	cpumask_clear(s->cpus);
	for (cpu = 0; cpu < cf->nr_bits; cpu++)
		if (mask[cpu / 64] & BIT_ULL(cpu % 64))
			cpumask_set_cpu(cpu, s->cpus);
	smp_wmb();	/* mask before the flag; the hot path reads flag, mask */
	WRITE_ONCE(s->cpu_filter, true);
out:
	kfree(mask);
	return ret;
}

static long fhook_ioc_start(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	return fhook_session_start(s);
}

static long fhook_ioc_stop(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	fhook_session_stop(s);
	return 0;
}

static long fhook_ioc_stats(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_stats *st = a->karg;
	struct fhook_cpu_stats __user *ucpus;
	struct fhook_probe *p, *only = NULL;
	unsigned int cpu;

	if (st->flags)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (!fhook_zero(st->reserved, ARRAY_SIZE(st->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (st->probe_id != FHOOK_STATS_SESSION) {
		only = fhook_probe_find(s, st->probe_id);
		if (!only)
			return fhook_refuse(s, FHOOK_R_NO_PROBE, -1, -ENOENT);
	}

	ucpus = u64_to_user_ptr(st->cpus);
	memset(&st->total, 0, sizeof(st->total));
	for_each_possible_cpu(cpu) {
		struct fhook_cpu_stats c = {};

		list_for_each_entry(p, &s->probes, node) {
			if (only && p != only)
				continue;
			fhook_stats_sum(s, cpu, p->id, &c);
			if (p->kind->hits_elsewhere)
				c.hits += p->kind->hits_elsewhere(p, cpu);
		}
		/* kprobe misses (recursion, no kretprobe instance) are global */
		if (cpu == cpumask_first(cpu_possible_mask))
			list_for_each_entry(p, &s->probes, node)
				if ((!only || p == only) &&
				    (p->type == FHOOK_PROBE_KPROBE ||
				     p->type == FHOOK_PROBE_KRETPROBE))
					c.missed += fhook_kprobe_nmissed(p);
		st->total.hits += c.hits;
		st->total.written += c.written;
		st->total.lost += c.lost;
		st->total.missed += c.missed;
		if (st->cpus && cpu < st->nr_cpus && copy_to_user(&ucpus[cpu], &c, sizeof(c)))
			return -EFAULT;
	}
	st->nr_cpus = min_t(u32, st->nr_cpus, nr_cpu_ids);
	return 0;
}

static long fhook_ioc_snapshot(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_snapshot *ss = a->karg;

	if (!fhook_zero(ss->reserved, ARRAY_SIZE(ss->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	switch (ss->op) {
	case FHOOK_SNAPSHOT_FREEZE:
		/* the reader answers a snapshot trigger: poll quiet again */
		WRITE_ONCE(s->snapshot_due, false);
		return fhook_rings_freeze(s);
	case FHOOK_SNAPSHOT_RESUME:
		WRITE_ONCE(s->frozen, false);
		return 0;
	default:
		return fhook_refuse(s, FHOOK_R_SNAPSHOT_OP, -1, -EINVAL);
	}
}

/* Checks under the lock, then runs without it (see fhook_abi.h). */
static long fhook_ioc_bench(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_bench *b = a->karg;
	struct fhook_probe *p;
	bool found;
	int ret;

	if (b->flags)
		return fhook_ioc_refuse(a, FHOOK_R_FLAGS, -1, -EINVAL);
	if (!fhook_zero(b->reserved, ARRAY_SIZE(b->reserved)))
		return fhook_ioc_refuse(a, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!b->nr_events || b->nr_events > FHOOK_BENCH_MAX_EVENTS ||
	    b->payload % 8 || b->payload > FHOOK_BENCH_MAX_PAYLOAD)
		return fhook_ioc_refuse(a, FHOOK_R_BENCH_ARGS, -1, -EINVAL);
	mutex_lock(&s->lock);
	p = fhook_probe_find(s, b->probe_id);
	found = p && p->type == FHOOK_PROBE_BENCH;
	/* armed: the probe list and the rings stay until release */
	ret = fhook_session_may(s);
	if (!ret && !found)
		ret = fhook_ioc_refuse(a, FHOOK_R_NO_PROBE, -1, -ENOENT);
	else if (!ret && !s->armed)
		ret = fhook_ioc_refuse(a, FHOOK_R_NOT_ARMED, -1, -EINVAL);
	/* under the lock: a STOP after this waits for the loop */
	if (!ret)
		atomic_inc(&s->benches);
	mutex_unlock(&s->lock);
	if (ret)
		return ret;
	ret = fhook_bench_run(s, b);
	atomic_dec(&s->benches);
	return ret;
}

static long fhook_ioc_direct_modify(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_direct_modify *m = a->karg;

	if (m->flags & ~FHOOK_PROBE_F_COUNT)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (m->__pad || !fhook_zero(m->reserved, ARRAY_SIZE(m->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	return fhook_direct_modify_ioc(s, m);
}

static long fhook_ioc_latency(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_latency *l = a->karg;
	bool one_cpu = l->flags & FHOOK_LATENCY_F_CPU;
	struct fhook_probe *p;

	if (l->flags & ~FHOOK_LATENCY_F_CPU)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (l->__pad || l->min_ns || l->max_ns || (!one_cpu && l->cpu))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (one_cpu && (l->cpu >= nr_cpu_ids || !cpu_possible(l->cpu)))
		return fhook_refuse(s, FHOOK_R_CPU_MASK, -1, -EINVAL);
	l->nr_buckets = 0;
	l->count = 0;
	l->sum_ns = 0;
	l->inflight = 0;
	memset(l->buckets, 0, sizeof(l->buckets));
	p = fhook_probe_find(s, l->probe_id);
	if (!p)
		return fhook_refuse(s, FHOOK_R_NO_PROBE, -1, -ENOENT);
	if (!p->kind->read_latency || !p->kind->read_latency(p, one_cpu ? l->cpu : -1, l))
		return fhook_refuse(s, FHOOK_R_PROBE_KIND, -1, -EINVAL);
	return 0;
}

static long fhook_ioc_counts(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_counts *c = a->karg;

	if (c->flags)
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (!fhook_zero(c->reserved, ARRAY_SIZE(c->reserved)))
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	return fhook_func_counts_ioc(s, c);
}

static long fhook_ioc_hist_set(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	return fhook_hist_set(s, a->karg);
}

static long fhook_ioc_hist_read(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_hist_read *hr = a->karg;

	if (hr->reserved[0] || hr->reserved[1])
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	return fhook_hist_read(s, hr);
}

/* No session state: not under the session lock. */
static long fhook_ioc_read_text(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_read_text *rt = a->karg;

	if (rt->reserved[0] || rt->reserved[1])
		return fhook_ioc_refuse(a, FHOOK_R_RESERVED, -1, -EINVAL);
	if (!rt->len || rt->len > FHOOK_MAX_READ_TEXT)
		return fhook_ioc_refuse(a, FHOOK_R_TEXT_RANGE, -1, -EINVAL);
	return fhook_read_text(rt);
}

static long fhook_ioc_khooks(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_khooks *k = a->karg;

	if (k->__pad || k->reserved[0] || k->reserved[1])
		return fhook_refuse(s, FHOOK_R_RESERVED, -1, -EINVAL);
	if (k->entry_size != sizeof(struct fhook_khook_info) || (k->nr && !k->entries))
		return fhook_refuse(s, FHOOK_R_ENTRY_SIZE, -1, -EINVAL);
	return fhook_khook_list(k);
}

/* No session state: not under the session lock. */
static long fhook_ioc_symbols(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_symbols *sy = a->karg;

	if (sy->__pad || sy->reserved[0] || sy->reserved[1])
		return fhook_ioc_refuse(a, FHOOK_R_RESERVED, -1, -EINVAL);
	if (sy->entry_size != sizeof(struct fhook_symbol))
		return fhook_ioc_refuse(a, FHOOK_R_ENTRY_SIZE, -1, -EINVAL);
	if (!sy->nr || sy->nr > FHOOK_SYMBOLS_MAX || !sy->entries)
		return fhook_ioc_refuse(a, FHOOK_R_SYMBOLS_NR, -1, -EINVAL);
	return fhook_symbols(sy);
}

/* Why the session's last refused ioctl was refused (not itself). */
static long fhook_ioc_last_error(struct fhook_session *s, struct fhook_ioc_arg *a)
{
	struct fhook_last_error *le = a->karg;

	if (le->__pad || le->reserved[0] || le->reserved[1])
		return -EINVAL;
	*le = s->last_error;
	le->size = sizeof(*le);
	return 0;
}

/* ioctl numbers without the (informational) size bits */
#define FHOOK_CMD(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

#define FHOOK_IOC_ROW(ioc, fn, size_, fl, c, ld, feat)			\
	[_IOC_NR(ioc) + BUILD_BUG_ON_ZERO((size_) > sizeof(union fhook_ioc_karg))] = { \
		.cmd = FHOOK_CMD(ioc), .handler = (fn), .size = (size_),	\
		.min_size = (size_), .flags = (fl), .cap = (c), .lockdown = (ld), \
		.feature = (feat),						\
	}

static const struct fhook_ioc fhook_iocs[] = {
	FHOOK_IOC_ROW(FHOOK_IOC_HANDSHAKE, fhook_ioc_handshake, sizeof(struct fhook_handshake),
		      FHOOK_IOCF_UNLOCKED | FHOOK_IOCF_OUT, -1, LOCKDOWN_NONE, 0),
	FHOOK_IOC_ROW(FHOOK_IOC_RING_SETUP, fhook_ioc_ring_setup, sizeof(struct fhook_ring_setup),
		      FHOOK_IOCF_OUT, -1, LOCKDOWN_NONE, FHOOK_FEAT_RING_MMAP),
	/* the answer goes back from the handler, before the probe is added */
	[_IOC_NR(FHOOK_IOC_PROBE_ADD)] = {
		.cmd = FHOOK_CMD(FHOOK_IOC_PROBE_ADD),
		.handler = fhook_ioc_probe_add, .size = sizeof(struct fhook_probe_add),
		.min_size = FHOOK_PROBE_ADD_SIZE_V1, .cap = -1, .lockdown = LOCKDOWN_NONE,
	},
	FHOOK_IOC_ROW(FHOOK_IOC_PID_FILTER, fhook_ioc_pid_filter, sizeof(struct fhook_pid_filter),
		      0, -1, LOCKDOWN_NONE, FHOOK_FEAT_PID_FILTER),
	FHOOK_IOC_ROW(FHOOK_IOC_CPU_FILTER, fhook_ioc_cpu_filter, sizeof(struct fhook_cpu_filter),
		      0, -1, LOCKDOWN_NONE, FHOOK_FEAT_CPU_FILTER),
	/* (what each probe needs is checked again at START: priv.c) */
	FHOOK_IOC_ROW(FHOOK_IOC_START, fhook_ioc_start, 0,
		      0, -1, LOCKDOWN_NONE, 0),
	FHOOK_IOC_ROW(FHOOK_IOC_STOP, fhook_ioc_stop, 0,
		      0, -1, LOCKDOWN_NONE, 0),
	FHOOK_IOC_ROW(FHOOK_IOC_STATS, fhook_ioc_stats, sizeof(struct fhook_stats),
		      FHOOK_IOCF_OUT, -1, LOCKDOWN_NONE, 0),
	FHOOK_IOC_ROW(FHOOK_IOC_SNAPSHOT, fhook_ioc_snapshot, sizeof(struct fhook_snapshot),
		      0, -1, LOCKDOWN_NONE, FHOOK_FEAT_SNAPSHOT),
	/* takes the session lock itself: the loop runs without it */
	FHOOK_IOC_ROW(FHOOK_IOC_BENCH, fhook_ioc_bench, sizeof(struct fhook_bench),
		      FHOOK_IOCF_UNLOCKED | FHOOK_IOCF_OUT, -1, LOCKDOWN_NONE, FHOOK_FEAT_BENCH),
	FHOOK_IOC_ROW(FHOOK_IOC_TRIGGER_ADD, fhook_ioc_trigger_add, sizeof(struct fhook_trigger),
		      0, -1, LOCKDOWN_NONE, FHOOK_FEAT_TRIGGER),
	FHOOK_IOC_ROW(FHOOK_IOC_DIRECT_MODIFY, fhook_ioc_direct_modify,
		      sizeof(struct fhook_direct_modify), 0, -1, LOCKDOWN_NONE, FHOOK_FEAT_DIRECT),
	/* kernel text: as /proc/kcore, which lockdown=integrity already refuses */
	FHOOK_IOC_ROW(FHOOK_IOC_READ_TEXT, fhook_ioc_read_text, sizeof(struct fhook_read_text),
		      FHOOK_IOCF_UNLOCKED, CAP_SYS_RAWIO, LOCKDOWN_KCORE, FHOOK_FEAT_READ_TEXT),
	/*
	 * (FHOOK_FEAT_LATENCY is the probes': the latency tracers read
	 * their histograms here too, on a CPU whose port has no latency
	 * probes)
	 */
	FHOOK_IOC_ROW(FHOOK_IOC_LATENCY, fhook_ioc_latency, sizeof(struct fhook_latency),
		      FHOOK_IOCF_OUT, -1, LOCKDOWN_NONE, FHOOK_FEAT_WAKEUP),
	FHOOK_IOC_ROW(FHOOK_IOC_COUNTS, fhook_ioc_counts, sizeof(struct fhook_counts),
		      FHOOK_IOCF_OUT | FHOOK_IOCF_OUT_ENOSPC, -1, LOCKDOWN_NONE,
		      FHOOK_FEAT_COUNT_IPS),
	FHOOK_IOC_ROW(FHOOK_IOC_KHOOKS, fhook_ioc_khooks, sizeof(struct fhook_khooks),
		      FHOOK_IOCF_OUT, -1, LOCKDOWN_NONE, FHOOK_FEAT_KHOOK),
	FHOOK_IOC_ROW(FHOOK_IOC_HIST_SET, fhook_ioc_hist_set, sizeof(struct fhook_hist_set),
		      0, -1, LOCKDOWN_NONE, FHOOK_FEAT_HIST),
	FHOOK_IOC_ROW(FHOOK_IOC_HIST_READ, fhook_ioc_hist_read, sizeof(struct fhook_hist_read),
		      FHOOK_IOCF_OUT | FHOOK_IOCF_OUT_ENOSPC, -1, LOCKDOWN_NONE, FHOOK_FEAT_HIST),
	FHOOK_IOC_ROW(FHOOK_IOC_LAST_ERROR, fhook_ioc_last_error,
		      sizeof(struct fhook_last_error), FHOOK_IOCF_OUT | FHOOK_IOCF_NO_RECORD, -1,
		      LOCKDOWN_NONE, FHOOK_FEAT_REASONS),
	/*
	 * names of addresses: as /proc/kallsyms shows them with
	 * kptr_restrict 1 (kallsyms_show_value(), not exported)
	 */
	FHOOK_IOC_ROW(FHOOK_IOC_SYMBOLS, fhook_ioc_symbols, sizeof(struct fhook_symbols),
		      FHOOK_IOCF_UNLOCKED | FHOOK_IOCF_CAP_NOAUDIT, CAP_SYSLOG, LOCKDOWN_NONE,
		      FHOOK_FEAT_SYMBOLS),
};

/* (on the stack: the largest is struct fhook_latency, 576 bytes) */
static_assert(sizeof(union fhook_ioc_karg) <= 640);

/* What the rows announce */
static u64 fhook_ioc_features(void)
{
	u64 features = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fhook_iocs); i++)
		features |= fhook_iocs[i].feature;
	return features;
}

/* The row of @cmd, or NULL */
static const struct fhook_ioc *fhook_ioc_row(unsigned int cmd)
{
	const struct fhook_ioc *d;

	if (_IOC_TYPE(cmd) != FHOOK_IOC_MAGIC || _IOC_NR(cmd) >= ARRAY_SIZE(fhook_iocs))
		return NULL;
	d = &fhook_iocs[_IOC_NR(cmd)];
	/* (the size bits say nothing: each struct carries its own size) */
	return d->handler && d->cmd == FHOOK_CMD(cmd) ? d : NULL;
}

/* The size field of the argument at @uarg (0: unreadable) */
static u32 fhook_uarg_size(unsigned long uarg)
{
	u32 usize;

	return get_user(usize, (u32 __user *)uarg) ? 0 : usize;
}

/* The session's last refusal, under its lock: @cmd's, for @a's reason */
static void fhook_ioc_record(struct fhook_session *s, unsigned int cmd,
			     const struct fhook_ioc_arg *a, long err)
{
	s->last_error.reason = a->why;
	s->last_error.index = a->why_index;
	s->last_error.cmd = _IOC_NR(cmd);
	s->last_error.err = err;
}

static void fhook_ioc_record_locking(struct fhook_session *s, unsigned int cmd,
				     const struct fhook_ioc_arg *a, long err)
{
	mutex_lock(&s->lock);
	fhook_ioc_record(s, cmd, a, err);
	mutex_unlock(&s->lock);
}

/*
 * The handler of @d, under the session lock unless its row says not;
 * a refusal becomes the session's last (not LAST_ERROR's own), with the
 * reason the handler named: in the session for those under the lock
 * (fhook_refuse()), in @a for the others.
 */
static long fhook_ioc_handle(struct fhook_session *s, const struct fhook_ioc *d,
			     unsigned int cmd, struct fhook_ioc_arg *a)
{
	bool record = !(d->flags & FHOOK_IOCF_NO_RECORD);
	long ret;

	if (d->flags & FHOOK_IOCF_UNLOCKED) {
		ret = d->handler(s, a);
		if (ret < 0 && record)
			fhook_ioc_record_locking(s, cmd, a, ret);
		return ret;
	}
	mutex_lock(&s->lock);
	/* a behaviour-changing probe may have been added meanwhile */
	ret = fhook_session_may(s);
	if (!ret) {
		fhook_refuse(s, FHOOK_R_NONE, -1, 0);
		ret = d->handler(s, a);
		if (ret < 0)
			fhook_ioc_refuse(a, s->why, s->why_index, ret);
	}
	if (ret < 0 && record)
		fhook_ioc_record(s, cmd, a, ret);
	mutex_unlock(&s->lock);
	return ret;
}

/*
 * What the row @d asks before its handler: the capability, lockdown, the
 * argument copied in (to @karg; its size to @a)
 */
static long fhook_ioc_check(const struct fhook_ioc *d, union fhook_ioc_karg *karg,
			    unsigned long uarg, struct fhook_ioc_arg *a)
{
	long ret;

	if (d->cap >= 0 && !((d->flags & FHOOK_IOCF_CAP_NOAUDIT) ?
			     ns_capable_noaudit(&init_user_ns, d->cap) : capable(d->cap)))
		return fhook_ioc_refuse(a, FHOOK_R_CAP, -1, -EPERM);
	if (d->lockdown != LOCKDOWN_NONE) {
		ret = security_locked_down(d->lockdown);
		if (ret)
			return fhook_ioc_refuse(a, FHOOK_R_LOCKDOWN, -1, ret);
	}
	if (d->size) {
		ret = fhook_copy_arg_min(karg, d->size, d->min_size, uarg);
		if (ret < 0)
			return fhook_ioc_refuse(a, ret == -EINVAL ? FHOOK_R_ARG_SIZE :
						ret != -E2BIG ? FHOOK_R_NONE :
						fhook_uarg_size(uarg) > PAGE_SIZE ? FHOOK_R_ARG_TOO_BIG :
						FHOOK_R_ARG_TAIL, -1, ret);
		a->usize = ret;
	}
	/* (after the argument: an unreadable one is EFAULT everywhere) */
	if (d->feature & FHOOK_ARCH_NO_FEATURES)
		return fhook_ioc_refuse(a, FHOOK_R_ARCH, -1, -EOPNOTSUPP);
	return 0;
}

/*
 * An ioctl of session @s, as its row says (see the top).  Who may use
 * the session at all comes first, whatever the command, and leaves no
 * trace in it.
 */
long fhook_session_ioctl(struct fhook_session *s, unsigned int cmd, unsigned long uarg)
{
	const struct fhook_ioc *d = fhook_ioc_row(cmd);
	union fhook_ioc_karg karg;
	struct fhook_ioc_arg a = { .karg = &karg, .uarg = uarg, .why_index = -1 };
	long ret;

	ret = fhook_session_may(s);
	if (ret)
		return ret;
	if (!d)
		return -ENOTTY;
	ret = fhook_ioc_check(d, &karg, uarg, &a);
	if (ret) {
		if (!(d->flags & FHOOK_IOCF_NO_RECORD))
			fhook_ioc_record_locking(s, cmd, &a, ret);
		return ret;
	}
	ret = fhook_ioc_handle(s, d, cmd, &a);
	if ((d->flags & FHOOK_IOCF_OUT) &&
	    (!ret || (ret == -ENOSPC && (d->flags & FHOOK_IOCF_OUT_ENOSPC))) &&
	    fhook_put_arg(uarg, &karg, d->size))
		return -EFAULT;
	return ret;
}
