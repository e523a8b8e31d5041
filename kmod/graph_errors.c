// SPDX-License-Identifier: GPL-2.0
/*
 * Failing call chains (FHOOK_GRAPH_F_ERRORS, fhook errors): a call graph
 * that records no call, but keeps, per task, the calls below a graph
 * function that returned an error, and writes them as one
 * FHOOK_REC_ERRORS record when the graph function itself returns one.
 * Nothing reaches the ring while nothing fails.
 *
 * Each shadow stack has a log (struct fhook_errlog) of returned calls,
 * in the order they returned.  It holds, for every frame on the stack,
 * the chain of its latest failing callee: that call, then its latest
 * failing callee, and so on down, deepest first, one after the other.
 * A frame's data says where its region of the log starts (the log's
 * length when it was pushed) and which entry is its latest failing
 * callee.  When a frame returns:
 *   not an error  its region goes: what failed below it did not matter
 *   an error      its latest failing callee's chain and the frame itself
 *                 go to the start of its caller's region, in place of the
 *                 caller's previous failing callee's chain; at depth 0
 *                 that chain is the record
 * So the log never holds more than a chain per frame on the stack, and
 * a loop that fails a thousand times keeps one chain.  A failing call
 * whose callees' chain does not fit (FHOOK_ERRORS_MAX_FRAMES entries) is
 * kept alone, marked as having lost what failed below it: its record
 * says FHOOK_ERRORS_DEEPER, not a wrong first failure.  One that does
 * not fit at all (its ancestors' chains fill the log) marks the record of
 * the depth-0 call FHOOK_ERRORS_INCOMPLETE.
 *
 * What fails: an errno, from any function but those userspace named as
 * returning none (void, unsigned: a callee's value left in the register);
 * 0 from those it named as failing with 0 (NULL), a low byte of 0 from
 * the bools it named as failing with false; for a depth-0 call, what
 * userspace's failure filter says, if it gave one.  A 0 does not replace
 * an errno as a frame's latest failing callee: the errno is what a caller
 * passes on, the NULL what it may turn into one.
 *
 * Frames are pushed as the call graph's (fgraph.c), with the graph's
 * ftrace_ops (probe_graph.c); this file is what runs instead of its
 * records: entry keeps the call's time, return decides.
 */
#include "probe_graph.h"

#include <linux/vmalloc.h>

/* fhook_gframe.data: the log's length at the push, and the latest failing callee */
#define FHOOK_ERR_MARK_SHIFT	16
#define FHOOK_ERR_NONE		0xffffU
/* ... or: a call of another context than the chain's (see fhook_errors_ctx()) */
#define FHOOK_ERR_FOREIGN	0xffffffffU

static_assert(FHOOK_ERRORS_MAX_FRAMES < FHOOK_ERR_NONE);

/* A call that returned an error, and how many of the entries before it are its chain */
struct fhook_errent {
	struct fhook_err_frame frame;
	unsigned long from;		/* its return address */
	u16 chain_len;			/* this call and the failing calls below it */
	u8 depth;
	u8 lost_below;			/* its failing callees' chain did not fit */
};

static_assert(FHOOK_GRAPH_MAX_DEPTH <= U8_MAX);

struct fhook_errlog {
	u16 n;				/* entries in use */
	u16 flags;			/* FHOOK_ERRORS_INCOMPLETE since the depth-0 call */
	u32 ctx;			/* fhook_errors_ctx() of the depth-0 call */
	struct fhook_errent ent[FHOOK_ERRORS_MAX_FRAMES];
};

/* current's log: the one of its shadow stack, by the stack's place in the pool */
static __always_inline struct fhook_errlog *fhook_errlog_of(struct fhook_graph_probe *gp,
							    struct fhook_gstack *gs)
{
	return &gp->errlogs[gs - READ_ONCE(fhook_gpool)->stacks];
}

/*
 * With FHOOK_GRAPH_F_ARGS, the arguments of @log's stack frame at @depth
 * (at[depth]) and of its entries (at[max depth + entry]), else NULL
 */
