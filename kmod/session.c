// SPDX-License-Identifier: GPL-2.0
/*
 * A session is one open file of /dev/fhook: its rings, probes and filters,
 * and the ioctls that configure them.  Everything a session created is torn
 * down in fhook_session_destroy(), which runs when the last fd and the last
 * mapping are gone, including when the owning process is killed.
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/module.h>

#include <linux/delay.h>
#include <linux/log2.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/* ioctl numbers without the (informational) size bits */
#define FHOOK_CMD(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/*
 * The flush timer runs every flush_ms while the session is armed and wakes
 * readers if data sits below the watermarks, which the producers never
 * wake for.  poll() then reports the session readable once (flush_due).
 */
static void fhook_flush_timer(struct timer_list *t)
{
	struct fhook_session *s = from_timer(s, t, flush_timer);

	if (!READ_ONCE(s->flush_on))
		return;
	if (fhook_rings_readable(s, true) && wq_has_sleeper(&s->waitq)) {
		WRITE_ONCE(s->flush_due, true);
		wake_up_all(&s->waitq);
	}
	mod_timer(t, jiffies + s->flush_jiffies);
}

static void fhook_flush_start(struct fhook_session *s)
{
	if (s->ring_flags & FHOOK_RING_OVERWRITE)
		return;		/* read on demand, nothing to flush */
	WRITE_ONCE(s->flush_on, true);
	mod_timer(&s->flush_timer, jiffies + s->flush_jiffies);
}

static void fhook_flush_stop(struct fhook_session *s)
{
	WRITE_ONCE(s->flush_on, false);
	/* also waits for a running callback, which then cannot re-arm */
	del_timer_sync(&s->flush_timer);
}

struct fhook_session *fhook_session_create(void)
{
	struct fhook_session *s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);

	if (!s)
		return NULL;
	if (!zalloc_cpumask_var(&s->cpus, GFP_KERNEL_ACCOUNT))
		goto err_free;
	if (fhook_stats_alloc(s))
		goto err_cpumask;
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->probes);
	init_waitqueue_head(&s->waitq);
	timer_setup(&s->flush_timer, fhook_flush_timer, 0);
	s->next_probe_id = 1;
	return s;

err_cpumask:
	free_cpumask_var(s->cpus);
err_free:
	kfree(s);
	return NULL;
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
};

static void fhook_session_disarm(struct fhook_session *s)
{
	bool sync = false;
	struct fhook_probe *p;

	fhook_flush_stop(s);
	list_for_each_entry(p, &s->probes, node) {
		if (p->kind->disarm) {
			p->kind->disarm(p);
			sync |= p->kind->sync_rcu;
		}
	}
	/* handlers that run with preemption off: wait for those in flight */
	if (sync)
		synchronize_rcu();
	s->armed = false;
}

/*
 * Did unregistering fail for a probe of @s (ftrace gave up, e.g. after
 * ftrace_kill(): patched sites and trampolines may still call in)?
 */
static bool fhook_session_stuck(struct fhook_session *s)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node) {
		if (p->registered && p->disarm_unregisters) {
			pr_err("probe %u is still registered after its session closed\n", p->id);
			return true;
		}
	}
	return false;
}

/* The probe @id of @s, or NULL; under the session lock. */
struct fhook_probe *fhook_probe_find(struct fhook_session *s, u32 id)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node)
		if (p->id == id)
			return p;
	return NULL;
}

static void fhook_probe_free(struct fhook_probe *p)
{
	if (p->kind->release)
		p->kind->release(p);
	fhook_hist_free(p->hist);
	fhook_mem_unreserve(p->filter_pages);
	kfree(p);
}

