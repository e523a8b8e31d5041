/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook internal interfaces: one struct per concern, joined here.
 *
 *   main.c        misc device, file operations, module init/exit
 *   ioctl.c       the ioctls: one table row each (sizes, who may, feature)
 *   session.c     a session (one open file): its probes, arm/disarm, poll
 *   uarg.c        ioctl arguments and texts from userspace
 *   ring.c        per-CPU mmap'd rings: lockless reserve/commit, wakeups
 *   stats.c       per-CPU x per-probe counters, mmap'd read-only
 *   bench.c       FHOOK_IOC_BENCH, the transport benchmark's producer
 *   probe_func.c  function probes (ftrace_ops)
 *   probe_kprobe.c  kprobes and kretprobes, the handler shared with uprobes
 *   probe_uprobe.c  uprobes and uretprobes
 *   probe_tracepoint.c  tracepoints (trace events through perf kernel counters)
 *   probe_graph.c  call graphs: every call under a function, entry and return
 *   fgraph.c      the return trampoline's shadow stacks (fgraph.h), under call graphs
 *   probe_direct.c  function entry through our own direct-call trampolines
 *   latency.c     latency probes: direct trampolines timing the body, histograms
 *   hook.c        IPMODIFY hooks: return override, redirect, trace-around
 *   tramp.S       the trampolines (tramp.h: their slots and frame layout)
 *   text.c        FHOOK_IOC_READ_TEXT, kernel text for `fhook explain`
 *   priv.c        who may do what: capabilities and kernel lockdown
 *   btf.c         function prototypes from BTF for bodies run by trampolines
 *   modwatch.c    hooks and direct probes on a module that is unloaded
 *   fetch.c       fetch programs: verifier, interpreter, scratch buffers
 *   filter.c      predicate programs (filters): verifier, evaluation
 *   stack.c       stack traces recorded with events
 *   trigger.c     triggers: actions run by a probe's hits
 *   pidfilter.c   pid filter and fork/exit following (tracepoints)
 */
#ifndef FHOOK_H
#define FHOOK_H

#ifndef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#endif

#include <linux/types.h>
#include <linux/cpumask.h>
#include <linux/ftrace.h>
#include <linux/hardirq.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <asm/local.h>

#include <fhook_abi.h>

#include "compat.h"
#include "arch.h"
#include "clock.h"

/* from the top-level VERSION file (Kbuild) */
#ifndef FHOOK_VERSION
#error "FHOOK_VERSION not set: build with the Kbuild of kmod/"
#endif

/* Writers nested on one CPU (task, softirq, irq, NMI, plus slack). */
#define FHOOK_RING_MAX_NEST	8

struct fhook_session;

/* A task whose name a ring holds (fhook_ring_reserve()). */
#define FHOOK_COMM_SLOTS	64	/* by pid, direct-mapped */
struct fhook_comm_slot {
	u64 name[2];		/* its comm when written */
	u64 pos;		/* ring offset of the FHOOK_REC_COMM record */
	u32 pid;
	u32 tgid;
};

struct fhook_ring {
	struct fhook_ring_meta *meta;	/* page 0: producer state, user RO */
	struct fhook_ring_cons *cons;	/* page 1: consumer tail, user RW */
	void *data;			/* 2 * size bytes, second half aliases */
	void *base;			/* the vmap() of all of the above */
	struct page **pages;
	unsigned int nr_pages;		/* distinct pages: 2 + size/PAGE_SIZE */
	u64 size;
	u64 mask;
	u32 watermark;
	u32 wakeup_events;		/* 0: bytes only */
	bool overwrite;			/* FHOOK_RING_OVERWRITE */
	int cpu;
	/* reserved bytes; runs ahead of data_head while writers nest */
	local_t head;
	local_t nest;			/* writers active on this CPU */
	/* the outermost writer's fhook_ring_ctx(), 0: not a fast function hit */
	unsigned int fast_ctx;
	/* drops not yet reported in band: total, by probe, which probes */
	local_t lost_pending;
	local_t lost_probe[FHOOK_MAX_PROBES];
	unsigned long lost_mask;	/* bit id - 1: lost_probe[] non-zero */
	u64 lost_first;			/* seq of the first unreported drop */
	u64 lost_last;			/* ... and of the last one */
	u64 wake_tail;			/* data_tail at the last wakeup */
	struct irq_work work;
	struct fhook_session *session;
	struct fhook_comm_slot comms[FHOOK_COMM_SLOTS];
};

/* A verified fetch program (fetch.c). */
/* A field that is a register stored as it is (fhook_prog_run_regs()) */
struct fhook_reg_field {
	u16 reg;		/* offset in struct pt_regs */
	u16 dst;
	u8 size;
};

#define FHOOK_MAX_REG_FIELDS	8
struct fhook_prog {
	u32 len;
	u32 entry_len;		/* kretprobe: insns run at function entry */
	u32 data_size;		/* fixed data area */
	u32 entry_dyn;		/* most string bytes the entry part stores */
	u32 entry_fields;	/* fields the entry part stores */
	u32 max_dyn;		/* most string bytes the program stores */
	u32 nr_fields;
	bool reads_kernel;	/* DEREF, ST_MEM or ST_STRING: kernel memory */
	/* a kprobe's program of registers stored raw only: its fields, else 0 */
	u32 nr_reg_fields;
	struct fhook_reg_field reg_fields[FHOOK_MAX_REG_FIELDS];
	struct fhook_insn insns[];
};

/*
 * fhook_prog_run() for a program of nr_reg_fields: no memory is read, no
 * field can fault, no string is stored.
 */
static __always_inline void fhook_prog_run_regs(const struct fhook_prog *prog,
						const struct pt_regs *regs, u8 *data)
{
	u32 i;

	for (i = 0; i < prog->nr_reg_fields; i++) {
		const struct fhook_reg_field *f = &prog->reg_fields[i];
		unsigned long v = *(const unsigned long *)((const u8 *)regs + f->reg);

		/* the low bytes (little-endian); constant sizes: one store */
		switch (f->size) {
		case 1:
			memcpy(data + f->dst, &v, 1);
			break;
		case 2:
			memcpy(data + f->dst, &v, 2);
			break;
		case 4:
			memcpy(data + f->dst, &v, 4);
			break;
		default:
			memcpy(data + f->dst, &v, 8);
		}
	}
}

/* A verified predicate program (filter.c). */
struct fhook_pred {
	u32 len;
	struct fhook_insn insns[];
};

