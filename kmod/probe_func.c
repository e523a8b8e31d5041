// SPDX-License-Identifier: GPL-2.0
/*
 * Function probes: one ftrace_ops per probe, its filter built with
 * ftrace_set_filter()/ftrace_set_notrace(), so the tracefs glob grammar
 * works unchanged.  ":mod:" is not parsed by ftrace_set_filter() (only the
 * tracefs file does that); userspace resolves it to addresses, which are
 * added with ftrace_set_filter_ip().
 */
#include "fhook.h"

#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/*
 * The slow path of a function probe with FHOOK_PROBE_F_STACK: the stack
 * (the function, then its callers from parent_ip on; the frames of fhook
 * and of the ftrace trampoline are dropped) goes into a scratch buffer,
 * then one record carries the event and the trailer.
 */
static notrace void fhook_func_stack(struct fhook_probe *p, struct fhook_ring *rb,
				     unsigned long ip, unsigned long parent_ip, unsigned int pc,
				     bool irqs_off, struct fhook_probe_counters *c)
{
	struct fhook_rec_func *r;
	unsigned int n = 0, size;
	u64 *ips = NULL;
	void *scratch;

	scratch = fhook_scratch_get();
	if (scratch) {
		ips = scratch;
		n = fhook_stack_func(ips, FHOOK_MAX_STACK, ip, parent_ip);
	}
	size = sizeof(*r) + (ips ? 8 * (n + 1) : 0);
	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init(&r->hdr, FHOOK_REC_FUNC, size, p->id, pc, irqs_off);
		r->ip = ip;
		r->parent_ip = parent_ip;
		if (ips) {
			r->hdr.flags |= FHOOK_CTX_STACK;
			memcpy(r + 1, ips, 8 * n);
			fhook_stack_trailer((u64 *)(r + 1), n);
		}
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
	if (scratch)
		fhook_scratch_put();
}

/*
 * A function entry to record: filters, triggers, one FHOOK_REC_FUNC
 * record, under ftrace's recursion lock: every hit fnrec.c does not take.
 */
noinline notrace void fhook_func_hit_full(struct fhook_probe *p, unsigned long ip,
					  unsigned long parent_ip)
{
	struct fhook_session *s = p->session;
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_probe_counters *c;
	unsigned int triggered, outer;
	struct fhook_ring *rb;
	int bit, cpu;

	/* we stay on this CPU and its ring; a writer of our context below us: recursion */
	bit = fhook_hit_trylock(p, ip, parent_ip, pc, irqs_off);
	if (bit < 0)
		return;
	cpu = smp_processor_id();
	c = fhook_counters(s, cpu, p->id);
	if (!p->any_task && !fhook_session_wants(s)) {
		fhook_count(&c->filtered);
		goto unlock;
	}
	rb = s->rings[cpu];
	/*
	 * as fnrec does: a hit of this context below us (ftrace's lock lets
	 * one through as a context transition: our own clock read of a traced
	 * clocksource) counts as missed, not as an event
	 */
	outer = READ_ONCE(rb->fast_ctx);
	WRITE_ONCE(rb->fast_ctx, fhook_ring_ctx(pc, irqs_off));
	triggered = p->nr_triggers ? fhook_triggers_run(p, rb, NULL, 0) : 0;
	if ((p->pred && !fhook_pred_run(p->pred, NULL, 0)) || READ_ONCE(p->paused)) {
		fhook_count(&c->filtered);
		goto restore;
	}
	fhook_count(&c->hits);
	if (p->hist) {
		fhook_hist_add(p->hist, NULL, 0, 0, ip, parent_ip, NULL);
		goto restore;
	}
	if (unlikely(p->stack || triggered)) {
		fhook_func_stack(p, rb, ip, parent_ip, pc, irqs_off, c);
		goto restore;
	}
	fhook_func_write(p, rb, c, ip, parent_ip, pc, irqs_off, false);
restore:
	WRITE_ONCE(rb->fast_ctx, outer);
unlock:
	ftrace_test_recursion_unlock(bit);
}

/*
 * Does the hit pass the session's filters, the probe's pause and its
 * predicate?  A rejected one counts as filtered.  Preemption disabled.
 */
static __always_inline bool fhook_probe_admit(struct fhook_probe *p,
					      struct fhook_probe_counters *c)
{
	if (fhook_session_wants(p->session) && !READ_ONCE(p->paused) &&
	    (!p->pred || fhook_pred_run(p->pred, NULL, 0)))
		return true;
	fhook_count(&c->filtered);
	return false;
}