void fhook_session_destroy(struct fhook_session *s)
{
	struct fhook_probe *p, *tmp;

	/* no ioctl can run any more: this is ->release */
	fhook_session_disarm(s);
	/*
	 * A probe that is still registered reaches its session's rings,
	 * counters, filters and the session itself on every hit: keep all
	 * of it, and the module, rather than free what its callbacks use.
	 */
	if (fhook_session_stuck(s)) {
		pr_err("session kept with its probes, rings and the module: reboot to reclaim\n");
		__module_get(THIS_MODULE);
		return;
	}
	fhook_pidfilter_release(s);
	list_for_each_entry_safe(p, tmp, &s->probes, node) {
		list_del(&p->node);
		fhook_probe_free(p);
	}
	fhook_rings_free(s);
	fhook_stats_free(s);
	free_cpumask_var(s->cpus);
	mutex_destroy(&s->lock);
	kfree(s);
}

/*
 * Copy an ioctl argument that starts with its own __u32 size.  Older
 * (smaller) layouts are zero-extended, newer ones must have a zero tail
 * (copy_struct_from_user()).  Returns the user's size or -errno.
 */
int fhook_copy_arg_min(void *karg, size_t ksize, size_t minsize, unsigned long uarg)
{
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < minsize)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(karg, ksize, (void __user *)uarg, usize);
	return ret ? ret : usize;
}

/* The same for structs whose oldest layout is the current one. */
static int fhook_copy_arg(void *karg, size_t ksize, unsigned long uarg)
{
	return fhook_copy_arg_min(karg, ksize, ksize, uarg);
}

static int fhook_put_arg(unsigned long uarg, const void *karg, size_t ksize)
{
	return copy_to_user((void __user *)uarg, karg, ksize) ? -EFAULT : 0;
}

static bool fhook_zero(const u64 *words, size_t n)
{
	while (n--)
		if (*words++)
			return false;
	return true;
}

static long fhook_ioc_handshake(unsigned long uarg)
{
	struct fhook_handshake hs;
	int ret;

	ret = fhook_copy_arg(&hs, sizeof(hs), uarg);
	if (ret < 0)
		return ret;
	if (hs.__pad || !fhook_zero(hs.reserved, ARRAY_SIZE(hs.reserved)))
		return -EINVAL;
	hs.abi_version = FHOOK_ABI_VERSION;
	hs.features = FHOOK_FEAT_FUNC | FHOOK_FEAT_FUNC_IPS | FHOOK_FEAT_PID_FILTER |
		      FHOOK_FEAT_CPU_FILTER | FHOOK_FEAT_RING_MMAP | FHOOK_FEAT_IGNORE_SELF |
		      FHOOK_FEAT_SEQ | FHOOK_FEAT_OVERWRITE | FHOOK_FEAT_SNAPSHOT |
		      FHOOK_FEAT_STATS_MMAP | FHOOK_FEAT_FLUSH | FHOOK_FEAT_BENCH |
		      FHOOK_FEAT_KPROBE | FHOOK_FEAT_FETCH | FHOOK_FEAT_PRED |
		      FHOOK_FEAT_UPROBE | FHOOK_FEAT_STACK | FHOOK_FEAT_TRIGGER |
		      FHOOK_FEAT_TRACEPOINT | FHOOK_FEAT_DIRECT | FHOOK_FEAT_HOOK |
		      FHOOK_FEAT_COUNT | FHOOK_FEAT_READ_TEXT | FHOOK_FEAT_LATENCY |
		      FHOOK_FEAT_COUNT_IPS | FHOOK_FEAT_KHOOK | FHOOK_FEAT_GRAPH |
		      FHOOK_FEAT_HIST | FHOOK_FEAT_HIST_STACK | FHOOK_FEAT_HIST_USTACK;
	if (fhook_lab)
		hs.features |= FHOOK_FEAT_LAB;
	hs.nr_cpus = nr_cpu_ids;
	hs.nr_sessions = atomic_read(&fhook_nr_sessions);
	hs.page_size = PAGE_SIZE;
	hs.max_probes = FHOOK_MAX_PROBES;
	hs.nr_slots = FHOOK_NR_SLOTS;
	hs.khook_slots = FHOOK_KHOOK_SLOTS;
	hs.around_used = fhook_around_used();
	hs.direct_used = fhook_direct_used();
	hs.max_user_sessions = fhook_max_user_sessions;
	memset(hs.version, 0, sizeof(hs.version));
	strscpy(hs.version, FHOOK_VERSION, sizeof(hs.version));
	return fhook_put_arg(uarg, &hs, sizeof(hs));
}

