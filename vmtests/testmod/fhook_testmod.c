// SPDX-License-Identifier: GPL-2.0
/*
 * fhook_testmod: calls two traceable functions a known number of times on
 * a known CPU and in known contexts, and counts every call itself, so the
 * guest tests compare what fhook delivered with an independent count.
 *
 * /proc/fhook_testmod, written:
 *   call N      N calls of fhook_testmod_target() in task context, on the
 *               writer's CPU (pin the writer with taskset)
 *   mix N       the same N task-context calls while a hard-irq hrtimer and
 *               a softirq hrtimer, both pinned to this CPU (one pair per
 *               CPU: run one "mix" per CPU at a time), call
 *               fhook_testmod_target() and fhook_testmod_other() every
 *               50 us, and the hard-irq one also sends this CPU an NMI
 *               whose handler calls both: producers nest (softirq over
 *               task, irq over both, NMI over all)
 *   bench N S   N fhook_testmod_bench trace events of S payload bytes
 *               (S a multiple of 8, at most 4096), the payload u64
 *               words i, i+1, ... as fhook's FHOOK_IOC_BENCH writes them;
 *               the time it took goes to the kernel log
 *   fail N      fhook_testmod_fail_outer(N): with N > 0, -ENOMEM first
 *               returned as ERR_PTR(-ENOMEM) by fhook_testmod_fail_alloc()
 *               three calls deep, after a sibling that failed and did not
 *               matter (fhook_testmod_fail_try(): -EAGAIN); the write fails
 *               with ENOMEM.  N = 0: the same calls, none failing
 *   failnull N  fhook_testmod_null_outer(N): with N > 0, NULL first
 *               returned by fhook_testmod_null_find() two calls deep,
 *               beside a bool fhook_testmod_null_check() returning false
 *               and a void fhook_testmod_null_note() returning with
 *               fhook_testmod_null_try()'s -EAGAIN left in %rax; the
 *               write fails with ENODATA
 *   faildeep N  fhook_testmod_fail_deep() N + 1 calls deep (N <= 120), the
 *               innermost returning -ENOMEM and each the one below's: a
 *               chain longer than fhook errors keeps per task
 *   irqsoff US  interrupts off on the writer's CPU for US microseconds (at
 *               most 100,000), busy in fhook_testmod_irqsoff(): the
 *               irqsoff tracers' known section
 *   reset       zero the counters
 * read: one line per possible CPU,
 * "cpu C target N other N irq N softirq N nmi N" (target and other count
 * every call; irq, softirq and nmi how many timer/NMI handler runs made
 * two calls each), then "irqsoff N": the last irqsoff section's time
 * between its first and last clock reads, in ns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/completion.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>
#endif

#define CREATE_TRACE_POINTS
#include "fhook_testmod_trace.h"

struct fhook_testmod_count {
	unsigned long target;
	unsigned long other;
	unsigned long irq;
	unsigned long softirq;
	unsigned long nmi;
};

static DEFINE_PER_CPU(struct fhook_testmod_count, fhook_testmod_counts);
static DEFINE_MUTEX(fhook_testmod_lock);

/*
 * The functions the tests trace, one count per call.  noipa: no inlining,
 * no .isra/.constprop clone the calls could go to instead.
 */
static __attribute__((__noipa__)) void fhook_testmod_target(unsigned long i)
{
	this_cpu_inc(fhook_testmod_counts.target);
}

static __attribute__((__noipa__)) void fhook_testmod_other(unsigned long i)
{
	this_cpu_inc(fhook_testmod_counts.other);
}