/*
 * ftrace's recursion lock for a probe's C code, which may call traceable
 * functions (the predicate's glob_match()); a hit that does not get it
 * counts as missed.
 */
static __always_inline int fhook_probe_trylock(struct fhook_probe *p, unsigned long ip,
					       unsigned long parent_ip)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit < 0) {
		preempt_disable_notrace();
		fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->missed);
		preempt_enable_notrace();
	}
	return bit;
}

/*
 * A hit to count only (FHOOK_PROBE_F_COUNT): the session's filters and a
 * predicate on the task, one per-CPU increment.  The predicate can call
 * traceable code (glob_match()): callers outside the kprobe machinery
 * (which has its own recursion check) use fhook_probe_count_guarded().
 */
notrace void fhook_probe_count(struct fhook_probe *p)
{
	struct fhook_probe_counters *c;

	preempt_disable_notrace();
	c = fhook_counters(p->session, smp_processor_id(), p->id);
	if (fhook_probe_admit(p, c))
		fhook_count(&c->hits);
	preempt_enable_notrace();
}

/* fhook_probe_admit() under ftrace's recursion lock: latency probes */
notrace bool fhook_probe_filter_guarded(struct fhook_probe *p, unsigned long ip,
					unsigned long parent_ip)
{
	int bit = fhook_probe_trylock(p, ip, parent_ip);
	bool ok;

	if (bit < 0)
		return false;
	preempt_disable_notrace();
	ok = fhook_probe_admit(p, fhook_counters(p->session, smp_processor_id(), p->id));
	preempt_enable_notrace();
	ftrace_test_recursion_unlock(bit);
	return ok;
}

/* fhook_probe_count() under ftrace's recursion lock: ops and direct probes */
notrace void fhook_probe_count_guarded(struct fhook_probe *p, unsigned long ip,
				       unsigned long parent_ip)
{
	int bit = fhook_probe_trylock(p, ip, parent_ip);

	if (bit < 0)
		return;
	fhook_probe_count(p);
	ftrace_test_recursion_unlock(bit);
}

static notrace void fhook_func_callback(unsigned long ip, unsigned long parent_ip,
					struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	fhook_func_hit(op->private, ip, parent_ip);
}

static notrace void fhook_func_count_callback(unsigned long ip, unsigned long parent_ip,
					      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	fhook_probe_count_guarded(op->private, ip, parent_ip);
}

/*
 * FHOOK_PROBE_F_WAKEUP_CPU: only on the CPU of the session's tracked
 * wakeup (kmod/wakeup.c), the test and the record on one CPU, as the
 * kernel's wakeup_tracer_call() does (preemption off around both).
 */
static notrace void fhook_func_wakeup_callback(unsigned long ip, unsigned long parent_ip,
					       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct fhook_probe *p = op->private;

	preempt_disable_notrace();
	if (READ_ONCE(p->session->wakeup_cpu) == smp_processor_id())
		fhook_func_hit(p, ip, parent_ip);
	preempt_enable_notrace();
}

/* FHOOK_PROBE_F_COUNT_IPS: the probe's hits, and the function's */
static notrace void fhook_func_count_ips_callback(unsigned long ip, unsigned long parent_ip,
						  struct ftrace_ops *op,
						  struct ftrace_regs *fregs)
{
	struct fhook_probe *p = op->private;
	struct fhook_func_probe *f = to_func(p);
	/* also disables preemption: the counters are this CPU's */
	int bit = fhook_probe_trylock(p, ip, parent_ip);
	struct fhook_probe_counters *c;

	if (bit < 0)
		return;
	c = fhook_counters(p->session, smp_processor_id(), p->id);
	if (fhook_probe_admit(p, c)) {
		fhook_count(&c->hits);
		fhook_func_counts_hit(f->counts, ip);
	}
	ftrace_test_recursion_unlock(bit);
}

/* A pattern's filter entries: every function for a glob or :mod:, else a few */
#define FHOOK_FILTER_GLOB_ENTRIES	FHOOK_MAX_IPS
#define FHOOK_FILTER_NAME_ENTRIES	8
/* an entry of an ftrace hash (struct ftrace_func_entry) and its share of the buckets */
#define FHOOK_FILTER_ENTRY_BYTES	64

/*
 * ftrace's filter hashes are the kernel's memory, out of every memory
 * cgroup's sight: what @p puts in them counts in fhook's budget for its
 * life (ENOMEM past it; fhook_probe_free() gives it back), @entries at a
 * time, counted from the very text or addresses ftrace is given.
 */
