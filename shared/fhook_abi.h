/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * fhook ABI: the one header shared by fhook.ko and its userspace.
 *
 * Rules (Documentation/driver-api/ioctl.rst, adding-syscalls.rst):
 *  - only fixed-width __u32/__u64 types, explicit padding, no pointers
 *    (user pointers travel as __u64);
 *  - every ioctl argument starts with a __u32 `size` that the caller sets
 *    to sizeof() of the struct it was built with; the module accepts older
 *    (smaller) and newer (larger, zero-filled tail) layouts the way
 *    copy_struct_from_user() does;
 *  - reserved fields and unknown flags must be zero (-EINVAL otherwise);
 *  - unknown ioctl numbers get -ENOTTY; numbers are never reused.
 *
 * Device: /dev/fhook (misc, mode 0600, CAP_SYS_ADMIN or CAP_PERFMON).
 * Every open file is an independent session.  Closing it (or the process
 * dying) disarms and frees everything the session created.
 */
#ifndef _UAPI_FHOOK_ABI_H
#define _UAPI_FHOOK_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define FHOOK_DEVICE_PATH	"/dev/fhook"
/*
 * 2: a string's data_loc may carry FHOOK_LOC_CUT; 3: 32-byte record
 * header, the task's comm in FHOOK_REC_COMM records; 4: function entries
 * of the common case as 32-byte FHOOK_REC_FN records; 5: kprobe hits at a
 * function's entry of the common case as FHOOK_REC_FN_KPROBE records
 */
#define FHOOK_ABI_VERSION	5

/* Feature bits reported by FHOOK_IOC_HANDSHAKE. */
#define FHOOK_FEAT_FUNC		(1ULL << 0)	/* ftrace_ops function probes */
#define FHOOK_FEAT_FUNC_IPS	(1ULL << 1)	/* function probes by address */
#define FHOOK_FEAT_PID_FILTER	(1ULL << 2)	/* pid/tgid filter, follow fork */
#define FHOOK_FEAT_CPU_FILTER	(1ULL << 3)	/* cpumask filter */
#define FHOOK_FEAT_RING_MMAP	(1ULL << 4)	/* per-CPU mmap'd rings */
#define FHOOK_FEAT_IGNORE_SELF	(1ULL << 5)	/* FHOOK_PIDF_IGNORE_SELF */
#define FHOOK_FEAT_SEQ		(1ULL << 6)	/* fhook_rec.seq, LOST v2 records */
#define FHOOK_FEAT_OVERWRITE	(1ULL << 7)	/* FHOOK_RING_OVERWRITE */
#define FHOOK_FEAT_SNAPSHOT	(1ULL << 8)	/* FHOOK_IOC_SNAPSHOT */
#define FHOOK_FEAT_STATS_MMAP	(1ULL << 9)	/* FHOOK_MMAP_STATS_REGION */
#define FHOOK_FEAT_FLUSH	(1ULL << 10)	/* flush timer, wakeup_events */
#define FHOOK_FEAT_BENCH	(1ULL << 11)	/* FHOOK_PROBE_BENCH, FHOOK_IOC_BENCH */
#define FHOOK_FEAT_KPROBE	(1ULL << 12)	/* FHOOK_PROBE_KPROBE, _KRETPROBE */
#define FHOOK_FEAT_FETCH	(1ULL << 13)	/* fetch programs (struct fhook_insn) */
#define FHOOK_FEAT_PRED		(1ULL << 14)	/* predicate programs (filters) */
#define FHOOK_FEAT_UPROBE	(1ULL << 15)	/* FHOOK_PROBE_UPROBE, _URETPROBE */
#define FHOOK_FEAT_STACK	(1ULL << 16)	/* FHOOK_PROBE_F_STACK */
#define FHOOK_FEAT_TRIGGER	(1ULL << 17)	/* FHOOK_IOC_TRIGGER_ADD */
#define FHOOK_FEAT_TRACEPOINT	(1ULL << 18)	/* FHOOK_PROBE_TRACEPOINT */
#define FHOOK_FEAT_DIRECT	(1ULL << 19)	/* FHOOK_PROBE_DIRECT, FHOOK_IOC_DIRECT_MODIFY */
#define FHOOK_FEAT_HOOK		(1ULL << 20)	/* FHOOK_PROBE_HOOK (trace-around) */
#define FHOOK_FEAT_COUNT	(1ULL << 21)	/* FHOOK_PROBE_F_COUNT */
#define FHOOK_FEAT_READ_TEXT	(1ULL << 22)	/* FHOOK_IOC_READ_TEXT */
/* loaded with lab=1: hooks may override returns and redirect functions */
#define FHOOK_FEAT_LAB		(1ULL << 23)
#define FHOOK_FEAT_LATENCY	(1ULL << 24)	/* FHOOK_PROBE_F_LATENCY (FHOOK_IOC_LATENCY: below) */
#define FHOOK_FEAT_COUNT_IPS	(1ULL << 25)	/* FHOOK_PROBE_F_COUNT_IPS, FHOOK_IOC_COUNTS */
#define FHOOK_FEAT_KHOOK	(1ULL << 26)	/* hook API for modules, FHOOK_IOC_KHOOKS */
#define FHOOK_FEAT_GRAPH	(1ULL << 27)	/* FHOOK_PROBE_GRAPH (call graphs) */
#define FHOOK_FEAT_HIST		(1ULL << 28)	/* FHOOK_IOC_HIST_SET, FHOOK_IOC_HIST_READ */
/* FHOOK_HIST_SRC_STACK keys, FHOOK_HIST_MAX_TABLES tables per probe */
#define FHOOK_FEAT_HIST_STACK	(1ULL << 29)
#define FHOOK_FEAT_HIST_USTACK	(1ULL << 30)	/* FHOOK_HIST_SRC_USTACK keys */
/* struct fhook_graph's "every other function" given (all_filter, all_ips) */
#define FHOOK_FEAT_GRAPH_ALL	(1ULL << 31)
/* FHOOK_IOC_LAST_ERROR: why the session's last ioctl was refused */
#define FHOOK_FEAT_REASONS	(1ULL << 32)
/*
 * FHOOK_PROBE_WAKEUP (the wakeup latency tracers), and FHOOK_IOC_LATENCY
 * (with it, whether or not this CPU has latency probes) per CPU
 * (FHOOK_LATENCY_F_CPU) with min_ns and max_ns
 */
#define FHOOK_FEAT_WAKEUP	(1ULL << 33)
/* FHOOK_PROBE_TIMERLAT (the timer latency tracer) */
#define FHOOK_FEAT_TIMERLAT	(1ULL << 34)
/* FHOOK_PROBE_HWLAT (the hardware latency detector) */
#define FHOOK_FEAT_HWLAT	(1ULL << 35)
/* FHOOK_PROBE_OSNOISE (the operating system noise tracer) */
#define FHOOK_FEAT_OSNOISE	(1ULL << 36)
/*
 * FHOOK_PROBE_IRQSOFF with FHOOK_IRQSOFF_IRQ: this kernel has the
 * irq_disable and irq_enable tracepoints (CONFIG_PREEMPTIRQ_TRACEPOINTS)
 */
#define FHOOK_FEAT_IRQSOFF	(1ULL << 37)
/* ... with FHOOK_IRQSOFF_PREEMPT: preempt_disable, preempt_enable too */
#define FHOOK_FEAT_PREEMPTOFF	(1ULL << 38)
/*
 * FHOOK_IOC_HIST_SET on FHOOK_PROBE_WAKEUP (struct fhook_wakeup_sample),
 * FHOOK_WAKEUP_F_HIST_ONLY
 */
#define FHOOK_FEAT_WAKEUP_HIST	(1ULL << 39)
/* FHOOK_PROBE_F_WAKEUP_CPU (the wakeup tracers' function trace) */
#define FHOOK_FEAT_WAKEUP_FUNCTION	(1ULL << 40)
/* FHOOK_GRAPH_F_ERRORS: failing call chains (fhook errors) */
#define FHOOK_FEAT_ERRORS	(1ULL << 41)
/* fhook_graph.zero_ips / none_ips: failures by return type (NULL, false) */
#define FHOOK_FEAT_ERRORS_TYPES	(1ULL << 42)
/*
 * FHOOK_GRAPH_F_ARGS and FHOOK_GRAPH_F_CALLSITES with FHOOK_GRAPH_F_ERRORS:
 * each frame's arguments and where it was called from
 */
#define FHOOK_FEAT_ERRORS_FRAMES	(1ULL << 43)
/* FHOOK_IOC_SYMBOLS: the kernel's names of addresses */
#define FHOOK_FEAT_SYMBOLS	(1ULL << 44)

/* ------------------------------------------------------------------ */
/* ioctl arguments                                                     */
/* ------------------------------------------------------------------ */

struct fhook_handshake {
	__u32 size;		/* in: sizeof(struct fhook_handshake) */
	__u32 abi_version;	/* in: caller's ABI; out: module's ABI */
	__u64 features;		/* out: FHOOK_FEAT_* */
	__u32 nr_cpus;		/* out: nr_cpu_ids, number of per-CPU rings */
	__u32 nr_sessions;	/* out: open sessions, this one included */
	__u32 page_size;	/* out: kernel PAGE_SIZE */
	__u32 max_probes;	/* out: probes per session */
	char version[32];	/* out: module version string, NUL-terminated */
	/*
	 * out: trampoline slots of each kind, module-wide: direct probes
	 * (FHOOK_PROBE_DIRECT) and trace-around hooks may be armed on at most
	 * this many probes at once; 0 from modules before it was reported
	 */
	__u32 nr_slots;
	__u32 __pad;		/* must be zero */
	/*
	 * out (0 from modules before they were reported): of the nr_slots
	 * around slots (trace-around hooks, the khook API), those kept for
	 * other modules' hooks (sessions take the others: ENOSPC past them)
	 */
	__u32 khook_slots;
	__u32 around_used;	/* out: around slots taken now, modules' included */
	__u32 direct_used;	/* out: direct slots taken now */
	/* out: sessions a user without CAP_SYS_ADMIN may hold (EUSERS past it), 0: no limit */
	__u32 max_user_sessions;
	/*
	 * out (0 from modules before they were reported, or no limit): of
	 * each kind of trampoline slot, those the sessions of a user without
	 * CAP_SYS_ADMIN may hold (ENOSPC, FHOOK_R_USER_SLOTS past it); the
	 * percent of fhook's memory budget (half of RAM: ring pages,
	 * kretprobe instances, filter hashes, hist tables) they may hold
	 * (EDQUOT past it)
	 */
	__u32 max_user_slots;
	__u32 max_user_mem_pct;
};

/* Around slots sessions leave to the khook API (fhook_handshake.khook_slots) */
#define FHOOK_KHOOK_SLOTS	16

#define FHOOK_RING_MIN_SIZE	4096ULL		/* one page */
#define FHOOK_RING_MAX_SIZE	(256ULL << 20)
#define FHOOK_RING_DEF_SIZE	(1ULL << 20)

/*
 * mmap layout.  CPU c's region starts at file offset c * FHOOK_MMAP_STRIDE:
 *   +0                 meta page      (struct fhook_ring_meta), PROT_READ only
 *   +page              consumer page  (struct fhook_ring_cons), PROT_READ|WRITE
 *   +2*page            data, 2 * buf_size bytes, PROT_READ only; the second
 *                      half aliases the first, so a record that wraps past
 *                      the end is still contiguous in memory.
 * The session's counters (struct fhook_stats_area) are one read-only region
 * at FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE, fhook_stats_area.map_size
 * bytes long (map one page to read map_size, then the whole); it exists
 * from open() on, rings or not.
 * Mappings must be MAP_SHARED, cover exactly one region, and cannot be
 * split, grown or inherited across fork (VM_DONTCOPY).
 */
#define FHOOK_MMAP_STRIDE	(1ULL << 32)
#define FHOOK_MMAP_META		0
#define FHOOK_MMAP_CONS		1	/* in pages */
#define FHOOK_MMAP_DATA		2	/* in pages */
#define FHOOK_MMAP_STATS_REGION	0xffffULL

/*
 * Ring modes.  Default (discard): a full ring drops the new record and
 * counts it; the consumer's data_tail is respected.  FHOOK_RING_OVERWRITE
 * (flight recorder): producers never wait for the consumer, they evict the
 * oldest records (meta->data_oldest moves) and count what they evict that
 * the consumer had not read as "overwritten"; no wakeups are sent.
 */
#define FHOOK_RING_OVERWRITE	(1U << 0)
#define FHOOK_RING_FLAGS	FHOOK_RING_OVERWRITE
/* Overwrite rings need room for nested writers' records: see ring-protocol.md */
#define FHOOK_RING_MIN_OVERWRITE (32ULL << 10)

#define FHOOK_FLUSH_DEF_MS	100
#define FHOOK_FLUSH_MAX_MS	60000

struct fhook_ring_setup {
	__u32 size;		/* in: sizeof(struct fhook_ring_setup) */
	__u32 flags;		/* in: FHOOK_RING_* */
	/* in: bytes per CPU, power of two, 0 = default; out: size used */
	__u64 buf_size;
	/* in: wake readers at this many pending bytes, 0 = buf_size / 4 */
	__u32 watermark;
	__u32 nr_cpus;		/* out: number of rings (nr_cpu_ids) */
	__u64 mmap_stride;	/* out: FHOOK_MMAP_STRIDE */
	/*
	 * in: also wake readers once a CPU has this many records (and drops)
	 * the consumer has not acknowledged in fhook_ring_cons.seq_read,
	 * 0 = bytes only.
	 */
	__u32 wakeup_events;
	/*
	 * in: while armed, a timer wakes readers every flush_ms if any data is
	 * pending below the watermarks, so a quiet probe's records arrive
	 * within that bound; 0 = FHOOK_FLUSH_DEF_MS, max FHOOK_FLUSH_MAX_MS;
	 * out: the value used.
	 */
	__u32 flush_ms;
	__u64 reserved[3];	/* must be zero */
};