/*
 * /proc/fhook_testmod_hooks, for hooks (fault injection, redirection,
 * trace-around) and the hook benchmark, written:
 *   ret N       N calls fhook_testmod_ret(i), which returns 2i+1; counts
 *               the results: normal (2i+1), alt (2i+2, what
 *               fhook_testmod_alt() returns: redirected) and injected
 *               (anything else; the last such value is kept)
 *   args8 N     N calls of an 8-argument function (two on the stack),
 *               whose result proves every argument arrived
 *   sleep MS    one call of fhook_testmod_sleep(MS), which sleeps MS ms
 *               and returns MS; the caller times the calls (sleep ns)
 *   loop N      N calls of the empty fhook_testmod_nop(), timed: the pure
 *               cost of whatever hooks it
 *   die N       N kernel threads, one after the other, each calling
 *               fhook_testmod_die(), which exits the thread: a call that
 *               never returns
 *   reset       zero the counts
 * read: "ret normal N alt N injected N last V", "alt calls N",
 * "args8 calls N bad N", "sleep calls N done N", "sleep ns T" (the calls'
 * total duration, taken around them), "loop n N ns T", "die calls N".
 */
static atomic_long_t fhook_testmod_ret_normal, fhook_testmod_ret_alt, fhook_testmod_ret_injected;
static atomic_long_t fhook_testmod_alt_calls, fhook_testmod_args8_calls, fhook_testmod_args8_bad;
static atomic_long_t fhook_testmod_sleep_calls, fhook_testmod_sleep_done;
static atomic64_t fhook_testmod_sleep_ns;
static atomic_long_t fhook_testmod_die_calls;
static long fhook_testmod_ret_last;
static unsigned long fhook_testmod_loop_n;
static u64 fhook_testmod_loop_ns;

static __attribute__((__noipa__)) long fhook_testmod_ret(unsigned long i)
{
	return 2 * i + 1;
}

/* the redirect target: the same prototype */
static __used __attribute__((__noipa__)) long fhook_testmod_alt(unsigned long i)
{
	atomic_long_inc(&fhook_testmod_alt_calls);
	return 2 * i + 2;
}

static __attribute__((__noipa__)) long fhook_testmod_args8(long a1, long a2, long a3, long a4,
							  long a5, long a6, long a7, long a8)
{
	return a1 + 2 * a2 + 3 * a3 + 4 * a4 + 5 * a5 + 6 * a6 + 7 * a7 + 8 * a8;
}

static __attribute__((__noipa__)) long fhook_testmod_sleep(unsigned long ms)
{
	atomic_long_inc(&fhook_testmod_sleep_calls);
	msleep(ms);
	return ms;
}

/* the thread exits inside: told to the writer before it does */
static __attribute__((__noipa__)) __noreturn void fhook_testmod_die(struct completion *started)
{
	atomic_long_inc(&fhook_testmod_die_calls);
	kthread_complete_and_exit(started, 0);
}

static int fhook_testmod_die_thread(void *started)
{
	fhook_testmod_die(started);
}

static int fhook_testmod_die_n(unsigned long n)
{
	struct completion started;
	struct task_struct *t;

	while (n--) {
		init_completion(&started);
		t = kthread_run(fhook_testmod_die_thread, &started, "fhook-die");
		if (IS_ERR(t))
			return PTR_ERR(t);
		wait_for_completion(&started);
	}
	return 0;
}

/* returns its argument: return probes ($retval) have a value to take */
static __attribute__((__noipa__)) unsigned long fhook_testmod_nop(unsigned long i)
{
	barrier();
	return i;
}