static __always_inline u64 (*fhook_errargs_of(struct fhook_graph_probe *gp,
					       struct fhook_errlog *log))[FHOOK_GRAPH_NR_ARGS]
{
	if (!gp->errargs)
		return NULL;
	return (void *)(gp->errargs + (log - gp->errlogs) * gp->errargs_stride);
}

/* the row of the entry @i of @log's arguments */
static __always_inline unsigned int fhook_errargs_ent(struct fhook_graph_probe *gp, unsigned int i)
{
	return (gp->cfg.max_depth ?: FHOOK_GRAPH_MAX_DEPTH) + i;
}

/*
 * An errno as a long (an ERR_PTR too), or as an int in the low half with
 * the high half zero or its sign extension (an int leaves it undefined,
 * but what compilers leave there is one of those): a pointer or a long
 * whose low half happens to be in the range is no failure.
 */
static __always_inline bool fhook_errors_errno(unsigned long retval)
{
	u32 high = retval >> 32;

	return (u32)retval >= (u32)-FHOOK_MAX_ERRNO && (!high || high == U32_MAX);
}

/*
 * Did the function @ip fail, returning @retval?  An errno, unless its
 * type says it returns none (void: what is left in the register is a
 * callee's; a bool); 0 if its type makes that a failure (NULL), a low
 * byte of 0 for a bool that fails with false.  The types are looked up
 * only for those kinds of value.
 */
static __always_inline bool fhook_errors_failed(struct fhook_graph_probe *gp, unsigned long ip,
						unsigned long retval)
{
	if (!(u8)retval && fhook_funcset_has(&gp->false_fails, ip))
		return true;
	if (fhook_errors_errno(retval))
		return !fhook_funcset_has(&gp->never_fail, ip) &&
		       !fhook_funcset_has(&gp->false_fails, ip);
	return !retval && fhook_funcset_has(&gp->zero_fails, ip);
}

/*
 * What a call runs in: a softirq served on the task's stack at an
 * interrupt's exit pushes its calls on the task's shadow stack (hardirqs
 * push none: no_irqs), but they are no callees of the task's call and
 * stay out of its chain, as one watched in a softirq keeps the task's out.
 */
static __always_inline u32 fhook_errors_ctx(void)
{
	return (in_nmi() ? 4 : 0) | (in_hardirq() ? 2 : 0) | (in_serving_softirq() ? 1 : 0);
}

static __always_inline notrace void fhook_errors_entry(void *user, struct fhook_gstack *gs,
						       struct fhook_gframe *f, unsigned int depth,
						       struct pt_regs *regs, unsigned int pc,
						       bool irqs_off)
{
	struct fhook_graph_probe *gp = user;
	struct fhook_errlog *log = fhook_errlog_of(gp, gs);

	/* a task's first frame: whatever an earlier task left in the log goes */
	if (!depth) {
		log->n = 0;
		log->flags = 0;
		log->ctx = fhook_errors_ctx();
	} else if (gs->frames[depth - 1].data == FHOOK_ERR_FOREIGN ||
		   fhook_errors_ctx() != log->ctx) {
		f->data = FHOOK_ERR_FOREIGN;
		return;
	}
	f->calltime = fhook_clock();
	f->data = ((u32)log->n << FHOOK_ERR_MARK_SHIFT) | FHOOK_ERR_NONE;
	if (unlikely(gp->errargs)) {
		u64 (*args)[FHOOK_GRAPH_NR_ARGS] = fhook_errargs_of(gp, log);
		unsigned int i;

		/* (the shadow stack holds no frame past the depth limit) */
		for (i = 0; i < FHOOK_GRAPH_NR_ARGS; i++)
			args[depth][i] = regs_get_kernel_argument(regs, i);
	}
}