enum fhook_probe_type {
	FHOOK_PROBE_FUNC = 1,	/* ftrace_ops function entry */
	/*
	 * Attaches to nothing: its records come from FHOOK_IOC_BENCH (the
	 * transport benchmark).  filter, exclude and ips must be empty.
	 */
	FHOOK_PROBE_BENCH = 2,
	/*
	 * kprobe at symbol + offset (or addr), kretprobe on a function's
	 * return; their records are struct fhook_rec_probe with the fields a
	 * fetch program stores.  filter, exclude and ips must be empty.
	 */
	FHOOK_PROBE_KPROBE = 3,
	FHOOK_PROBE_KRETPROBE = 4,
	/*
	 * uprobe / uretprobe: `symbol` is the absolute path of the binary,
	 * `offset` the file offset of the instruction (userspace resolves
	 * symbols from the ELF file).  Registered at START, unregistered at
	 * STOP.  A uretprobe's program has no entry part.  Records are
	 * struct fhook_rec_probe: ip the user address hit (the function for
	 * uretprobes), ret_ip where it returned to.
	 */
	FHOOK_PROBE_UPROBE = 5,
	FHOOK_PROBE_URETPROBE = 6,
	/*
	 * A tracepoint's trace event: `addr` is the event id (tracefs
	 * events/SUBSYS/EVENT/id), `data_size` the fixed size of its entry
	 * (the predicate's bounds; 0 = no predicate).  The module reads the
	 * event through perf (one kernel counter per online CPU, made at
	 * START): records are struct fhook_rec_probe with ip = the event id
	 * and data[] = the raw trace entry as its format file describes it
	 * (common fields first; __data_loc offsets are from the entry's start).
	 */
	FHOOK_PROBE_TRACEPOINT = 7,
	/*
	 * Function entry through one of the module's own trampolines,
	 * attached with the ftrace direct-call API (filter, exclude and ips
	 * as for FHOOK_PROBE_FUNC).  Records are struct fhook_rec_func, the
	 * same as a function probe's; with FHOOK_PROBE_F_COUNT the counting
	 * trampoline only counts hits.  FHOOK_IOC_DIRECT_MODIFY switches an
	 * armed probe between the two trampolines.  A function takes one
	 * direct trampoline at a time (EBUSY).
	 */
	FHOOK_PROBE_DIRECT = 8,
	/*
	 * An IPMODIFY hook on one function (`addr`, its address; symbol,
	 * filters and ips empty): `hook` points to a struct
	 * fhook_hook saying what it does.  The fetch program (no return
	 * part) and predicate decide which calls it acts on and what a
	 * record carries; records are struct fhook_rec_hook.  A function takes
	 * one IPMODIFY user at a time (EBUSY: livepatch, another hook).
	 */
	FHOOK_PROBE_HOOK = 9,
	/*
	 * A call graph (the function_graph tracer with set_graph_function):
	 * every call of the functions in `filter`/`ips` (as for
	 * FHOOK_PROBE_FUNC) and, while it runs, every traceable function the
	 * task calls, down to fhook_graph.max_depth; `exclude` holds
	 * set_graph_notrace patterns (a function and everything it calls are
	 * left out).  `hook` points to a struct fhook_graph.  Records:
	 * FHOOK_REC_GRAPH_ENT at each entry and FHOOK_REC_GRAPH_RET at each
	 * return, caught by replacing the return address with the module's
	 * return trampoline (per-task shadow stacks).  One call graph at a
	 * time module-wide (EBUSY); the predicate and the session's filters
	 * apply where a task enters the graph.
	 */
	FHOOK_PROBE_GRAPH = 10,
	/*
	 * The wakeup latency tracer (the kernel's wakeup, wakeup_rt and
	 * wakeup_dl tracers, CONFIG_SCHED_TRACER), on the sched_wakeup,
	 * sched_wakeup_new, sched_switch and sched_migrate_task tracepoints.
	 * `hook` points to a struct fhook_wakeup; no other field is taken.
	 * Two measures, both from a task being woken to it running:
	 * - the tracked wakeup, with the kernel tracer's semantics: one task
	 *   at a time, the highest-priority one woken that outranks the task
	 *   that woke it (a deadline task until it runs); its latency is
	 *   reported by a FHOOK_REC_WAKEUP record when it is a new maximum,
	 *   or at least threshold_ns when that is set (tracing_thresh);
	 * - every task of the class: woken, or preempted while runnable, to
	 *   running (BCC's runqlat), into a per-CPU log2 histogram read with
	 *   FHOOK_IOC_LATENCY (the CPU it ran on).
	 * The session's pid filter applies to the woken task, its CPU filter
	 * to the CPU it runs on; the session's own process is left out.
	 */
	FHOOK_PROBE_WAKEUP = 11,
	/*
	 * The timer latency tracer (the kernel's timerlat tracer,
	 * CONFIG_TIMERLAT_TRACER): a kernel thread per CPU of the session's
	 * CPU filter (every CPU online at START without one), bound to it at
	 * SCHED_FIFO, arms a hard-interrupt hrtimer every period; how late
	 * the timer's handler runs and how late the thread then runs are
	 * FHOOK_REC_TIMERLAT records on that CPU.  `hook` points to a
	 * struct fhook_timerlat; no other field is taken.  Needs
	 * CAP_SYS_ADMIN: it runs real-time threads of its own.
	 */
	FHOOK_PROBE_TIMERLAT = 12,
	/*
	 * The hardware latency detector (the kernel's hwlat tracer,
	 * CONFIG_HWLAT_TRACER): a kernel thread moves round-robin over the
	 * session's CPUs (its CPU filter, or every CPU online), one per
	 * window, and spins there with interrupts off for the width, reading
	 * the clock; a window with a gap over the threshold is a
	 * FHOOK_REC_HWLAT record on that CPU.  `hook` points to a struct
	 * fhook_hwlat; no other field is taken.  Needs CAP_SYS_ADMIN: it
	 * disables interrupts.
	 */
	FHOOK_PROBE_HWLAT = 13,
	/*
	 * The operating system noise tracer (the kernel's osnoise tracer,
	 * CONFIG_OSNOISE_TRACER): a kernel thread per CPU of the session's
	 * CPU filter (every CPU online at START without one), bound to it,
	 * reads the clock in a loop for the runtime of every period; a gap
	 * of at least the threshold is noise, attributed to the NMIs,
	 * interrupts, softirqs and other threads the kernel's tracepoints
	 * saw on that CPU meanwhile (hardware noise: none).  Each period is
	 * a FHOOK_REC_OSNOISE record, each gap a FHOOK_REC_OSNOISE_NOISE
	 * record with FHOOK_OSNOISE_EACH.  `hook` points to a struct
	 * fhook_osnoise; no other field is taken.  Needs CAP_SYS_ADMIN: it
	 * takes the CPUs' time.
	 */
	FHOOK_PROBE_OSNOISE = 14,
	/*
	 * The irqsoff, preemptoff and preemptirqsoff tracers (the kernel's
	 * CONFIG_IRQSOFF_TRACER, CONFIG_PREEMPT_TRACER), from the kernel's
	 * irq_disable/irq_enable and preempt_disable/preempt_enable
	 * tracepoints, where it has them (FHOOK_FEAT_IRQSOFF,
	 * FHOOK_FEAT_PREEMPTOFF; refused with FHOOK_R_IRQSOFF_TPS
	 * elsewhere): a section with the kinds asked for off on a CPU,
	 * longer than every one before (or at least the threshold), is a
	 * FHOOK_REC_IRQSOFF record.  `hook` points to a struct
	 * fhook_irqsoff; no other field is taken.
	 */
	FHOOK_PROBE_IRQSOFF = 15,
};

/*
 * Probe ids are 1..FHOOK_MAX_PROBES, given out in order of
 * FHOOK_IOC_PROBE_ADD and never reused within a session: they index the
 * stats area and the LOST records' per-probe breakdown.
 */

/*
 * Function probe.  `filter` and `exclude` point to whitespace-separated
 * lists of patterns in the tracefs grammar understood by ftrace_set_filter()
 * ("vfs_*", "*lock*", "?", "[ab]*").  Patterns in `exclude` go to the
 * ops' notrace list (the "!" form on the command line).  `ips` is an array of
 * function addresses added to the filter (used by userspace for the
 * ":mod:" form, which ftrace_set_filter() does not parse).  At least one
 * filter pattern or ip is required.  A pattern that matches no traceable
 * function fails with ENOENT and `err_index` set to its position (filter
 * patterns first, then exclude patterns, then ips).
 */
/*
 * Record a stack trace with each event: the kernel stack (function
 * probes, kprobes, kretprobes) or the user stack by frame pointers
 * (uprobes).  The record then has FHOOK_CTX_STACK set and ends with the
 * trailer described there.
 */
#define FHOOK_PROBE_F_STACK	(1U << 0)
/*
 * Count hits only, write no records (FHOOK_PROBE_FUNC, _DIRECT, _KPROBE):
 * the cheapest way to know how often a function runs.  Counted in
 * fhook_probe_counters.hits; written stays 0.
 */
#define FHOOK_PROBE_F_COUNT	(1U << 1)
/*
 * FHOOK_PROBE_DIRECT only: the trampoline runs the function's body itself
 * and adds each call's duration (entry to return, ns) to the probe's
 * log2 histogram, read with FHOOK_IOC_LATENCY; no records (libbpf-tools'
 * funclatency, in the module).  Calls the session's filters or the
 * predicate reject are not timed (fhook_probe_counters.filtered).
 * The functions are given by address (`ips`; globs: EINVAL) and the
 * module checks each one's BTF prototype: a variadic one, floating point,
 * a struct by value it cannot pass or more than FHOOK_HOOK_MAX_STACK_ARGS
 * stack words: EOPNOTSUPP; no BTF prototype: ENODATA, unless the caller
 * has CAP_SYS_ADMIN.  The trampoline then copies FHOOK_HOOK_MAX_STACK_ARGS
 * of the caller's stack words for every body.  Not
 * with FHOOK_PROBE_F_STACK, _COUNT or triggers; FHOOK_IOC_DIRECT_MODIFY
 * does not apply.  A function that may end its task without returning
 * (FHOOK_NORETURN_FUNCS) is refused: EDEADLK, err_index naming it.
 */
#define FHOOK_PROBE_F_LATENCY	(1U << 2)
/*
 * Functions a call may never return from (the task exits inside them):
 * a trampoline that runs their bodies (latency, trace-around, the khook
 * API) would count such a call inside for good, and its probe or module
 * could never go.  The module refuses them there (EDEADLK), compiler
 * clones ("do_exit.cold", ".constprop.0") too; the CLI skips them when a
 * glob selects them.  Names as kallsyms spells them, without a suffix.
 */
#define FHOOK_NORETURN_FUNCS						\
	"do_exit", "do_group_exit", "make_task_dead", "do_task_dead",	\
	"kthread_exit", "kthread_complete_and_exit",			\
	"__module_put_and_kthread_exit", "kthread", "get_signal",	\
	"arch_do_signal_or_restart", "exit_to_user_mode_loop",		\
	"exit_to_user_mode_prepare", "syscall_exit_to_user_mode",	\
	"syscall_exit_to_user_mode_work", "irqentry_exit_to_user_mode",	\
	"__x64_sys_exit", "__x64_sys_exit_group", "__ia32_sys_exit",	\
	"__ia32_sys_exit_group", "__do_sys_exit", "__do_sys_exit_group",	\
	"io_wq_worker", "io_worker_exit", "io_sq_thread", "vhost_task_fn",	\
	"panic", "nmi_panic", "__secure_computing", "__seccomp_filter",	\
	"__secure_computing_strict", "secure_computing_strict",		\
	"syscall_trace_enter", "syscall_enter_from_user_mode_work",	\
	"call_usermodehelper_exec_async",					\
	/* arm64's: its syscall path and exit to user mode */		\
	"__arm64_sys_exit", "__arm64_sys_exit_group", "invoke_syscall",	\
	"el0_svc_common", "do_el0_svc", "do_el0_svc_compat", "el0_svc",	\
	"do_notify_resume", "do_signal"

/*
 * FHOOK_PROBE_FUNC with FHOOK_PROBE_F_COUNT: one counter per function as
 * well as the probe's hits (funccount, bpftrace's @[func] = count()), read
 * with FHOOK_IOC_COUNTS.  The functions are given by address (`ips`, at
 * most FHOOK_MAX_COUNT_IPS; patterns: EINVAL).  The counters take
 * 8 bytes per function and possible CPU: E2BIG beyond 64 MiB.
 */
#define FHOOK_PROBE_F_COUNT_IPS	(1U << 3)
#define FHOOK_MAX_COUNT_IPS	16384
/*
 * FHOOK_PROBE_FUNC only (FHOOK_FEAT_WAKEUP_FUNCTION): record only on the
 * CPU the session's wakeup tracer's tracked task is queued on, while it
 * tracks one (from the wakeup to the switch to it, following the task
 * when it migrates): the function calls of the kernel's wakeup tracers'
 * latency traces, whichever task makes them (the session's pid and CPU
 * filters apply to the wakeup tracer's task, not here).  Without a
 * FHOOK_PROBE_WAKEUP in the session nothing is recorded.  Not with
 * FHOOK_PROBE_F_COUNT.
 */