static ssize_t fhook_testmod_hooks_write(struct file *file, const char __user *ubuf, size_t len,
					 loff_t *ppos)
{
	char buf[64], *arg;
	unsigned long n = 0, i;
	long r;
	u64 t0;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	arg = strchr(buf, ' ');
	if (arg) {
		*arg++ = '\0';
		ret = kstrtoul(arg, 0, &n);
		if (ret)
			return ret;
	}
	if (!strcmp(buf, "ret") && arg) {
		for (i = 0; i < n; i++) {
			r = fhook_testmod_ret(i);
			if (r == 2 * i + 1) {
				atomic_long_inc(&fhook_testmod_ret_normal);
			} else if (r == 2 * i + 2) {
				atomic_long_inc(&fhook_testmod_ret_alt);
			} else {
				atomic_long_inc(&fhook_testmod_ret_injected);
				WRITE_ONCE(fhook_testmod_ret_last, r);
			}
			if (!(i & 1023))
				cond_resched();
		}
	} else if (!strcmp(buf, "args8") && arg) {
		for (i = 0; i < n; i++) {
			r = fhook_testmod_args8(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7);
			atomic_long_inc(&fhook_testmod_args8_calls);
			if (r != 36 * i + 168)
				atomic_long_inc(&fhook_testmod_args8_bad);
			if (!(i & 1023))
				cond_resched();
		}
	} else if (!strcmp(buf, "sleep") && arg && n <= 60000) {
		t0 = ktime_get_ns();
		r = fhook_testmod_sleep(n);
		atomic64_add(ktime_get_ns() - t0, &fhook_testmod_sleep_ns);
		if (r == n)
			atomic_long_inc(&fhook_testmod_sleep_done);
	} else if (!strcmp(buf, "loop") && arg) {
		t0 = ktime_get_ns();
		for (i = 0; i < n; i++) {
			fhook_testmod_nop(i);
			if (!(i & 1023))
				cond_resched();
		}
		WRITE_ONCE(fhook_testmod_loop_ns, ktime_get_ns() - t0);
		WRITE_ONCE(fhook_testmod_loop_n, n);
	} else if (!strcmp(buf, "die") && arg && n <= 100) {
		ret = fhook_testmod_die_n(n);
		if (ret)
			return ret;
	} else if (!strcmp(buf, "reset") && !arg) {
		atomic_long_set(&fhook_testmod_die_calls, 0);
		atomic_long_set(&fhook_testmod_ret_normal, 0);
		atomic_long_set(&fhook_testmod_ret_alt, 0);
		atomic_long_set(&fhook_testmod_ret_injected, 0);
		atomic_long_set(&fhook_testmod_alt_calls, 0);
		atomic_long_set(&fhook_testmod_args8_calls, 0);
		atomic_long_set(&fhook_testmod_args8_bad, 0);
		atomic_long_set(&fhook_testmod_sleep_calls, 0);
		atomic_long_set(&fhook_testmod_sleep_done, 0);
		atomic64_set(&fhook_testmod_sleep_ns, 0);
		WRITE_ONCE(fhook_testmod_ret_last, 0);
	} else {
		return -EINVAL;
	}
	return len;
}

static int fhook_testmod_hooks_show(struct seq_file *m, void *v)
{
	seq_printf(m, "ret normal %ld alt %ld injected %ld last %ld\n",
		   atomic_long_read(&fhook_testmod_ret_normal),
		   atomic_long_read(&fhook_testmod_ret_alt),
		   atomic_long_read(&fhook_testmod_ret_injected), READ_ONCE(fhook_testmod_ret_last));
	seq_printf(m, "alt calls %ld\n", atomic_long_read(&fhook_testmod_alt_calls));
	seq_printf(m, "args8 calls %ld bad %ld\n", atomic_long_read(&fhook_testmod_args8_calls),
		   atomic_long_read(&fhook_testmod_args8_bad));
	seq_printf(m, "sleep calls %ld done %ld\n", atomic_long_read(&fhook_testmod_sleep_calls),
		   atomic_long_read(&fhook_testmod_sleep_done));
	seq_printf(m, "sleep ns %lld\n", atomic64_read(&fhook_testmod_sleep_ns));
	seq_printf(m, "die calls %ld\n", atomic_long_read(&fhook_testmod_die_calls));
	seq_printf(m, "loop n %lu ns %llu\n", READ_ONCE(fhook_testmod_loop_n),
		   READ_ONCE(fhook_testmod_loop_ns));
	return 0;
}

static int fhook_testmod_hooks_open(struct inode *inode, struct file *file)
{
	return single_open(file, fhook_testmod_hooks_show, NULL);
}