/* The chain ending at @last (the depth-0 call) as a record, outermost first */
static notrace void fhook_errors_emit(struct fhook_graph_probe *gp, struct fhook_errlog *log,
				      unsigned int last, u64 now, unsigned int pc,
				      bool irqs_off)
{
	struct fhook_probe *p = &gp->f.p;
	struct fhook_probe_counters *c;
	unsigned int n = last + 1, i, size, nu = 0;
	unsigned int max_depth = gp->cfg.max_depth ?: FHOOK_GRAPH_MAX_DEPTH;
	u64 (*args)[FHOOK_GRAPH_NR_ARGS];
	void *scratch = NULL;
	struct fhook_rec_errors *r;
	u64 *tail;
	struct fhook_ring *rb;
	int cpu;

	size = sizeof(*r) + n * sizeof(r->frames[0]);
	if (gp->cfg.flags & FHOOK_GRAPH_F_CALLSITES)
		size += n * sizeof(u64);
	args = fhook_errargs_of(gp, log);
	if (args)
		size += n * sizeof(args[0]);
	/* the task's user stack, if asked: never of a softirq's call */
	if ((gp->cfg.flags & FHOOK_GRAPH_F_USTACK) && !log->ctx && current->mm &&
	    !(current->flags & PF_KTHREAD)) {
		scratch = fhook_scratch_get();
		if (scratch) {
			nu = fhook_stack_user(task_pt_regs(current), scratch, FHOOK_MAX_STACK);
			size += 8 * (nu + 1);
		}
	}
	cpu = smp_processor_id();
	c = fhook_counters(p->session, cpu, p->id);
	/* hits count records tried: hits == written + lost, as for every probe */
	fhook_count(&c->hits);
	rb = p->session->rings[cpu];
	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ts(&r->hdr, FHOOK_REC_ERRORS, size, p->id, pc, irqs_off, now);
		r->nr_frames = n;
		r->flags = log->flags;
		/* (the deepest call of the chain) */
		if (log->ent[0].depth + 1 >= max_depth || log->ent[0].lost_below)
			r->flags |= FHOOK_ERRORS_DEEPER;
		for (i = 0; i < n; i++)
			r->frames[i] = log->ent[last - i].frame;
		tail = (u64 *)&r->frames[n];
		if (gp->cfg.flags & FHOOK_GRAPH_F_CALLSITES) {
			r->flags |= FHOOK_ERRORS_CALLSITES;
			for (i = 0; i < n; i++)
				*tail++ = log->ent[last - i].from;
		}
		if (args) {
			r->flags |= FHOOK_ERRORS_ARGS;
			for (i = 0; i < n; i++, tail += FHOOK_GRAPH_NR_ARGS)
				memcpy(tail, args[fhook_errargs_ent(gp, last - i)],
				       sizeof(args[0]));
		}
		if (scratch) {
			r->hdr.flags |= FHOOK_CTX_STACK;
			memcpy(tail, scratch, 8 * nu);
			fhook_stack_trailer(tail, nu);
		}
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
	if (scratch)
		fhook_scratch_put();
}

/*
 * Has the frame @f a failing callee that returned an errno?  A NULL or
 * false does not take its place: an errno is what a caller passes on,
 * a NULL what it may turn into one (a failed allocation: -ENOMEM).
 */
static __always_inline bool fhook_errors_errno_below(struct fhook_errlog *log,
						     struct fhook_gframe *f)
{
	u32 below = f->data & FHOOK_ERR_NONE;

	return below != FHOOK_ERR_NONE && fhook_errors_errno(log->ent[below].frame.retval);
}

/* Does @f's return of @retval go to the log, its caller @caller (NULL: depth 0)? */
static __always_inline bool fhook_errors_keep(struct fhook_graph_probe *gp,
					      struct fhook_errlog *log, struct fhook_gframe *f,
					      struct fhook_gframe *caller, unsigned long retval)
{
	if (!caller && gp->fail_pred)
		return fhook_pred_run(gp->fail_pred, (const u8 *)&retval, sizeof(retval));
	if (!fhook_errors_failed(gp, f->func, retval))
		return false;
	return fhook_errors_errno(retval) || !caller || !fhook_errors_errno_below(log, caller);
}