#define FHOOK_PROBE_F_WAKEUP_CPU	(1U << 4)
/*
 * FHOOK_PROBE_KPROBE at a function's entry (ABI 5): through one of the
 * module's direct-call trampolines where it can (x86-64's assembly
 * recorder, FHOOK_REC_FN_KPROBE records): a program that stores whole
 * registers (8-byte fields of the argument registers, %ax or %r10, at
 * most FHOOK_FN_KPROBE_MAX_FIELDS, each at 8 times its index) and no
 * predicate, trigger, histogram or stack.  Otherwise, and when no
 * trampoline slot is free or the function takes no direct call (another
 * direct trampoline is there), the probe runs as without the flag.  Like
 * FHOOK_PROBE_DIRECT it then holds the function's one direct call while
 * armed: a BPF trampoline or a livepatch cannot attach to it meanwhile.
 * Ignored by kretprobes and offsets past the entry.
 */
#define FHOOK_PROBE_F_DIRECT	(1U << 5)
#define FHOOK_PROBE_FLAGS	(FHOOK_PROBE_F_STACK | FHOOK_PROBE_F_COUNT | FHOOK_PROBE_F_LATENCY | \
				 FHOOK_PROBE_F_COUNT_IPS | FHOOK_PROBE_F_WAKEUP_CPU |		\
				 FHOOK_PROBE_F_DIRECT)
#define FHOOK_MAX_STACK		64	/* entries */

struct fhook_probe_add {
	__u32 size;		/* in */
	__u32 type;		/* in: enum fhook_probe_type */
	__u32 flags;		/* in: FHOOK_PROBE_F_* (not for bench probes) */
	__u32 probe_id;		/* out: id stamped into every record */
	__u64 filter;		/* in: user pointer to the filter text */
	__u64 exclude;		/* in: user pointer to the notrace text */
	__u32 filter_len;	/* in: bytes, <= FHOOK_MAX_PATTERN_TEXT */
	__u32 exclude_len;	/* in: bytes, <= FHOOK_MAX_PATTERN_TEXT */
	__u64 ips;		/* in: user pointer to __u64[nr_ips] */
	__u32 nr_ips;		/* in: <= FHOOK_MAX_IPS */
	__s32 err_index;	/* out: failing pattern, or -1 */
	__u64 reserved[4];	/* must be zero */
	/* --- end of the v1 layout (FHOOK_PROBE_ADD_SIZE_V1) --- */
	/*
	 * kprobes and kretprobes: where.  The symbol (no NUL needed) plus
	 * offset, or addr when symbol_len is 0.  A kretprobe's offset is 0.
	 */
	__u64 symbol;		/* in: user pointer to the symbol name */
	__u32 symbol_len;	/* in: bytes, <= FHOOK_MAX_SYMBOL_LEN */
	__u32 maxactive;	/* in: kretprobe instances, 0 = kernel default */
	__u64 offset;		/* in: bytes after the symbol */
	__u64 addr;		/* in: address when symbol_len == 0 */
	/*
	 * What to record: a fetch program (struct fhook_insn[prog_len]) that
	 * stores fields into the record's data_size-byte data area.  For a
	 * kretprobe its first entry_len instructions run at function entry
	 * (arguments), the rest at return ($retval).  prog_len may be 0.
	 */
	__u64 prog;		/* in: user pointer to struct fhook_insn[] */
	__u32 prog_len;		/* in: instructions, <= FHOOK_MAX_INSNS */
	__u32 entry_len;	/* in: kretprobe: instructions run at entry */
	__u32 data_size;	/* in: fixed bytes, <= FHOOK_MAX_DATA_SIZE */
	__u32 __pad;		/* must be zero */
	/* out: the address probed (after the kernel skipped an ENDBR) */
	__u64 probe_addr;
	/*
	 * A predicate program (struct fhook_insn[pred_len], enum
	 * fhook_pred_op) over the fields the fetch program stored and the
	 * task: hits it rejects are not recorded and count as `filtered`.
	 */
	__u64 pred;		/* in: user pointer, 0 = record every hit */
	__u32 pred_len;		/* in: instructions, <= FHOOK_MAX_PRED */
	__u32 __pad2;		/* must be zero */
	/*
	 * in: FHOOK_PROBE_HOOK: user pointer to struct fhook_hook;
	 * FHOOK_PROBE_GRAPH: to struct fhook_graph
	 */
	__u64 hook;
	/*
	 * in: FHOOK_PROBE_F_LATENCY: 0..FHOOK_HOOK_MAX_STACK_ARGS (the words
	 * of arguments the callers pass on the stack); else 0.  Checked, not
	 * used: the module decides from BTF (FHOOK_PROBE_F_LATENCY above).
	 */
	__u32 stack_args;
	__u32 __pad3;		/* must be zero */
};

/*
 * IPMODIFY hooks.  The hooked function's calls that pass the session's
 * filters and the probe's predicate are "matching"; of those, the action
 * runs on the ones the conditions select (all set conditions must hold):
 * the nth matching call only, every nth, at most `times` times, with a
 * probability.  Counted: fhook_probe_counters.hits (actions run; each
 * is recorded unless RETURN/REDIRECT without FHOOK_HOOK_F_RECORD) and
 * .filtered (calls left alone).
 *
 * RETURN and REDIRECT change what the kernel does and are refused (EPERM)
 * unless the module was loaded with lab=1 (FHOOK_FEAT_LAB).
 */
enum fhook_hook_action {
	/* skip the function: return retval to the caller (fault injection) */
	FHOOK_HOOK_RETURN = 1,
	/* call the function at `redirect` (same prototype) instead */
	FHOOK_HOOK_REDIRECT = 2,
	/*
	 * Call the function, then write one record: the fetch program's
	 * fields taken at entry, the return value and the duration.  The
	 * original runs from our trampoline; a hook removed while tasks are
	 * inside the function stays until the last one has returned
	 * (the module cannot be unloaded until then).
	 */
	FHOOK_HOOK_AROUND = 3,
	FHOOK_HOOK_ACTION_MAX,
};

/* RETURN, REDIRECT: write a record each time the action runs */
#define FHOOK_HOOK_F_RECORD	(1U << 0)
#define FHOOK_HOOK_FLAGS	FHOOK_HOOK_F_RECORD

#define FHOOK_HOOK_MAX_PROBABILITY	1000000U	/* parts per million */
#define FHOOK_HOOK_MAX_STACK_ARGS	8	/* stack words copied for AROUND */
#define FHOOK_HOOK_AROUND_DATA		256	/* bytes of entry fields (AROUND) */

struct fhook_hook {
	__u32 size;		/* in */
	__u32 action;		/* in: enum fhook_hook_action */
	__u32 flags;		/* in: FHOOK_HOOK_F_* */
	__u32 probability;	/* in: ppm, 0 = always */
	__s64 retval;		/* in: RETURN: the value returned */
	__u64 redirect;		/* in: REDIRECT: address of the function called instead */
	__u64 nth;		/* in: only the nth matching call (1-based), 0 = off */
	__u64 every;		/* in: every nth matching call, 0 = off */
	__u64 times;		/* in: at most this many actions, 0 = no limit */
	/*
	 * AROUND: 0..FHOOK_HOOK_MAX_STACK_ARGS (the words of arguments the
	 * callers pass on the stack); checked, not used.  The module checks
	 * the function's BTF prototype and refuses one it cannot pass on
	 * (variadic, floating point, a struct by value it cannot pass, more
	 * than FHOOK_HOOK_MAX_STACK_ARGS stack words: EOPNOTSUPP); without
	 * BTF it runs the body for CAP_SYS_ADMIN only (others: ENODATA).  The
	 * trampoline copies FHOOK_HOOK_MAX_STACK_ARGS words for the body.
	 */
	__u32 stack_args;
	__u32 __pad;		/* must be zero */
	__u64 reserved[3];	/* must be zero */
};

/* Call graphs (FHOOK_PROBE_GRAPH). */
/* leave out calls made in hardirq context (options/funcgraph-irqs 0) */
#define FHOOK_GRAPH_F_NO_IRQS	(1U << 0)
/*
 * entry records carry the six argument registers (fhook_rec_graph_ent.args);
 * with FHOOK_GRAPH_F_ERRORS (FHOOK_FEAT_ERRORS_FRAMES), each frame of a
 * FHOOK_REC_ERRORS record does (FHOOK_ERRORS_ARGS)
 */
#define FHOOK_GRAPH_F_ARGS	(1U << 1)
/*
 * (FHOOK_FEAT_ERRORS) no call records: each task's calls are kept in the
 * module, and when a graph function returns an error (a value in
 * [-FHOOK_MAX_ERRNO, -1] as a long, or as an int in the low 32 bits with
 * the high 32 zero or all ones; 0 for fhook_graph.zero_ips, nothing for
 * none_ips) the chain of calls that failed below it is written as one
 * FHOOK_REC_ERRORS record.  Implies FHOOK_GRAPH_F_NO_IRQS; refuses
 * threshold_ns (EINVAL), and FHOOK_GRAPH_F_ARGS before
 * FHOOK_FEAT_ERRORS_FRAMES.
 */
#define FHOOK_GRAPH_F_ERRORS	(1U << 2)
/*
 * (FHOOK_FEAT_ERRORS_TYPES, with FHOOK_GRAPH_F_ERRORS only) each
 * FHOOK_REC_ERRORS record of a task's call carries the task's user stack
 * (FHOOK_CTX_STACK, by frame pointers, as a uprobe's)
 */
#define FHOOK_GRAPH_F_USTACK	(1U << 3)
/*
 * (FHOOK_FEAT_ERRORS_FRAMES, with FHOOK_GRAPH_F_ERRORS only) each frame of a
 * FHOOK_REC_ERRORS record with where it was called from (FHOOK_ERRORS_CALLSITES)
 */
#define FHOOK_GRAPH_F_CALLSITES	(1U << 4)
#define FHOOK_GRAPH_FLAGS	(FHOOK_GRAPH_F_NO_IRQS | FHOOK_GRAPH_F_ARGS | FHOOK_GRAPH_F_ERRORS | \
				 FHOOK_GRAPH_F_USTACK | FHOOK_GRAPH_F_CALLSITES)
/*
 * fhook's own functions a call graph (graph, errors) may watch: the hook
 * API's, named fhook_khook_* or __fhook_khook_* (kmod/khook.c: a module's
 * init and exit, never a tracer's callback); any other of fhook's is
 * refused (FHOOK_R_SELF)
 */
#define FHOOK_HOOK_API_PREFIX	"fhook_khook_"
#define FHOOK_MAX_ERRNO		4095	/* the kernel's MAX_ERRNO */
#define FHOOK_ERRORS_MAX_FRAMES	64	/* frames of one chain (and kept per task) */
#define FHOOK_GRAPH_MAX_DEPTH	128	/* frames per task (and max_graph_depth) */
#define FHOOK_GRAPH_DEF_TASKS	256
#define FHOOK_GRAPH_MAX_TASKS	4096
#define FHOOK_GRAPH_NR_ARGS	6

struct fhook_graph {
	__u32 size;		/* in */
	__u32 flags;		/* in: FHOOK_GRAPH_F_* */
	/* in: calls deeper than this are not traced (max_graph_depth), 0 = MAX */
	__u32 max_depth;
	/*
	 * in: tasks inside the graph at once (shadow stacks, preallocated),
	 * 0 = FHOOK_GRAPH_DEF_TASKS; a task that finds none left is not
	 * traced and counts as missed
	 */
	__u32 max_tasks;
	/*
	 * in: tracing_thresh: only calls that lasted at least this long are
	 * recorded, by their return record only (no entry records); 0 = all
	 */
	__u64 threshold_ns;
	/*
	 * in (FHOOK_FEAT_GRAPH_ALL): the functions traced below the graph
	 * functions, as names (all_filter: whitespace-separated globs) and
	 * addresses (all_ips: nr_all_ips __u64, at most FHOOK_MAX_IPS),
	 * armed FHOOK_ARM_SLICE addresses at a time, as a function probe's.
	 * Both empty: every traceable function except the graph functions'
	 * patterns, the notrace patterns and fhook's own functions, armed in
	 * one step (one pass of ftrace over every call site, which never
	 * yields the CPU).
	 */
	__u64 all_filter;
	__u64 all_ips;
	__u32 all_filter_len;
	__u32 nr_all_ips;
	/*
	 * in (FHOOK_FEAT_ERRORS_TYPES, with FHOOK_GRAPH_F_ERRORS only): what
	 * the functions' return values mean, from their types.  zero_ips:
	 * functions for which 0 is a failure too (pointers: NULL); none_ips:
	 * functions none of whose values is a failure (void, unsigned, enum,
	 * bool unless in false_ips).  Any other function fails
	 * with an errno only.  Each nr_zero_ips / nr_none_ips __u64 function
	 * addresses (the first byte, or the fentry call site), at most
	 * FHOOK_MAX_IPS.  Absent from a struct of FHOOK_GRAPH_SIZE_VER0.
	 */
	__u64 zero_ips;
	__u64 none_ips;
	__u32 nr_zero_ips;
	__u32 nr_none_ips;
	/*
	 * in (FHOOK_FEAT_ERRORS_TYPES, with FHOOK_GRAPH_F_ERRORS only): what
	 * makes a graph function's return a failure, instead of its value's
	 * kind: a predicate program (struct fhook_insn[fail_pred_len], enum
	 * fhook_pred_op, at most FHOOK_MAX_PRED) run on the return register
	 * as 8 bytes of data (a FIELD at offset 0: the register, or the low 4
	 * bytes an int holds).  The calls below are judged as above still.
	 * A bad instruction: EINVAL, and LAST_ERROR says FAIL_PRED, its index.
	 */
	__u64 fail_pred;
	__u32 fail_pred_len;
	/*
	 * in (FHOOK_FEAT_ERRORS_TYPES, with FHOOK_GRAPH_F_ERRORS only):
	 * functions returning bool that fail with false: the low byte 0 (the
	 * rest of the register is undefined), never an errno.  At most
	 * FHOOK_MAX_IPS addresses, as zero_ips.
	 */
	__u32 nr_false_ips;
	__u64 false_ips;
};

#define FHOOK_GRAPH_SIZE_VER0	48	/* up to nr_all_ips */