static const struct proc_ops fhook_testmod_hooks_ops = {
	.proc_open	= fhook_testmod_hooks_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
	.proc_write	= fhook_testmod_hooks_write,
};

#define FHOOK_TESTMOD_PERIOD_NS	(50 * NSEC_PER_USEC)

#ifdef CONFIG_X86
/* NMIs this CPU sent itself and has not handled yet */
static DEFINE_PER_CPU(unsigned long, fhook_testmod_nmi_pending);

static int fhook_testmod_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(fhook_testmod_nmi_pending))
		return NMI_DONE;
	this_cpu_dec(fhook_testmod_nmi_pending);
	this_cpu_inc(fhook_testmod_counts.nmi);
	fhook_testmod_target(3);
	fhook_testmod_other(3);
	return NMI_HANDLED;
}

static void fhook_testmod_send_nmi(void)
{
	if (apic && apic->send_IPI_self) {
		this_cpu_inc(fhook_testmod_nmi_pending);
		apic->send_IPI_self(NMI_VECTOR);
	}
}

static int fhook_testmod_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, fhook_testmod_nmi, 0, "fhook_testmod");
}

static void fhook_testmod_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, "fhook_testmod");
}
#else
/* arm64: no NMI a module can send itself (pseudo-NMIs are the GIC's): nmi stays 0 */
static void fhook_testmod_send_nmi(void)
{
}

static int fhook_testmod_nmi_register(void)
{
	return 0;
}

static void fhook_testmod_nmi_unregister(void)
{
}
#endif

static enum hrtimer_restart fhook_testmod_hard(struct hrtimer *t)
{
	this_cpu_inc(fhook_testmod_counts.irq);
	fhook_testmod_target(1);
	fhook_testmod_send_nmi();
	fhook_testmod_other(1);
	hrtimer_forward_now(t, ns_to_ktime(FHOOK_TESTMOD_PERIOD_NS));
	return HRTIMER_RESTART;
}

static enum hrtimer_restart fhook_testmod_soft(struct hrtimer *t)
{
	this_cpu_inc(fhook_testmod_counts.softirq);
	fhook_testmod_target(2);
	fhook_testmod_other(2);
	hrtimer_forward_now(t, ns_to_ktime(FHOOK_TESTMOD_PERIOD_NS));
	return HRTIMER_RESTART;
}

static void fhook_testmod_calls(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		fhook_testmod_target(i);
		if (!(i & 1023))
			cond_resched();
	}
}

/* one pair per CPU: "mix" may run on every CPU at once */
static DEFINE_PER_CPU(struct hrtimer, fhook_testmod_hard_timer);
static DEFINE_PER_CPU(struct hrtimer, fhook_testmod_soft_timer);

