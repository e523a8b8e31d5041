/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The return-trampoline mechanism (fgraph.c), as kernel/trace/fgraph.c is
 * to the function_graph tracer: per-task shadow stacks, the push at a
 * function's entry that puts fhook_graph_return (tramp.S) in place of its
 * return address, the pop when it returns there, and the teardown that
 * puts every pending return address back.  Its user (one at a time: the
 * call-graph tracer, probe_graph.c) registers the ftrace_ops whose
 * callbacks call fhook_fgraph_call(), and gets its callbacks (struct
 * fhook_fgraph_ops) with each frame as it is pushed and as it returns.
 */
#ifndef FHOOK_FGRAPH_H
#define FHOOK_FGRAPH_H

#include "fhook.h"

/* fhook_gframe.flags */
#define FHOOK_GF_NOTRACE	BIT(0)	/* pushed silently: no callbacks, no callees */
#define FHOOK_GF_RESTORED	BIT(1)	/* teardown put the return address back */

/* One call on a shadow stack. */
struct fhook_gframe {
	unsigned long *slot;		/* where the return address was */
	unsigned long ret;		/* ... and what it was */
	unsigned long func;
	unsigned long flags;
	/* the user's per-call data, set by its entry callback */
	u64 calltime;
	u32 data;
};

/*
 * fhook_gstack.own: its task (NULL: on the free list) | FHOOK_GS_ACTIVE,
 * set while the task is inside the graph (clear: kept between calls, no
 * frame).  The task part changes under the pool lock only.
 */
#define FHOOK_GS_ACTIVE		1UL

struct fhook_gstack {
	unsigned long own;
	unsigned int depth;		/* frames in use */
	unsigned int way;		/* its place in the bucket of its task */
	/* the user's: a frame it holds something back for, or -1 (set at entry) */
	int pending;
	struct fhook_gstack *next_free;
	struct fhook_gframe frames[FHOOK_GRAPH_MAX_DEPTH];
};

/*
 * What the user is told.  @user is what it gave fhook_fgraph_start(), NULL
 * once it detached.  All run on the task's CPU with preemption off and
 * the CPU's busy flag set (fhook_fgraph_busy: what they call is not
 * traced), never in NMI.
 */
struct fhook_fgraph_ops {
	/* current, outside the graph, enters it at @ip: may it? */
	bool (*admit)(void *user);
	/* current entered, but no shadow stack was left for it */
	void (*missed)(void *user);
	/*
	 * @f pushed at @depth of @gs (slot, ret, func set): its per-call data
	 * (calltime, data) is the callback's to set.  @pc and @irqs_off are
	 * the context of the call, @regs its registers at entry.
	 */
	void (*entry)(void *user, struct fhook_gstack *gs, struct fhook_gframe *f,
		      unsigned int depth, struct pt_regs *regs, unsigned int pc, bool irqs_off);
	/*
	 * @f (at @depth, frames above it dropped) returned @retval at @now;
	 * also with @user NULL (detached) and for FHOOK_GF_NOTRACE frames
	 */
	void (*ret)(void *user, struct fhook_gstack *gs, struct fhook_gframe *f,
		    unsigned int depth, unsigned long retval, u64 now, unsigned int pc,
		    bool irqs_off);
	/*
	 * Write what is held back for @gs (this CPU's fhook_fgraph_pending):
	 * something else is about to be recorded on this CPU, or the task
	 * leaves it (fhook_fgraph_flush())
	 */
	void (*flush)(void *user, struct fhook_gstack *gs);
};

struct fhook_fgraph_cfg {
	unsigned int nr_stacks;		/* tasks inside at once */
	unsigned int max_depth;		/* frames per task */
	bool no_irqs;			/* calls in hardirq context get no frame */
};

/* How fhook_fgraph_call() treats the call */
enum fhook_fgraph_mode {
	FHOOK_FG_ENTER,		/* a graph function: may enter the graph */
	FHOOK_FG_NESTED,	/* a frame only inside the graph */
	FHOOK_FG_NOTRACE,	/* inside the graph: a silent frame, no callees */
};

/*
 * Set while this CPU runs the mechanism or its user's callbacks: the
 * kernel functions they call are traced by the user's ops, and ftrace's
 * recursion lock lets one nested call through.
 */
DECLARE_PER_CPU(int, fhook_fgraph_busy);

int fhook_fgraph_start(const struct fhook_fgraph_ops *ops, void *user,
		       const struct fhook_fgraph_cfg *cfg);
bool fhook_fgraph_is_user(void *user);
void *fhook_fgraph_user(void);
void fhook_fgraph_detach(void);
void fhook_fgraph_stop(bool stuck);
void fhook_fgraph_call(unsigned long ip, unsigned long parent_ip, struct ftrace_regs *fregs,
		       enum fhook_fgraph_mode mode);

#endif