/* The wakeup tracer's classes (fhook_wakeup.class), the kernel's tracers */
enum fhook_wakeup_class {
	FHOOK_WAKEUP_ALL = 0,	/* wakeup: every scheduling class */
	FHOOK_WAKEUP_RT = 1,	/* wakeup_rt: SCHED_FIFO, SCHED_RR and deadline tasks */
	FHOOK_WAKEUP_DL = 2,	/* wakeup_dl: SCHED_DEADLINE tasks */
};

/*
 * fhook_wakeup.flags (FHOOK_FEAT_WAKEUP_HIST): the histograms only, no
 * tracked wakeup and no report (what top and hist need); the waker's
 * stack and the switch's with each report (a stack walk per tracked
 * wakeup and one at each switch to the tracked task, which the kernel's
 * tracer always takes)
 */
#define FHOOK_WAKEUP_F_HIST_ONLY	(1U << 0)
#define FHOOK_WAKEUP_F_STACK		(1U << 1)

struct fhook_wakeup {
	__u32 size;		/* in */
	__u32 wclass;		/* in: enum fhook_wakeup_class */
	/*
	 * in: report every tracked wakeup that took at least this long, not
	 * only new maxima (tracing_thresh); 0 = new maxima only
	 */
	__u64 threshold_ns;
	__u32 flags;		/* in: FHOOK_WAKEUP_F_* */
	__u32 __pad;		/* must be zero */
	__u64 reserved;		/* must be zero */
};

/*
 * A wakeup probe's hist tables (FHOOK_IOC_HIST_SET, FHOOK_FEAT_WAKEUP_HIST)
 * count the waits of its histogram, one at each switch to a task of the
 * class: FHOOK_HIST_SRC_DATA fields are this struct's, FHOOK_HIST_SRC_CPU
 * is the task's CPU, FHOOK_HIST_F_COMM keeps the task's name (`comm`);
 * nothing of `current` (the task switched out): no FHOOK_HIST_SRC_PID,
 * _COMM or _USTACK.  Keyed by pid or tgid and `bucket`, a table is
 * runqlat -L's or -P's histograms.
 */
struct fhook_wakeup_sample {
	__u64 latency;		/* ns, from the wakeup (or preemption) to the switch */
	__u32 pid;		/* the task's */
	__u32 tgid;
	__s32 prio;		/* task_struct.prio */
	__u32 bucket;		/* FHOOK_IOC_LATENCY's bucket of `latency`: fls64() */
	char comm[16];		/* the task's (FHOOK_COMM_LEN) */
};

#define FHOOK_TIMERLAT_MIN_PERIOD_US	100	/* the kernel's timerlat_period_us bounds */
#define FHOOK_TIMERLAT_MAX_PERIOD_US	1000000

struct fhook_timerlat {
	__u32 size;		/* in */
	__u32 period_us;	/* in: the timer's period, 100..1,000,000 us */
	/* in: the threads' SCHED_FIFO priority, 1..99; 0: 95 (the kernel's) */
	__u32 prio;
	__u32 __pad;		/* must be zero */
	/*
	 * in: stop at the first IRQ (thread) latency at least this long
	 * (the kernel's stop_tracing_us, stop_tracing_total_us); 0: never
	 */
	__u64 stop_irq_ns;
	__u64 stop_thread_ns;
	__u64 reserved[2];	/* must be zero */
};

#define FHOOK_HWLAT_MIN_WINDOW_US	1000		/* 1 ms .. 10 s */
#define FHOOK_HWLAT_MAX_WINDOW_US	10000000
#define FHOOK_HWLAT_MAX_WIDTH_US	1000000		/* interrupts off a second at most */

struct fhook_hwlat {
	__u32 size;		/* in */
	__u32 flags;		/* in: must be zero */
	__u64 window_us;	/* in: one sample per window (the kernel's 1,000,000) */
	/* in: interrupts off this long in each window, below it (500,000) */
	__u64 width_us;
	/* in: report gaps over this, below the width; 0: 10 us (the kernel's) */
	__u64 threshold_ns;
	__u64 reserved[2];	/* must be zero */
};

#define FHOOK_OSNOISE_MIN_RUNTIME_US	100		/* the kernel's osnoise bounds */
#define FHOOK_OSNOISE_MAX_PERIOD_US	10000000
/* flags: a FHOOK_REC_OSNOISE_NOISE record for each gap, too */
#define FHOOK_OSNOISE_EACH		(1U << 0)

struct fhook_osnoise {
	__u32 size;		/* in */
	__u32 flags;		/* in: FHOOK_OSNOISE_* */
	__u32 period_us;	/* in: 100..10,000,000 us (the kernel's 1,000,000) */
	/* in: the time sampled in each period, 100 us..period_us (1,000,000) */
	__u32 runtime_us;
	/* in: a gap this long or longer is noise; 0: 5 us (the kernel's) */
	__u64 threshold_ns;
	/*
	 * in: stop at the first gap (period's noise) at least this long (the
	 * kernel's stop_tracing_us, stop_tracing_total_us); 0: never
	 */
	__u64 stop_single_ns;
	__u64 stop_total_ns;
	/*
	 * in: 0: SCHED_OTHER (the kernel's); 1..99: that SCHED_FIFO priority,
	 * with a runtime below the period
	 */
	__u32 prio;
	__u32 __pad;		/* must be zero */
	__u64 reserved[2];	/* must be zero */
};

/* kinds: sections with interrupts off (irqsoff), preemption off (preemptoff) */
#define FHOOK_IRQSOFF_IRQ	(1U << 0)
#define FHOOK_IRQSOFF_PREEMPT	(1U << 1)	/* both: either off (preemptirqsoff) */

struct fhook_irqsoff {
	__u32 size;		/* in */
	__u32 kinds;		/* in: FHOOK_IRQSOFF_*, one or both */
	/*
	 * in: report every section at least this long (tracing_thresh); 0:
	 * each one longer than every one before (max_latency)
	 */
	__u64 threshold_ns;
	__u64 reserved[2];	/* must be zero */
};

/* Size of struct fhook_probe_add before the kprobe fields (ABI 1.0). */
#define FHOOK_PROBE_ADD_SIZE_V1	88

#define FHOOK_MAX_SYMBOL_LEN	4095	/* a uprobe's path: PATH_MAX - 1 */
#define FHOOK_MAX_MAXACTIVE	4096
#define FHOOK_MAX_PATTERN_TEXT	65536
#define FHOOK_MAX_PATTERN_LEN	255
#define FHOOK_MAX_IPS		65536
/*
 * A function probe (FHOOK_PROBE_FUNC) given more addresses than this is
 * armed and disarmed this many at a time, rescheduling in between: ftrace
 * patches all the sites of one filter change without yielding the CPU.
 * Userspace expands a glob of more functions into addresses to get this.
 */
#define FHOOK_ARM_SLICE		2048
#define FHOOK_MAX_PROBES	64

/* Pid filter: records only from these threads/processes. */
#define FHOOK_PIDF_FOLLOW_FORK	(1U << 0)	/* add children, drop exited */
#define FHOOK_PIDF_RESET	(1U << 1)	/* clear the set first */
/*
 * Never record the calling process (its tgid), whatever the pid set says:
 * a tracer must not trace its own output path (vfs_write of its stdout...).
 * Without this flag, the setting is cleared.
 */
#define FHOOK_PIDF_IGNORE_SELF	(1U << 2)
#define FHOOK_PIDF_ALL		(FHOOK_PIDF_FOLLOW_FORK | FHOOK_PIDF_RESET | \
				 FHOOK_PIDF_IGNORE_SELF)

struct fhook_pid_filter {
	__u32 size;		/* in */
	__u32 flags;		/* in: FHOOK_PIDF_* */
	__u32 nr_pids;		/* in: <= FHOOK_MAX_FILTER_PIDS */
	__u32 __pad;		/* must be zero */
	/* in: user pointer to __u32[nr_pids]; matches a tid or a tgid */
	__u64 pids;
	__u64 reserved[2];	/* must be zero */
};

#define FHOOK_MAX_FILTER_PIDS	4096

struct fhook_cpu_filter {
	__u32 size;		/* in */
	__u32 nr_bits;		/* in: bits in mask, <= 8 * FHOOK_MAX_CPUMASK */
	/* in: user pointer to a __u64 bitmap, CPU n = bit n % 64 of word n / 64 */
	__u64 mask;
	__u64 reserved[2];	/* must be zero */
};

#define FHOOK_MAX_CPUMASK	1024	/* bytes */

/*
 * Summary counters; hits == written + lost once the probe is idle.  The
 * mmap'd stats area (struct fhook_probe_counters) has the details.
 */
struct fhook_cpu_stats {
	__u64 hits;		/* invocations recorded or lost (not frozen) */
	__u64 written;		/* records for the reader (not overwritten) */
	__u64 lost;		/* dropped + overwritten */
	__u64 missed;		/* invocations skipped by recursion guard */
};

#define FHOOK_STATS_SESSION	0xffffffffU

/*
 * The mmap'd stats area: counters per CPU and probe, updated by the probe
 * on that CPU with single (unlocked) increments, so a reader on another CPU
 * sees each counter monotonic but the set not as one snapshot.  For one
 * (CPU, probe): hits == written + dropped + frozen once the probe is idle;
 * overwritten counts written records evicted unread (overwrite mode);
 * filtered and missed are hits that never happened (pid/cpu filter,
 * recursion guard).
 */
struct fhook_probe_counters {
	__u64 hits;		/* invocations that passed the filters */
	__u64 written;		/* records committed to the ring */
	__u64 dropped;		/* records lost: ring full or nesting too deep */
	__u64 overwritten;	/* written, then evicted unread (overwrite mode) */
	__u64 filtered;		/* rejected by the pid or cpu filter */
	__u64 missed;		/* skipped by the recursion guard */
	__u64 frozen;		/* not recorded: session frozen (snapshot) */
	__u64 reserved;
};

struct fhook_stats_area {
	__u32 abi_version;
	__u32 nr_cpus;		/* nr_cpu_ids */
	__u32 max_probes;	/* FHOOK_MAX_PROBES */
	__u32 entry_size;	/* sizeof(struct fhook_probe_counters) */
	__u64 entries_offset;	/* byte offset of the counters from the start */
	__u64 map_size;		/* bytes to mmap, a multiple of the page size */
	/*
	 * Snapshot triggers fired (FHOOK_TRIG_SNAPSHOT): the session froze
	 * itself; a reader that sees this grow reads the rings (with
	 * FHOOK_IOC_SNAPSHOT freeze, which waits for writers) and resumes.
	 */
	__u64 snapshots;
	/*
	 * Probes whose hits are counted outside this area for now, bit
	 * (id - 1): a direct probe on the fast counting trampoline (hits
	 * in a per-CPU counter until disarm folds them in here) or a latency
	 * probe (calls timed, FHOOK_IOC_LATENCY).  FHOOK_IOC_STATS includes
	 * them.  Set before such a probe is armed; cleared (release) after
	 * the fold, so a reader that sees the bit clear (acquire) sees the
	 * folded hits.
	 */
	__u64 hits_elsewhere;
	__u64 reserved[2];
	/*
	 * At entries_offset: struct fhook_probe_counters
	 * [nr_cpus][max_probes], probe id p at index p - 1.
	 */
};

struct fhook_stats {
	__u32 size;		/* in */
	__u32 probe_id;		/* in: probe id or FHOOK_STATS_SESSION */
	__u32 nr_cpus;		/* in: entries at `cpus`; out: entries written */
	__u32 flags;		/* in: must be 0 */
	/* in: user pointer to fhook_cpu_stats[nr_cpus], may be 0 */
	__u64 cpus;
	struct fhook_cpu_stats total;	/* out: sum over CPUs */
	__u64 reserved[4];	/* must be zero */
};

/*
 * Fetch programs: what a kprobe records, compiled by userspace from the
 * tracefs fetch-argument language ("dfd=%di name=+0(%si):string") and
 * verified by the module before the probe is armed.  A program is a list of
 * fields; each is one load (REG, ARG, STACK, STACKP, RETVAL, IMM), up to
 * FHOOK_MAX_DEREF DEREF/UDEREF, and one store (ST_*), or ST_COMM alone.
 * There are no jumps.  Memory is read with the *_nofault helpers: a fault
 * sets the field's bit in fhook_rec_probe.faults (the store's index in the
 * program) and leaves the field zero.
 */
enum fhook_op {
	FHOOK_OP_REG = 1,	/* val = register arg (enum fhook_reg) */
	FHOOK_OP_ARG,		/* val = argument arg (1-based, calling convention) */
	FHOOK_OP_STACK,		/* val = arg-th word of the stack (user stack in uprobes) */
	FHOOK_OP_STACKP,	/* val = the stack pointer */
	FHOOK_OP_RETVAL,	/* val = return value (kretprobe return part) */
	FHOOK_OP_IMM,		/* val = imm */
	FHOOK_OP_DEREF,		/* val = *(u64 *)(val + imm), kernel memory */
	FHOOK_OP_UDEREF,	/* val = *(u64 *)(val + imm), user memory */
	FHOOK_OP_ST_RAW,	/* data[dst..] = low `size` bytes of val */
	/* data[dst..] = arg elements of `size` bytes at val + imm (arrays) */
	FHOOK_OP_ST_MEM,
	FHOOK_OP_ST_UMEM,	/* the same from user memory */
	/*
	 * The NUL-terminated string at val + imm, at most arg bytes with the
	 * NUL, goes after the fixed area; data[dst..] gets a __u32 data_loc:
	 * length (NUL included, 0 when it faulted) << 16 | offset in data[],
	 * with FHOOK_LOC_CUT set when the string did not end within arg bytes
	 * or the record's room (it is cut there, still NUL-terminated).
	 */
	FHOOK_OP_ST_STRING,
	FHOOK_OP_ST_USTRING,	/* the same from user memory */
	FHOOK_OP_ST_COMM,	/* current->comm as a string (no load before) */
	FHOOK_OP_MAX,
};