/* State of one run of a fetch program. */
struct fhook_fetch_ctx {
	struct pt_regs *regs;
	u8 *data;		/* fixed area, then strings */
	u32 dyn;		/* next free string byte, offset in data */
	u32 limit;		/* bytes of data usable */
	u64 faults;		/* bit per field */
	u32 field;		/* index of the next field */
	bool user;		/* uprobe: $stackN reads the user stack */
	bool may_fault;		/* uprobe: user memory read with page faults */
};

/* A fresh run of a fetch program on @regs into @data (@limit bytes). */
static __always_inline void fhook_fetch_ctx_init(struct fhook_fetch_ctx *ctx,
						 struct pt_regs *regs, u8 *data, u32 limit,
						 bool user)
{
	ctx->regs = regs;
	ctx->user = user;
	ctx->may_fault = false;
	ctx->data = data;
	ctx->limit = limit;
	ctx->faults = 0;
	ctx->field = 0;
}

struct fhook_probe;

/*
 * The groups of struct fhook_probe_add fields a kind of probe reads
 * (fhook_probe_kind.fields); PROBE_ADD refuses a non-zero field of any
 * other group, before the kind's init sees the argument.
 */
#define FHOOK_ADD_PATTERNS	(1U << 0)	/* filter, exclude, ips and lengths */
#define FHOOK_ADD_SYMBOL	(1U << 1)	/* symbol, symbol_len, offset */
#define FHOOK_ADD_ADDR		(1U << 2)	/* addr */
#define FHOOK_ADD_MAXACTIVE	(1U << 3)	/* maxactive */
#define FHOOK_ADD_PROG		(1U << 4)	/* prog, prog_len, entry_len, __pad */
#define FHOOK_ADD_DATA_SIZE	(1U << 5)	/* data_size */
#define FHOOK_ADD_PRED		(1U << 6)	/* pred, pred_len */
#define FHOOK_ADD_HOOK		(1U << 7)	/* hook */
#define FHOOK_ADD_STACK_ARGS	(1U << 8)	/* stack_args */

/*
 * What each kind of probe does, by enum fhook_probe_type.  PROBE_ADD
 * checks the argument against fields and flags, then validate (the kind's
 * own rules on it, optional), before anything is allocated; init runs at
 * PROBE_ADD (release undoes a failed init too), arm at START, disarm at
 * STOP or close, release when the probe is freed.
 */
struct fhook_probe_kind {
	/* bytes to allocate: the kind's struct embedding fhook_probe first */
	size_t size;
	u32 fields;			/* FHOOK_ADD_* it reads */
	u32 flags;			/* FHOOK_PROBE_F_* it accepts */
	u64 feature;			/* FHOOK_FEAT_* announcing it (0: every arch) */
	int (*validate)(struct fhook_session *s, const struct fhook_probe_add *arg);
	int (*init)(struct fhook_probe *p, const struct fhook_probe_add *arg, s32 *err_index);
	int (*arm)(struct fhook_probe *p);
	void (*disarm)(struct fhook_probe *p);
	void (*release)(struct fhook_probe *p);
	/* handlers run with preemption off: synchronize_rcu() after disarm */
	bool sync_rcu;
	/* runs no triggers and ignores ENABLE/DISABLE: TRIGGER_ADD refuses it */
	bool no_triggers;
	/*
	 * disarm unregisters (ftrace ops): still `registered` after it means
	 * unregistering failed (kprobes and uprobes unregister in release)
	 */
	bool disarm_unregisters;
	/* hooks, direct probes (modwatch.c): does it touch @mod; unregister */
	/*
	 * @globs: its glob filters count too (@mod may be in the ops' hash);
	 * its addresses always do
	 */
	bool (*in_module)(struct fhook_probe *p, struct module *mod, bool globs);
	void (*unhook)(struct fhook_probe *p);
	/*
	 * hits on @cpu not (yet) in the session's counters: a direct probe's
	 * fast path, a latency histogram; FHOOK_IOC_STATS adds them
	 */
	u64 (*hits_elsewhere)(struct fhook_probe *p, int cpu);
	/*
	 * FHOOK_IOC_LATENCY: add @cpu's histogram (every CPU's: < 0) to
	 * @out; false: the probe keeps none
	 */
	bool (*read_latency)(struct fhook_probe *p, int cpu, struct fhook_latency *out);
};

struct fhook_lat;

struct fhook_probe {
	struct list_head node;
	struct fhook_session *session;
	const struct fhook_probe_kind *kind;
	u32 id;
	u32 type;
	u32 priv;			/* FHOOK_PRIV_*: checked at add and START */
	bool registered;
	/* the kind's disarm_unregisters, or init's choice for this probe */
	bool disarm_unregisters;
	bool count_only;		/* FHOOK_PROBE_F_COUNT */
	struct list_head watch_node;	/* hooks, direct probes (modwatch.c) */
	bool gone;			/* a module it touched was unloaded */
	u64 watch_loads;		/* modules loaded when it was added */
	bool enabled;			/* kprobes: armed (enable_kprobe) */
	bool stack;			/* FHOOK_PROBE_F_STACK */
	/*
	 * uprobes: user memory read with page faults (added by CAP_SYS_ADMIN);
	 * else with none, as non-sleepable BPF reads it: a fault that never
	 * completes (a FUSE page) would hold the uprobe's locks (6.12: an RCU
	 * Tasks Trace read section every uprobe unregister waits for)
	 */
	bool user_faults;
	/* FHOOK_PROBE_F_WAKEUP_CPU: any task's hits, not the session's filters' */
	bool any_task;
	bool paused;			/* a DISABLE trigger ran: hits are filtered */
	bool fnrec;			/* function probes: fhook_fnrec() (set at arm) */
	/*
	 * kprobes the assembly recorder writes (fhook_fnk_ok(), at arm):
	 * word0, the record's size and type as its first 4 bytes; nr fields,
	 * field i the register at offset regs[i] of its saved frame
	 */
	struct {
		u32 word0;
		u32 nr;
		u8 regs[FHOOK_FN_KPROBE_MAX_FIELDS];
	} fnk;
	u32 nr_triggers;
	struct fhook_trigger_k *triggers[FHOOK_MAX_TRIGGERS];
	struct fhook_prog *prog;	/* kprobes: what to record */
	struct fhook_pred *pred;	/* filter, NULL: record every hit */
	u32 data_size;			/* without a program: the record's fixed bytes */
	u32 max_record;			/* without a program: its largest record, 0: small */
	char *symbol;			/* kprobes: the symbol probed */
	struct fhook_hist *hist;	/* FHOOK_IOC_HIST_SET: hits go there, not to the ring */
	struct fhook_lat *lat;		/* latency probes (direct, latency.c): no records */
	u64 filter_pages;		/* fhook_mem_reserve()d for ftrace's filter hashes */
};

