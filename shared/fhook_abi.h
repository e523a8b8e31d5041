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
#define FHOOK_ABI_VERSION	1

/* Feature bits reported by FHOOK_IOC_HANDSHAKE. */
#define FHOOK_FEAT_FUNC		(1ULL << 0)	/* ftrace_ops function probes */
#define FHOOK_FEAT_FUNC_IPS	(1ULL << 1)	/* function probes by address */
#define FHOOK_FEAT_PID_FILTER	(1ULL << 2)	/* pid/tgid filter, follow fork */
#define FHOOK_FEAT_CPU_FILTER	(1ULL << 3)	/* cpumask filter */
#define FHOOK_FEAT_RING_MMAP	(1ULL << 4)	/* per-CPU mmap'd rings */
#define FHOOK_FEAT_IGNORE_SELF	(1ULL << 5)	/* FHOOK_PIDF_IGNORE_SELF */

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
	__u64 reserved[4];	/* must be zero */
};

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
 * Mappings must be MAP_SHARED, cover exactly one region, and cannot be
 * split, grown or inherited across fork (VM_DONTCOPY).
 */
#define FHOOK_MMAP_STRIDE	(1ULL << 32)
#define FHOOK_MMAP_META		0
#define FHOOK_MMAP_CONS		1	/* in pages */
#define FHOOK_MMAP_DATA		2	/* in pages */

struct fhook_ring_setup {
	__u32 size;		/* in: sizeof(struct fhook_ring_setup) */
	__u32 flags;		/* in: must be 0 */
	/* in: bytes per CPU, power of two, 0 = default; out: size used */
	__u64 buf_size;
	/* in: wake readers at this many pending bytes, 0 = buf_size / 4 */
	__u32 watermark;
	__u32 nr_cpus;		/* out: number of rings (nr_cpu_ids) */
	__u64 mmap_stride;	/* out: FHOOK_MMAP_STRIDE */
	__u64 reserved[4];	/* must be zero */
};

enum fhook_probe_type {
	FHOOK_PROBE_FUNC = 1,	/* ftrace_ops function entry */
};

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
struct fhook_probe_add {
	__u32 size;		/* in */
	__u32 type;		/* in: enum fhook_probe_type */
	__u32 flags;		/* in: must be 0 */
	__u32 probe_id;		/* out: id stamped into every record */
	__u64 filter;		/* in: user pointer to the filter text */
	__u64 exclude;		/* in: user pointer to the notrace text */
	__u32 filter_len;	/* in: bytes, <= FHOOK_MAX_PATTERN_TEXT */
	__u32 exclude_len;	/* in: bytes, <= FHOOK_MAX_PATTERN_TEXT */
	__u64 ips;		/* in: user pointer to __u64[nr_ips] */
	__u32 nr_ips;		/* in: <= FHOOK_MAX_IPS */
	__s32 err_index;	/* out: failing pattern, or -1 */
	__u64 reserved[4];	/* must be zero */
};

#define FHOOK_MAX_PATTERN_TEXT	65536
#define FHOOK_MAX_PATTERN_LEN	255
#define FHOOK_MAX_IPS		65536
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

struct fhook_cpu_stats {
	__u64 hits;		/* probe invocations that passed the filters */
	__u64 written;		/* records committed to the ring */
	__u64 lost;		/* records dropped (ring full / nesting) */
	__u64 missed;		/* invocations skipped by recursion guard */
};

#define FHOOK_STATS_SESSION	0xffffffffU

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

/* ------------------------------------------------------------------ */
/* mmap'd ring pages                                                   */
/* ------------------------------------------------------------------ */

struct fhook_ring_meta {
	__u32 abi_version;
	__u32 cpu;
	__u64 data_size;	/* bytes of data (one alias) */
	__u32 watermark;
	__u32 __pad;
	__u64 reserved0[5];
	/* own cache line: written by the producer on every commit */
	__u64 data_head;	/* bytes produced; read with acquire */
	__u64 reserved1[7];
	__u64 lost_total;	/* records dropped on this CPU, ever */
	__u64 reserved2[7];
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
};

/*
 * Records.  Each starts with struct fhook_rec; `size` is the exact size
 * of header + payload and the next record starts at ALIGN(size, 8).
 * Timestamps are CLOCK_MONOTONIC nanoseconds (ktime_get_mono_fast_ns()),
 * one clock for all CPUs, comparable with clock_gettime(CLOCK_MONOTONIC).
 */
enum fhook_rec_type {
	FHOOK_REC_LOST = 1,	/* struct fhook_rec_lost */
	FHOOK_REC_FUNC = 2,	/* struct fhook_rec_func */
};

/* Context flags, the information of ftrace's "dNhp." column. */
#define FHOOK_CTX_IRQS_OFF	(1U << 0)	/* 'd' */
#define FHOOK_CTX_NEED_RESCHED	(1U << 1)	/* 'N' / 'n' (TIF_NEED_RESCHED) */
#define FHOOK_CTX_PREEMPT_RESCHED (1U << 2)	/* 'N' / 'p' (PREEMPT_NEED_RESCHED) */
#define FHOOK_CTX_HARDIRQ	(1U << 3)	/* 'h' */
#define FHOOK_CTX_SOFTIRQ	(1U << 4)	/* 's' (serving softirq) */
#define FHOOK_CTX_NMI		(1U << 5)	/* 'z', 'Z' with hardirq */
#define FHOOK_CTX_BH_OFF	(1U << 6)	/* 'b' (bottom halves disabled) */

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
	__u32 __pad;
	char comm[FHOOK_COMM_LEN];	/* NUL-padded */
};

struct fhook_rec_func {
	struct fhook_rec hdr;
	__u64 ip;		/* traced function (its fentry call site) */
	__u64 parent_ip;	/* return address into the caller */
};

/*
 * `lost` records dropped on this CPU since the previous record.  Drops after
 * a CPU's last record have no LOST record yet (the next writer that finds
 * room reports them); after FHOOK_IOC_STOP a reader reports the remainder
 * as meta->lost_total minus the LOST counts it has seen.
 */
struct fhook_rec_lost {
	struct fhook_rec hdr;
	__u64 lost;
};

#endif /* _UAPI_FHOOK_ABI_H */