/*
 * Registers for FHOOK_OP_REG, named as tracefs names them: x86-64's (%ax,
 * ...) and arm64's (%x0..%x30, %sp, %pc, %pstate; its %sp is
 * FHOOK_REG_SP).  A module refuses (FHOOK_R_PROG) a register its CPU does
 * not have.
 */
enum fhook_reg {
	FHOOK_REG_AX, FHOOK_REG_BX, FHOOK_REG_CX, FHOOK_REG_DX,
	FHOOK_REG_SI, FHOOK_REG_DI, FHOOK_REG_BP, FHOOK_REG_SP,
	FHOOK_REG_R8, FHOOK_REG_R9, FHOOK_REG_R10, FHOOK_REG_R11,
	FHOOK_REG_R12, FHOOK_REG_R13, FHOOK_REG_R14, FHOOK_REG_R15,
	FHOOK_REG_IP, FHOOK_REG_FLAGS, FHOOK_REG_CS, FHOOK_REG_SS,
	FHOOK_REG_ORIG_AX,
	/* arm64: x0..x30 are FHOOK_REG_X0 + n */
	FHOOK_REG_X0,
	FHOOK_REG_X30 = FHOOK_REG_X0 + 30,
	FHOOK_REG_PC, FHOOK_REG_PSTATE,
	FHOOK_REG_MAX,
};

struct fhook_insn {
	__u8 op;		/* enum fhook_op */
	__u8 size;		/* ST_RAW, ST_MEM: 1, 2, 4 or 8; else 0 */
	__u16 dst;		/* stores: byte offset in the data area */
	__u32 arg;		/* register, number, element count, max length */
	__s64 imm;		/* IMM value, DEREF and ST_* offset */
};

#define FHOOK_MAX_INSNS		1024
#define FHOOK_MAX_FIELDS	64	/* stores per program (faults bitmap) */
#define FHOOK_MAX_DEREF		16	/* per field */
#define FHOOK_MAX_ARGN		32	/* $argN */
#define FHOOK_MAX_STACKN	1024	/* $stackN */
#define FHOOK_MAX_ARRAY		256	/* ST_MEM elements */
#define FHOOK_MAX_STRING	4096	/* bytes of one string, NUL included */
#define FHOOK_MAX_DATA_SIZE	2048	/* fixed data area */
/*
 * A record's data (fixed area + strings) never exceeds this: strings that
 * do not fit are cut (still NUL-terminated).
 */
#define FHOOK_MAX_PROBE_DATA	4096
/* a string's data_loc: the string was cut; its length and offset */
#define FHOOK_LOC_CUT		(1U << 31)
#define FHOOK_LOC_LEN(loc)	(((loc) >> 16) & 0x7fff)
#define FHOOK_LOC_OFF(loc)	((loc) & 0xffff)

/*
 * Predicate programs (filters): evaluated on a hit after the fetch program
 * ran, before a record is reserved.  Postfix (RPN) over a stack of
 * booleans at most FHOOK_PRED_STACK deep; each test pushes one, AND/OR pop
 * two and push one, NOT replaces the top; the program leaves exactly one.
 */
enum fhook_pred_op {
	/* the field of `size` bytes at data[dst] CMP imm; arg: enum fhook_cmp | SIGNED */
	FHOOK_PRED_FIELD = 1,
	FHOOK_PRED_PID,		/* current thread id CMP imm */
	FHOOK_PRED_TGID,	/* current process id CMP imm */
	FHOOK_PRED_CPU,		/* CPU CMP imm */
	/*
	 * The string whose data_loc is at data[dst] (EQ, NE, GLOB) against a
	 * constant of imm bytes stored NUL-terminated in the raw bytes of the
	 * DIV_ROUND_UP(imm + 1, 16) instructions that follow.  A string whose
	 * fetch faulted equals nothing.
	 */
	FHOOK_PRED_STR,
	FHOOK_PRED_COMM,	/* current->comm against a constant, as STR */
	FHOOK_PRED_AND,
	FHOOK_PRED_OR,
	FHOOK_PRED_NOT,
	FHOOK_PRED_MAX,
};

enum fhook_cmp {
	FHOOK_CMP_EQ = 1,
	FHOOK_CMP_NE,
	FHOOK_CMP_LT,
	FHOOK_CMP_LE,
	FHOOK_CMP_GT,
	FHOOK_CMP_GE,
	FHOOK_CMP_BITS,		/* (value & imm) != 0 */
	FHOOK_CMP_GLOB,		/* strings: glob_match(constant, string) */
	FHOOK_CMP_MAX,
};

#define FHOOK_PRED_SIGNED	(1U << 8)	/* FIELD: compare as signed */
#define FHOOK_MAX_PRED		512
#define FHOOK_PRED_STACK	16
#define FHOOK_MAX_PRED_STRING	255

#define FHOOK_IOC_MAGIC		0xF4

/*
 * The size in these numbers is informational: the module dispatches on
 * type and number and trusts the `size` field, so that structs can grow.
 */
#define FHOOK_IOC_HANDSHAKE	_IOWR(FHOOK_IOC_MAGIC, 0x00, struct fhook_handshake)
#define FHOOK_IOC_RING_SETUP	_IOWR(FHOOK_IOC_MAGIC, 0x01, struct fhook_ring_setup)
#define FHOOK_IOC_PROBE_ADD	_IOWR(FHOOK_IOC_MAGIC, 0x02, struct fhook_probe_add)
#define FHOOK_IOC_PID_FILTER	_IOW(FHOOK_IOC_MAGIC, 0x03, struct fhook_pid_filter)
#define FHOOK_IOC_CPU_FILTER	_IOW(FHOOK_IOC_MAGIC, 0x04, struct fhook_cpu_filter)
#define FHOOK_IOC_START		_IO(FHOOK_IOC_MAGIC, 0x05)	/* arm probes */
#define FHOOK_IOC_STOP		_IO(FHOOK_IOC_MAGIC, 0x06)	/* disarm, drain */
#define FHOOK_IOC_STATS		_IOWR(FHOOK_IOC_MAGIC, 0x07, struct fhook_stats)
#define FHOOK_IOC_SNAPSHOT	_IOW(FHOOK_IOC_MAGIC, 0x08, struct fhook_snapshot)
#define FHOOK_IOC_BENCH		_IOWR(FHOOK_IOC_MAGIC, 0x09, struct fhook_bench)
#define FHOOK_IOC_TRIGGER_ADD	_IOW(FHOOK_IOC_MAGIC, 0x0a, struct fhook_trigger)
#define FHOOK_IOC_DIRECT_MODIFY	_IOW(FHOOK_IOC_MAGIC, 0x0b, struct fhook_direct_modify)
#define FHOOK_IOC_READ_TEXT	_IOWR(FHOOK_IOC_MAGIC, 0x0c, struct fhook_read_text)
#define FHOOK_IOC_LATENCY	_IOWR(FHOOK_IOC_MAGIC, 0x0d, struct fhook_latency)
#define FHOOK_IOC_COUNTS	_IOWR(FHOOK_IOC_MAGIC, 0x0e, struct fhook_counts)
#define FHOOK_IOC_KHOOKS	_IOWR(FHOOK_IOC_MAGIC, 0x0f, struct fhook_khooks)
#define FHOOK_IOC_HIST_SET	_IOW(FHOOK_IOC_MAGIC, 0x10, struct fhook_hist_set)
#define FHOOK_IOC_HIST_READ	_IOWR(FHOOK_IOC_MAGIC, 0x11, struct fhook_hist_read)
#define FHOOK_IOC_LAST_ERROR	_IOWR(FHOOK_IOC_MAGIC, 0x12, struct fhook_last_error)
#define FHOOK_IOC_SYMBOLS	_IOWR(FHOOK_IOC_MAGIC, 0x13, struct fhook_symbols)

/*
 * Why the module refused an ioctl, as tracefs's error_log says why it
 * refused a command: one table for the module (which names the reason
 * where it refuses) and userspace (which prints the text).  The errno
 * stays what it was; FHOOK_IOC_LAST_ERROR reads the reason of the
 * session's last refused ioctl, and the field, pattern or instruction
 * it concerns where there is one.  The table: fhook_reasons.h.
 */
#define FHOOK_REASON(name, text)	FHOOK_R_##name,
enum fhook_reason {
#include "fhook_reasons.h"
	FHOOK_R_MAX
};
#undef FHOOK_REASON

/* FHOOK_IOC_LAST_ERROR (FHOOK_FEAT_REASONS) */
struct fhook_last_error {
	__u32 size;		/* in */
	__u32 reason;		/* out: enum fhook_reason */
	__s32 index;		/* out: the field, pattern or instruction, or -1 */
	__u32 cmd;		/* out: _IOC_NR() of the ioctl refused */
	__s32 err;		/* out: the errno it returned, negative (0: none refused) */
	__u32 __pad;		/* must be zero */
	__u64 reserved[2];	/* must be zero */
};

/*
 * Switch an armed FHOOK_PROBE_DIRECT probe to the counting trampoline
 * (FHOOK_PROBE_F_COUNT in flags) or the recording one (flags 0), with
 * modify_ftrace_direct(): no call of the function is missed.
 */
struct fhook_direct_modify {
	__u32 size;		/* in */
	__u32 probe_id;		/* in */
	__u32 flags;		/* in: FHOOK_PROBE_F_COUNT or 0 */
	__u32 __pad;		/* must be zero */
	__u64 reserved[2];	/* must be zero */
};

/*
 * The histogram of a FHOOK_PROBE_F_LATENCY probe or a FHOOK_PROBE_WAKEUP
 * tracer, summed over CPUs or one CPU's (FHOOK_LATENCY_F_CPU: EINVAL for
 * a CPU that is not possible); any time, armed or not (calls still inside
 * the function are not in it).
 * buckets[0] counts calls of 0 ns, buckets[i] those of [2^(i-1), 2^i) ns,
 * the last one everything longer.  A reader that wants intervals
 * subtracts two reads.
 */
#define FHOOK_LAT_BUCKETS	64

/* FHOOK_FEAT_WAKEUP: one CPU's histogram (`cpu`), not their sum */
#define FHOOK_LATENCY_F_CPU	(1U << 0)

struct fhook_latency {
	__u32 size;		/* in */
	__u32 probe_id;		/* in */
	__u32 flags;		/* in: FHOOK_LATENCY_F_* */
	__u32 nr_buckets;	/* out: FHOOK_LAT_BUCKETS */
	__u64 count;		/* out: calls timed (sum of the buckets) */
	__u64 sum_ns;		/* out: their total duration */
	__u64 inflight;		/* out: calls inside the function now (sum only) */
	__u32 cpu;		/* in: FHOOK_LATENCY_F_CPU, else 0 */
	__u32 __pad;		/* must be zero */
	/* out (FHOOK_FEAT_WAKEUP): the shortest and longest, 0 without any */
	__u64 min_ns;
	__u64 max_ns;
	__u64 buckets[FHOOK_LAT_BUCKETS];	/* out */
};

/*
 * A histogram kept in the module (fhook hist): FHOOK_IOC_HIST_SET, before
 * START, makes a probe's hits go into a table instead of its ring: each
 * hit that passes the probe's filter is a key made of nr_keys fields, and
 * the table counts the hits of each key and adds up nr_vals fields, as
 * the kernel's hist triggers do (tracing_map: lock-free, shared by the
 * CPUs, at most `size` keys; a hit whose key would be one more counts as
 * dropped).  Function probes (FHOOK_PROBE_FUNC by ftrace_ops, no stack or
 * triggers), kprobes, uprobes and tracepoints take one.
 *
 * A field is 8 bytes of the key (FHOOK_HIST_SRC_COMM: 16): a number from
 * the probe's record data (`offset`, `size` 1, 2, 4 or 8 bytes,
 * FHOOK_HIST_F_SIGNED sign-extends; 0 when fetch `store` faulted), or the
 * task's pid, its CPU, its name, a function probe's ip or parent ip; then
 * `op`: ceil(log2), rounded down to a multiple of `param`, or divided by
 * `param`.  FHOOK_HIST_SRC_STACK (a key of function probes and kprobes,
 * one per table) is FHOOK_HIST_STACK_DEPTH words: the kernel stack from
 * the probed function up, as a record's stack (FHOOK_PROBE_F_STACK)
 * starts, zeros after its last frame.  FHOOK_HIST_SRC_USTACK (a key of
 * any probe, one per table; FHOOK_FEAT_HIST_USTACK) is the task's tgid,
 * then FHOOK_HIST_STACK_DEPTH words of its user stack by frame pointers:
 * a uprobe's from where it hit, other probes' from where the task entered
 * the kernel (a system call, a fault, an interrupt of user code); no
 * frames for kernel threads.
 *
 * A probe takes up to FHOOK_HIST_MAX_TABLES tables (`table` 0, 1, ...
 * set in order; FHOOK_FEAT_HIST_STACK), each hit counted in all of them.
 */
#define FHOOK_HIST_MAX_KEYS	3
#define FHOOK_HIST_MAX_VALS	2
#define FHOOK_HIST_MIN_SIZE	128
#define FHOOK_HIST_MAX_SIZE	131072
#define FHOOK_HIST_NO_STORE	0xffff
#define FHOOK_HIST_STACK_DEPTH	16	/* as the kernel's HIST_STACKTRACE_DEPTH */
#define FHOOK_HIST_MAX_TABLES	4

enum fhook_hist_src {
	FHOOK_HIST_SRC_DATA = 1,	/* the record's data: offset, size */
	FHOOK_HIST_SRC_PID = 2,		/* current->pid */
	FHOOK_HIST_SRC_CPU = 3,
	FHOOK_HIST_SRC_COMM = 4,	/* current->comm: 16 bytes (keys only) */
	FHOOK_HIST_SRC_IP = 5,		/* function probes: the function */
	FHOOK_HIST_SRC_PARENT_IP = 6,	/* function probes: the call site */
	FHOOK_HIST_SRC_STACK = 7,	/* keys of function probes, kprobes: the stack */
	FHOOK_HIST_SRC_USTACK = 8,	/* keys: tgid, then the user stack */
};