/*
 * A function probe (FHOOK_PROBE_FUNC): an ftrace_ops whose filter holds
 * the probe's globs and addresses.  Direct probes (probe_direct.c) embed
 * one: its filter names their functions to the direct-call API.
 */
/*
 * Addresses armed FHOOK_ARM_SLICE at a time (probe_func.c): an ftrace_ops
 * per slice, each with the callback and private of the ops they extend,
 * registered one after the other with a reschedule in between.  ftrace
 * patches every site of one registration without yielding the CPU.
 */
struct fhook_ops_slices {
	struct fhook_func_slice *slice;
	u32 nr;
};

int fhook_slices_init(struct fhook_probe *p, struct fhook_ops_slices *s,
		      const struct ftrace_ops *like, u64 *ips, u32 nr, s32 index,
		      const char *exclude, s32 *err_index);
int fhook_slices_register(struct fhook_ops_slices *s);
bool fhook_slices_unregister(struct fhook_probe *p, struct fhook_ops_slices *s);
void fhook_slices_release(struct fhook_ops_slices *s);

struct fhook_func_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct ftrace_ops ops;
	struct fhook_func_counts *counts;	/* FHOOK_PROBE_F_COUNT_IPS */
	/*
	 * More than FHOOK_ARM_SLICE addresses (a glob userspace expanded):
	 * @ops has the patterns and the first slice, @slices the others.
	 * Every ops' private is the probe.  Function probes only:
	 * slices_ok is set before fhook_func_filter_init().
	 */
	struct fhook_ops_slices slices;
	bool slices_ok;
};

static_assert(offsetof(struct fhook_func_probe, p) == 0);

static inline struct fhook_func_probe *to_func(struct fhook_probe *p)
{
	return container_of(p, struct fhook_func_probe, p);
}

/* What a direct probe hooks, kept for module unloads (modwatch.c). */
struct fhook_func_targets {
	char *filter_text;		/* globs, or NULL */
	char *exclude_text;
	u64 *ips;
	u32 nr_ips;
};

struct fhook_session {
	struct mutex lock;		/* serialises ioctls */
	/* why the ioctl in progress refuses (fhook_refuse()), then the last refused */
	u32 why;			/* enum fhook_reason */
	s32 why_index;
	struct fhook_last_error last_error;
	struct list_head probes;
	unsigned int nr_probes;
	u32 next_probe_id;
	bool armed;
	bool changes_kernel;		/* holds a FHOOK_PRIV_CHANGE probe */
	bool observer_mapped;		/* mmap'd by a caller without CAP_SYS_ADMIN */
	struct fhook_user *user;	/* who opened it: its share (priv.c), NULL: exempt */
	bool frozen;			/* FHOOK_SNAPSHOT_FREEZE */
	bool traced_off;		/* a TRACEOFF trigger ran */
	bool snapshot_due;		/* a SNAPSHOT trigger ran, not read yet */
	atomic_t benches;		/* FHOOK_IOC_BENCH loops running */

	/* counters, mmap'd read-only (struct fhook_stats_area) */
	struct fhook_stats_area *stats;
	struct page **stats_pages;
	struct fhook_probe_counters *counters;	/* [nr_cpu_ids][MAX_PROBES] */

	/* rings, set up once by FHOOK_IOC_RING_SETUP */
	struct fhook_ring **rings;	/* [nr_cpu_ids], NULL if not possible */
	u64 buf_size;
	u32 watermark;
	u32 ring_flags;			/* FHOOK_RING_* */
	wait_queue_head_t waitq;

	/* flush timer: bounded latency for data below the watermarks */
	struct timer_list flush_timer;
	unsigned long flush_jiffies;
	bool flush_on;			/* the timer may re-arm itself */
	bool flush_due;			/* poll: readable if anything pending */

	/* filters read by the probe hot paths */
	bool cpu_filter;
	cpumask_var_t cpus;
	bool pid_filter;
	pid_t ignore_tgid;		/* 0: none */
	bool follow_fork;
	bool fork_tp_registered;
	unsigned long *pids;		/* bitmap, PID_MAX_LIMIT bits */
	/*
	 * the CPU the wakeup tracer's tracked task is queued on, -1: none
	 * (FHOOK_PROBE_F_WAKEUP_CPU); written under its lock at each tracked
	 * wakeup, read without: not on the line of the filters every hit reads
	 */
	int wakeup_cpu ____cacheline_aligned_in_smp;
};

/* Counters of probe @id (1..FHOOK_MAX_PROBES) on @cpu. */
static __always_inline struct fhook_probe_counters *
fhook_counters(struct fhook_session *s, int cpu, u32 id)
{
	return &s->counters[cpu * FHOOK_MAX_PROBES + id - 1];
}

/*
 * One unlocked increment: the counter belongs to this CPU and an inc is a
 * single instruction, so irq and NMI writers cannot tear it (local_t).
 */
static __always_inline void fhook_count(u64 *ctr)
{
	BUILD_BUG_ON(sizeof(local_t) != sizeof(u64));
	local_inc((local_t *)ctr);
}

/* main.c */
extern atomic_t fhook_nr_sessions;

/* ioctl.c */
long fhook_session_ioctl(struct fhook_session *s, unsigned int cmd, unsigned long arg);

/*
 * The ioctl in progress refuses with @err for @reason (enum fhook_reason),
 * about its field, pattern or instruction @index (or -1): what
 * FHOOK_IOC_LAST_ERROR tells the caller after it.  Returns @err.
 */
static inline int fhook_refuse(struct fhook_session *s, u32 reason, s32 index, int err)
{
	WRITE_ONCE(s->why, reason);
	WRITE_ONCE(s->why_index, index);
	return err;
}

/* session.c */
struct fhook_session *fhook_session_create(struct fhook_user *user);
void fhook_session_destroy(struct fhook_session *s);
int fhook_session_start(struct fhook_session *s);
void fhook_session_stop(struct fhook_session *s);
void fhook_probe_free(struct fhook_probe *p);
__poll_t fhook_session_poll(struct fhook_session *s, struct file *file, poll_table *wait);

/* The probe @id of @s, or NULL; under the session lock. */
static inline struct fhook_probe *fhook_probe_find(struct fhook_session *s, u32 id)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node)
		if (p->id == id)
			return p;
	return NULL;
}

