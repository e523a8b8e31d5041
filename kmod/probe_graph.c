// SPDX-License-Identifier: GPL-2.0
/*
 * Call graphs (FHOOK_PROBE_GRAPH): what the function_graph tracer shows
 * with set_graph_function, from a module, on the return-trampoline
 * mechanism of fgraph.c (as trace_functions_graph.c is on fgraph.c).
 *
 * Three ftrace_ops, each with its callback (the probe's mode: these
 * records, or failing chains, graph_errors.c):
 *   entry    the graph functions: a task not in the graph enters it
 *   all      every other traceable function: traced while in the graph
 *   notrace  set_graph_notrace: a frame that hides itself and its callees
 * A graph function given by pattern is left out of "all" (its notrace
 * list takes the same patterns); one given by address (:mod:) is in both
 * (ftrace_set_notrace() takes no addresses): both callbacks run, and
 * fgraph.c pushes the call once.  "all" is one ops for every function,
 * or, when userspace names them (struct fhook_graph's all_filter and
 * all_ips), an ops for the names and slices of addresses armed one after
 * the other (probe_func.c): one ops for all patches every call site in a
 * pass that never yields the CPU.
 *
 * Leaves in one record: the push holds its entry record back (the frame
 * keeps its time and context, gs->pending and this CPU's
 * fhook_fgraph_pending say so) until something else is recorded on the
 * CPU: a push inside it, any other record (fhook_ring_reserve() calls
 * fhook_fgraph_flush() first), the task switching out.  A call that
 * returns first is a leaf: its return record (FHOOK_GRAPH_RET_LEAF)
 * stands for both.  At most one entry waits per CPU, that of the task
 * running there.  --args writes entries at once; at depth 1 only the
 * entry ops is registered.
 */
#include "probe_graph.h"

