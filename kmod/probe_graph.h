/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A call graph probe (probe_graph.c), shared with what it can run
 * instead of recording calls: failing call chains (graph_errors.c).
 */
#ifndef FHOOK_PROBE_GRAPH_H
#define FHOOK_PROBE_GRAPH_H

#include "fgraph.h"

/*
 * What a graph probe runs: the callbacks of its three ftrace_ops (see
 * probe_graph.c) and the fgraph callbacks they pass on to.  Call records
 * (probe_graph.c) or failing chains (graph_errors.c).
 */
struct fhook_graph_mode {
	ftrace_func_t on_entry;
	ftrace_func_t on_all;
	ftrace_func_t on_notrace;
	const struct fhook_fgraph_ops *fgraph;
};

/*
 * A mode @name: its three ftrace_ops callbacks, each fhook_fgraph_call()
 * with the mode's fgraph ops @fgops (a constant: its callbacks become
 * direct calls, inline where they are marked so).
 */
#define FHOOK_DEFINE_GRAPH_MODE(name, fgops)					\
static notrace void name##_entry(unsigned long ip, unsigned long parent_ip,	\
				 struct ftrace_ops *op, struct ftrace_regs *fregs)	\
{										\
	fhook_fgraph_call(fgops, ip, parent_ip, fregs, FHOOK_FG_ENTER);		\
}										\
static notrace void name##_all(unsigned long ip, unsigned long parent_ip,	\
			       struct ftrace_ops *op, struct ftrace_regs *fregs)	\
{										\
	fhook_fgraph_call(fgops, ip, parent_ip, fregs, FHOOK_FG_NESTED);	\
}										\
static notrace void name##_notrace(unsigned long ip, unsigned long parent_ip,	\
				   struct ftrace_ops *op, struct ftrace_regs *fregs) \
{										\
	fhook_fgraph_call(fgops, ip, parent_ip, fregs, FHOOK_FG_NOTRACE);	\
}										\
static const struct fhook_graph_mode name = {					\
	.on_entry	= name##_entry,						\
	.on_all		= name##_all,						\
	.on_notrace	= name##_notrace,					\
	.fgraph		= fgops,						\
}

struct fhook_errlog;

struct fhook_graph_probe {
	struct fhook_func_probe f;	/* first: the entry ops and the probe */
	const struct fhook_graph_mode *mode;
	/*
	 * "all": every traceable function but the graph's own and notrace
	 * ones, or the names (@all_ops) and addresses (@all_slices)
	 * userspace gave (cfg.all_filter, cfg.all_ips), armed in slices
	 */
	struct ftrace_ops all_ops;
	struct fhook_ops_slices all_slices;
	struct ftrace_ops notrace_ops;
	bool all_used;			/* all_ops has a filter, or none is given */
	bool all_registered;
	bool notrace_registered;
	bool has_notrace;
	struct fhook_graph cfg;
	u64 pool_pages;			/* fhook_mem_reserve()d for the shadow stacks */
	/* FHOOK_GRAPH_F_ERRORS: a log per shadow stack, and its reservation */
	struct fhook_errlog *errlogs;
	u64 errlog_pages;
	/*
	 * ... with FHOOK_GRAPH_F_ARGS, each log's arguments: its stack's
	 * frames' ([max depth]), then its entries' ([FHOOK_ERRORS_MAX_FRAMES]),
	 * errargs_stride words a log
	 */
	u64 *errargs;
	unsigned int errargs_stride;
	/* ... and the functions 0 is a failure of, and those that never fail */
	struct fhook_funcset zero_fails;
	struct fhook_funcset never_fail;
	struct fhook_funcset false_fails;
	struct fhook_pred *fail_pred;	/* what fails at depth 0 instead, or NULL */
};

static_assert(offsetof(struct fhook_graph_probe, f) == 0);

static inline struct fhook_graph_probe *to_graph(struct fhook_probe *p)
{
	return container_of(to_func(p), struct fhook_graph_probe, f);
}

/* fhook_gframe.data: the entry's hdr.flags and hdr.preempt */
static __always_inline u32 fhook_graph_ctx(unsigned int pc, bool irqs_off)
{
	return fhook_rec_ctx(pc, irqs_off) | (u32)fhook_rec_preempt(pc) << 8;
}

/* A task entering the graph: the session's filters and the predicate. */
static __always_inline notrace bool fhook_graph_admit(void *user)
{
	struct fhook_probe *p = &((struct fhook_graph_probe *)user)->f.p;

	if (fhook_session_wants(p->session) && (!p->pred || fhook_pred_run(p->pred, NULL, 0)))
		return true;
	fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->filtered);
	return false;
}

/* ... and no shadow stack was left for it */
static inline notrace void fhook_graph_missed(void *user)
{
	struct fhook_probe *p = &((struct fhook_graph_probe *)user)->f.p;

	fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->missed);
}

/* graph_errors.c: FHOOK_GRAPH_F_ERRORS */
extern const struct fhook_fgraph_ops fhook_errors_fgraph_ops;
int fhook_errors_init(struct fhook_graph_probe *gp);
void fhook_errors_release(struct fhook_graph_probe *gp);
unsigned long fhook_errors_exit(unsigned long sp, unsigned long retval);

#endif