/* uarg.c */
int fhook_copy_arg_min(void *karg, size_t ksize, size_t minsize, unsigned long uarg);
char *fhook_copy_text(u64 uptr, u32 len);
void *fhook_copy_array(u64 uptr, u32 n, size_t size);

/* ring.c */
struct fhook_user;
int fhook_mem_reserve(struct fhook_user *u, u64 pages);
void fhook_mem_unreserve(struct fhook_user *u, u64 pages);
int fhook_rings_alloc(struct fhook_session *s, const struct fhook_ring_setup *rs);
void fhook_rings_free(struct fhook_session *s);
int fhook_rings_mmap(struct fhook_session *s, struct vm_area_struct *vma);
bool fhook_rings_readable(struct fhook_session *s, bool any);
int fhook_rings_freeze(struct fhook_session *s);

/* bench.c */
long fhook_bench_run(struct fhook_session *s, struct fhook_bench *b);

/* stats.c */
int fhook_stats_alloc(struct fhook_session *s);
void fhook_stats_free(struct fhook_session *s);
void fhook_stats_elsewhere(struct fhook_session *s, u32 id, bool elsewhere);
int fhook_stats_mmap(struct fhook_session *s, struct vm_area_struct *vma);
void fhook_stats_sum(struct fhook_session *s, int cpu, u32 id, struct fhook_cpu_stats *sum);

extern const struct fhook_probe_kind fhook_func_kind, fhook_kprobe_kind, fhook_uprobe_kind,
	fhook_tp_kind, fhook_direct_kind, fhook_hook_kind, fhook_graph_kind, fhook_wakeup_kind,
	fhook_timerlat_kind, fhook_hwlat_kind, fhook_osnoise_kind, fhook_irqsoff_kind;

/* probe_func.c */
int fhook_func_filter_init(struct fhook_func_probe *f, const struct fhook_probe_add *arg,
			   s32 *err_index, struct fhook_func_targets *keep);
void fhook_func_hit_full(struct fhook_probe *p, unsigned long ip, unsigned long parent_ip);
bool fhook_ops_unregister(struct fhook_probe *p, struct ftrace_ops *ops);
int fhook_filter_charge(struct fhook_probe *p, u64 entries);
int fhook_func_set_patterns(struct fhook_probe *p, struct ftrace_ops *ops, char *text,
			    int (*set)(struct ftrace_ops *ops, unsigned char *buf, int len, int reset),
			    s32 *index, s32 *err_index);

/* fnrec.c */
bool fhook_fnrec_ok(const struct fhook_probe *p);
bool fhook_fnrec_asm_ok(const struct fhook_probe *p);
void fhook_fnrec(struct fhook_probe *p, unsigned long ip, unsigned long parent_ip);
/* the preempt count's bits in an FHOOK_REC_FN context */
#define FHOOK_FN_CTX_PC_MASK	(FHOOK_FN_CTX_PREEMPT_MASK | FHOOK_FN_CTX_SOFTIRQ_MASK |	\
				 FHOOK_FN_CTX_HARDIRQ_MASK | FHOOK_FN_CTX_NMI_MASK)
/* fhook_fnrec_finish()'s flags in @ctx, beside the FHOOK_FN_CTX_* bits */
#define FHOOK_FNREC_FUNC	(1U << 31)	/* an FN record was ruled out */
#define FHOOK_FNREC_DROP	(1U << 30)	/* no room: a drop */
asmlinkage void fhook_fnrec_finish(struct fhook_probe *p, struct fhook_ring *rb, u64 nr,
				   unsigned long ip, unsigned long parent_ip, u32 ctx, u64 ts);
asmlinkage void fhook_fnrec_frozen(struct fhook_probe *p, struct fhook_ring *rb, u32 ctx);
bool fhook_fnk_ok(struct fhook_probe *p);
struct fhook_fnrec_frame;
asmlinkage void fhook_fnk_finish(struct fhook_probe *p, struct fhook_ring *rb, u64 nr, u32 ctx,
				 u64 ts, const struct fhook_fnrec_frame *f);
asmlinkage void fhook_fnk_c(struct fhook_probe *p, struct pt_regs *regs, unsigned long ret,
			    unsigned long parent);
asmlinkage void fhook_fnrec_wake(struct fhook_ring *rb, u64 tail, u32 ctx);

/*
 * A function entry to record: the ftrace_ops callbacks' and the direct
 * recording trampoline's.  The common case (fnrec.c) when the probe may
 * take it.
 */
static __always_inline void fhook_func_hit(struct fhook_probe *p, unsigned long ip,
					   unsigned long parent_ip)
{
	if (p->fnrec)
		fhook_fnrec(p, ip, parent_ip);
	else
		fhook_func_hit_full(p, ip, parent_ip);
}

/* probe_graph.c, on fgraph.h's fhook_fgraph_exit() */
asmlinkage unsigned long fhook_graph_exit(unsigned long sp, unsigned long retval);

/* fgraph.c */
int fhook_fgraph_setup(void);
void fhook_fgraph_teardown(void);
/* hist.c: histograms kept in the module */
struct fhook_hist;
int fhook_hist_set(struct fhook_session *s, const struct fhook_hist_set *hs);
int fhook_hist_read(struct fhook_session *s, struct fhook_hist_read *hr);
void fhook_hist_add(struct fhook_hist *h, const void *data, u32 len, u64 faults,
		    unsigned long ip, unsigned long parent_ip, struct pt_regs *regs);
void fhook_hist_free(struct fhook_hist *h);

/*
 * The shadow stack whose user holds a record back on this CPU (a call
 * graph's entry, fgraph.h), and what writes it before any other record
 */
struct fhook_gstack;
DECLARE_PER_CPU(struct fhook_gstack *, fhook_fgraph_pending);
void fhook_fgraph_flush(void);
void fhook_probe_count(struct fhook_probe *p);
void fhook_probe_count_guarded(struct fhook_probe *p, unsigned long ip, unsigned long parent_ip);
bool fhook_probe_filter_guarded(struct fhook_probe *p, unsigned long ip, unsigned long parent_ip);

int fhook_func_counts_ioc(struct fhook_session *s, struct fhook_counts *arg);

/* funcset.c: functions by address, found by an ftrace callback's ip */
struct fhook_funcset {
	u32 nr;
	u32 bloom_bits;
	u64 *ips;			/* [nr], ascending */
	unsigned long *bloom;		/* fhook_funcset_filter(): 2^bloom_bits bits */
};

void fhook_funcset_take(struct fhook_funcset *set, u64 *ips, u32 nr);
int fhook_funcset_filter(struct fhook_funcset *set);
void fhook_funcset_free(struct fhook_funcset *set);
s32 fhook_funcset_find(const struct fhook_funcset *set, unsigned long ip);