static long fhook_ioc_ring_setup(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_ring_setup rs;
	int ret;

	ret = fhook_copy_arg(&rs, sizeof(rs), uarg);
	if (ret < 0)
		return ret;
	if ((rs.flags & ~FHOOK_RING_FLAGS) || !fhook_zero(rs.reserved, ARRAY_SIZE(rs.reserved)))
		return -EINVAL;
	if (!rs.buf_size)
		rs.buf_size = FHOOK_RING_DEF_SIZE;
	if (rs.buf_size < PAGE_SIZE || rs.buf_size > FHOOK_RING_MAX_SIZE ||
	    !is_power_of_2(rs.buf_size))
		return -EINVAL;
	if ((rs.flags & FHOOK_RING_OVERWRITE) && rs.buf_size < FHOOK_RING_MIN_OVERWRITE)
		return -EINVAL;
	if (!rs.watermark)
		rs.watermark = rs.buf_size / 4;
	if (rs.watermark > rs.buf_size)
		return -EINVAL;
	if (!rs.flush_ms)
		rs.flush_ms = FHOOK_FLUSH_DEF_MS;
	if (rs.flush_ms > FHOOK_FLUSH_MAX_MS)
		return -EINVAL;
	if (s->rings)
		return -EBUSY;

	ret = fhook_rings_alloc(s, &rs);
	if (ret)
		return ret;
	s->flush_jiffies = max(1UL, msecs_to_jiffies(rs.flush_ms));
	rs.nr_cpus = nr_cpu_ids;
	rs.mmap_stride = FHOOK_MMAP_STRIDE;
	return fhook_put_arg(uarg, &rs, sizeof(rs));
}

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