enum fhook_hist_op {
	FHOOK_HIST_OP_NONE = 0,
	FHOOK_HIST_OP_LOG2 = 1,		/* ceil(log2(v)), 0 for 0 and 1 (.log2) */
	FHOOK_HIST_OP_BUCKETS = 2,	/* v / param * param (.buckets=param) */
	FHOOK_HIST_OP_DIV = 3,		/* v / param (.usecs: 1000) */
};

#define FHOOK_HIST_F_SIGNED	(1U << 0)	/* fhook_hist_field.flags */

struct fhook_hist_field {
	__u8 src;		/* enum fhook_hist_src */
	__u8 op;		/* enum fhook_hist_op */
	__u8 size;		/* SRC_DATA: 1, 2, 4 or 8 */
	__u8 flags;		/* FHOOK_HIST_F_* */
	__u16 offset;		/* SRC_DATA: in the record's data */
	__u16 store;		/* SRC_DATA: its fetch's fault bit, or FHOOK_HIST_NO_STORE */
	__u64 param;		/* BUCKETS, DIV: not 0 */
};

/* keep the task's name with each key (.execname; a wakeup sample's: its task's) */
#define FHOOK_HIST_F_COMM	(1U << 0)

struct fhook_hist_set {
	__u32 size;		/* of this struct */
	__u32 probe_id;
	__u32 entries;		/* keys at most: a power of two, MIN_SIZE..MAX_SIZE */
	__u32 flags;		/* FHOOK_HIST_F_* */
	__u32 nr_keys;		/* 1..FHOOK_HIST_MAX_KEYS */
	__u32 nr_vals;		/* 0..FHOOK_HIST_MAX_VALS */
	struct fhook_hist_field keys[FHOOK_HIST_MAX_KEYS];
	struct fhook_hist_field vals[FHOOK_HIST_MAX_VALS];
	__u32 table;		/* the probe's tables so far (0: its first) */
	__u32 __pad;		/* must be zero */
	__u64 reserved;		/* must be zero */
};

/*
 * FHOOK_IOC_HIST_READ: the table, any time.  Each entry is `elt_size`
 * bytes at buf: the key (`key_size` bytes: the fields in order, 8 bytes
 * each, COMM 16, STACK 8 x FHOOK_HIST_STACK_DEPTH, USTACK 8 x (1 +
 * FHOOK_HIST_STACK_DEPTH)), the hit count (u64), FHOOK_HIST_MAX_VALS sums
 * (u64) and with FHOOK_HIST_F_COMM the name of the task that made it (16 bytes,
 * else zeros).  `buf_len` smaller than all entries: ENOSPC with `nr` set
 * to their number.  A reader that wants intervals subtracts two reads.
 */
struct fhook_hist_read {
	__u32 size;		/* of this struct */
	__u32 probe_id;
	__u32 table;		/* which of the probe's tables */
	__u32 nr;		/* out: entries */
	__u64 buf;		/* in: user buffer */
	__u64 buf_len;		/* in: its bytes */
	__u64 hits;		/* out: hits counted in an entry */
	__u64 drops;		/* out: hits whose key found no room */
	__u32 key_size;		/* out */
	__u32 elt_size;		/* out */
	__u64 reserved[2];	/* must be zero */
};

/*
 * The per-function hits of a FHOOK_PROBE_F_COUNT_IPS probe, summed over
 * CPUs, any time: ips[i] (in address order) was called counts[i] times.
 * `nr` smaller than the probe's functions: ENOSPC, with `nr` set to their
 * number.  A reader that wants intervals subtracts two reads.
 */
struct fhook_counts {
	__u32 size;		/* in */
	__u32 probe_id;		/* in */
	__u32 flags;		/* in: must be 0 */
	__u32 nr;		/* in: room in ips[] and counts[]; out: functions */
	__u64 ips;		/* in: user pointer to __u64[nr]; out: addresses */
	__u64 counts;		/* in: user pointer to __u64[nr]; out: hits */
	__u64 reserved[2];	/* must be zero */
};

/*
 * The ledger of hooks other modules installed with fhook's hook API
 * (include/fhook/khook.h): FHOOK_IOC_KHOOKS copies up to nr entries and
 * sets nr to how many hooks there are.  Needs CAP_PERFMON (observing).
 */
#define FHOOK_KHOOK_KIND_REPLACE	(1U << 0)	/* a replacement runs instead */
#define FHOOK_KHOOK_KIND_ENTRY	(1U << 1)	/* an entry handler */
#define FHOOK_KHOOK_KIND_EXIT	(1U << 2)	/* an exit handler */

struct fhook_khook_info {
	__u64 addr;		/* the hooked function */
	__u64 hits;		/* calls that reached the hook */
	__u64 inside;		/* tasks inside it now */
	__u64 missed;		/* handlers not run: recursion */
	__u32 kind;		/* FHOOK_KHOOK_* */
	__u32 __pad;		/* zero */
	char func[128];		/* "name" or "name [module]", cut to fit */
	char owner[64];		/* the module that installed it */
};

struct fhook_khooks {
	__u32 size;		/* in */
	__u32 entry_size;	/* in: sizeof(struct fhook_khook_info) */
	__u32 nr;		/* in: room at entries; out: hooks installed */
	__u32 __pad;		/* must be zero */
	__u64 entries;		/* in: user pointer to struct fhook_khook_info[nr] */
	__u64 reserved[2];	/* must be zero */
};

/*
 * FHOOK_IOC_SYMBOLS (FHOOK_FEAT_SYMBOLS): the symbols of up to
 * FHOOK_SYMBOLS_MAX addresses, as the kernel's %pS names them
 * (sprint_symbol(): kallsyms, modules, BPF programs, ftrace
 * trampolines), so that a reader names the few addresses its records
 * carry without generating the whole of /proc/kallsyms (seconds under
 * emulation).  For each entry, `addr` in, the rest out: `size` 0 and an
 * empty name when no symbol contains it.  Who may: a CAP_PERFMON session
 * (the records that carry the addresses) whose caller also has
 * CAP_SYSLOG, which /proc/kallsyms asks of a reader before it shows
 * addresses (kallsyms_show_value() with kptr_restrict 1); EPERM
 * otherwise: /proc/kallsyms then says what the caller may know.
 */
#define FHOOK_SYMBOLS_MAX	256
#define FHOOK_SYMBOL_NAME_LEN	224	/* longer names are cut (NUL kept) */
#define FHOOK_SYMBOL_MODULE_LEN	64	/* MODULE_NAME_LEN is 56 */

struct fhook_symbol {
	__u64 addr;		/* in */
	__u64 offset;		/* out: addr - the symbol's start */
	__u64 size;		/* out: the symbol's size; 0: no symbol */
	char name[FHOOK_SYMBOL_NAME_LEN];	/* out: "" when none */
	char module[FHOOK_SYMBOL_MODULE_LEN];	/* out: "" for vmlinux */
};

struct fhook_symbols {
	__u32 size;		/* in: sizeof(struct fhook_symbols) */
	__u32 entry_size;	/* in: sizeof(struct fhook_symbol) */
	__u32 nr;		/* in: entries, at most FHOOK_SYMBOLS_MAX */
	__u32 __pad;		/* must be zero */
	__u64 entries;		/* in: user pointer to struct fhook_symbol[nr] */
	__u64 reserved[2];	/* must be zero */
};

/*
 * Read kernel text into a user buffer, with copy_from_kernel_nofault():
 * what `fhook explain` disassembles.  The range must lie inside one
 * kallsyms symbol (never device memory).  Needs CAP_SYS_RAWIO, like
 * /proc/kcore, and is refused under lockdown.  EFAULT if the range is not
 * inside a symbol or not mapped.
 */
#define FHOOK_MAX_READ_TEXT	4096

struct fhook_read_text {
	__u32 size;		/* in */
	__u32 len;		/* in: bytes, 1..FHOOK_MAX_READ_TEXT */
	__u64 addr;		/* in: kernel address */
	__u64 buf;		/* in: user pointer to len bytes */
	__u64 reserved[2];	/* must be zero */
};

/*
 * Triggers, as in tracefs events/.../trigger: an action run by a probe's
 * hits (that pass the session's pid/cpu filters and the trigger's own
 * predicate, whatever the probe's filter says), at most `count` times.
 * Added while the session is not armed, at most FHOOK_MAX_TRIGGERS per
 * probe.
 */
enum fhook_trigger_action {
	FHOOK_TRIG_TRACEOFF = 1,	/* the session stops recording: hits count as frozen */
	FHOOK_TRIG_TRACEON,		/* ... and records again */
	FHOOK_TRIG_STACKTRACE,		/* this event carries its stack (FHOOK_CTX_STACK) */
	FHOOK_TRIG_SNAPSHOT,		/* freeze the session, count stats->snapshots */
	FHOOK_TRIG_ENABLE,		/* probe target_id records again */
	FHOOK_TRIG_DISABLE,		/* probe target_id stops recording (hits: filtered) */
	FHOOK_TRIG_MAX,
};

struct fhook_trigger {
	__u32 size;		/* in */
	__u32 probe_id;		/* in: the probe whose hits run it */
	__u32 action;		/* in: enum fhook_trigger_action */
	__u32 target_id;	/* in: ENABLE, DISABLE: the probe switched; else 0 */
	__u64 count;		/* in: run at most this many times, 0 = every time */
	__u64 pred;		/* in: predicate program (enum fhook_pred_op), 0 = none */
	__u32 pred_len;		/* in: instructions */
	__u32 __pad;		/* must be zero */
	__u64 reserved[4];	/* must be zero */
};

#define FHOOK_MAX_TRIGGERS	8

/*
 * Transport benchmark: write nr_events FHOOK_REC_BENCH records of
 * sizeof(struct fhook_rec) + payload bytes to the ring of the calling CPU,
 * as fast as possible, through the same reserve/commit path as every probe
 * (preemption is enabled every 1024 records, so the CPU may change: pin
 * the caller).  The session must be armed and probe_id a FHOOK_PROBE_BENCH
 * probe, whose counters count the records.  The ioctl does not take the
 * session lock: several threads may run it at once.  FHOOK_IOC_STOP ends
 * running loops within a batch (written + dropped < nr_events then) and
 * returns after them.
 */
#define FHOOK_BENCH_MAX_EVENTS	(1ULL << 32)
#define FHOOK_BENCH_MAX_PAYLOAD	4096

struct fhook_bench {
	__u32 size;		/* in */
	__u32 probe_id;		/* in: a FHOOK_PROBE_BENCH probe */
	__u64 nr_events;	/* in: 1..FHOOK_BENCH_MAX_EVENTS */
	__u32 payload;		/* in: bytes, a multiple of 8, <= MAX_PAYLOAD */
	__u32 flags;		/* in: must be 0 */
	__u64 ns;		/* out: CLOCK_MONOTONIC ns the loop took */
	__u64 written;		/* out: records committed */
	__u64 dropped;		/* out: records dropped (ring full) */
	__u64 reserved[4];	/* must be zero */
};
/*
 * Freeze: probes stop writing (their hits count as `frozen`) and the call
 * returns once no producer is inside the rings any more, so a reader sees
 * every ring still; it then reads them (overwrite rings from data_oldest)
 * and resumes.  Freezing a frozen session or resuming a running one is a
 * no-op.  FHOOK_IOC_STOP unfreezes.  EBUSY if a writer did not leave a
 * ring within 100 ms.
 */
enum fhook_snapshot_op {
	FHOOK_SNAPSHOT_FREEZE = 1,
	FHOOK_SNAPSHOT_RESUME = 2,
};

struct fhook_snapshot {
	__u32 size;		/* in */
	__u32 op;		/* in: enum fhook_snapshot_op */
	__u64 reserved[3];	/* must be zero */
};

/* ------------------------------------------------------------------ */
/* mmap'd ring pages                                                   */
/* ------------------------------------------------------------------ */

struct fhook_ring_meta {
	__u32 abi_version;
	__u32 cpu;
	__u64 data_size;	/* bytes of data (one alias) */
	__u32 watermark;
	__u32 flags;		/* FHOOK_RING_* */
	__u32 wakeup_events;
	__u32 flush_ms;
	__u64 reserved0[4];
	/* own cache line: written by the producer on every commit */
	__u64 data_head;	/* bytes produced; read with acquire */
	/*
	 * Overwrite mode: position of the oldest record still in the ring
	 * (always a record boundary, <= data_head).  Producers advance it
	 * before they write over the space; see ring-protocol.md for how a
	 * reader validates what it copied.  0 in discard mode.
	 */
	__u64 data_oldest;
	__u64 reserved1[6];
	__u64 lost_total;	/* records dropped on this CPU, ever */
	__u64 overwritten_total; /* records evicted unread (overwrite mode) */
	/*
	 * Sequence number the next record will get: every record a probe
	 * tries to write on this CPU takes one, written or dropped.
	 */
	__u64 seq_next;
	__u64 reserved2[5];
};

/*
 * Memory ordering (docs/ring-protocol.md): the producer's smp_wmb() before
 * its data_head store pairs with the consumer's acquire load of data_head;
 * the consumer's release store of data_tail, after its last read of the
 * records, pairs with the producer's control dependency from reading
 * data_tail to writing data.
 */
struct fhook_ring_cons {
	__u64 data_tail;	/* bytes consumed; store with release */
	/*
	 * Low 32 bits of (sequence number of the last record consumed + 1),
	 * for the wakeup_events watermark; a consumer that does not use
	 * wakeup_events may leave it alone.
	 */
	__u64 seq_read;
};