int fhook_filter_charge(struct fhook_probe *p, u64 entries)
{
	u64 pages = DIV_ROUND_UP(entries * FHOOK_FILTER_ENTRY_BYTES, PAGE_SIZE);
	int ret = fhook_mem_reserve(p->session->user, pages);

	if (!ret)
		p->filter_pages += pages;
	return ret;
}

/*
 * Feed each whitespace-separated pattern of @text to @set, each counted
 * in @p's filter charge first.  ftrace writes into the buffer it is given
 * (filter_parse_regex), so @text is our own copy.  *@index counts patterns
 * across calls for error reporting.
 */
int fhook_func_set_patterns(struct fhook_probe *p, struct ftrace_ops *ops, char *text,
			    int (*set)(struct ftrace_ops *ops, unsigned char *buf, int len, int reset),
			    s32 *index, s32 *err_index)
{
	static const char blank[] = " \t\n\r\v\f";
	u64 entries = 0;
	const char *at;
	char *tok;
	int ret;

	/* the hash's entries in fhook's budget first, all at once */
	for (at = text + strspn(text, blank); *at; at += strspn(at, blank)) {
		size_t len = strcspn(at, blank);
		bool glob = false;
		size_t i;

		for (i = 0; i < len && !glob; i++)
			glob = strchr("*?[:!", at[i]);
		entries += glob ? FHOOK_FILTER_GLOB_ENTRIES : FHOOK_FILTER_NAME_ENTRIES;
		at += len;
	}
	ret = fhook_filter_charge(p, entries);
	if (ret)
		return ret;
	while ((tok = strsep(&text, blank)) != NULL) {
		size_t len = strlen(tok);

		if (!len)
			continue;
		if (len > FHOOK_MAX_PATTERN_LEN) {
			*err_index = *index;
			return fhook_refuse(p->session, FHOOK_R_PATTERN_LEN, *index, -EINVAL);
		}
		ret = set(ops, tok, len, 0);
		if (ret) {
			*err_index = *index;
			/* ftrace says -EINVAL when nothing matched */
			return ret == -EINVAL ? fhook_refuse(p->session, FHOOK_R_NO_MATCH, *index, -ENOENT) : ret;
		}
		(*index)++;
	}
	return 0;
}

/*
 * Adds @nr addresses to @ops' filter, one copy of its hash for all of
 * them.  When ftrace refuses one, *@err_index is @index plus its place.
 */
static int fhook_func_set_ips(struct ftrace_ops *ops, u64 *ips, u32 nr, s32 index,
			      s32 *err_index)
{
	int ret;
	u32 i;

	if (!nr)
		return 0;
	ret = ftrace_set_filter_ips(ops, (unsigned long *)ips, nr, 0, 0);
	if (!ret)
		return 0;
	/*
	 * which one: the failed call changed nothing; ask one by one, each
	 * alone (reset: the filter is discarded anyway)
	 */
	for (i = 0; ret == -EINVAL && i < nr; i++) {
		if (ftrace_set_filter_ip(ops, ips[i], 0, 1)) {
			*err_index = index + i;
			break;
		}
	}
	return ret == -EINVAL ? -ENOENT : ret;
}

/* A slice of addresses: an ops of its own. */
struct fhook_func_slice {
	struct ftrace_ops ops;
	bool registered;
};

/*
 * @nr addresses at @ips in slices, each ops with @like's callback and
 * private and the notrace patterns @exclude (a copy for each: ftrace
 * writes into what it parses).  A bad address fails, naming it in
 * *@err_index (@index: the first's).  Freed by fhook_slices_release(),
 * on failure too.
 */