/* Is @ip of a function in @set?  Most misses answered inline by the bitmap */
static __always_inline bool fhook_funcset_has(const struct fhook_funcset *set, unsigned long ip)
{
	if (!set->nr ||
	    (set->bloom && !test_bit(hash_64(ip >> 4, set->bloom_bits), set->bloom)))
		return false;
	return fhook_funcset_find(set, ip) >= 0;
}

/* func_counts.c */
struct fhook_func_counts *fhook_func_counts_create(u64 *ips, u32 nr);
void fhook_func_counts_free(struct fhook_func_counts *fc);
void fhook_func_counts_hit(struct fhook_func_counts *fc, unsigned long ip);
int fhook_func_counts_read(struct fhook_func_counts *fc, struct fhook_counts *arg);

/* probe_direct.c: the C side of tramp.S */
asmlinkage void fhook_direct_count(unsigned long slot);
asmlinkage void fhook_direct_record(unsigned long slot, unsigned long ret, unsigned long parent);
int fhook_direct_modify_ioc(struct fhook_session *s, const struct fhook_direct_modify *m);
bool fhook_direct_fast_armed(struct fhook_session *s);
extern bool fhook_lab;

/* latency.c */
struct fhook_lat_frame;
asmlinkage void fhook_lat_enter(struct fhook_lat_frame *f);
asmlinkage void fhook_lat_exit(struct fhook_lat_frame *f);
struct fhook_lat *fhook_lat_create(struct fhook_probe *p, int slot, u32 stack_args);
void fhook_lat_arm(struct fhook_lat *l, bool unfiltered);
void fhook_lat_release(struct fhook_lat *l, int slot);
u64 fhook_lat_hits(struct fhook_lat *l, int cpu);
void fhook_lat_read(struct fhook_lat *l, int cpu, struct fhook_latency *out);
void fhook_lat_setup(void);
void fhook_lat_exit_module(void);
void fhook_hooks_init(void);
bool fhook_hook_owner(unsigned long fentry, char *buf, size_t len);

/* around.c: the around trampoline's slots (hook.c, khook.c) */
struct fhook_around;

/*
 * The frames of trampolines that run a function's body, which a task may
 * die inside (frames.c), by kind; found by fhook_arch_body_frames().
 */
enum fhook_frame_kind_id {
	FHOOK_FRAME_NONE = -1,		/* another function's */
	FHOOK_FRAME_AROUND,
	FHOOK_FRAME_LAT,
};

struct fhook_frame_kind {
	/* its task exits inside the call: count it out */
	void (*abandon)(void *frame);
};

extern const struct fhook_frame_kind fhook_around_frame_kind, fhook_lat_frame_kind;

bool fhook_arch_body_frames(bool (*fn)(int kind, unsigned long ip, void *frame, void *arg),
			    void *arg);
unsigned long fhook_fgraph_ret_addr(unsigned long key);
bool fhook_symbol_start(unsigned long ip);
bool fhook_frames_walk(enum fhook_frame_kind_id kind, void (*fn)(void *frame, void *arg),
		       void *arg);
void fhook_frames_get(void);
void fhook_frames_put(void);
int fhook_frames_init(void);
void fhook_frames_exit(void);

/* What the around trampoline keeps on its stack (tramp.h). */
struct fhook_around_frame {
	struct pt_regs regs;	/* argument registers saved by tramp.S */
	u64 slot;
	u64 target;
	u64 stack[FHOOK_HOOK_MAX_STACK_ARGS];	/* pushed for the target by tramp.S */
	u64 ts;			/* entry time */
	u64 faults;
	u32 dyn;
	u32 record;		/* this call is traced (set by ops->enter) */
	u8 data[FHOOK_HOOK_AROUND_DATA];
	u64 owner;		/* @a */
	u64 pad;
};

struct fhook_around_ops {
	/* before the target runs, with regs as at the function's entry */
	void (*enter)(struct fhook_around *a, struct fhook_around_frame *f);
	/* after it returned, its return value in regs.ax */
	void (*exit)(struct fhook_around *a, struct fhook_around_frame *f);
	/* the slot is free and no call can reach @a any more */
	void (*free)(struct fhook_around *a);
	/*
	 * fhook_around_wait() from inside a call of @a (NULL: never): from
	 * now on enter and exit call none of the waiter's code
	 */
	void (*detach)(struct fhook_around *a);
};

struct fhook_around {
	const struct fhook_around_ops *ops;
	unsigned long target;		/* where calls go: the body or a replacement */
	u32 stack_args;			/* the caller's stack words copied for it */
	int slot;
	atomic_long_t inflight;		/* calls inside the trampoline */
	struct list_head drain_node;
};

int fhook_around_add(struct fhook_around *a, const struct fhook_around_ops *ops,
		     unsigned long target, u32 stack_args, bool module);
u32 fhook_around_used(void);
u32 fhook_direct_used(void);
int fhook_direct_slot_take(struct fhook_probe *p);
void fhook_direct_slot_give(struct fhook_probe *p, int slot);
int fhook_around_set_body(struct fhook_around *a, unsigned long func);
unsigned long fhook_around_orig(struct fhook_around *a);
extern unsigned long fhook_around_bodies[];

/* From the ops callback: is @ip the fentry site of @a's function? */
static __always_inline bool fhook_around_at(const struct fhook_around *a, unsigned long ip)
{
	return ip + MCOUNT_INSN_SIZE == READ_ONCE(fhook_around_bodies[a->slot]);
}

asmlinkage void fhook_around_enter(struct fhook_around_frame *f);
asmlinkage void fhook_around_exit(struct fhook_around_frame *f);
void fhook_around_wait(struct fhook_around *a, const char *what);
void fhook_around_release(struct fhook_around *a, bool reached);
void fhook_around_let_go(struct fhook_around *a);
void fhook_around_init(void);
void fhook_around_exit_module(void);

/* khook.c: hooks of other modules (include/fhook/khook.h) */
int fhook_khook_init(void);
void fhook_khook_exit(void);
long fhook_khook_list(struct fhook_khooks *arg);
bool fhook_khook_traceable(unsigned long ip);

/* modwatch.c */
int fhook_modwatch_init(void);
void fhook_modwatch_exit(void);
void fhook_modwatch_lock(void);
void fhook_modwatch_unlock(void);
u64 fhook_modwatch_gen(void);
int fhook_modwatch_add(struct fhook_probe *p, u64 gen);
void fhook_modwatch_del(struct fhook_probe *p);
int fhook_modwatch_arm(struct fhook_probe *p, int (*arm)(struct fhook_probe *p));
void fhook_modwatch_unhook(struct fhook_probe *p, void (*unhook)(struct fhook_probe *p));
bool fhook_module_matches(struct module *mod, const char *filter, const char *exclude);
bool fhook_globs_match(const char *text, const char *name);