static long fhook_ioc_probe_add(struct fhook_session *s, unsigned long uarg)
{
	const struct fhook_probe_kind *kind;
	struct fhook_probe_add pa;
	struct fhook_probe *p;
	s32 err_index = -1;
	size_t usize;
	int ret;

	ret = fhook_copy_arg_min(&pa, sizeof(pa), FHOOK_PROBE_ADD_SIZE_V1, uarg);
	if (ret < 0)
		return ret;
	/* answer in the caller's layout */
	usize = min_t(size_t, ret, sizeof(pa));
	/* a pointer without a length is a caller's bug, not "nothing" */
	if ((pa.filter && !pa.filter_len) || (pa.exclude && !pa.exclude_len) ||
	    (pa.ips && !pa.nr_ips) || (pa.symbol && !pa.symbol_len) ||
	    (pa.pred && !pa.pred_len) || (pa.prog && !pa.prog_len))
		return -EINVAL;
	if (!fhook_zero(pa.reserved, ARRAY_SIZE(pa.reserved)) || pa.__pad3 || pa.probe_addr)
		return -EINVAL;
	if (!pa.type || pa.type >= ARRAY_SIZE(fhook_kinds) || !fhook_kinds[pa.type])
		return -EINVAL;
	kind = fhook_kinds[pa.type];
	if ((pa.flags & ~kind->flags) || !fhook_probe_add_unused_zero(&pa, kind->fields))
		return -EINVAL;
	if (kind->validate) {
		ret = kind->validate(&pa);
		if (ret)
			return ret;
	}
	if (s->armed)
		return -EBUSY;
	if (s->nr_probes >= FHOOK_MAX_PROBES)
		return -ENOSPC;

	/* the kind's own struct, fhook_probe first (fhook_probe_free() frees it) */
	p = kzalloc(kind->size ?: sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	p->session = s;
	p->type = pa.type;
	p->kind = kind;
	p->id = s->next_probe_id;
	p->disarm_unregisters = kind->disarm_unregisters;
	INIT_LIST_HEAD(&p->watch_node);

	ret = p->kind->init ? p->kind->init(p, &pa, &err_index) : 0;
	if (!ret && p->prog && p->prog->reads_kernel)
		ret = fhook_priv_require(p, FHOOK_PRIV_READ_KERNEL);
	pa.err_index = err_index;
	if (ret) {
		fhook_probe_free(p);
		/* tell userspace which pattern failed, keep the real error */
		if (fhook_put_arg(uarg, &pa, usize))
			return -EFAULT;
		return ret;
	}
	pa.probe_id = p->id;
	if (p->type == FHOOK_PROBE_KPROBE || p->type == FHOOK_PROBE_KRETPROBE)
		pa.probe_addr = fhook_kprobe_addr(p);
	ret = fhook_put_arg(uarg, &pa, usize);
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

static long fhook_ioc_trigger_add(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_trigger t;
	int ret;

	ret = fhook_copy_arg(&t, sizeof(t), uarg);
	if (ret < 0)
		return ret;
	if (!fhook_zero(t.reserved, ARRAY_SIZE(t.reserved)))
		return -EINVAL;
	if (s->armed)
		return -EBUSY;
	return fhook_trigger_add(s, &t);
}

static long fhook_ioc_pid_filter(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_pid_filter pf;
	int ret;

	ret = fhook_copy_arg(&pf, sizeof(pf), uarg);
	if (ret < 0)
		return ret;
	if (!fhook_zero(pf.reserved, ARRAY_SIZE(pf.reserved)))
		return -EINVAL;
	/* a fast counting or unfiltered latency trampoline applies no filter */
	if (fhook_direct_fast_armed(s))
		return -EBUSY;
	return fhook_pidfilter_set(s, &pf);
}

static long fhook_ioc_cpu_filter(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_cpu_filter cf;
	unsigned int nwords, cpu;
	u64 *mask;
	int ret;

	ret = fhook_copy_arg(&cf, sizeof(cf), uarg);
	if (ret < 0)
		return ret;
	if (!fhook_zero(cf.reserved, ARRAY_SIZE(cf.reserved)))
		return -EINVAL;
	if (fhook_direct_fast_armed(s))
		return -EBUSY;
	if (cf.nr_bits > FHOOK_MAX_CPUMASK * 8)
		return -EINVAL;
	if (!cf.nr_bits) {
		WRITE_ONCE(s->cpu_filter, false);
		return 0;
	}
	nwords = DIV_ROUND_UP(cf.nr_bits, 64);
	mask = memdup_user(u64_to_user_ptr(cf.mask), nwords * sizeof(u64));
	if (IS_ERR(mask))
		return PTR_ERR(mask);

	ret = -EINVAL;
	for (cpu = 0; cpu < cf.nr_bits; cpu++) {
		if (!(mask[cpu / 64] & BIT_ULL(cpu % 64)))
			continue;
		if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
			ret = -EINVAL;
			goto out;
		}
		ret = 0;
	}
	if (ret)
		goto out;	/* no CPU at all */
	/* the hot path reads the mask without locks: stop, update, restart */
	WRITE_ONCE(s->cpu_filter, false);
	synchronize_rcu();
	cpumask_clear(s->cpus);
	for (cpu = 0; cpu < cf.nr_bits; cpu++)
		if (mask[cpu / 64] & BIT_ULL(cpu % 64))
			cpumask_set_cpu(cpu, s->cpus);
	smp_wmb();	/* mask before the flag; the hot path reads flag, mask */
	WRITE_ONCE(s->cpu_filter, true);
out:
	kfree(mask);
	return ret;
}

/*
 * The largest record @p's program can make (its fields, strings up to
 * the fetch's limit, a stack trailer from --stack or a trigger), or 0
 * for probes whose records are small and fixed.
 */
static u64 fhook_probe_max_record(const struct fhook_probe *p)
{
	u64 data;

	if (!p->prog)
		return 0;
	data = min_t(u64, p->prog->data_size + p->prog->max_dyn, FHOOK_MAX_PROBE_DATA);
	if (p->stack || p->nr_triggers)
		data = ALIGN(data, 8) + 8 * (FHOOK_MAX_STACK + 1);
	return sizeof(struct fhook_rec_hook) + data;
}

static long fhook_ioc_start(struct fhook_session *s)
{
	struct fhook_probe *p;
	int ret;

	if (s->armed)
		return -EBUSY;
	if (!s->rings || list_empty(&s->probes))
		return -EINVAL;
	/* triggers start from scratch */
	WRITE_ONCE(s->traced_off, false);
	list_for_each_entry(p, &s->probes, node) {
		WRITE_ONCE(p->paused, false);
		fhook_triggers_reset(p);
	}
	/*
	 * lockdown may have been raised since PROBE_ADD; a record that can
	 * never fit a ring is refused here rather than dropped at every hit
	 * (the producers drop one anyway: fhook_ring_room())
	 */
	list_for_each_entry(p, &s->probes, node) {
		ret = fhook_priv_check(p->priv);
		if (ret)
			return ret;
		if (fhook_probe_max_record(p) > s->buf_size)
			return -EMSGSIZE;
	}
	list_for_each_entry(p, &s->probes, node) {
		if (!p->kind->arm)
			continue;
		ret = p->kind->arm(p);
		if (ret) {
			fhook_session_disarm(s);
			return ret;
		}
	}
	s->armed = true;
	fhook_flush_start(s);
	return 0;
}

/* Bench loops notice !armed within a batch of records. */
static void fhook_wait_benches(struct fhook_session *s)
{
	int tries;

	for (tries = 0; atomic_read(&s->benches) && tries < 10000; tries++)
		usleep_range(100, 200);
	if (atomic_read(&s->benches))
		pr_warn_ratelimited("FHOOK_IOC_STOP: a bench loop is still running\n");
}

static long fhook_ioc_stop(struct fhook_session *s)
{
	fhook_session_disarm(s);
	fhook_wait_benches(s);
	/* a frozen, stopped session starts unfrozen again */
	WRITE_ONCE(s->frozen, false);
	WRITE_ONCE(s->snapshot_due, false);
	/* let a sleeping reader drain what is left */
	wake_up_all(&s->waitq);
	return 0;
}

static long fhook_ioc_stats(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_cpu_stats __user *ucpus;
	struct fhook_probe *p, *only = NULL;
	struct fhook_stats st;
	unsigned int cpu;
	int ret;

	ret = fhook_copy_arg(&st, sizeof(st), uarg);
	if (ret < 0)
		return ret;
	if (st.flags || !fhook_zero(st.reserved, ARRAY_SIZE(st.reserved)))
		return -EINVAL;
	if (st.probe_id != FHOOK_STATS_SESSION) {
		only = fhook_probe_find(s, st.probe_id);
		if (!only)
			return -ENOENT;
	}

	ucpus = u64_to_user_ptr(st.cpus);
	memset(&st.total, 0, sizeof(st.total));
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
		st.total.hits += c.hits;
		st.total.written += c.written;
		st.total.lost += c.lost;
		st.total.missed += c.missed;
		if (st.cpus && cpu < st.nr_cpus && copy_to_user(&ucpus[cpu], &c, sizeof(c)))
			return -EFAULT;
	}
	st.nr_cpus = min_t(u32, st.nr_cpus, nr_cpu_ids);
	return fhook_put_arg(uarg, &st, sizeof(st));
}