/*
 * Records.  Each starts with struct fhook_rec; `size` is the exact size
 * of header + payload and the next record starts at ALIGN(size, 8).
 * Timestamps are CLOCK_MONOTONIC nanoseconds, one clock for all CPUs,
 * comparable with clock_gettime(CLOCK_MONOTONIC): ktime_get_mono_fast_ns(),
 * or (x86, /sys/module/fhook/parameters/clock "tsc") the TSC scaled per
 * CPU against it, within about a microsecond (kmod/clock.h).
 */
enum fhook_rec_type {
	FHOOK_REC_LOST = 1,	/* struct fhook_rec_lost */
	FHOOK_REC_FUNC = 2,	/* struct fhook_rec_func */
	FHOOK_REC_BENCH = 3,	/* struct fhook_rec + payload: u64 i, i+1, ... */
	FHOOK_REC_KPROBE = 4,	/* struct fhook_rec_probe */
	FHOOK_REC_KRETPROBE = 5,	/* struct fhook_rec_probe */
	FHOOK_REC_UPROBE = 6,	/* struct fhook_rec_probe */
	FHOOK_REC_URETPROBE = 7,	/* struct fhook_rec_probe */
	FHOOK_REC_TRACEPOINT = 8,	/* struct fhook_rec_probe: the raw trace entry */
	FHOOK_REC_HOOK = 9,	/* struct fhook_rec_hook */
	FHOOK_REC_GRAPH_ENT = 10,	/* struct fhook_rec_graph_ent */
	FHOOK_REC_GRAPH_RET = 11,	/* struct fhook_rec_graph_ret */
	FHOOK_REC_COMM = 12,	/* struct fhook_rec_comm */
	FHOOK_REC_WAKEUP = 13,	/* struct fhook_rec_wakeup */
	FHOOK_REC_TIMERLAT = 14,	/* struct fhook_rec_timerlat */
	FHOOK_REC_HWLAT = 15,	/* struct fhook_rec_hwlat */
	FHOOK_REC_OSNOISE = 16,	/* struct fhook_rec_osnoise */
	FHOOK_REC_OSNOISE_NOISE = 17,	/* struct fhook_rec_osnoise_noise */
	FHOOK_REC_IRQSOFF = 18,	/* struct fhook_rec_irqsoff */
	FHOOK_REC_ERRORS = 19,	/* struct fhook_rec_errors */
	FHOOK_REC_FN = 20,	/* struct fhook_rec_fn */
	FHOOK_REC_FN_KPROBE = 21,	/* struct fhook_rec_fn + the probe's data */
};

/* Context flags, the information of ftrace's "dNhp." column. */
#define FHOOK_CTX_IRQS_OFF	(1U << 0)	/* 'd' */
#define FHOOK_CTX_NEED_RESCHED	(1U << 1)	/* 'N' / 'n' (TIF_NEED_RESCHED) */
#define FHOOK_CTX_PREEMPT_RESCHED (1U << 2)	/* 'N' / 'p' (PREEMPT_NEED_RESCHED) */
#define FHOOK_CTX_HARDIRQ	(1U << 3)	/* 'h' */
#define FHOOK_CTX_SOFTIRQ	(1U << 4)	/* 's' (serving softirq) */
#define FHOOK_CTX_NMI		(1U << 5)	/* 'z', 'Z' with hardirq */
#define FHOOK_CTX_BH_OFF	(1U << 6)	/* 'b' (bottom halves disabled) */
/*
 * Not a context: the record ends with a stack trace, __u64 ips[n] then
 * __u64 n (n <= FHOOK_MAX_STACK), innermost first, inside hdr.size; the
 * record's own payload ends where ips[] starts.
 */
#define FHOOK_CTX_STACK		(1U << 7)

#define FHOOK_COMM_LEN		16

struct fhook_rec {
	__u16 size;		/* header + payload, exact */
	__u16 type;		/* enum fhook_rec_type */
	__u32 probe_id;
	__u64 ts;		/* CLOCK_MONOTONIC ns */
	__u32 pid;		/* thread id */
	__u32 tgid;		/* process id */
	__u16 cpu;
	__u8 flags;		/* FHOOK_CTX_* */
	/* low nibble: preempt depth, high nibble: migrate-disable depth */
	__u8 preempt;
	/*
	 * Low 32 bits of this CPU's sequence number (meta->seq_next): dense
	 * over written and dropped records, so a reader sees every gap.
	 * Nested writers (irq over task...) take numbers in the order they
	 * entered, which is not always the ring order.
	 */
	__u32 seq;
};

struct fhook_rec_func {
	struct fhook_rec hdr;
	__u64 ip;		/* traced function (its fentry call site) */
	__u64 parent_ip;	/* return address into the caller */
};

/*
 * A function entry of the common case (ABI 4): what FHOOK_REC_FUNC says
 * in 32 bytes, written for every function entry without a stack in a
 * streaming ring where both addresses fit (x86-64: kernel text and
 * modules lie in the top 2 GiB); FHOOK_REC_FUNC otherwise.  size, type, ts, pid, cpu and
 * flags (always 0) are where struct fhook_rec has them; the other slots
 * hold:
 *   ip, parent_ip  sign-extended to 64 bits
 *   ctx            the raw context: FHOOK_FN_CTX_*, decoded as
 *                  FHOOK_CTX_* and the preempt depth
 *   probe_id       <= FHOOK_MAX_PROBES
 * and what FHOOK_REC_FUNC has besides: the thread group's id is the one
 * of the task's FHOOK_REC_COMM record (every task's first record in a
 * ring comes after one); seq is the number after the ring's previous
 * record's (a COMM record's own: it shares its record's reservation and
 * number; a LOST record's last_seq + 1; never lower than a number already
 * counted); the migrate-disable depth is not kept.  Overwrite rings hold
 * FHOOK_REC_FUNC records only: a reader may start anywhere in them.
 */
struct fhook_rec_fn {
	__u16 size;
	__u16 type;		/* FHOOK_REC_FN */
	__s32 ip;		/* traced function (its fentry call site) */
	__u64 ts;		/* CLOCK_MONOTONIC ns */
	__u32 pid;
	__u32 ctx;		/* FHOOK_FN_CTX_* */
	__u16 cpu;
	__u8 flags;		/* 0 */
	__u8 probe_id;
	__s32 parent_ip;	/* return address into the caller */
};

/*
 * A kprobe hit at a function's entry (ABI 5), written by the assembly
 * recorder for a kprobe on a function's ftrace location whose program
 * stores argument registers only, each as 8 bytes at 8 * its index, with
 * nothing looked at per hit (no predicate, trigger, histogram or stack):
 * struct fhook_rec_fn with type FHOOK_REC_FN_KPROBE and parent_ip the
 * caller, then the probe's data_size bytes of fields, hdr.size 32 +
 * data_size.  It reads as the FHOOK_REC_KPROBE record of the same hit
 * (ip, ret_ip 0, faults 0, data[]), numbered and named as an FN record
 * is; the hits this path leaves to C are FHOOK_REC_KPROBE records.
 */
#define FHOOK_FN_KPROBE_MAX_FIELDS	6

/* fhook_rec_fn.ctx: the preempt count's bytes as the kernel has them */
#define FHOOK_FN_CTX_PREEMPT_MASK	0x000000ffU
#define FHOOK_FN_CTX_SOFTIRQ_OFFSET	0x00000100U	/* serving a softirq */
#define FHOOK_FN_CTX_SOFTIRQ_MASK	0x0000ff00U	/* above the offset: BH off */
#define FHOOK_FN_CTX_HARDIRQ_MASK	0x000f0000U
#define FHOOK_FN_CTX_NMI_MASK		0x00f00000U
#define FHOOK_FN_CTX_IRQS_OFF		(1U << 24)
#define FHOOK_FN_CTX_NEED_RESCHED	(1U << 25)	/* TIF_NEED_RESCHED */
#define FHOOK_FN_CTX_PREEMPT_RESCHED	(1U << 26)	/* PREEMPT_NEED_RESCHED */

/*
 * kprobe / kretprobe hit.  data[] holds the probe's data_size bytes of
 * fields, then the strings they point to (data_loc); hdr.size ends it.
 */
struct fhook_rec_probe {
	struct fhook_rec hdr;
	__u64 ip;		/* kprobe: the probed address; kretprobe: the function */
	__u64 ret_ip;		/* kretprobe: the return address; else 0 */
	__u64 faults;		/* bit n: the program's n-th store faulted */
	__u8 data[];
};

/*
 * A hook's record.  AROUND: written when the function returned, hdr.ts
 * then; data[] holds the fields taken at entry.  RETURN, REDIRECT
 * (FHOOK_HOOK_F_RECORD): written when the action ran, retval the value
 * returned instead (RETURN) or 0, duration 0.
 */
struct fhook_rec_hook {
	struct fhook_rec hdr;
	__u64 ip;		/* the hooked function (its fentry call site) */
	__u64 ret_ip;		/* return address into the caller */
	__u64 faults;		/* as fhook_rec_probe.faults */
	__u64 retval;		/* what the caller got */
	__u64 duration;		/* AROUND: ns from entry to return */
	__u32 action;		/* enum fhook_hook_action */
	__u32 __pad;
	__u8 data[];
};

/*
 * A call graph's records.  An entry's hdr.ts is the call's time and, with
 * the task, its id: the return record of the same call carries it as
 * calltime, so a reader pairs them without trusting the order (a lost
 * record never makes it guess a duration).  depth is 0 for a call of a
 * graph function and one more for each call nested in it.
 */
struct fhook_rec_graph_ent {
	struct fhook_rec hdr;
	__u64 ip;		/* the function (its fentry call site) */
	__u32 depth;
	__u32 nr_args;		/* FHOOK_GRAPH_F_ARGS: FHOOK_GRAPH_NR_ARGS, else 0 */
	__u64 args[];		/* %rdi, %rsi, %rdx, %rcx, %r8, %r9 at entry */
};

/*
 * FHOOK_GRAPH_RET_LEAF: the call's entry record was never written, this
 * record stands for the whole call.  The entry is held back until
 * something else is recorded on its CPU (a call inside it, another
 * probe's event, a context switch); a call that returns first (a leaf,
 * most calls of a call graph) costs one record.  Its entry is then this
 * record with hdr.ts = calltime, hdr.flags = entry_flags, hdr.preempt =
 * entry_preempt and no arguments (FHOOK_GRAPH_F_ARGS never holds back).
 */
#define FHOOK_GRAPH_RET_LEAF	(1U << 0)

struct fhook_rec_graph_ret {
	struct fhook_rec hdr;	/* hdr.ts: when the call returned */
	__u64 ip;		/* the function */
	__u64 calltime;		/* hdr.ts of its entry record (written or not) */
	__u64 retval;		/* %rax as the function returned it */
	__u32 depth;
	__u8 ret_flags;		/* FHOOK_GRAPH_RET_* */
	__u8 entry_flags;	/* FHOOK_GRAPH_RET_LEAF: the entry's hdr.flags */
	__u8 entry_preempt;	/* ... and hdr.preempt; else 0 */
	__u8 __pad;
};

/*
 * A failing call chain (FHOOK_GRAPH_F_ERRORS), written on the CPU where a
 * graph function returned an error, by its task (hdr.ts: when it
 * returned).  frames[0] is that call; each next frame is the call, made
 * by the one before it, that last failed before it returned: among its
 * callees the one that returned an error latest (an errno before a 0).
 * The chain stops at a call none of whose callees failed, or at the depth
 * limit.  frames[] is followed, in the frames' order, by: with
 * FHOOK_ERRORS_CALLSITES in flags (FHOOK_GRAPH_F_CALLSITES), nr_frames
 * __u64, each frame's return address (in its caller: where it was called
 * from; 0 for a tail call, whose caller jumped to it); then with
 * FHOOK_ERRORS_ARGS (FHOOK_GRAPH_F_ARGS), nr_frames times FHOOK_GRAPH_NR_ARGS __u64, each frame's argument registers at its call.
 * With FHOOK_GRAPH_F_USTACK, a task's record ends with its user stack
 * (FHOOK_CTX_STACK).
 */
struct fhook_err_frame {
	__u64 ip;		/* the function */
	__u64 retval;		/* %rax as it returned */
	__u64 calltime;		/* when it was called (hdr.ts's clock) */
	__u64 duration;		/* ns from the call to its return */
};

/*
 * FHOOK_ERRORS_DEEPER: the first failure may lie below the last frame: it
 * was at the depth limit (calls below it were not watched), or the chain
 * below it did not fit what the module keeps per task
 * (FHOOK_ERRORS_MAX_FRAMES).  FHOOK_ERRORS_INCOMPLETE: the chains of the
 * calls around it filled what the module keeps; a frame may be missing,
 * so no frame is the first failing one for sure.
 */
#define FHOOK_ERRORS_DEEPER	(1U << 0)
#define FHOOK_ERRORS_INCOMPLETE	(1U << 1)
#define FHOOK_ERRORS_ARGS	(1U << 2)	/* the frames' arguments follow them */
#define FHOOK_ERRORS_CALLSITES	(1U << 3)	/* ... their return addresses, first */

struct fhook_rec_errors {
	struct fhook_rec hdr;
	__u32 nr_frames;	/* 1 to FHOOK_ERRORS_MAX_FRAMES */
	__u32 flags;		/* FHOOK_ERRORS_* */
	struct fhook_err_frame frames[];
};

/*
 * A task's name, written in the same reservation just before the first
 * record of the task (hdr.pid, hdr.tgid) on this CPU, and again when its
 * name changed or, in an overwrite ring, when the last one was evicted:
 * the records themselves carry no name (perf's COMM records).  hdr.ts and
 * hdr.seq are those of the record that follows it, so a stable sort by
 * timestamp keeps it just before that record; hdr.probe_id is 0.
 */