/* priv.c: what a probe needs beyond opening the device */
#define FHOOK_PRIV_CHANGE	BIT(0)	/* changes kernel behaviour */
#define FHOOK_PRIV_KPROBE	BIT(1)	/* kprobes */
#define FHOOK_PRIV_READ_KERNEL	BIT(2)	/* reads kernel memory it chooses */
#define FHOOK_PRIV_ADMIN	BIT(3)	/* runs threads of its own: CAP_SYS_ADMIN */
int fhook_priv_check(u32 needs);
int fhook_priv_require(struct fhook_probe *p, u32 needs);
int fhook_session_may(struct fhook_session *s);
extern unsigned int fhook_max_user_sessions, fhook_max_user_slots, fhook_max_user_mem_pct;
int fhook_user_session_get(struct fhook_user **user);
void fhook_user_session_put(struct fhook_user *u);
int fhook_user_mem_charge(struct fhook_user *u, u64 pages, u64 budget);
void fhook_user_mem_uncharge(struct fhook_user *u, u64 pages);

/* Trampoline slots a user's sessions hold, by kind (priv.c) */
enum fhook_user_slot {
	FHOOK_USER_SLOT_DIRECT,
	FHOOK_USER_SLOT_AROUND,
	FHOOK_USER_SLOT_KINDS,
};

int fhook_user_slot_take(struct fhook_user *u, enum fhook_user_slot kind);
void fhook_user_slot_give(struct fhook_user *u, enum fhook_user_slot kind);
int fhook_session_may_map(struct fhook_session *s);
int fhook_priv_may_change(struct fhook_session *s);

/* btf.c */
int fhook_body_stack_words(const u64 *ips, u32 n, u32 *words, s32 *bad);

/* text.c */
long fhook_read_text(const struct fhook_read_text *rt);

/* symbols.c */
bool fhook_symbol_of(unsigned long addr, char *buf, unsigned long *off,
		     unsigned long *size, const char **module);
long fhook_symbols(const struct fhook_symbols *sy);

/* fetch.c */
int fhook_fetch_init(void);
void fhook_fetch_exit(void);
struct fhook_prog *fhook_prog_load(struct fhook_probe *p, const struct fhook_probe_add *pa,
				   bool ret_probe, bool user, s32 *err_index);
bool fhook_prog_needs_all_regs(const struct fhook_prog *prog);
void fhook_prog_run(const struct fhook_prog *prog, u32 from, u32 to, struct fhook_fetch_ctx *c);
struct fhook_rec_probe *fhook_scratch_get(void);
void fhook_scratch_put(void);
struct fhook_ubuf;
struct fhook_ubuf *fhook_ubuf_get(struct fhook_rec_probe **rec);
void fhook_ubuf_put(struct fhook_ubuf *u, struct fhook_rec_probe *rec);

/* trigger.c */
#define FHOOK_TRIGGERED_STACK	1U
struct fhook_trigger_k;
int fhook_trigger_add(struct fhook_session *s, const struct fhook_trigger *arg);
void fhook_triggers_free(struct fhook_probe *p);
bool fhook_trigger_targets(struct fhook_session *s, struct fhook_probe *p);
void fhook_triggers_reset(struct fhook_probe *p);
unsigned int fhook_triggers_run(struct fhook_probe *p, struct fhook_ring *rb, const u8 *data,
				u32 len);

/* filter.c */
struct fhook_pred *fhook_pred_copy(u64 uptr, u32 len, u32 data_size, s32 *err_index);
struct fhook_pred *fhook_pred_load(struct fhook_probe *p, const struct fhook_probe_add *pa,
				   u32 data_size, s32 *err_index);
bool fhook_pred_run(const struct fhook_pred *pred, const u8 *data, u32 len);

/* probe_tracepoint.c */
int fhook_tp_setup(void);
void fhook_tp_teardown(void);

/* probe_kprobe.c */
struct fhook_kret_entry;
void fhook_probe_emit(struct fhook_probe *p, u16 type, struct pt_regs *regs, unsigned long ip,
		      unsigned long ret_ip, const struct fhook_kret_entry *entry, unsigned int pc);
void fhook_probe_emit_regs(struct fhook_probe *p, struct pt_regs *regs, unsigned long ip,
			   unsigned int pc);
void fhook_probe_emit_user(struct fhook_probe *p, u16 type, struct pt_regs *regs,
			   unsigned long ip, unsigned long ret_ip);
unsigned long fhook_kprobe_nmissed(struct fhook_probe *p);
u64 fhook_kprobe_addr(struct fhook_probe *p);
int fhook_kprobe_check_text(unsigned long addr, unsigned long *probed);

/* stack.c */
unsigned int fhook_stack_kernel(struct pt_regs *regs, u64 *store, unsigned int max);
unsigned int fhook_stack_func(u64 *store, unsigned int max, unsigned long ip,
			      unsigned long parent_ip);
unsigned int fhook_stack_user(struct pt_regs *regs, u64 *store, unsigned int max);

/*
 * Append the trailer of FHOOK_CTX_STACK: @n entries already at @ips, then
 * n.  Returns the bytes the trailer takes.
 */
static __always_inline unsigned int fhook_stack_trailer(u64 *ips, unsigned int n)
{
	ips[n] = n;
	return 8 * (n + 1);
}

/*
 * For a body run from one of our trampolines (trace-around, latency): the
 * caller's first @n stack words (its 7th argument on) into @dst, zeros up
 * to FHOOK_HOOK_MAX_STACK_ARGS, so nothing of ours reaches the body.  Read
 * with fault handling: above a function called at the top of an IRQ stack
 * is the guard page (the words from a fault on are zeros).
 */
static __always_inline void fhook_stack_args_copy(u64 *dst, const u64 *src, u32 n)
{
	u32 i = 0;

	if (likely(!n)) {
		memset(dst, 0, FHOOK_HOOK_MAX_STACK_ARGS * sizeof(u64));
		return;
	}
	pagefault_disable();
	for (; i < n; i++)
		__get_kernel_nofault(&dst[i], &src[i], u64, fault);
fault:
	pagefault_enable();
	for (; i < FHOOK_HOOK_MAX_STACK_ARGS; i++)
		dst[i] = 0;
}