static long fhook_ioc_snapshot(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_snapshot ss;
	int ret;

	ret = fhook_copy_arg(&ss, sizeof(ss), uarg);
	if (ret < 0)
		return ret;
	if (!fhook_zero(ss.reserved, ARRAY_SIZE(ss.reserved)))
		return -EINVAL;
	switch (ss.op) {
	case FHOOK_SNAPSHOT_FREEZE:
		/* the reader answers a snapshot trigger: poll quiet again */
		WRITE_ONCE(s->snapshot_due, false);
		return fhook_rings_freeze(s);
	case FHOOK_SNAPSHOT_RESUME:
		WRITE_ONCE(s->frozen, false);
		return 0;
	default:
		return -EINVAL;
	}
}

/* Checks under the lock, then runs without it (see fhook_abi.h). */
static long fhook_ioc_bench(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_bench b;
	struct fhook_probe *p;
	bool found;
	int ret;

	ret = fhook_copy_arg(&b, sizeof(b), uarg);
	if (ret < 0)
		return ret;
	if (b.flags || !fhook_zero(b.reserved, ARRAY_SIZE(b.reserved)))
		return -EINVAL;
	if (!b.nr_events || b.nr_events > FHOOK_BENCH_MAX_EVENTS ||
	    b.payload % 8 || b.payload > FHOOK_BENCH_MAX_PAYLOAD)
		return -EINVAL;
	mutex_lock(&s->lock);
	p = fhook_probe_find(s, b.probe_id);
	found = p && p->type == FHOOK_PROBE_BENCH;
	/* armed: the probe list and the rings stay until release */
	ret = fhook_session_may(s);
	if (!ret)
		ret = !found ? -ENOENT : !s->armed ? -EINVAL : 0;
	/* under the lock: a STOP after this waits for the loop */
	if (!ret)
		atomic_inc(&s->benches);
	mutex_unlock(&s->lock);
	if (ret)
		return ret;
	ret = fhook_bench_run(s, &b);
	atomic_dec(&s->benches);
	if (ret)
		return ret;
	return fhook_put_arg(uarg, &b, sizeof(b));
}