/* An entry record: of the call of @ip at @depth, which came at @ts */
static notrace void fhook_graph_rec_entry(struct fhook_graph_probe *gp, unsigned long ip,
					  unsigned int depth, struct pt_regs *args, u64 ts,
					  u32 ctx)
{
	struct fhook_probe *p = &gp->f.p;
	int cpu = smp_processor_id();
	struct fhook_probe_counters *c = fhook_counters(p->session, cpu, p->id);
	struct fhook_rec_graph_ent *r;
	unsigned int size = sizeof(*r);
	struct fhook_ring *rb;

	if (args)
		size += FHOOK_GRAPH_NR_ARGS * sizeof(u64);
	/* hits count records tried: hits == written + lost, as for every probe */
	fhook_count(&c->hits);
	rb = p->session->rings[cpu];
	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ctx(&r->hdr, FHOOK_REC_GRAPH_ENT, size, p->id, ts, ctx & 0xff,
				   ctx >> 8);
		r->ip = ip;
		r->depth = depth;
		r->nr_args = 0;
		if (args) {
			unsigned int i;

			r->nr_args = FHOOK_GRAPH_NR_ARGS;
			for (i = 0; i < FHOOK_GRAPH_NR_ARGS; i++)
				r->args[i] = regs_get_kernel_argument(args, i);
		}
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/*
 * The entry held back on @gs (see the top), written now: something else
 * is about to be recorded on this CPU, or the task leaves it.  With the
 * CPU's busy flag set; @user NULL: recording stopped.
 */
static notrace void fhook_graph_put_pending(void *user, struct fhook_gstack *gs)
{
	struct fhook_graph_probe *gp = user;
	int i = gs->pending;
	struct fhook_gframe *f;

	gs->pending = -1;
	__this_cpu_write(fhook_fgraph_pending, NULL);
	if (i < 0 || !gp)
		return;
	f = &gs->frames[i];
	fhook_graph_rec_entry(gp, f->func, i, NULL, f->calltime, f->data);
}

/* fgraph.c pushed @f: its time, and its entry record or held back */
static __always_inline notrace void fhook_graph_entry(void *user, struct fhook_gstack *gs,
						      struct fhook_gframe *f, unsigned int depth,
						      struct pt_regs *regs, unsigned int pc,
						      bool irqs_off)
{
	struct fhook_graph_probe *gp = user;

	f->calltime = fhook_clock();
	if (gp->cfg.threshold_ns)
		return;		/* return records only */
	/* the caller is no leaf: its entry first */
	if (gs->pending >= 0)
		fhook_graph_put_pending(gp, gs);
	f->data = fhook_graph_ctx(pc, irqs_off);
	if (gp->cfg.flags & FHOOK_GRAPH_F_ARGS) {
		fhook_graph_rec_entry(gp, f->func, depth, regs, f->calltime, f->data);
	} else {
		/* held back: a leaf needs only its return record */
		gs->pending = depth;
		__this_cpu_write(fhook_fgraph_pending, gs);
	}
}

static __always_inline notrace void fhook_graph_rec_ret(struct fhook_graph_probe *gp,
							struct fhook_gframe *f, unsigned int depth,
							unsigned long retval, u64 now,
							unsigned int pc, bool irqs_off, bool leaf)
{
	struct fhook_probe *p = &gp->f.p;
	struct fhook_rec_graph_ret *r;
	struct fhook_probe_counters *c;
	struct fhook_ring *rb;
	int cpu;

	cpu = smp_processor_id();
	c = fhook_counters(p->session, cpu, p->id);
	fhook_count(&c->hits);
	rb = p->session->rings[cpu];
	r = fhook_ring_reserve(rb, sizeof(*r), p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init_ts(&r->hdr, FHOOK_REC_GRAPH_RET, sizeof(*r), p->id, pc,
				  irqs_off, now);
		r->ip = f->func;
		r->calltime = f->calltime;
		r->retval = retval;
		r->depth = depth;
		r->ret_flags = leaf ? FHOOK_GRAPH_RET_LEAF : 0;
		r->entry_flags = leaf ? f->data & 0xff : 0;
		r->entry_preempt = leaf ? f->data >> 8 : 0;
		r->__pad = 0;
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/* @f returned: its return record, which stands for its entry too if held back */
static __always_inline notrace void fhook_graph_ret(void *user, struct fhook_gstack *gs,
						    struct fhook_gframe *f, unsigned int depth,
						    unsigned long retval, u64 now, unsigned int pc,
						    bool irqs_off)
{
	struct fhook_graph_probe *gp = user;
	bool leaf = false;

	/*
	 * Its entry still held back: a leaf.  Held back above it (frames
	 * dropped): that call is not drawn at all.  The pointer is this
	 * CPU's: a task that left the CPU had its entry written.
	 */
	if (gs->pending >= (int)depth) {
		leaf = gs->pending == depth;
		gs->pending = -1;
		__this_cpu_write(fhook_fgraph_pending, NULL);
	}
	if (gp && !(f->flags & FHOOK_GF_NOTRACE) &&
	    (!gp->cfg.threshold_ns ||
	     fhook_clock_since(now, f->calltime) >= gp->cfg.threshold_ns))
		fhook_graph_rec_ret(gp, f, depth, retval, now, pc, irqs_off, leaf);
}

static const struct fhook_fgraph_ops fhook_graph_fgraph_ops = {
	.admit		= fhook_graph_admit,
	.missed		= fhook_graph_missed,
	.entry		= fhook_graph_entry,
	.ret		= fhook_graph_ret,
	.flush		= fhook_graph_put_pending,
};

/*
 * tramp.S's fhook_graph_return calls it: the frame popped, the mode's
 * return callback told (each mode's a direct call).  The pool stays the
 * same while any of its frames is on a stack.
 */
asmlinkage notrace unsigned long fhook_graph_exit(unsigned long sp, unsigned long retval)
{
	struct fhook_gpool *g = READ_ONCE(fhook_gpool);

	if (g && g->ops == &fhook_errors_fgraph_ops)
		return fhook_errors_exit(sp, retval);
	return fhook_fgraph_exit(&fhook_graph_fgraph_ops, sp, retval);
}

FHOOK_DEFINE_GRAPH_MODE(fhook_graph_calls_mode, &fhook_graph_fgraph_ops);

static int fhook_graph_copy(struct fhook_session *s, struct fhook_graph *cfg, u64 uptr)
{
	int ret;

	if (!uptr)
		return fhook_refuse(s, FHOOK_R_GRAPH_CFG, -1, -EINVAL);
	ret = fhook_copy_arg_min(cfg, sizeof(*cfg), FHOOK_GRAPH_SIZE_VER0, uptr);
	if (ret < 0)
		return fhook_refuse(s, FHOOK_R_GRAPH_CFG, -1, ret);
	if ((cfg->flags & ~FHOOK_GRAPH_FLAGS) || cfg->max_depth > FHOOK_GRAPH_MAX_DEPTH ||
	    cfg->max_tasks > FHOOK_GRAPH_MAX_TASKS ||
	    cfg->all_filter_len > FHOOK_MAX_PATTERN_TEXT || cfg->nr_all_ips > FHOOK_MAX_IPS ||
	    !cfg->all_filter != !cfg->all_filter_len || !cfg->all_ips != !cfg->nr_all_ips)
		return fhook_refuse(s, FHOOK_R_GRAPH_CFG, -1, -EINVAL);
	/* return types and the failure filter: only failures are judged by them */
	if (cfg->nr_zero_ips > FHOOK_MAX_IPS || cfg->nr_none_ips > FHOOK_MAX_IPS ||
	    cfg->nr_false_ips > FHOOK_MAX_IPS ||
	    !cfg->zero_ips != !cfg->nr_zero_ips || !cfg->none_ips != !cfg->nr_none_ips ||
	    !cfg->false_ips != !cfg->nr_false_ips ||
	    ((cfg->nr_zero_ips || cfg->nr_none_ips || cfg->nr_false_ips || cfg->fail_pred_len ||
	      (cfg->flags & (FHOOK_GRAPH_F_USTACK | FHOOK_GRAPH_F_CALLSITES))) &&
	     !(cfg->flags & FHOOK_GRAPH_F_ERRORS)))
		return fhook_refuse(s, FHOOK_R_GRAPH_CFG, -1, -EINVAL);
	return 0;
}

/*
 * The patterns of the user's text at @uptr (@len bytes, 0: none) to @set.
 * No "!" in a filter: negations alone would leave it empty, which is every
 * function, armed in one step.
 */
static int fhook_graph_patterns(struct fhook_probe *p, struct ftrace_ops *ops, u64 uptr,
				u32 len,
				int (*set)(struct ftrace_ops *ops, unsigned char *buf, int len,
					   int reset),
				s32 *index, s32 *err_index)
{
	char *text = fhook_copy_text(uptr, len);
	int ret;

	if (IS_ERR(text))
		return PTR_ERR(text);
	if (text && set == ftrace_set_filter && strchr(text, '!'))
		ret = fhook_refuse(p->session, FHOOK_R_GRAPH_CFG, -1, -EINVAL);
	else
		ret = text ? fhook_func_set_patterns(p, ops, text, set, index, err_index) : 0;
	kfree(text);
	return ret;
}

/*
 * "all" as userspace gave it: names in all_ops' filter (its notrace
 * patterns still apply), addresses in slices.  A name or address that is
 * not traceable fails the probe with ENOENT; *@err_index stays unset.
 * Addresses skip the notrace patterns (matching them for every slice
 * would cost a pass over every call site per slice): userspace leaves
 * those functions out, fhook's own are refused, and a notrace function
 * given anyway is pushed silently still, by notrace_ops' callback, which
 * ftrace calls before the slices' (registered after them, it is first
 * on its list).
 */
static int fhook_graph_all_given(struct fhook_graph_probe *gp)
{
	struct fhook_probe *p = &gp->f.p;
	s32 names = 0, unused = -1;
	u32 i;
	u64 *ips;
	int ret;

	ret = fhook_graph_patterns(p, &gp->all_ops, gp->cfg.all_filter, gp->cfg.all_filter_len,
				   ftrace_set_filter, &names, &unused);
	/* (no names, as blank text: an empty filter would trace everything) */
	gp->all_used = names > 0;
	if (ret || !gp->cfg.nr_all_ips)
		return ret;
	ret = fhook_filter_charge(p, gp->cfg.nr_all_ips);
	if (ret)
		return ret;
	ips = fhook_copy_array(gp->cfg.all_ips, gp->cfg.nr_all_ips, sizeof(u64));
	if (IS_ERR(ips))
		return PTR_ERR(ips);
	/* the graph never traces its own code, but for the hook API's */
	for (i = 0; i < gp->cfg.nr_all_ips; i++) {
		if (within_module(ips[i], THIS_MODULE) && !fhook_khook_traceable(ips[i])) {
			kvfree(ips);
			return fhook_refuse(p->session, FHOOK_R_SELF, i, -ELOOP);
		}
	}
	ret = fhook_slices_init(p, &gp->all_slices, &gp->all_ops, ips, gp->cfg.nr_all_ips, 0,
				NULL, &unused);
	kvfree(ips);
	return ret;
}

/*
 * The shadow stacks START makes, in fhook's budget: this user's share.
 * Taken at PROBE_ADD, and again at a START after a stop whose pool kept
 * the charge (calls still inside it: fhook_fgraph_stop()).
 */
static int fhook_graph_charge(struct fhook_graph_probe *gp)
{
	u64 pages = DIV_ROUND_UP((u64)(gp->cfg.max_tasks ?: FHOOK_GRAPH_DEF_TASKS) *
				 sizeof(struct fhook_gstack), PAGE_SIZE);
	int ret;

	if (gp->pool_pages)
		return 0;
	ret = fhook_mem_reserve(gp->f.p.session->user, pages);
	if (!ret)
		gp->pool_pages = pages;
	return ret;
}

static int fhook_graph_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			    s32 *err_index)
{
	struct fhook_graph_probe *gp = to_graph(p);
	struct fhook_probe_add entry = *arg;
	char own[] = "fhook_*";
	s32 index = 0, first;
	int ret;

	ret = fhook_graph_copy(p->session, &gp->cfg, arg->hook);
	if (ret)
		return ret;
	/*
	 * every frame's six (eight) argument registers, whatever its arity:
	 * what the callers left in those past it is the kernel's, as a
	 * register dump is (perf's under lockdown)
	 */
	if (gp->cfg.flags & FHOOK_GRAPH_F_ARGS) {
		ret = fhook_priv_require(p, FHOOK_PRIV_READ_KERNEL);
		if (ret)
			return ret;
	}
	ret = fhook_graph_charge(gp);
	if (ret)
		return ret;
	gp->mode = &fhook_graph_calls_mode;
	if (gp->cfg.flags & FHOOK_GRAPH_F_ERRORS) {
		ret = fhook_errors_init(gp);
		if (ret)
			return ret;
	}
	gp->f.ops.func = gp->mode->on_entry;
	gp->all_ops.func = gp->mode->on_all;
	gp->notrace_ops.func = gp->mode->on_notrace;
	/* the entry ops: the graph functions (exclude is set_graph_notrace here) */
	entry.exclude = 0;
	entry.exclude_len = 0;
	entry.hook = 0;
	ret = fhook_func_filter_init(&gp->f, &entry, err_index, NULL);
	if (ret)
		return ret;
	/*
	 * "all": every other function.  Not the graph functions given by
	 * pattern (one ops per function keeps the call on that ops' own
	 * trampoline, not ftrace's list function), not set_graph_notrace,
	 * not fhook's own functions.  (ftrace writes into what it parses.)
	 */
	ret = ftrace_set_notrace(&gp->all_ops, own, sizeof(own) - 1, 0);
	if (ret)
		return ret;
	/* (patterns entry took: they match; index counts them for err_index) */
	ret = fhook_graph_patterns(p, &gp->all_ops, arg->filter, arg->filter_len,
				   ftrace_set_notrace, &index, err_index);
	if (ret)
		return ret;
	gp->all_used = true;
	if (gp->cfg.all_filter_len || gp->cfg.nr_all_ips) {
		ret = fhook_graph_all_given(gp);
		if (ret)
			return ret;
	}
	if (!arg->exclude_len)
		return 0;
	/* set_graph_notrace: err_index after the filter's patterns and ips */
	index += arg->nr_ips;
	first = index;
	ret = fhook_graph_patterns(p, &gp->notrace_ops, arg->exclude, arg->exclude_len,
				   ftrace_set_filter, &index, err_index);
	if (ret)
		return ret;
	index = first;
	ret = fhook_graph_patterns(p, &gp->all_ops, arg->exclude, arg->exclude_len,
				   ftrace_set_notrace, &index, err_index);
	gp->has_notrace = !ret;
	return ret;
}

static void fhook_graph_unregister(struct fhook_graph_probe *gp)
{
	bool slices_gone;

	fhook_ops_unregister(&gp->f.p, &gp->f.ops);
	slices_gone = fhook_slices_unregister(&gp->f.p, &gp->all_slices);
	if (gp->all_registered && !unregister_ftrace_function(&gp->all_ops))
		gp->all_registered = false;
	if (gp->notrace_registered && !unregister_ftrace_function(&gp->notrace_ops))
		gp->notrace_registered = false;
	/*
	 * an ops ftrace kept still calls into the probe: the session keeps
	 * it all (fhook_session_stuck() looks at p->registered)
	 */
	if (!slices_gone || gp->all_registered || gp->notrace_registered)
		gp->f.p.registered = true;
}

static void fhook_graph_disarm(struct fhook_probe *p)
{
	struct fhook_graph_probe *gp = to_graph(p);

	if (!fhook_fgraph_is_user(gp))
		return;
	/* no new frames; then no handler writes to the session's rings */
	fhook_graph_unregister(gp);
	fhook_fgraph_detach();
	if (fhook_fgraph_stop(p->registered || gp->all_registered || gp->notrace_registered,
			      p->session->user, gp->pool_pages))
		gp->pool_pages = 0;	/* the pool's now */
}

static int fhook_graph_arm(struct fhook_probe *p)
{
	struct fhook_graph_probe *gp = to_graph(p);
	struct fhook_fgraph_cfg cfg = {
		.nr_stacks = gp->cfg.max_tasks ?: FHOOK_GRAPH_DEF_TASKS,
		.max_depth = gp->cfg.max_depth ?: FHOOK_GRAPH_MAX_DEPTH,
		/* a failing chain has no interrupt's calls in it */
		.no_irqs = gp->cfg.flags & (FHOOK_GRAPH_F_NO_IRQS | FHOOK_GRAPH_F_ERRORS),
	};
	int ret;

	ret = fhook_graph_charge(gp);
	if (ret)
		return ret;
	/* another call graph, armed or still draining: EBUSY */
	ret = fhook_fgraph_start(gp->mode->fgraph, gp, &cfg);
	if (ret)
		return ret;
	/*
	 * Callees first: a task entering the graph sees them at once.  At
	 * depth 1 no callee is ever traced: the graph functions' own ops is
	 * all it takes (the function_graph tracer hooks every function
	 * whatever max_graph_depth says, and pays for it on every call).
	 */
	if (cfg.max_depth > 1 && gp->all_used) {
		ret = register_ftrace_function(&gp->all_ops);
		if (ret)
			goto err_ops;
		gp->all_registered = true;
	}
	if (cfg.max_depth > 1) {
		ret = fhook_slices_register(&gp->all_slices);
		if (ret)
			goto err_ops;
	}
	if (gp->has_notrace && cfg.max_depth > 1) {
		ret = register_ftrace_function(&gp->notrace_ops);
		if (ret)
			goto err_ops;
		gp->notrace_registered = true;
	}
	ret = register_ftrace_function(&gp->f.ops);
	if (ret)
		goto err_ops;
	p->registered = true;
	return 0;

err_ops:
	/* frames may have been pushed by the ops registered so far */
	fhook_graph_disarm(p);
	return ret;
}

static void fhook_graph_release(struct fhook_probe *p)
{
	struct fhook_graph_probe *gp = to_graph(p);

	ftrace_free_filter(&gp->f.ops);
	ftrace_free_filter(&gp->all_ops);
	fhook_slices_release(&gp->all_slices);
	ftrace_free_filter(&gp->notrace_ops);
	kfree(p->pred);
	fhook_mem_unreserve(p->session->user, gp->pool_pages);
	if (gp->cfg.flags & FHOOK_GRAPH_F_ERRORS)
		fhook_errors_release(gp);
}

const struct fhook_probe_kind fhook_graph_kind = {
	.size		= sizeof(struct fhook_graph_probe),
	.fields		= FHOOK_ADD_PATTERNS | FHOOK_ADD_PRED | FHOOK_ADD_HOOK,
	.arm		= fhook_graph_arm,
	.init		= fhook_graph_init,
	.disarm		= fhook_graph_disarm,
	.release	= fhook_graph_release,
	.disarm_unregisters = true,
	.no_triggers	= true,
};