int fhook_slices_init(struct fhook_probe *p, struct fhook_ops_slices *s,
		      const struct ftrace_ops *like, u64 *ips, u32 nr, s32 index,
		      const char *exclude, s32 *err_index)
{
	u32 i, n;
	int ret;

	s->nr = DIV_ROUND_UP(nr, FHOOK_ARM_SLICE);
	s->slice = kvcalloc(s->nr, sizeof(*s->slice), GFP_KERNEL_ACCOUNT);
	if (!s->slice) {
		s->nr = 0;
		return -ENOMEM;
	}
	for (i = 0; i < s->nr; i++) {
		struct ftrace_ops *ops = &s->slice[i].ops;

		/* flags stay 0: @like's FTRACE_OPS_FL_INITIALIZED is not theirs */
		ops->func = like->func;
		ops->private = like->private;
		n = min(nr - i * FHOOK_ARM_SLICE, (u32)FHOOK_ARM_SLICE);
		ret = fhook_func_set_ips(ops, ips + i * FHOOK_ARM_SLICE, n,
					 index + i * FHOOK_ARM_SLICE, err_index);
		if (!ret && exclude) {
			char *text = kstrdup(exclude, GFP_KERNEL_ACCOUNT);
			s32 unused = 0;

			ret = text ? fhook_func_set_patterns(p, ops, text, ftrace_set_notrace, &unused,
							     err_index) : -ENOMEM;
			kfree(text);
		}
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/*
 * The ops' filter from the probe's patterns and addresses, and its
 * predicate (on the task only: function probes have no fields).  Shared
 * with direct probes, which keep the patterns and addresses in @keep.
 * With f->slices_ok and more than FHOOK_ARM_SLICE addresses, the ops gets
 * the first slice and f->slices the others (arming below).
 */
int fhook_func_filter_init(struct fhook_func_probe *f, const struct fhook_probe_add *arg,
			   s32 *err_index, struct fhook_func_targets *keep)
{
	struct fhook_probe *p = &f->p;
	char *filter = NULL, *exclude = NULL, *keep_exclude = NULL;
	u32 nr_now = arg->nr_ips;
	u64 *ips = NULL;
	s32 index = 0;
	int ret;

	if (arg->filter_len > FHOOK_MAX_PATTERN_TEXT ||
	    arg->exclude_len > FHOOK_MAX_PATTERN_TEXT || arg->nr_ips > FHOOK_MAX_IPS)
		return fhook_refuse(p->session, FHOOK_R_PATTERNS, -1, -EINVAL);
	if (!arg->filter_len && !arg->nr_ips)
		return fhook_refuse(p->session, FHOOK_R_NO_FUNCTIONS, -1, -EINVAL);
	ret = fhook_filter_charge(p, arg->nr_ips);
	if (ret)
		return ret;

	p->stack = arg->flags & FHOOK_PROBE_F_STACK;
	p->count_only = arg->flags & FHOOK_PROBE_F_COUNT;
	if (p->stack && p->count_only)
		return fhook_refuse(p->session, FHOOK_R_STACK_COUNT, -1, -EINVAL);
	/* a filter on the task (pid, comm, cpu): no fields to test */
	p->pred = fhook_pred_load(p, arg, 0, err_index);
	if (IS_ERR(p->pred)) {
		ret = PTR_ERR(p->pred);
		p->pred = NULL;
		return ret;
	}

	filter = fhook_copy_text(arg->filter, arg->filter_len);
	if (IS_ERR(filter))
		return PTR_ERR(filter);
	exclude = fhook_copy_text(arg->exclude, arg->exclude_len);
	if (IS_ERR(exclude)) {
		ret = PTR_ERR(exclude);
		exclude = NULL;
		goto out;
	}
	if (arg->nr_ips) {
		ips = fhook_copy_array(arg->ips, arg->nr_ips, sizeof(u64));
		if (IS_ERR(ips)) {
			ret = PTR_ERR(ips);
			ips = NULL;
			goto out;
		}
	}
	/* copies: ftrace writes into the text it parses */
	if (keep) {
		keep->filter_text = kstrdup(filter, GFP_KERNEL_ACCOUNT);	/* NULL stays NULL */
		keep->exclude_text = kstrdup(exclude, GFP_KERNEL_ACCOUNT);
		ret = -ENOMEM;
		if ((filter && !keep->filter_text) || (exclude && !keep->exclude_text))
			goto out;
	}

	if (filter) {
		ret = fhook_func_set_patterns(p, &f->ops, filter, ftrace_set_filter, &index,
					      err_index);
		if (ret)
			goto out;
	}
	/* all-blank filter text would leave an empty (match all) filter */
	if (!index && !arg->nr_ips) {
		ret = fhook_refuse(p->session, FHOOK_R_NO_FUNCTIONS, -1, -EINVAL);
		goto out;
	}
	if (exclude && f->slices_ok && arg->nr_ips > FHOOK_ARM_SLICE) {
		keep_exclude = kstrdup(exclude, GFP_KERNEL_ACCOUNT);
		ret = -ENOMEM;
		if (!keep_exclude)
			goto out;
	}
	if (exclude) {
		ret = fhook_func_set_patterns(p, &f->ops, exclude, ftrace_set_notrace, &index,
					      err_index);
		if (ret)
			goto out;
	}
	if (f->slices_ok && nr_now > FHOOK_ARM_SLICE)
		nr_now = FHOOK_ARM_SLICE;
	ret = fhook_func_set_ips(&f->ops, ips, nr_now, index, err_index);
	if (!ret && nr_now < arg->nr_ips)
		ret = fhook_slices_init(p, &f->slices, &f->ops, ips + nr_now,
					arg->nr_ips - nr_now, index + nr_now, keep_exclude,
					err_index);
	if (ret)
		goto out;
	if (keep) {
		keep->ips = ips;
		keep->nr_ips = arg->nr_ips;
		ips = NULL;
	}
out:
	kfree(keep_exclude);
	kvfree(ips);
	kfree(exclude);
	kfree(filter);
	return ret;
}

/* F_COUNT_IPS: a counting probe whose functions are given by address */
static int fhook_func_probe_validate(struct fhook_session *s, const struct fhook_probe_add *arg)
{
	if ((arg->flags & FHOOK_PROBE_F_WAKEUP_CPU) && (arg->flags & FHOOK_PROBE_F_COUNT))
		return fhook_refuse(s, FHOOK_R_FLAGS, -1, -EINVAL);
	if (!(arg->flags & FHOOK_PROBE_F_COUNT_IPS))
		return 0;
	if (!(arg->flags & FHOOK_PROBE_F_COUNT) || arg->filter_len || arg->exclude_len ||
	    !arg->nr_ips || arg->nr_ips > FHOOK_MAX_COUNT_IPS)
		return fhook_refuse(s, FHOOK_R_COUNT_IPS, -1, -EINVAL);
	return 0;
}

/* The filter, and one counter per function of it on each CPU. */
static int fhook_func_counts_init(struct fhook_func_probe *f, const struct fhook_probe_add *arg,
				  s32 *err_index)
{
	struct fhook_func_targets t = {};
	int ret;

	ret = fhook_func_filter_init(f, arg, err_index, &t);
	if (ret)
		return ret;
	/* no patterns (validate): only the addresses were kept */
	f->counts = fhook_func_counts_create(t.ips, t.nr_ips);
	if (IS_ERR(f->counts)) {
		ret = PTR_ERR(f->counts);
		f->counts = NULL;
		kvfree(t.ips);
		return ret;
	}
	return 0;
}

static int fhook_func_probe_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
				 s32 *err_index)
{
	struct fhook_func_probe *f = to_func(p);

	f->ops.private = p;	/* the callbacks' way back, from every slice's ops too */
	if (arg->flags & FHOOK_PROBE_F_COUNT_IPS)
		f->ops.func = fhook_func_count_ips_callback;
	else if (arg->flags & FHOOK_PROBE_F_COUNT)
		f->ops.func = fhook_func_count_callback;
	else if (arg->flags & FHOOK_PROBE_F_WAKEUP_CPU)
		f->ops.func = fhook_func_wakeup_callback;
	else
		f->ops.func = fhook_func_callback;
	/* what that CPU ran, whoever ran it: the wakeup tracer filtered the task */
	p->any_task = arg->flags & FHOOK_PROBE_F_WAKEUP_CPU;
	/*
	 * No FTRACE_OPS_FL_RECURSION (nor _RCU): both callbacks take
	 * ftrace's recursion lock themselves, so ftrace does not wrap them
	 * in ftrace_ops_assist_func().  They are called from the ops' own
	 * trampoline while they are alone on a function, else from
	 * ftrace_ops_list_func(), which takes the list's recursion bit (a
	 * different one) around every ops it calls.
	 */
	f->ops.flags = 0;
	if (arg->flags & FHOOK_PROBE_F_COUNT_IPS)
		return fhook_func_counts_init(f, arg, err_index);
	f->slices_ok = true;
	return fhook_func_filter_init(f, arg, err_index, NULL);
}

/*
 * A filter of thousands of functions (userspace expands `*` into every
 * address) armed at once would patch every call site in one
 * ftrace_replace_code() pass, which on x86 never yields the CPU: seconds
 * under emulation or on a slow machine, soft lockups with one CPU.  Each
 * slice is an ops of its own, registered (its sites patched) one after
 * the other, rescheduling in between.  Not one ops whose filter grows: each
 * change of a registered ops' filter copies its whole hash, which made
 * arming quadratic (minutes on the debug kernel, where an entry costs
 * ~250 us).  Every function is still in one ops only, so each keeps that
 * ops' own trampoline.
 */
int fhook_slices_register(struct fhook_ops_slices *s)
{
	struct fhook_func_slice *sl;
	int ret;

	for (sl = s->slice; sl < s->slice + s->nr; sl++) {
		cond_resched();
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = register_ftrace_function(&sl->ops);
		if (ret)
			return ret;
		sl->registered = true;
	}
	return 0;
}

/* Last slice first; false when ftrace refused one (it stays registered). */
bool fhook_slices_unregister(struct fhook_probe *p, struct fhook_ops_slices *s)
{
	struct fhook_func_slice *sl;
	bool all = true;
	int ret;

	for (sl = s->slice + s->nr; sl-- > s->slice;) {
		if (!sl->registered)
			continue;
		/* waits for callbacks in flight (RCU tasks: dynamic ops) */
		ret = unregister_ftrace_function(&sl->ops);
		if (ret) {
			pr_err("probe %u: unregister_ftrace_function (slice): %d\n", p->id, ret);
			all = false;
			continue;
		}
		sl->registered = false;
		cond_resched();
	}
	return all;
}

void fhook_slices_release(struct fhook_ops_slices *s)
{
	u32 i;

	for (i = 0; i < s->nr; i++)
		ftrace_free_filter(&s->slice[i].ops);
	kvfree(s->slice);
	s->slice = NULL;
	s->nr = 0;
}

static int fhook_func_probe_arm(struct fhook_probe *p)
{
	struct fhook_func_probe *f = to_func(p);
	int ret;

	p->fnrec = fhook_fnrec_ok(p);
	ret = register_ftrace_function(&f->ops);
	if (ret)
		return ret;
	p->registered = true;
	/* on failure the session disarms every probe, this one included */
	return fhook_slices_register(&f->slices);
}

/*
 * Unregister a probe's ftrace_ops (function probes, hooks).  True when it
 * was registered and no longer is; when ftrace refuses, the probe stays
 * registered and must not be freed (session.c).
 */
bool fhook_ops_unregister(struct fhook_probe *p, struct ftrace_ops *ops)
{
	int ret;

	if (!p->registered)
		return false;
	/* waits for callbacks in flight (RCU tasks for dynamic ops) */
	ret = unregister_ftrace_function(ops);
	if (ret) {
		pr_err("probe %u: unregister_ftrace_function: %d\n", p->id, ret);
		return false;
	}
	p->registered = false;
	return true;
}

static void fhook_func_probe_disarm(struct fhook_probe *p)
{
	bool slices_gone = fhook_slices_unregister(p, &to_func(p)->slices);

	fhook_ops_unregister(p, &to_func(p)->ops);
	/* a slice ftrace kept still calls into the probe: keep it all */
	if (!slices_gone)
		p->registered = true;
}

static void fhook_func_probe_release(struct fhook_probe *p)
{
	struct fhook_func_probe *f = to_func(p);

	ftrace_free_filter(&f->ops);
	fhook_slices_release(&f->slices);
	fhook_func_counts_free(f->counts);
	kfree(p->pred);
}

/* FHOOK_IOC_COUNTS, under the session lock. */
int fhook_func_counts_ioc(struct fhook_session *s, struct fhook_counts *arg)
{
	struct fhook_probe *p = fhook_probe_find(s, arg->probe_id);

	if (!p)
		return fhook_refuse(s, FHOOK_R_NO_PROBE, -1, -ENOENT);
	if (p->kind != &fhook_func_kind || !to_func(p)->counts)
		return fhook_refuse(s, FHOOK_R_PROBE_KIND, -1, -EINVAL);
	return fhook_func_counts_read(to_func(p)->counts, arg);
}

const struct fhook_probe_kind fhook_func_kind = {
	.size		= sizeof(struct fhook_func_probe),
	.fields		= FHOOK_ADD_PATTERNS | FHOOK_ADD_PRED,
	.flags		= FHOOK_PROBE_F_STACK | FHOOK_PROBE_F_COUNT | FHOOK_PROBE_F_COUNT_IPS |
			  FHOOK_PROBE_F_WAKEUP_CPU,
	.validate	= fhook_func_probe_validate,
	.init		= fhook_func_probe_init,
	.arm		= fhook_func_probe_arm,
	.disarm		= fhook_func_probe_disarm,
	.release	= fhook_func_probe_release,
	.disarm_unregisters = true,
};