static long fhook_ioc_direct_modify(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_direct_modify m;
	int ret;

	ret = fhook_copy_arg(&m, sizeof(m), uarg);
	if (ret < 0)
		return ret;
	if ((m.flags & ~FHOOK_PROBE_F_COUNT) || m.__pad ||
	    !fhook_zero(m.reserved, ARRAY_SIZE(m.reserved)))
		return -EINVAL;
	return fhook_direct_modify_ioc(s, &m);
}

static long fhook_ioc_latency(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_latency l;
	struct fhook_probe *p;
	struct fhook_lat *lat;
	int ret;

	ret = fhook_copy_arg(&l, sizeof(l), uarg);
	if (ret < 0)
		return ret;
	if (l.flags || !fhook_zero(l.reserved, ARRAY_SIZE(l.reserved)))
		return -EINVAL;
	l.nr_buckets = 0;
	l.count = 0;
	l.sum_ns = 0;
	l.inflight = 0;
	memset(l.buckets, 0, sizeof(l.buckets));
	p = fhook_probe_find(s, l.probe_id);
	if (!p)
		return -ENOENT;
	lat = fhook_direct_lat(p);
	if (!lat)
		return -EINVAL;
	fhook_lat_read(lat, &l);
	return fhook_put_arg(uarg, &l, sizeof(l));
}

static long fhook_ioc_counts(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_counts c;
	int ret;

	ret = fhook_copy_arg(&c, sizeof(c), uarg);
	if (ret < 0)
		return ret;
	if (c.flags || !fhook_zero(c.reserved, ARRAY_SIZE(c.reserved)))
		return -EINVAL;
	ret = fhook_func_counts_ioc(s, &c);
	/* ENOSPC tells the caller how many there are */
	if (!ret || ret == -ENOSPC) {
		if (fhook_put_arg(uarg, &c, sizeof(c)))
			return -EFAULT;
	}
	return ret;
}

static long fhook_ioc_hist_set(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_hist_set hs;
	int ret;

	ret = fhook_copy_arg(&hs, sizeof(hs), uarg);
	if (ret < 0)
		return ret;
	return fhook_hist_set(s, &hs);
}