static void fhook_testmod_mix(unsigned long n)
{
	ktime_t period = ns_to_ktime(FHOOK_TESTMOD_PERIOD_NS);
	struct hrtimer *hard, *soft;

	/* pinned timers fire on the CPU that starts them: stay on it */
	migrate_disable();
	hard = this_cpu_ptr(&fhook_testmod_hard_timer);
	soft = this_cpu_ptr(&fhook_testmod_soft_timer);
	hrtimer_start(hard, period, HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_start(soft, period, HRTIMER_MODE_REL_PINNED_SOFT);
	fhook_testmod_calls(n);
	hrtimer_cancel(hard);
	hrtimer_cancel(soft);
	migrate_enable();
}

#define FHOOK_TESTMOD_MAX_PAYLOAD	4096

static int fhook_testmod_bench(unsigned long n, unsigned long size)
{
	u64 *buf, i, t0;
	unsigned long w;

	if (size % 8 || size > FHOOK_TESTMOD_MAX_PAYLOAD)
		return -EINVAL;
	buf = kmalloc(FHOOK_TESTMOD_MAX_PAYLOAD, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		/* the same payload work as fhook's bench: fill, then copy */
		for (w = 0; w < size / 8; w++)
			buf[w] = i + w;
		trace_fhook_testmod_bench(buf, size);
		if (!(i & 1023))
			cond_resched();
	}
	pr_info("bench %lu x %lu bytes: %llu ns\n", n, size, ktime_get_ns() - t0);
	kfree(buf);
	return 0;
}

/*
 * notrace, and named so that the glob vfs_rea* matches it as it matches
 * vfs_read(): ftrace never puts it in a hash, so fhook must not take the
 * module's unload for the end of a probe on that glob (module_gone).
 */
static __used notrace __attribute__((__noipa__)) long vfs_read_fhook_testmod(long i)
{
	return i + 1;
}

static u64 fhook_testmod_irqsoff_ns;

/*
 * Interrupts off for @us: the section starts at local_irq_save() (its
 * irq_disable tracepoint names this function and its caller) and ends at
 * local_irq_restore(); the time between the clock reads inside it is
 * kept for the test (the section is at least that long).
 */
static noinline void fhook_testmod_irqsoff(unsigned long us)
{
	unsigned long flags;
	u64 t0, t1;

	local_irq_save(flags);
	t0 = ktime_get_mono_fast_ns();
	do {
		cpu_relax();
		t1 = ktime_get_mono_fast_ns();
	} while (t1 - t0 < us * NSEC_PER_USEC);
	local_irq_restore(flags);
	WRITE_ONCE(fhook_testmod_irqsoff_ns, t1 - t0);
}

/* fhook errors' known chain (see the top): outer -> middle -> alloc */
static noinline void *fhook_testmod_fail_alloc(unsigned long n)
{
	static int fhook_testmod_object;

	return n ? ERR_PTR(-ENOMEM) : &fhook_testmod_object;
}

static noinline int fhook_testmod_fail_try(unsigned long n)
{
	return n ? -EAGAIN : 0;
}

static noinline void *fhook_testmod_fail_middle(unsigned long n)
{
	/* a failure the caller gets over: not the one that fails it */
	if (fhook_testmod_fail_try(n) == -EAGAIN)
		barrier();
	return fhook_testmod_fail_alloc(n);
}

static noinline int fhook_testmod_fail_deep(unsigned long n)
{
	int ret = n ? fhook_testmod_fail_deep(n - 1) : -ENOMEM;

	/* (no tail call: a frame per level) */
	barrier();
	return ret;
}

static noinline int fhook_testmod_fail_outer(unsigned long n)
{
	return PTR_ERR_OR_ZERO(fhook_testmod_fail_middle(n));
}

/* fhook errors by return type (see the top): outer -> middle -> find */
static noinline void *fhook_testmod_null_find(unsigned long n)
{
	static int fhook_testmod_found;

	return n ? NULL : &fhook_testmod_found;
}

static noinline bool fhook_testmod_null_check(unsigned long n)
{
	return !n;
}

/*
 * void: %rax keeps fhook_testmod_null_try()'s -EAGAIN as it returns (no
 * interprocedural optimisation: the call stays, and so does its value)
 */
static noinline __attribute__((__noipa__)) int fhook_testmod_null_try(unsigned long n)
{
	return n ? -EAGAIN : 0;
}

static noinline __attribute__((__noipa__)) void fhook_testmod_null_note(unsigned long n)
{
	fhook_testmod_null_try(n);
}

static noinline void *fhook_testmod_null_middle(unsigned long n)
{
	void *p;

	if (!fhook_testmod_null_check(n))
		barrier();
	p = fhook_testmod_null_find(n);
	fhook_testmod_null_note(n);
	return p;
}

static noinline void *fhook_testmod_null_outer(unsigned long n)
{
	void *p = fhook_testmod_null_middle(n);

	/* (no tail call) */
	barrier();
	return p;
}

static ssize_t fhook_testmod_write(struct file *file, const char __user *ubuf, size_t len,
				   loff_t *ppos)
{
	char buf[64], *arg, *arg2 = NULL;
	unsigned long n = 0, size = 0;
	int cpu, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	arg = strchr(buf, ' ');
	if (arg) {
		*arg++ = '\0';
		arg2 = strchr(arg, ' ');
		if (arg2) {
			*arg2++ = '\0';
			ret = kstrtoul(arg2, 0, &size);
			if (ret)
				return ret;
		}
		ret = kstrtoul(arg, 0, &n);
		if (ret)
			return ret;
	}

	/* workloads run concurrently (one per CPU); only reset is serialised */
	if (!strcmp(buf, "bench") && arg2) {
		ret = fhook_testmod_bench(n, size);
		if (ret)
			len = ret;
	} else if (!strcmp(buf, "call") && arg) {
		fhook_testmod_calls(vfs_read_fhook_testmod(n) - 1);
	} else if (!strcmp(buf, "mix") && arg) {
		fhook_testmod_mix(n);
	} else if (!strcmp(buf, "fail") && arg) {
		ret = fhook_testmod_fail_outer(n);
		if (ret)
			len = ret;
	} else if (!strcmp(buf, "failnull") && arg) {
		if (!fhook_testmod_null_outer(n))
			len = -ENODATA;
	} else if (!strcmp(buf, "faildeep") && arg && n <= 120) {
		len = fhook_testmod_fail_deep(n);
	} else if (!strcmp(buf, "irqsoff") && arg && n <= 100000) {
		fhook_testmod_irqsoff(n);
	} else if (!strcmp(buf, "reset") && !arg) {
		mutex_lock(&fhook_testmod_lock);
		for_each_possible_cpu(cpu)
			memset(per_cpu_ptr(&fhook_testmod_counts, cpu), 0,
			       sizeof(struct fhook_testmod_count));
		mutex_unlock(&fhook_testmod_lock);
	} else {
		len = -EINVAL;
	}
	return len;
}

static int fhook_testmod_show(struct seq_file *m, void *v)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct fhook_testmod_count *c = per_cpu_ptr(&fhook_testmod_counts, cpu);

		seq_printf(m, "cpu %d target %lu other %lu irq %lu softirq %lu nmi %lu\n", cpu,
			   READ_ONCE(c->target), READ_ONCE(c->other), READ_ONCE(c->irq),
			   READ_ONCE(c->softirq), READ_ONCE(c->nmi));
	}
	seq_printf(m, "irqsoff %llu\n", READ_ONCE(fhook_testmod_irqsoff_ns));
	return 0;
}