/* tracepoints.c */
struct tracepoint *fhook_tracepoint(const char *name);

/* wakeup.c, hwlat.c, osnoise.c, irqsoff.c */
void fhook_wakeup_setup(void);
void fhook_hwlat_setup(void);
void fhook_osnoise_setup(void);
void fhook_irqsoff_setup(void);
void fhook_irqsoff_exit(void);
u64 fhook_irqsoff_features(void);

/* cputhreads.c: a kernel thread per CPU of a set, kept across CPU hotplug */
struct fhook_cpu_threads {
	/* set before start: each thread runs fn(arg(set, its CPU)), named name */
	int (*fn)(void *data);
	void *(*arg)(struct fhook_cpu_threads *ct, unsigned int cpu);
	const char *name;		/* with one %u: the CPU */
	/* the CPUs to run on, and the threads running (referenced) */
	cpumask_var_t mask;
	struct task_struct **threads;	/* [nr_cpu_ids] */
	struct hlist_node hp_node;	/* in the hotplug state's instances */
	bool started;
};

int fhook_cpu_threads_alloc(struct fhook_cpu_threads *ct);
void fhook_cpu_threads_free(struct fhook_cpu_threads *ct);
int fhook_cpu_threads_start(struct fhook_cpu_threads *ct, const struct cpumask *cpus);
void fhook_cpu_threads_stop(struct fhook_cpu_threads *ct);
void fhook_cpu_threads_setup(void);
void fhook_cpu_threads_exit(void);

/* pidfilter.c */
int fhook_pidfilter_init(void);
int fhook_pidfilter_set(struct fhook_session *s, const struct fhook_pid_filter *arg);
void fhook_pidfilter_release(struct fhook_session *s);

/*
 * The session's filters for task @t on @cpu: its CPU set, its pid set,
 * not its own process.  Called with preemption disabled.
 */
static __always_inline bool fhook_session_wants_task(struct fhook_session *s,
						     struct task_struct *t, int cpu)
{
	if (READ_ONCE(s->cpu_filter) && !cpumask_test_cpu(cpu, s->cpus))
		return false;
	if (unlikely(READ_ONCE(s->ignore_tgid) == t->tgid) && t->tgid)
		return false;	/* (0: none; the idle tasks' tgid is 0 too) */
	/* pairs with the release in fhook_pidfilter_set(): bitmap ready */
	if (smp_load_acquire(&s->pid_filter) &&
	    !test_bit(t->pid, s->pids) && !test_bit(t->tgid, s->pids))
		return false;
	return true;
}

/*
 * Filters applied by every probe before it counts a hit: the task that
 * hit it, here.  Called with preemption disabled.
 */
static __always_inline bool fhook_session_wants(struct fhook_session *s)
{
	return fhook_session_wants_task(s, current, raw_smp_processor_id());
}

/*
 * The context of a record made now (its hdr.flags), with @pc and
 * @irqs_off sampled at probe entry, before the probe's own recursion
 * guard raised the preempt count.
 */
static __always_inline u8 fhook_rec_ctx(unsigned int pc, bool irqs_off)
{
	u8 flags = 0;

	if (irqs_off)
		flags |= FHOOK_CTX_IRQS_OFF;
	if (tif_need_resched())
		flags |= FHOOK_CTX_NEED_RESCHED;
	if (test_preempt_need_resched())
		flags |= FHOOK_CTX_PREEMPT_RESCHED;
	if (pc & HARDIRQ_MASK)
		flags |= FHOOK_CTX_HARDIRQ;
	/*
	 * as tracing_gen_ctx_irq_test(): serving, and disabled on top of it;
	 * from softirq_count(), not @pc: PREEMPT_RT counts it in the task
	 * (softirq_disable_cnt), elsewhere it is @pc's, which the probe's own
	 * guard does not change
	 */
	if (softirq_count() & SOFTIRQ_OFFSET)
		flags |= FHOOK_CTX_SOFTIRQ;
	if (softirq_count() >> (SOFTIRQ_SHIFT + 1))
		flags |= FHOOK_CTX_BH_OFF;
	if (pc & NMI_MASK)
		flags |= FHOOK_CTX_NMI;
	return flags;
}

/* ... and its hdr.preempt */
static __always_inline u8 fhook_rec_preempt(unsigned int pc)
{
	return min_t(unsigned int, pc & PREEMPT_MASK, 15) |
	       min_t(unsigned int, current->migration_disabled, 15) << 4;
}

/* Fill a record header: timestamp @ts, context @flags and @preempt. */
static __always_inline void fhook_rec_init_ctx(struct fhook_rec *r, u16 type, u16 size,
					       u32 probe_id, u64 ts, u8 flags,
					       u8 preempt)
{
	struct task_struct *t = current;

	/* a FHOOK_REC_COMM record just before (fhook_ring_reserve()) */
	if (unlikely(r->type == FHOOK_REC_COMM))
		((struct fhook_rec_comm *)r - 1)->hdr.ts = ts;
	r->size = size;
	r->type = type;
	r->probe_id = probe_id;
	r->ts = ts;
	r->pid = t->pid;
	r->tgid = t->tgid;
	r->cpu = raw_smp_processor_id();
	r->flags = flags;
	r->preempt = preempt;
}

/* The same, the context made now (fhook_rec_ctx()). */
static __always_inline void fhook_rec_init_ts(struct fhook_rec *r, u16 type, u16 size,
					      u32 probe_id, unsigned int pc,
					      bool irqs_off, u64 ts)
{
	fhook_rec_init_ctx(r, type, size, probe_id, ts, fhook_rec_ctx(pc, irqs_off),
			   fhook_rec_preempt(pc));
}

/* The same, timestamped now. */
static __always_inline void fhook_rec_init(struct fhook_rec *r, u16 type, u16 size,
					   u32 probe_id, unsigned int pc, bool irqs_off)
{
	fhook_rec_init_ts(r, type, size, probe_id, pc, irqs_off, fhook_clock());
}

/*
 * The raw context of an FHOOK_REC_FN record (fhook_rec_fn.ctx), @pc and
 * @irqs_off sampled at the probe's entry: the reader decodes from it what
 * fhook_rec_ctx() and fhook_rec_preempt() give (but the migrate-disable
 * depth), here a few instructions.
 */