/* @f returned @retval: see the top */
static __always_inline notrace void fhook_errors_ret(void *user, struct fhook_gstack *gs,
						     struct fhook_gframe *f, unsigned int depth,
						     unsigned long retval, u64 now, unsigned int pc,
						     bool irqs_off)
{
	struct fhook_graph_probe *gp = user;
	unsigned int mark, at, below, len;
	u64 (*args)[FHOOK_GRAPH_NR_ARGS];
	struct fhook_gframe *caller;
	struct fhook_errlog *log;
	struct fhook_errent *e;

	/*
	 * Detached, a set_graph_notrace frame (no entry callback, no
	 * callees), or another context's call: the log stays as it is
	 */
	if (!gp || (f->flags & FHOOK_GF_NOTRACE) || f->data == FHOOK_ERR_FOREIGN)
		return;
	log = fhook_errlog_of(gp, gs);
	mark = f->data >> FHOOK_ERR_MARK_SHIFT;
	caller = depth ? &gs->frames[depth - 1] : NULL;
	if (!fhook_errors_keep(gp, log, f, caller, retval)) {
		log->n = mark;
		return;
	}
	at = caller ? caller->data >> FHOOK_ERR_MARK_SHIFT : 0;
	below = f->data & FHOOK_ERR_NONE;
	len = below == FHOOK_ERR_NONE ? 0 : log->ent[below].chain_len;
	if (at >= FHOOK_ERRORS_MAX_FRAMES) {
		/* the caller keeps its earlier failing callee, if any: not for sure */
		log->flags |= FHOOK_ERRORS_INCOMPLETE;
		log->n = mark;
		return;
	}
	args = fhook_errargs_of(gp, log);
	if (at + len >= FHOOK_ERRORS_MAX_FRAMES) {
		/* the call alone, its callees' chain lost */
		len = 0;
		e = &log->ent[at];
		e->lost_below = 1;
	} else {
		/* the chain ends at @below, at or after @at: moves down, if at all */
		if (len && below + 1 - len != at) {
			memmove(&log->ent[at], &log->ent[below + 1 - len],
				len * sizeof(log->ent[0]));
			if (args)
				memmove(args[fhook_errargs_ent(gp, at)],
					args[fhook_errargs_ent(gp, below + 1 - len)],
					len * sizeof(args[0]));
		}
		e = &log->ent[at + len];
		e->lost_below = 0;
	}
	if (args)
		memcpy(args[fhook_errargs_ent(gp, at + len)], args[depth], sizeof(args[0]));
	e->frame.ip = f->func;
	e->frame.retval = retval;
	e->frame.calltime = f->calltime;
	e->frame.duration = fhook_clock_since(now, f->calltime);
	/* (a tail call's is the return trampoline: where it came from is not known) */
	e->from = f->ret != (unsigned long)fhook_graph_return ? f->ret : 0;
	e->chain_len = len + 1;
	e->depth = depth;
	log->n = at + len + 1;
	if (caller)
		caller->data = (caller->data & ~FHOOK_ERR_NONE) | (at + len);
	else
		fhook_errors_emit(gp, log, len, now, pc, irqs_off);
}

/* nothing is held back: no call records */
static notrace void fhook_errors_flush(void *user, struct fhook_gstack *gs)
{
}

const struct fhook_fgraph_ops fhook_errors_fgraph_ops = {
	.admit		= fhook_graph_admit,
	.missed		= fhook_graph_missed,
	.entry		= fhook_errors_entry,
	.ret		= fhook_errors_ret,
	.flush		= fhook_errors_flush,
};

/* fhook_graph_exit()'s, while the pool is this mode's */
notrace unsigned long fhook_errors_exit(unsigned long sp, unsigned long retval)
{
	return fhook_fgraph_exit(&fhook_errors_fgraph_ops, sp, retval);
}

FHOOK_DEFINE_GRAPH_MODE(fhook_errors_mode, &fhook_errors_fgraph_ops);

/* The functions at @uptr (@nr of them, 0: none) as @set, charged as a filter's */
static int fhook_errors_types(struct fhook_graph_probe *gp, struct fhook_funcset *set, u64 uptr,
			      u32 nr)
{
	u64 *ips;
	int ret;

	if (!nr)
		return 0;
	ret = fhook_filter_charge(&gp->f.p, nr);
	if (ret)
		return ret;
	ips = fhook_copy_array(uptr, nr, sizeof(u64));
	if (IS_ERR(ips))
		return PTR_ERR(ips);
	fhook_funcset_take(set, ips, nr);
	/* (most returns looked up are of functions in no set) */
	return fhook_funcset_filter(set);
}