static int fhook_testmod_open(struct inode *inode, struct file *file)
{
	return single_open(file, fhook_testmod_show, NULL);
}

static const struct proc_ops fhook_testmod_ops = {
	.proc_open	= fhook_testmod_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
	.proc_write	= fhook_testmod_write,
};

static int __init fhook_testmod_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu) {
		struct hrtimer *t = per_cpu_ptr(&fhook_testmod_hard_timer, cpu);

		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		t->function = fhook_testmod_hard;
		t = per_cpu_ptr(&fhook_testmod_soft_timer, cpu);
		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_SOFT);
		t->function = fhook_testmod_soft;
	}
	ret = fhook_testmod_nmi_register();
	if (ret)
		return ret;
	if (!proc_create("fhook_testmod", 0600, NULL, &fhook_testmod_ops)) {
		fhook_testmod_nmi_unregister();
		return -ENOMEM;
	}
	if (!proc_create("fhook_testmod_hooks", 0600, NULL, &fhook_testmod_hooks_ops)) {
		remove_proc_entry("fhook_testmod", NULL);
		fhook_testmod_nmi_unregister();
		return -ENOMEM;
	}
	return 0;
}

static void __exit fhook_testmod_exit(void)
{
	remove_proc_entry("fhook_testmod_hooks", NULL);
	remove_proc_entry("fhook_testmod", NULL);
	fhook_testmod_nmi_unregister();
}

module_init(fhook_testmod_init);
module_exit(fhook_testmod_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("fhook test workload with independent call counts");