static __always_inline u32 fhook_fn_ctx(unsigned int pc, bool irqs_off)
{
	u32 ctx = pc & (PREEMPT_MASK | SOFTIRQ_MASK | HARDIRQ_MASK | NMI_MASK);

	BUILD_BUG_ON(PREEMPT_MASK != FHOOK_FN_CTX_PREEMPT_MASK);
	BUILD_BUG_ON(SOFTIRQ_OFFSET != FHOOK_FN_CTX_SOFTIRQ_OFFSET);
	BUILD_BUG_ON(SOFTIRQ_MASK != FHOOK_FN_CTX_SOFTIRQ_MASK);
	BUILD_BUG_ON(HARDIRQ_MASK != FHOOK_FN_CTX_HARDIRQ_MASK);
	BUILD_BUG_ON(NMI_MASK != FHOOK_FN_CTX_NMI_MASK);
	/* PREEMPT_RT counts softirqs in the task (softirq_disable_cnt) */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		ctx |= softirq_count();
	if (irqs_off)
		ctx |= FHOOK_FN_CTX_IRQS_OFF;
	if (tif_need_resched())
		ctx |= FHOOK_FN_CTX_NEED_RESCHED;
	if (test_preempt_need_resched())
		ctx |= FHOOK_FN_CTX_PREEMPT_RESCHED;
	return ctx;
}

/*
 * Do @ip and @parent_ip fit an FHOOK_REC_FN record (sign-extended 32-bit
 * addresses: x86-64's kernel text and modules, never arm64's)?
 */
static __always_inline bool fhook_fn_fits(unsigned long ip, unsigned long parent_ip)
{
	return (long)(s32)ip == (long)ip && (long)(s32)parent_ip == (long)parent_ip;
}

/* Fill an FHOOK_REC_FN record of time @ts (its reservation's). */
static __always_inline void fhook_fn_init(struct fhook_rec_fn *r, u32 probe_id,
					  unsigned long ip, unsigned long parent_ip,
					  unsigned int pc, bool irqs_off, u64 ts)
{
	/* a FHOOK_REC_COMM record just before (fhook_ring_reserve()) */
	if (unlikely(r->type == FHOOK_REC_COMM))
		((struct fhook_rec_comm *)r - 1)->hdr.ts = ts;
	r->size = sizeof(*r);
	r->type = FHOOK_REC_FN;
	r->ip = (s32)ip;
	r->ts = ts;
	r->pid = current->pid;
	r->ctx = fhook_fn_ctx(pc, irqs_off);
	r->cpu = raw_smp_processor_id();
	r->flags = 0;
	r->probe_id = probe_id;
	r->parent_ip = (s32)parent_ip;
}

/* the ring's writers (inline: the fast path), after what they use */
#include "ring.h"

/*
 * ftrace's recursion lock for @p's hit at @ip from @parent_ip (it also
 * disables preemption), refused as well when a writer of the same context
 * (@pc, @irqs_off, sampled before) is below us on this CPU: fnrec.c's
 * paths take no lock, and ftrace's lets one hit through as a context
 * transition (their own clock read of a traced clocksource, the wakeup's
 * irq_work_queue()).  A refused hit counts as missed.  Returns the lock's
 * bit, or < 0.
 */
static __always_inline int fhook_hit_trylock(struct fhook_probe *p, unsigned long ip,
					     unsigned long parent_ip, unsigned int pc,
					     bool irqs_off)
{
	struct fhook_session *s = p->session;
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit >= 0 &&
	    unlikely(READ_ONCE(s->rings[smp_processor_id()]->fast_ctx) == fhook_ring_ctx(pc, irqs_off))) {
		ftrace_test_recursion_unlock(bit);
		bit = -1;
	}
	if (bit < 0) {
		/* preemptible here: the count may land on another CPU's line */
		preempt_disable_notrace();
		fhook_count(&fhook_counters(s, smp_processor_id(), p->id)->missed);
		preempt_enable_notrace();
	}
	return bit;
}

/* Fill an FHOOK_REC_FUNC record of time @ts. */
static __always_inline void fhook_func_init(struct fhook_rec_func *r, u32 probe_id,
					    unsigned long ip, unsigned long parent_ip,
					    unsigned int pc, bool irqs_off, u64 ts)
{
	fhook_rec_init_ts(&r->hdr, FHOOK_REC_FUNC, sizeof(*r), probe_id, pc, irqs_off, ts);
	r->ip = ip;
	r->parent_ip = parent_ip;
}

/*
 * Fill @r, a function entry's reservation (fhook_ring_reserve_fn(),
 * fhook_ring_reserve_loop()): the FHOOK_REC_FN or FHOOK_REC_FUNC
 * record it chose, counted as written; nothing for a drop or a frozen
 * session.
 */
static __always_inline void fhook_fn_fill(struct fhook_probe *p, struct fhook_probe_counters *c,
					  struct fhook_rec *r, unsigned long ip,
					  unsigned long parent_ip, unsigned int pc, bool irqs_off)
{
	if (IS_ERR_OR_NULL(r))
		return;
	if (likely(r->size == sizeof(struct fhook_rec_fn)))
		fhook_fn_init((void *)r, p->id, ip, parent_ip, pc, irqs_off, r->ts);
	else
		fhook_func_init((void *)r, p->id, ip, parent_ip, pc, irqs_off, r->ts);
	fhook_count(&c->written);
}

/*
 * One function entry of probe @p on @rb: an FHOOK_REC_FN record where its
 * addresses fit, @rb streams and the reservation allows it
 * (fhook_ring_fn_choose(): the record's number is the reader's count
 * there), else FHOOK_REC_FUNC.  An overwrite ring evicts its oldest
 * records, so a reader may start anywhere in it and needs each record's
 * own number.  Preemption disabled, @pc and @irqs_off as sampled at the
 * probe's entry; @outermost: the caller found no writer inside @rb
 * (fhook_ring_publish() then).
 */
static __always_inline void fhook_func_write(struct fhook_probe *p, struct fhook_ring *rb,
					     struct fhook_probe_counters *c, unsigned long ip,
					     unsigned long parent_ip, unsigned int pc, bool irqs_off,
					     bool outermost)
{
	if (likely(!rb->overwrite && fhook_fn_fits(ip, parent_ip))) {
		fhook_fn_fill(p, c, fhook_ring_reserve_fn(rb, p->id), ip, parent_ip, pc, irqs_off);
	} else {
		struct fhook_rec_func *r = fhook_ring_reserve(rb, sizeof(*r), p->id);

		if (!IS_ERR_OR_NULL(r)) {
			fhook_func_init(r, p->id, ip, parent_ip, pc, irqs_off, fhook_clock());
			fhook_count(&c->written);
		}
	}
	if (outermost)
		fhook_ring_publish(rb);
	else
		fhook_ring_commit(rb);
}

#endif /* FHOOK_H */