static long fhook_ioc_hist_read(struct fhook_session *s, unsigned long uarg)
{
	struct fhook_hist_read hr;
	int ret;

	ret = fhook_copy_arg(&hr, sizeof(hr), uarg);
	if (ret < 0)
		return ret;
	if (hr.reserved[0] || hr.reserved[1])
		return -EINVAL;
	ret = fhook_hist_read(s, &hr);
	/* ENOSPC tells the caller how many there are */
	if (!ret || ret == -ENOSPC) {
		if (fhook_put_arg(uarg, &hr, sizeof(hr)))
			return -EFAULT;
	}
	return ret;
}

/* No session state: not under the session lock. */
static long fhook_ioc_read_text(unsigned long uarg)
{
	struct fhook_read_text rt;
	int ret;

	ret = fhook_copy_arg(&rt, sizeof(rt), uarg);
	if (ret < 0)
		return ret;
	return fhook_read_text(&rt);
}

long fhook_session_ioctl(struct fhook_session *s, unsigned int cmd, unsigned long arg)
{
	long ret;

	if (_IOC_TYPE(cmd) != FHOOK_IOC_MAGIC)
		return -ENOTTY;
	if (FHOOK_CMD(cmd) == FHOOK_CMD(FHOOK_IOC_HANDSHAKE))
		return fhook_ioc_handshake(arg);
	if (FHOOK_CMD(cmd) == FHOOK_CMD(FHOOK_IOC_BENCH))
		return fhook_ioc_bench(s, arg);
	if (FHOOK_CMD(cmd) == FHOOK_CMD(FHOOK_IOC_READ_TEXT))
		return fhook_ioc_read_text(arg);

	mutex_lock(&s->lock);
	/* a behaviour-changing probe may have been added since fhook_ioctl() */
	ret = fhook_session_may(s);
	if (ret)
		goto out;
	switch (FHOOK_CMD(cmd)) {
	case FHOOK_CMD(FHOOK_IOC_RING_SETUP):
		ret = fhook_ioc_ring_setup(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_PROBE_ADD):
		ret = fhook_ioc_probe_add(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_TRIGGER_ADD):
		ret = fhook_ioc_trigger_add(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_PID_FILTER):
		ret = fhook_ioc_pid_filter(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_CPU_FILTER):
		ret = fhook_ioc_cpu_filter(s, arg);
		break;
	case FHOOK_IOC_START:
		ret = fhook_ioc_start(s);
		break;
	case FHOOK_IOC_STOP:
		ret = fhook_ioc_stop(s);
		break;
	case FHOOK_CMD(FHOOK_IOC_STATS):
		ret = fhook_ioc_stats(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_SNAPSHOT):
		ret = fhook_ioc_snapshot(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_DIRECT_MODIFY):
		ret = fhook_ioc_direct_modify(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_LATENCY):
		ret = fhook_ioc_latency(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_COUNTS):
		ret = fhook_ioc_counts(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_HIST_SET):
		ret = fhook_ioc_hist_set(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_HIST_READ):
		ret = fhook_ioc_hist_read(s, arg);
		break;
	case FHOOK_CMD(FHOOK_IOC_KHOOKS):
		ret = fhook_khook_list((struct fhook_khooks __user *)arg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
out:
	mutex_unlock(&s->lock);
	return ret;
}

__poll_t fhook_session_poll(struct fhook_session *s, struct file *file, poll_table *wait)
{
	poll_wait(file, &s->waitq, wait);
	/* pairs with the producer's publish + irq_work (Dekker) */
	smp_mb();
	if (fhook_rings_readable(s, !READ_ONCE(s->armed)))
		return EPOLLIN | EPOLLRDNORM;
	/* the flush timer found data below the watermarks: report it once */
	/* a snapshot trigger froze the session: the reader's turn */
	if (READ_ONCE(s->snapshot_due))
		return EPOLLIN | EPOLLRDNORM | EPOLLPRI;
	if (READ_ONCE(s->flush_due) && fhook_rings_readable(s, true)) {
		WRITE_ONCE(s->flush_due, false);
		return EPOLLIN | EPOLLRDNORM;
	}
	return 0;
}
