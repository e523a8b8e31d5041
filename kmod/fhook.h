/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook internal interfaces: one struct per concern, joined here.
 *
 *   main.c        misc device, file operations, module init/exit
 *   session.c     a session (one open file): ioctls, arm/disarm, stats
 *   ring.c        per-CPU mmap'd rings: lockless reserve/commit, wakeups
 *   probe_func.c  function probes (ftrace_ops)
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
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <asm/local.h>

#include <fhook_abi.h>

#define FHOOK_VERSION		"0.1.0"

/* Writers nested on one CPU (task, softirq, irq, NMI, plus slack). */
#define FHOOK_RING_MAX_NEST	8

struct fhook_session;

struct fhook_pcpu_stats {
	u64 hits;
	u64 written;
	u64 lost;
	u64 missed;
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
	/* reserved bytes; runs ahead of data_head while writers nest */
	local_t head;
	local_t nest;			/* writers active on this CPU */
	local_t lost;			/* drops not yet reported in band */
	u64 wake_tail;			/* data_tail at the last wakeup */
	struct irq_work work;
	struct fhook_session *session;
};

struct fhook_probe {
	struct list_head node;
	struct fhook_session *session;
	u32 id;
	u32 type;
	bool registered;
	struct fhook_pcpu_stats __percpu *stats;
	struct ftrace_ops ops;
};

struct fhook_session {
	struct mutex lock;		/* serialises ioctls */
	struct list_head probes;
	unsigned int nr_probes;
	u32 next_probe_id;
	bool armed;

	/* rings, set up once by FHOOK_IOC_RING_SETUP */
	struct fhook_ring **rings;	/* [nr_cpu_ids], NULL if not possible */
	u64 buf_size;
	u32 watermark;
	wait_queue_head_t waitq;

	/* filters read by the probe hot paths */
	bool cpu_filter;
	cpumask_var_t cpus;
	bool pid_filter;
	pid_t ignore_tgid;		/* 0: none */
	bool follow_fork;
	bool fork_tp_registered;
	unsigned long *pids;		/* bitmap, PID_MAX_LIMIT bits */
};

/* main.c */
extern atomic_t fhook_nr_sessions;

/* session.c */
struct fhook_session *fhook_session_create(void);
void fhook_session_destroy(struct fhook_session *s);
long fhook_session_ioctl(struct fhook_session *s, unsigned int cmd, unsigned long arg);
__poll_t fhook_session_poll(struct fhook_session *s, struct file *file, poll_table *wait);

/* ring.c */
int fhook_rings_alloc(struct fhook_session *s, u64 size, u32 watermark);
void fhook_rings_free(struct fhook_session *s);
int fhook_rings_mmap(struct fhook_session *s, struct vm_area_struct *vma);
bool fhook_rings_readable(struct fhook_session *s, bool any);
void *fhook_ring_reserve(struct fhook_ring *rb, unsigned int size);
void fhook_ring_commit(struct fhook_ring *rb);

/* probe_func.c */
int fhook_func_probe_init(struct fhook_probe *p, const struct fhook_probe_add *arg,
			  s32 *err_index);
int fhook_func_probe_arm(struct fhook_probe *p);
void fhook_func_probe_disarm(struct fhook_probe *p);
void fhook_func_probe_release(struct fhook_probe *p);

/* pidfilter.c */
int fhook_pidfilter_init(void);
int fhook_pidfilter_set(struct fhook_session *s, const struct fhook_pid_filter *arg);
void fhook_pidfilter_release(struct fhook_session *s);

/*
 * Filters applied by every probe before it counts a hit.  Called with
 * preemption disabled.
 */
static __always_inline bool fhook_session_wants(struct fhook_session *s)
{
	if (READ_ONCE(s->cpu_filter) &&
	    !cpumask_test_cpu(raw_smp_processor_id(), s->cpus))
		return false;
	if (unlikely(READ_ONCE(s->ignore_tgid) == current->tgid))
		return false;
	/* pairs with the release in fhook_pidfilter_set(): bitmap ready */
	if (smp_load_acquire(&s->pid_filter)) {
		struct task_struct *t = current;

		if (!test_bit(t->pid, s->pids) && !test_bit(t->tgid, s->pids))
			return false;
	}
	return true;
}

/*
 * Fill a record header.  @pc and @irqs_off are sampled at probe entry,
 * before the probe's own recursion guard raised the preempt count.
 */
static __always_inline void fhook_rec_init(struct fhook_rec *r, u16 type, u16 size,
					   u32 probe_id, unsigned int pc, bool irqs_off)
{
	struct task_struct *t = current;
	u8 flags = 0;

	if (irqs_off)
		flags |= FHOOK_CTX_IRQS_OFF;
	if (tif_need_resched())
		flags |= FHOOK_CTX_NEED_RESCHED;
	if (test_preempt_need_resched())
		flags |= FHOOK_CTX_PREEMPT_RESCHED;
	if (pc & HARDIRQ_MASK)
		flags |= FHOOK_CTX_HARDIRQ;
	if (pc & SOFTIRQ_OFFSET)
		flags |= FHOOK_CTX_SOFTIRQ;
	else if (pc & SOFTIRQ_MASK)
		flags |= FHOOK_CTX_BH_OFF;
	if (pc & NMI_MASK)
		flags |= FHOOK_CTX_NMI;

	r->size = size;
	r->type = type;
	r->probe_id = probe_id;
	r->ts = ktime_get_mono_fast_ns();
	r->pid = t->pid;
	r->tgid = t->tgid;
	r->cpu = raw_smp_processor_id();
	r->flags = flags;
	r->preempt = min_t(unsigned int, pc & PREEMPT_MASK, 15) |
		     min_t(unsigned int, t->migration_disabled, 15) << 4;
	r->__pad = 0;
	memcpy(r->comm, t->comm, sizeof(r->comm));
}

#endif /* FHOOK_H */