/*
 * The mode for @gp's struct fhook_graph (copied, flags checked): one log
 * per shadow stack, in the user's budget; what a record may take.
 */
int fhook_errors_init(struct fhook_graph_probe *gp)
{
	struct fhook_probe *p = &gp->f.p;
	unsigned int nr = gp->cfg.max_tasks ?: FHOOK_GRAPH_DEF_TASKS;
	unsigned int depth = gp->cfg.max_depth ?: FHOOK_GRAPH_MAX_DEPTH;
	size_t size = array_size(nr, sizeof(struct fhook_errlog));
	u64 pages;
	s32 bad = -1;
	int ret;

	/* no call records: no threshold to write them at */
	if (gp->cfg.threshold_ns)
		return fhook_refuse(p->session, FHOOK_R_GRAPH_CFG, -1, -EINVAL);
	/* the logs, then their arguments: one allocation */
	if (gp->cfg.flags & FHOOK_GRAPH_F_ARGS) {
		gp->errargs_stride = (depth + FHOOK_ERRORS_MAX_FRAMES) * FHOOK_GRAPH_NR_ARGS;
		size = size_add(size, array3_size(nr, gp->errargs_stride, sizeof(u64)));
	}
	pages = DIV_ROUND_UP(size, PAGE_SIZE);
	ret = fhook_mem_reserve(p->session->user, pages);
	if (ret)
		return ret;
	gp->errlogs = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!gp->errlogs) {
		fhook_mem_unreserve(p->session->user, pages);
		return -ENOMEM;
	}
	gp->errlog_pages = pages;
	if (gp->cfg.flags & FHOOK_GRAPH_F_ARGS)
		gp->errargs = (u64 *)&gp->errlogs[nr];
	ret = fhook_errors_types(gp, &gp->zero_fails, gp->cfg.zero_ips, gp->cfg.nr_zero_ips);
	if (!ret)
		ret = fhook_errors_types(gp, &gp->never_fail, gp->cfg.none_ips, gp->cfg.nr_none_ips);
	if (!ret)
		ret = fhook_errors_types(gp, &gp->false_fails, gp->cfg.false_ips,
					 gp->cfg.nr_false_ips);
	if (ret)
		return ret;
	gp->fail_pred = fhook_pred_copy(gp->cfg.fail_pred, gp->cfg.fail_pred_len,
					sizeof(unsigned long), &bad);
	if (IS_ERR(gp->fail_pred)) {
		ret = PTR_ERR(gp->fail_pred);
		gp->fail_pred = NULL;
		if (bad >= 0)
			return fhook_refuse(p->session, FHOOK_R_FAIL_PRED, bad, ret);
		return ret;
	}
	gp->mode = &fhook_errors_mode;
	p->max_record = sizeof(struct fhook_rec_errors) +
			min_t(unsigned int, depth, FHOOK_ERRORS_MAX_FRAMES) * sizeof(struct fhook_err_frame);
	if (gp->cfg.flags & FHOOK_GRAPH_F_CALLSITES)
		p->max_record += min_t(unsigned int, depth, FHOOK_ERRORS_MAX_FRAMES) * sizeof(u64);
	if (gp->errargs)
		p->max_record += min_t(unsigned int, depth, FHOOK_ERRORS_MAX_FRAMES) *
				 FHOOK_GRAPH_NR_ARGS * sizeof(u64);
	if (gp->cfg.flags & FHOOK_GRAPH_F_USTACK)
		p->max_record += 8 * (FHOOK_MAX_STACK + 1);
	return 0;
}

/* After the probe's release: detached, and the grace periods waited for */
void fhook_errors_release(struct fhook_graph_probe *gp)
{
	vfree(gp->errlogs);
	fhook_mem_unreserve(gp->f.p.session->user, gp->errlog_pages);
	fhook_funcset_free(&gp->zero_fails);
	fhook_funcset_free(&gp->never_fail);
	fhook_funcset_free(&gp->false_fails);
	kfree(gp->fail_pred);
}