struct fhook_rec_comm {
	struct fhook_rec hdr;
	char comm[FHOOK_COMM_LEN];	/* NUL-padded */
};

/*
 * A tracked wakeup's latency (FHOOK_PROBE_WAKEUP), written on the CPU that
 * switched to the woken task when it was reported.  hdr is the switch:
 * hdr.ts its time, hdr.pid/tgid the task switched out (prev), hdr.flags
 * and hdr.preempt the context there.  Priorities are the kernel's
 * (task_struct.prio: 0..99 real-time, 100..139 normal, -1 deadline).
 * With FHOOK_CTX_STACK in hdr.flags a stack trailer follows: the waker's
 * stack at the wakeup (the kernel tracer's first <stack trace>), from
 * the tracepoint's caller of fhook's probe up (FHOOK_WAKEUP_F_STACK, when
 * it could be taken; n may be 0).  With FHOOK_WAKEUP_SWITCH_STACK in
 * wflags (and FHOOK_CTX_STACK) a second one comes between the struct and
 * that trailer, laid out the same way (ips[n2], then n2): the stack at the
 * switch (the kernel tracer's second <stack trace>), from the tracepoint's
 * caller up.  Readers that know only the first find it where they did.
 */
#define FHOOK_WAKEUP_NEW_MAX	(1U << 0)	/* the largest latency so far */
#define FHOOK_WAKEUP_NEW_TASK	(1U << 1)	/* woken by fork (sched_wakeup_new) */
#define FHOOK_WAKEUP_SWITCH_STACK (1U << 2)	/* the switch's stack: see above */

struct fhook_rec_wakeup {
	struct fhook_rec hdr;
	__u64 latency;		/* ns from the wakeup to the switch */
	__u64 wakeup_ts;	/* when it was woken (CLOCK_MONOTONIC ns) */
	__u64 max;		/* the largest latency reported, this one included */
	__u64 nr;		/* tracked wakeups so far, this one included */
	__u32 pid;		/* the woken task (thread id) */
	__u32 tgid;
	__u32 wakeup_cpu;	/* its CPU when woken (the kernel tracer's CPU#) */
	__u32 waker_cpu;	/* the CPU the wakeup ran on */
	__u32 waker_pid;	/* the task that woke it (thread id) */
	__s32 prio;		/* the woken task's */
	__s32 waker_prio;
	__s32 prev_prio;
	__u32 prev_state;	/* prev's state (TASK_*), as sched_switch's prev_state */
	__u32 policy;		/* the woken task's SCHED_* */
	__u32 rt_priority;
	__s32 nice;
	__u32 uid;		/* in the initial user namespace */
	__u32 wflags;		/* FHOOK_WAKEUP_* */
	__u8 waker_flags;	/* the wakeup's context (FHOOK_CTX_*) */
	__u8 waker_preempt;	/* ... and preempt depth (as hdr.preempt) */
	__u16 __pad;
	/*
	 * ns after wakeup_ts from which its CPU's function calls were recorded
	 * (FHOOK_PROBE_F_WAKEUP_CPU): when the tracer took the wakeup, after
	 * the waker's stack walk; calls stamped before are not this wakeup's.
	 * U32_MAX: that long or longer
	 */
	__u32 calls_from;
	char comm[FHOOK_COMM_LEN];	/* the woken task */
	char waker_comm[FHOOK_COMM_LEN];
};

/*
 * One timerlat measure (FHOOK_PROBE_TIMERLAT), the kernel's timerlat_sample
 * event, on the CPU measured: hdr.ts is the time it was taken, hdr's
 * context the timer handler's (IRQ) or the thread's (THREAD).
 */
#define FHOOK_TIMERLAT_IRQ	0	/* the timer's handler ran (context irq) */
#define FHOOK_TIMERLAT_THREAD	1	/* the thread it woke ran (context thread) */
/* tflags: this measure reached a stop threshold; the tracer stopped */
#define FHOOK_TIMERLAT_STOPPED	(1U << 0)

struct fhook_rec_timerlat {
	struct fhook_rec hdr;
	__u64 latency;		/* ns from the timer's expiry */
	__u64 seqnum;		/* the activation on this CPU, from 1 */
	__u32 context;		/* FHOOK_TIMERLAT_IRQ or _THREAD */
	__u32 tflags;		/* FHOOK_TIMERLAT_* */
};

/*
 * A hwlat window with a gap over the threshold (FHOOK_PROBE_HWLAT), the
 * kernel's hwlat event, on the CPU sampled; hdr.ts is the window's end.
 * NMIs are those the nmi_handler tracepoint saw on that CPU meanwhile
 * (each handler run; 0 where the kernel has no such tracepoint).
 */
struct fhook_rec_hwlat {
	struct fhook_rec hdr;
	__u64 inner_ns;		/* the longest gap between two reads of one loop */
	__u64 outer_ns;		/* the longest gap between two loops */
	__u64 nmi_total_ns;	/* time in NMI handlers in the window */
	__u64 seqnum;		/* windows with a gap, this one included (a gap: one lost) */
	__u32 nmi_count;	/* NMI handlers run in the window */
	__u32 count;		/* gaps over the threshold in the window */
};

/*
 * One osnoise period on a CPU (FHOOK_PROBE_OSNOISE), the kernel's
 * osnoise_sample event; hdr.ts is the period's end.  The counts are the
 * kernel's interference counters: NMI handlers (from the nmi_handler
 * tracepoint: each handler run), interrupts (irq_handler_entry and, on
 * x86, the APIC vectors' *_entry), softirqs (softirq_entry; none on
 * PREEMPT_RT, where they run in threads) and switches to other threads.
 */
/* oflags: this record reached a stop threshold; the tracer stopped */
#define FHOOK_OSNOISE_STOPPED	(1U << 0)

struct fhook_rec_osnoise {
	struct fhook_rec hdr;
	__u64 runtime_ns;	/* the time sampled */
	__u64 noise_ns;		/* the gaps of at least the threshold, summed */
	__u64 max_single_ns;	/* the longest of them */
	__u64 seqnum;		/* the period on this CPU, from 1 */
	__u32 hw_count;		/* gaps with no interference: hardware noise */
	__u32 nmi_count;
	__u32 irq_count;
	__u32 softirq_count;
	__u32 thread_count;
	__u32 oflags;		/* FHOOK_OSNOISE_STOPPED */
};

/*
 * One gap of at least the threshold (FHOOK_OSNOISE_EACH), the kernel's
 * sample_threshold event, with the interference in it by kind;
 * hdr.ts is the gap's end.
 */
struct fhook_rec_osnoise_noise {
	struct fhook_rec hdr;
	__u64 start_ns;		/* the gap's start (CLOCK_MONOTONIC) */
	__u64 duration_ns;
	__u32 nmi_count;	/* what ran in it; all 0: hardware noise */
	__u32 irq_count;
	__u32 softirq_count;
	__u32 thread_count;
	__u32 oflags;		/* FHOOK_OSNOISE_STOPPED */
	__u32 __pad;
};

/*
 * A section with interrupts (preemption) off (FHOOK_PROBE_IRQSOFF), the
 * kernel's irqsoff latency report, on the CPU it ran on: hdr.ts is its
 * end, hdr's task the one it ended in; with FHOOK_CTX_STACK the stack
 * where it ended (from end_ip on).  The ips are the tracepoints'
 * (CALLER_ADDR0, CALLER_ADDR1 of trace_hardirqs_off/on; the parents are 0
 * in kernels without frame pointers): the kernel prints start_parent_ip,
 * or start_ip without one, as "started at".
 */
struct fhook_rec_irqsoff {
	struct fhook_rec hdr;
	__u64 latency_ns;
	__u64 start_ip;
	__u64 start_parent_ip;
	__u64 end_ip;
	__u64 end_parent_ip;
	__u64 seqnum;		/* sections reported, this one included */
};

/*
 * A gap: `lost` records dropped on this CPU since the previous LOST record,
 * placed where the drop happened (written by the next writer that finds
 * room).  `probes` breaks the count down by probe (sum == lost); first_seq
 * and last_seq are the sequence numbers of the first and last record
 * dropped (exact unless writers nested while dropping).  hdr.probe_id is 0
 * and hdr.seq the low bits of first_seq.  Drops after a CPU's last record
 * have no LOST record yet; after FHOOK_IOC_STOP a reader reports the
 * remainder from the stats area (dropped per CPU and probe) minus what the
 * LOST records it has seen carried.
 */
struct fhook_lost_probe {
	__u32 probe_id;
	__u32 __pad;
	__u64 count;
};

struct fhook_rec_lost {
	struct fhook_rec hdr;
	__u64 lost;
	__u64 first_seq;
	__u64 last_seq;
	__u32 nr_probes;	/* entries in probes[] */
	__u32 __pad;
	struct fhook_lost_probe probes[];
};

/*
 * The layout is the ABI: every struct is checked wherever this header is
 * compiled (the module, the library, the guest programs).  A change of size
 * is a new ABI version; padding is explicit (`make lint` runs pahole to
 * find holes).
 */
#ifdef __cplusplus
#define FHOOK_ABI_SAME(cond, what)	static_assert(cond, what)
#else
#define FHOOK_ABI_SAME(cond, what)	_Static_assert(cond, what)
#endif
#define FHOOK_ABI_SIZE(type, n)	FHOOK_ABI_SAME(sizeof(struct type) == (n), #type)

FHOOK_ABI_SIZE(fhook_handshake, 96);
FHOOK_ABI_SIZE(fhook_ring_setup, 64);
FHOOK_ABI_SIZE(fhook_probe_add, 184);
FHOOK_ABI_SIZE(fhook_hook, 88);
FHOOK_ABI_SIZE(fhook_graph, 96);
FHOOK_ABI_SIZE(fhook_pid_filter, 40);
FHOOK_ABI_SIZE(fhook_cpu_filter, 32);
FHOOK_ABI_SIZE(fhook_cpu_stats, 32);
FHOOK_ABI_SIZE(fhook_probe_counters, 64);
FHOOK_ABI_SIZE(fhook_stats_area, 64);
FHOOK_ABI_SIZE(fhook_stats, 88);
FHOOK_ABI_SIZE(fhook_insn, 16);
FHOOK_ABI_SIZE(fhook_direct_modify, 32);
FHOOK_ABI_SIZE(fhook_latency, 576);
FHOOK_ABI_SIZE(fhook_counts, 48);
FHOOK_ABI_SIZE(fhook_hist_field, 16);
FHOOK_ABI_SIZE(fhook_hist_set, 120);
FHOOK_ABI_SIZE(fhook_hist_read, 72);
FHOOK_ABI_SIZE(fhook_khook_info, 232);
FHOOK_ABI_SIZE(fhook_khooks, 40);
FHOOK_ABI_SIZE(fhook_symbol, 312);
FHOOK_ABI_SIZE(fhook_symbols, 40);
FHOOK_ABI_SIZE(fhook_last_error, 40);
FHOOK_ABI_SIZE(fhook_read_text, 40);
FHOOK_ABI_SIZE(fhook_trigger, 72);
FHOOK_ABI_SIZE(fhook_bench, 80);
FHOOK_ABI_SIZE(fhook_snapshot, 32);
FHOOK_ABI_SIZE(fhook_ring_meta, 192);
FHOOK_ABI_SIZE(fhook_ring_cons, 16);
FHOOK_ABI_SIZE(fhook_rec, 32);
FHOOK_ABI_SIZE(fhook_rec_func, 48);
FHOOK_ABI_SIZE(fhook_rec_fn, 32);
#define FHOOK_FN_SAME_AS_REC(field)						\
	FHOOK_ABI_SAME(__builtin_offsetof(struct fhook_rec_fn, field) ==	\
		       __builtin_offsetof(struct fhook_rec, field), "fhook_rec_fn." #field)
FHOOK_FN_SAME_AS_REC(size);
FHOOK_FN_SAME_AS_REC(type);
FHOOK_FN_SAME_AS_REC(ts);
FHOOK_FN_SAME_AS_REC(pid);
FHOOK_FN_SAME_AS_REC(cpu);
FHOOK_FN_SAME_AS_REC(flags);
#undef FHOOK_FN_SAME_AS_REC
FHOOK_ABI_SAME(FHOOK_MAX_PROBES <= 255, "fhook_rec_fn.probe_id is a __u8");
FHOOK_ABI_SIZE(fhook_rec_probe, 56);
FHOOK_ABI_SIZE(fhook_rec_hook, 80);
FHOOK_ABI_SIZE(fhook_rec_graph_ent, 48);
FHOOK_ABI_SIZE(fhook_rec_graph_ret, 64);
FHOOK_ABI_SIZE(fhook_lost_probe, 16);
FHOOK_ABI_SIZE(fhook_rec_lost, 64);
FHOOK_ABI_SIZE(fhook_rec_comm, 48);
FHOOK_ABI_SIZE(fhook_wakeup, 32);
FHOOK_ABI_SIZE(fhook_wakeup_sample, 40);
FHOOK_ABI_SIZE(fhook_rec_wakeup, 160);
FHOOK_ABI_SIZE(fhook_timerlat, 48);
FHOOK_ABI_SIZE(fhook_rec_timerlat, 56);
FHOOK_ABI_SIZE(fhook_hwlat, 48);
FHOOK_ABI_SIZE(fhook_rec_hwlat, 72);
FHOOK_ABI_SIZE(fhook_osnoise, 64);
FHOOK_ABI_SIZE(fhook_rec_osnoise, 88);
FHOOK_ABI_SIZE(fhook_rec_osnoise_noise, 72);
FHOOK_ABI_SIZE(fhook_irqsoff, 32);
FHOOK_ABI_SIZE(fhook_rec_irqsoff, 80);
FHOOK_ABI_SIZE(fhook_err_frame, 32);
FHOOK_ABI_SIZE(fhook_rec_errors, 40);

#endif /* _UAPI_FHOOK_ABI_H */
