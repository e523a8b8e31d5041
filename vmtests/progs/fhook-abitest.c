// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-abitest: feed bad input to /dev/fhook and check the errno, using
 * nothing but shared/fhook_abi.h.  Then run one real session through the
 * raw ABI (handshake, ring, two probes, pid filter, mmap, records, stats)
 * to show the module still works and its records are right.
 *
 * One line per check: "ok <n> - <what>" or "not ok <n> - <what>: <why>".
 * Each negative check lists the errnos it accepts; success is never
 * accepted.  Exit status: 0 if every check passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fhook_abi.h"
#include "progs.h"

#define KERNEL_PTR	0xffffffff81000000ULL
#define END		0		/* terminates errno lists */

static long page;
static __u64 stext, etext;	/* kernel text, from /proc/kallsyms at start (root) */
static __u64 features;		/* the module's (first HANDSHAKE) */

/* Is @addr in the kernel's text?  (x86-64's and arm64's are far apart) */
static int ktext(__u64 addr)
{
	return stext && addr >= stext && addr < etext;
}

/* a vmlinux symbol of any type (arm64's _etext is not a text symbol) */
static __u64 ksym_any(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	__u64 found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	if (f)
		fclose(f);
	return found;
}
static void *unmapped;		/* an address with nothing mapped */
static const char *dev = FHOOK_DEVICE_PATH;

static void report(int good, const char *fmt, va_list ap, const char *why)
{
	tap_vreport(good, why, fmt, ap);
}

/* ret < 0 with errno in the END-terminated list that follows fmt's args */
static void expect_err(long ret, int err, const int *allowed, const char *fmt, ...)
{
	char why[128];
	int good = 0;
	va_list ap;

	if (ret >= 0) {
		snprintf(why, sizeof(why), "unexpected success (ret %ld)", ret);
	} else {
		for (const int *a = allowed; *a; a++)
			if (*a == err)
				good = 1;
		snprintf(why, sizeof(why), "errno %d (%s)", err, strerror(err));
	}
	va_start(ap, fmt);
	report(good, fmt, ap, why);
	va_end(ap);
}

#define ERRS(...)	((const int[]){ __VA_ARGS__, END })
#define EXPECT_ERR(expr, errs, ...)					\
	do {								\
		long __r;						\
		errno = 0;						\
		__r = (expr);						\
		expect_err(__r, errno, errs, __VA_ARGS__);		\
	} while (0)

static void expect(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(cond, fmt, ap, "condition false");
	va_end(ap);
}

static void expect_ok(long ret, const char *fmt, ...)
{
	char why[128];
	va_list ap;

	snprintf(why, sizeof(why), "errno %d (%s)", errno, strerror(errno));
	va_start(ap, fmt);
	report(ret >= 0, fmt, ap, why);
	va_end(ap);
}

#define EXPECT_OK(expr, ...)						\
	do {								\
		long __r;						\
		errno = 0;						\
		__r = (expr);						\
		expect_ok(__r, __VA_ARGS__);				\
	} while (0)

static void fatal(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

static int open_dev(void)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fatal("open /dev/fhook");
	return fd;
}

static int handshake(int fd, struct fhook_handshake *out)
{
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	int ret = ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs);

	if (out)
		*out = hs;
	if (!ret && hs.features)
		features = hs.features;
	return ret;
}

static int ring_setup(int fd, __u64 buf_size)
{
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = buf_size };

	return ioctl(fd, FHOOK_IOC_RING_SETUP, &rs);
}

static int probe_add(int fd, const char *filter, const char *exclude, __u32 *id)
{
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_FUNC,
		.filter = (uintptr_t)filter, .filter_len = filter ? strlen(filter) : 0,
		.exclude = (uintptr_t)exclude, .exclude_len = exclude ? strlen(exclude) : 0,
	};
	int ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);

	if (id)
		*id = pa.probe_id;
	return ret;
}

/* A session with a ring and one vfs_read probe, ready to START. */
static int ready_session(__u64 buf_size)
{
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, buf_size) || probe_add(fd, "vfs_read", NULL, NULL))
		fatal("setting up a session");
	return fd;
}

static void *zalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		fatal("calloc");
	return p;
}

/* Last byte of a page followed by a PROT_NONE page: for straddling args. */
static char *guard_end(void)
{
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE))
		fatal("guard page");
	return p + page;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ------------------------------------------------------------------ */

struct argdesc {
	const char *name;
	unsigned long cmd;
	size_t size;
};

static const struct argdesc args[] = {
	{ "HANDSHAKE", FHOOK_IOC_HANDSHAKE, sizeof(struct fhook_handshake) },
	{ "RING_SETUP", FHOOK_IOC_RING_SETUP, sizeof(struct fhook_ring_setup) },
	{ "PROBE_ADD", FHOOK_IOC_PROBE_ADD, sizeof(struct fhook_probe_add) },
	{ "PID_FILTER", FHOOK_IOC_PID_FILTER, sizeof(struct fhook_pid_filter) },
	{ "CPU_FILTER", FHOOK_IOC_CPU_FILTER, sizeof(struct fhook_cpu_filter) },
	{ "STATS", FHOOK_IOC_STATS, sizeof(struct fhook_stats) },
	{ "SNAPSHOT", FHOOK_IOC_SNAPSHOT, sizeof(struct fhook_snapshot) },
	{ "BENCH", FHOOK_IOC_BENCH, sizeof(struct fhook_bench) },
	{ "TRIGGER_ADD", FHOOK_IOC_TRIGGER_ADD, sizeof(struct fhook_trigger) },
	{ "DIRECT_MODIFY", FHOOK_IOC_DIRECT_MODIFY, sizeof(struct fhook_direct_modify) },
	{ "READ_TEXT", FHOOK_IOC_READ_TEXT, sizeof(struct fhook_read_text) },
	{ "LATENCY", FHOOK_IOC_LATENCY, sizeof(struct fhook_latency) },
	{ "COUNTS", FHOOK_IOC_COUNTS, sizeof(struct fhook_counts) },
	{ "KHOOKS", FHOOK_IOC_KHOOKS, sizeof(struct fhook_khooks) },
	{ "HIST_SET", FHOOK_IOC_HIST_SET, sizeof(struct fhook_hist_set) },
	{ "HIST_READ", FHOOK_IOC_HIST_READ, sizeof(struct fhook_hist_read) },
	{ "SYMBOLS", FHOOK_IOC_SYMBOLS, sizeof(struct fhook_symbols) },
};

static void test_ioctl_numbers(void)
{
	int fd = open_dev();

	handshake(fd, NULL);
	EXPECT_ERR(ioctl(fd, _IO(FHOOK_IOC_MAGIC, 0x7f), 0), ERRS(ENOTTY),
		   "unknown ioctl nr 0x7f -> ENOTTY");
	EXPECT_ERR(ioctl(fd, _IO(FHOOK_IOC_MAGIC, 0x0e), 0), ERRS(ENOTTY),
		   "unknown ioctl nr 0x0e (first unused) -> ENOTTY");
	{
		/* READ_TEXT: bounds, user and unmapped addresses, bad buffers */
		struct fhook_read_text rt = { .size = sizeof(rt) };
		unsigned char text[64];

		rt.addr = kallsyms("vfs_read");
		rt.buf = (uintptr_t)text;
		rt.len = 0;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EINVAL), "READ_TEXT len 0");
		rt.len = FHOOK_MAX_READ_TEXT + 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EINVAL), "READ_TEXT len > max");
		rt.len = sizeof(text);
		EXPECT_OK(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), "READ_TEXT of vfs_read");
		rt.addr = 0x400000;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EFAULT), "READ_TEXT user address");
		rt.addr = 0xffff800000001000ULL;	/* the guard hole */
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EFAULT),
			   "READ_TEXT unmapped kernel address");
		rt.addr = 0xfffffffffffffff0ULL;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EFAULT),
			   "READ_TEXT range wrapping around");
		rt.addr = kallsyms("vfs_read");
		rt.buf = (uintptr_t)unmapped;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EFAULT),
			   "READ_TEXT unmapped buffer");
		rt.buf = (uintptr_t)text;
		rt.reserved[1] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_READ_TEXT, &rt), ERRS(EINVAL), "READ_TEXT reserved");
	}
	EXPECT_ERR(ioctl(fd, _IOWR('x', 0x00, struct fhook_handshake), 0), ERRS(ENOTTY),
		   "foreign ioctl magic -> ENOTTY");
	EXPECT_ERR(ioctl(fd, TCGETS, zalloc(256)), ERRS(ENOTTY), "TCGETS -> ENOTTY");
	close(fd);
}

static void test_sizes(void)
{
	char *buf = zalloc(65536 + 16);

	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		const struct argdesc *a = &args[i];
		int fd = open_dev();
		__u32 *size = (__u32 *)buf;

		if (a->cmd != FHOOK_IOC_HANDSHAKE)
			handshake(fd, NULL);
		memset(buf, 0, 65536 + 16);
		*size = 0;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(EINVAL, E2BIG), "%s size 0 -> EINVAL", a->name);
		*size = 4;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(EINVAL, E2BIG), "%s size 4 -> EINVAL", a->name);
		*size = a->size - 8;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(EINVAL, E2BIG),
			   "%s size sizeof-8 (older than v1) -> EINVAL", a->name);
		*size = 4096 + 8;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(EINVAL, E2BIG),
			   "%s size 4104 (zero tail) -> E2BIG/EINVAL", a->name);
		*size = 65536;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(EINVAL, E2BIG),
			   "%s size 65536 -> E2BIG/EINVAL", a->name);
		*size = 0xffffffff;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(EINVAL, E2BIG, EFAULT),
			   "%s size 0xffffffff -> E2BIG/EINVAL/EFAULT", a->name);
		/* newer layout with a non-zero tail */
		*size = a->size + 8;
		buf[a->size + 3] = 1;
		EXPECT_ERR(ioctl(fd, a->cmd, buf), ERRS(E2BIG),
			   "%s larger size with non-zero tail -> E2BIG", a->name);
		/* argument pointers */
		EXPECT_ERR(ioctl(fd, a->cmd, NULL), ERRS(EFAULT), "%s NULL arg -> EFAULT", a->name);
		EXPECT_ERR(ioctl(fd, a->cmd, unmapped), ERRS(EFAULT),
			   "%s unmapped arg -> EFAULT", a->name);
		EXPECT_ERR(ioctl(fd, a->cmd, (void *)(uintptr_t)KERNEL_PTR), ERRS(EFAULT),
			   "%s kernel-address arg -> EFAULT", a->name);
		{
			/* size readable, the rest of the struct in a PROT_NONE page */
			char *g = guard_end() - 8;

			memset(g, 0, 8);
			*(__u32 *)g = a->size;
			EXPECT_ERR(ioctl(fd, a->cmd, g), ERRS(EFAULT),
				   "%s struct straddling into PROT_NONE -> EFAULT", a->name);
		}
		close(fd);
	}

	{
		/*
		 * PROBE_ADD in the v1 layout (before the kprobe fields) is still
		 * accepted, and answered without writing past its 88 bytes
		 */
		int fd = open_dev();
		char *g = guard_end() - FHOOK_PROBE_ADD_SIZE_V1;
		struct fhook_probe_add *pa = (struct fhook_probe_add *)g;
		struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = 4096 };

		handshake(fd, NULL);
		EXPECT_OK(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), "ring setup for the v1 probe");
		memset(g, 0, FHOOK_PROBE_ADD_SIZE_V1);
		pa->size = FHOOK_PROBE_ADD_SIZE_V1;
		pa->type = FHOOK_PROBE_FUNC;
		pa->filter = (uintptr_t)"vfs_read";
		pa->filter_len = 8;
		EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, g),
			  "PROBE_ADD with the v1 size (88 bytes, up to the guard page) is accepted");
		expect(pa->probe_id == 1, "... and answers probe id %u in the v1 layout", pa->probe_id);
		pa->size = FHOOK_PROBE_ADD_SIZE_V1 - 8;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, g), ERRS(EINVAL),
			   "PROBE_ADD smaller than v1 -> EINVAL");
		close(fd);
	}

	{
		/* a newer layout with a zero tail is accepted (copy_struct_from_user) */
		int fd = open_dev();
		struct { struct fhook_handshake hs; __u64 more[4]; } big;

		memset(&big, 0, sizeof(big));
		big.hs.size = sizeof(big);
		big.hs.abi_version = FHOOK_ABI_VERSION;
		EXPECT_OK(ioctl(fd, FHOOK_IOC_HANDSHAKE, &big),
			  "HANDSHAKE with a larger struct and zero tail is accepted");
		expect(big.hs.abi_version == FHOOK_ABI_VERSION, "... and reports abi %u",
		       big.hs.abi_version);
		close(fd);
	}
	free(buf);
}

static void test_reserved(void)
{
	int fd = open_dev();

	{
		/* (its last reserved word became max_user_slots/_mem_pct: out only) */
		struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = 1 };

		hs.__pad = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs), ERRS(EINVAL),
			   "HANDSHAKE __pad != 0 -> EINVAL");
	}
	handshake(fd, NULL);
	{
		struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = 8192 };

		rs.reserved[0] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), ERRS(EINVAL),
			   "RING_SETUP reserved[0] != 0 -> EINVAL");
		memset(rs.reserved, 0, sizeof(rs.reserved));
		rs.flags = FHOOK_RING_FLAGS + 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), ERRS(EINVAL),
			   "RING_SETUP unknown flag -> EINVAL");
		rs.flags = FHOOK_RING_OVERWRITE;	/* 8 KiB: below the minimum */
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), ERRS(EINVAL),
			   "RING_SETUP overwrite below FHOOK_RING_MIN_OVERWRITE -> EINVAL");
		rs.flags = 0;
		rs.flush_ms = FHOOK_FLUSH_MAX_MS + 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), ERRS(EINVAL),
			   "RING_SETUP flush_ms above the maximum -> EINVAL");
		rs.flush_ms = 0;
		rs.flags = 0x80000000;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), ERRS(EINVAL),
			   "RING_SETUP flag bit 31 -> EINVAL");
	}
	{
		static const char f[] = "vfs_read";
		const int *lat_errs;
		struct fhook_probe_add pa = {
			.size = sizeof(pa), .type = FHOOK_PROBE_FUNC,
			.filter = (uintptr_t)f, .filter_len = strlen(f),
		};

		pa.reserved[2] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "PROBE_ADD reserved[2] != 0 -> EINVAL");
		pa.reserved[2] = 0;
		pa.flags = FHOOK_PROBE_FLAGS + 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "PROBE_ADD unknown flag -> EINVAL");
		pa.flags = 0;
		pa.__pad3 = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "PROBE_ADD __pad3 != 0 -> EINVAL");
		pa.__pad3 = 0;
		pa.stack_args = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "PROBE_ADD stack_args without FHOOK_PROBE_F_LATENCY -> EINVAL");
		pa.flags = FHOOK_PROBE_F_LATENCY;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "PROBE_ADD latency on a function (not direct) probe -> EINVAL");
		pa.type = FHOOK_PROBE_DIRECT;
		pa.stack_args = FHOOK_HOOK_MAX_STACK_ARGS + 1;
		/* (a kernel without direct calls refuses every direct probe first) */
		lat_errs = features & FHOOK_FEAT_LATENCY ? ERRS(EINVAL) : ERRS(EOPNOTSUPP);
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), lat_errs,
			   "PROBE_ADD latency stack_args 9 -> EINVAL");
		pa.stack_args = 0;
		pa.flags = FHOOK_PROBE_F_LATENCY | FHOOK_PROBE_F_COUNT;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), lat_errs,
			   "PROBE_ADD latency + count -> EINVAL");
		pa.flags = FHOOK_PROBE_F_LATENCY | FHOOK_PROBE_F_STACK;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), lat_errs,
			   "PROBE_ADD latency + stack -> EINVAL");
		pa.flags = 0;
		pa.type = FHOOK_PROBE_FUNC;
		pa.hook = 16;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "PROBE_ADD hook pointer on a function probe -> EINVAL");
		pa.hook = 0;
		pa.flags = 0;
		pa.type = 0;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL, EOPNOTSUPP),
			   "PROBE_ADD type 0 -> EINVAL");
		pa.type = 99;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL, EOPNOTSUPP),
			   "PROBE_ADD type 99 -> EINVAL");
	}
	{
		__u32 pid = getpid();
		struct fhook_pid_filter pf = {
			.size = sizeof(pf), .nr_pids = 1, .pids = (uintptr_t)&pid,
		};

		pf.reserved[1] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL),
			   "PID_FILTER reserved[1] != 0 -> EINVAL");
		pf.reserved[1] = 0;
		pf.__pad = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL),
			   "PID_FILTER __pad != 0 -> EINVAL");
		pf.__pad = 0;
		pf.flags = ~FHOOK_PIDF_ALL & -~FHOOK_PIDF_ALL;	/* lowest unknown bit */
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL),
			   "PID_FILTER unknown flag %#x -> EINVAL", pf.flags);
		pf.flags = 1U << 31;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL),
			   "PID_FILTER flag bit 31 -> EINVAL");
	}
	{
		__u64 mask = 1;
		struct fhook_cpu_filter cf = {
			.size = sizeof(cf), .nr_bits = 64, .mask = (uintptr_t)&mask,
		};

		cf.reserved[0] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), ERRS(EINVAL),
			   "CPU_FILTER reserved[0] != 0 -> EINVAL");
	}
	{
		struct fhook_stats st = { .size = sizeof(st), .probe_id = FHOOK_STATS_SESSION };

		st.reserved[3] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, &st), ERRS(EINVAL),
			   "STATS reserved[3] != 0 -> EINVAL");
		st.reserved[3] = 0;
		st.flags = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, &st), ERRS(EINVAL),
			   "STATS unknown flag -> EINVAL");
	}
	close(fd);
}

/* The session's last refusal (FHOOK_IOC_LAST_ERROR); reason ~0: unreadable */
static struct fhook_last_error last_error(int fd)
{
	struct fhook_last_error le = { .size = sizeof(le) };

	if (ioctl(fd, FHOOK_IOC_LAST_ERROR, &le))
		le.reason = ~0U;
	return le;
}

static void expect_reason(int fd, __u32 reason, __s32 index, __u32 cmd, int err, const char *what)
{
	struct fhook_last_error le = last_error(fd);

	expect(le.reason == reason && le.index == index && le.cmd == cmd && le.err == -err,
	       "LAST_ERROR after %s: reason %u index %d cmd %#x err %d (got %u %d %#x %d)", what,
	       reason, index, cmd, -err, le.reason, le.index, le.cmd, le.err);
}

/*
 * Why a refusal was refused: FHOOK_IOC_LAST_ERROR names the reason the
 * module gave (fhook_reasons.h), the field, the ioctl and the errno; its
 * own refusals and successful ioctls leave it.
 */
static void test_reasons(void)
{
	struct fhook_hist_set hs = { .size = sizeof(hs), .entries = 128, .nr_keys = 1 };
	struct fhook_stats *st = zalloc(2 * page);
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_FUNC };
	struct fhook_handshake hsk;
	struct fhook_last_error le;
	int fd = open_dev();
	__u32 id;

	if (handshake(fd, &hsk))
		fatal("HANDSHAKE");
	expect(!!(hsk.features & FHOOK_FEAT_REASONS), "HANDSHAKE announces FHOOK_FEAT_REASONS");
	le = last_error(fd);
	expect(le.reason == FHOOK_R_NONE && le.err == 0 && le.size == sizeof(le),
	       "LAST_ERROR of a fresh session: none (%u, %d)", le.reason, le.err);
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_START, 0), ERRS(EINVAL), "START without rings -> EINVAL");
	expect_reason(fd, FHOOK_R_NO_RINGS, -1, 0x05, EINVAL, "START without rings");
	EXPECT_ERR(ring_setup(fd, 3 * 4096), ERRS(EINVAL), "RING_SETUP 12 KiB -> EINVAL");
	expect_reason(fd, FHOOK_R_RING_SIZE, -1, 0x01, EINVAL, "RING_SETUP 12 KiB");
	/* a successful ioctl, and LAST_ERROR's own refusal, leave it */
	EXPECT_OK(handshake(fd, NULL), "HANDSHAKE");
	le = (struct fhook_last_error){ .size = sizeof(le), .reserved[1] = 1 };
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_LAST_ERROR, &le), ERRS(EINVAL), "LAST_ERROR reserved -> EINVAL");
	expect_reason(fd, FHOOK_R_RING_SIZE, -1, 0x01, EINVAL, "HANDSHAKE and a bad LAST_ERROR");

	/* the argument's size field: below the oldest layout, over a page, a tail */
	st->size = 4;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, st), ERRS(EINVAL), "STATS size 4 -> EINVAL");
	expect_reason(fd, FHOOK_R_ARG_SIZE, -1, 0x07, EINVAL, "STATS size 4");
	st->size = 2 * page;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, st), ERRS(E2BIG), "STATS size 2 pages -> E2BIG");
	expect_reason(fd, FHOOK_R_ARG_TOO_BIG, -1, 0x07, E2BIG, "STATS size 2 pages");
	st->size = sizeof(*st) + 8;
	((unsigned char *)st)[sizeof(*st) + 3] = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, st), ERRS(E2BIG), "STATS with a non-zero tail -> E2BIG");
	expect_reason(fd, FHOOK_R_ARG_TAIL, -1, 0x07, E2BIG, "STATS with a tail");

	/* PROBE_ADD: reserved, type, a field of another kind */
	pa.reserved[0] = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL), "PROBE_ADD reserved -> EINVAL");
	expect_reason(fd, FHOOK_R_RESERVED, -1, 0x02, EINVAL, "PROBE_ADD reserved");
	pa.reserved[0] = 0;
	pa.type = 0x7777;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL), "PROBE_ADD type -> EINVAL");
	expect_reason(fd, FHOOK_R_PROBE_TYPE, -1, 0x02, EINVAL, "PROBE_ADD unknown type");
	pa.type = FHOOK_PROBE_FUNC;
	pa.maxactive = 4;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
		   "PROBE_ADD function probe with maxactive -> EINVAL");
	expect_reason(fd, FHOOK_R_PROBE_FIELDS, -1, 0x02, EINVAL, "PROBE_ADD maxactive");

	/* the pattern that matches nothing, by its index */
	if (ring_setup(fd, 65536))
		fatal("RING_SETUP");
	EXPECT_ERR(probe_add(fd, "vfs_read no_such_function_x", NULL, NULL), ERRS(ENOENT),
		   "PROBE_ADD a pattern that matches nothing -> ENOENT");
	expect_reason(fd, FHOOK_R_NO_MATCH, 1, 0x02, ENOENT, "PROBE_ADD pattern 1 matching nothing");

	/* HIST_SET: the offending key by its index */
	if (probe_add(fd, "vfs_read", NULL, &id))
		fatal("setting up a session");
	hs.probe_id = id;
	hs.nr_keys = 2;
	hs.keys[0] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_PID,
						.store = FHOOK_HIST_NO_STORE };
	hs.keys[1] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_DATA, .size = 8,
						.store = FHOOK_HIST_NO_STORE };
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "HIST_SET data key of a function probe -> EINVAL");
	expect_reason(fd, FHOOK_R_HIST_FIELD, 1, 0x10, EINVAL, "HIST_SET key 1");
	hs.probe_id = id + 100;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(ENOENT), "HIST_SET unknown probe");
	expect_reason(fd, FHOOK_R_NO_PROBE, -1, 0x10, ENOENT, "HIST_SET unknown probe");
	close(fd);
	free(st);
}

static void test_ring_setup(void)
{
	int fd = open_dev();
	struct fhook_ring_setup rs;

	handshake(fd, NULL);
	EXPECT_ERR(ring_setup(fd, 3 * 4096), ERRS(EINVAL), "RING_SETUP buf_size 12288 -> EINVAL");
	EXPECT_ERR(ring_setup(fd, 4096 + 8), ERRS(EINVAL), "RING_SETUP buf_size 4104 -> EINVAL");
	EXPECT_ERR(ring_setup(fd, 2048), ERRS(EINVAL),
		   "RING_SETUP buf_size 2048 (< FHOOK_RING_MIN_SIZE) -> EINVAL");
	EXPECT_ERR(ring_setup(fd, 8), ERRS(EINVAL), "RING_SETUP buf_size 8 -> EINVAL");
	EXPECT_ERR(ring_setup(fd, FHOOK_RING_MAX_SIZE * 2), ERRS(EINVAL, E2BIG),
		   "RING_SETUP buf_size 2 * FHOOK_RING_MAX_SIZE -> EINVAL");
	EXPECT_ERR(ring_setup(fd, 1ULL << 63), ERRS(EINVAL, E2BIG),
		   "RING_SETUP buf_size 2^63 -> EINVAL");
	EXPECT_ERR(ring_setup(fd, ~0ULL), ERRS(EINVAL, E2BIG), "RING_SETUP buf_size ~0 -> EINVAL");

	/* mmap before a successful ring setup */
	EXPECT_ERR((long)mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0) == -1 ? -1 : 0,
		   ERRS(EINVAL, ENODEV), "mmap before RING_SETUP -> EINVAL/ENODEV");
	/* START without ring and probes */
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_START, 0), ERRS(EINVAL), "START on an empty session -> EINVAL");

	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	rs.buf_size = 16384;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), "RING_SETUP 16 KiB after the failures");
	expect(rs.buf_size == 16384, "RING_SETUP out buf_size 16384 (%llu)",
	       (unsigned long long)rs.buf_size);
	expect(rs.watermark == 16384 / 4, "RING_SETUP default watermark buf_size/4 (%u)",
	       rs.watermark);
	expect(rs.nr_cpus >= 1 && rs.nr_cpus >= (unsigned)sysconf(_SC_NPROCESSORS_ONLN),
	       "RING_SETUP nr_cpus >= online CPUs (%u)", rs.nr_cpus);
	expect(rs.mmap_stride == FHOOK_MMAP_STRIDE, "RING_SETUP mmap_stride (%#llx)",
	       (unsigned long long)rs.mmap_stride);
	EXPECT_ERR(ring_setup(fd, 16384), ERRS(EBUSY), "second RING_SETUP -> EBUSY");
	EXPECT_ERR(ring_setup(fd, 8192), ERRS(EBUSY, EINVAL),
		   "second RING_SETUP with another size -> EBUSY");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_START, 0), ERRS(EINVAL), "START with no probes -> EINVAL");
	close(fd);

	/* default size */
	fd = open_dev();
	handshake(fd, NULL);
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), "RING_SETUP buf_size 0 (default)");
	expect(rs.buf_size == FHOOK_RING_DEF_SIZE, "default buf_size is FHOOK_RING_DEF_SIZE (%llu)",
	       (unsigned long long)rs.buf_size);
	close(fd);
}

static void test_probe_add(void)
{
	int fd = open_dev();
	size_t big = FHOOK_MAX_PATTERN_TEXT + 1;
	char *text = zalloc(big + 1);
	char longpat[FHOOK_MAX_PATTERN_LEN + 2];
	struct fhook_probe_add pa;
	__u64 *ips, vfs_read;
	int i;

	handshake(fd, NULL);
	for (size_t o = 0; o + 9 <= big; o += 9)
		memcpy(text + o, "vfs_read ", 9);
	memset(text + big - (big % 9), ' ', big % 9);

#define PA_RESET() do {							\
		memset(&pa, 0, sizeof(pa));				\
		pa.size = sizeof(pa);					\
		pa.type = FHOOK_PROBE_FUNC;				\
	} while (0)

	PA_RESET();
	pa.filter = (uintptr_t)text;
	pa.filter_len = big;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL, E2BIG),
		   "PROBE_ADD filter_len FHOOK_MAX_PATTERN_TEXT+1 -> EINVAL/E2BIG");
	PA_RESET();
	pa.filter = (uintptr_t)"vfs_read";
	pa.filter_len = 8;
	pa.exclude = (uintptr_t)text;
	pa.exclude_len = big;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL, E2BIG),
		   "PROBE_ADD exclude_len FHOOK_MAX_PATTERN_TEXT+1 -> EINVAL/E2BIG");
	PA_RESET();
	pa.filter = (uintptr_t)"vfs_read";
	pa.filter_len = 0xffffffff;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL, E2BIG),
		   "PROBE_ADD filter_len 0xffffffff -> EINVAL/E2BIG");

	ips = zalloc((FHOOK_MAX_IPS + 1) * sizeof(__u64));
	PA_RESET();
	pa.ips = (uintptr_t)ips;
	pa.nr_ips = FHOOK_MAX_IPS + 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL, E2BIG),
		   "PROBE_ADD nr_ips FHOOK_MAX_IPS+1 -> EINVAL/E2BIG");
	free(ips);

	memset(longpat, 'a', sizeof(longpat) - 1);
	longpat[sizeof(longpat) - 1] = 0;
	EXPECT_ERR(probe_add(fd, longpat, NULL, NULL), ERRS(EINVAL, E2BIG, ENAMETOOLONG),
		   "PROBE_ADD one pattern of FHOOK_MAX_PATTERN_LEN+1 chars -> EINVAL");

	PA_RESET();
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
		   "PROBE_ADD with no filter and no ips -> EINVAL");
	EXPECT_ERR(probe_add(fd, NULL, "vfs_write", NULL), ERRS(EINVAL),
		   "PROBE_ADD with only exclude patterns -> EINVAL");
	EXPECT_ERR(probe_add(fd, " \t\n ", NULL, NULL), ERRS(EINVAL, ENOENT),
		   "PROBE_ADD whitespace-only filter (no pattern) -> EINVAL (not: trace everything)");

	PA_RESET();
	pa.filter = (uintptr_t)"no_such_function_xyz";
	pa.filter_len = strlen("no_such_function_xyz");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(ENOENT),
		   "PROBE_ADD pattern matching nothing -> ENOENT");
	expect(pa.err_index == 0, "... err_index 0 (%d)", pa.err_index);
	PA_RESET();
	pa.filter = (uintptr_t)"vfs_read  no_such_function_xyz";
	pa.filter_len = strlen("vfs_read  no_such_function_xyz");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(ENOENT),
		   "PROBE_ADD second pattern matching nothing -> ENOENT");
	expect(pa.err_index == 1, "... err_index 1 (%d)", pa.err_index);
	PA_RESET();
	pa.filter = (uintptr_t)"vfs_read vfs_write";
	pa.filter_len = strlen("vfs_read vfs_write");
	pa.exclude = (uintptr_t)"no_such_function_xyz";
	pa.exclude_len = strlen("no_such_function_xyz");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(ENOENT),
		   "PROBE_ADD exclude pattern matching nothing -> ENOENT");
	expect(pa.err_index == 2, "... err_index 2 (filter patterns first) (%d)", pa.err_index);
	vfs_read = kallsyms("vfs_read");
	{
		__u64 bad[2] = { 0, 0x1234 };

		bad[0] = vfs_read;
		PA_RESET();
		pa.ips = (uintptr_t)bad;
		pa.nr_ips = 2;
		pa.filter = (uintptr_t)"vfs_write";
		pa.filter_len = strlen("vfs_write");
		if (bad[0]) {
			EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(ENOENT, EINVAL),
				   "PROBE_ADD ip 0x1234 (not a function) -> ENOENT");
			expect(pa.err_index == 2, "... err_index 2 (after 1 pattern, 1 good ip) (%d)",
			       pa.err_index);
		}
		bad[0] = KERNEL_PTR + 1;
		pa.nr_ips = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(ENOENT, EINVAL),
			   "PROBE_ADD ip in the middle of kernel text -> ENOENT/EINVAL");
	}

	PA_RESET();
	pa.filter = (uintptr_t)unmapped;
	pa.filter_len = 8;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EFAULT),
		   "PROBE_ADD unmapped filter pointer -> EFAULT");
	pa.filter = KERNEL_PTR;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EFAULT),
		   "PROBE_ADD kernel filter pointer -> EFAULT");
	pa.filter = (uintptr_t)(guard_end() - 4);
	memcpy((char *)(uintptr_t)pa.filter, "vfs_", 4);
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EFAULT),
		   "PROBE_ADD filter text running into PROT_NONE -> EFAULT");
	pa.filter = (uintptr_t)"vfs_read";
	pa.exclude = (uintptr_t)unmapped;
	pa.exclude_len = 8;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EFAULT),
		   "PROBE_ADD unmapped exclude pointer -> EFAULT");
	PA_RESET();
	pa.ips = (uintptr_t)unmapped;
	pa.nr_ips = 4;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EFAULT),
		   "PROBE_ADD unmapped ips pointer -> EFAULT");
	pa.ips = KERNEL_PTR;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EFAULT),
		   "PROBE_ADD kernel ips pointer -> EFAULT");

	/*
	 * the probe limit: the probes by address, the one past it by pattern
	 * (a pattern is matched against every call site ftrace has, each
	 * time: 64 of them took 7.8 s under TCG on 6.12, 11 s on the debug
	 * kernel; the limit is checked before either)
	 */
	{
		struct fhook_handshake hs;
		unsigned int ok = 0;

		handshake(fd, &hs);
		for (i = 0; i < (int)hs.max_probes; i++) {
			PA_RESET();
			pa.ips = (uintptr_t)&vfs_read;
			pa.nr_ips = 1;
			if ((vfs_read ? ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa) :
					probe_add(fd, "vfs_read", NULL, NULL)) == 0)
				ok++;
		}
		expect(ok == hs.max_probes, "PROBE_ADD max_probes (%u) probes succeed (%u)",
		       hs.max_probes, ok);
		EXPECT_ERR(probe_add(fd, "vfs_read", NULL, NULL),
			   ERRS(ENOSPC, EMFILE, E2BIG, EBUSY), "PROBE_ADD max_probes+1 -> ENOSPC");
	}
	close(fd);
	free(text);
}

/* Histograms in the module: what HIST_SET refuses, what HIST_READ gives. */
static void test_hist(void)
{
	struct fhook_hist_set hs = { .size = sizeof(hs), .entries = 128, .nr_keys = 1 };
	struct fhook_hist_read hr = { .size = sizeof(hr) };
	static unsigned char buf[65536];
	pid_t child_pid = -1;
	__u32 id, t;
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, 65536) || probe_add(fd, "vfs_read", NULL, &id))
		fatal("setting up a session");
	hs.keys[0].src = FHOOK_HIST_SRC_PID;
	hs.keys[0].store = FHOOK_HIST_NO_STORE;
	hs.probe_id = id + 100;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(ENOENT), "HIST_SET unknown probe");
	hs.probe_id = id;
	hs.entries = 100;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET entries 100 (not 2^n)");
	hs.entries = 64;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET entries 64 (< min)");
	hs.entries = FHOOK_HIST_MAX_SIZE * 2;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET entries > max");
	hs.entries = 128;
	hs.nr_keys = 0;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET no key");
	hs.nr_keys = FHOOK_HIST_MAX_KEYS + 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET too many keys");
	hs.nr_keys = 1;
	hs.keys[0].src = FHOOK_HIST_SRC_DATA;	/* a function probe has no data */
	hs.keys[0].size = 8;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET data of a function");
	hs.keys[0] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_PID, .op = FHOOK_HIST_OP_BUCKETS,
						.store = FHOOK_HIST_NO_STORE };
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET buckets of 0");
	hs.keys[0].op = 9;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET unknown op");
	hs.keys[0].op = 0;
	hs.keys[1].src = FHOOK_HIST_SRC_CPU;	/* beyond nr_keys: must be zero */
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET stale key 2");
	hs.keys[1].src = 0;
	hs.nr_vals = 1;
	hs.vals[0] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_COMM,
						.store = FHOOK_HIST_NO_STORE };
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET comm as a value");
	hs.nr_vals = 0;
	memset(&hs.vals[0], 0, sizeof(hs.vals[0]));
	hs.reserved = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET reserved");
	hs.reserved = 0;
	hs.__pad = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET padding");
	hs.__pad = 0;
	hr.probe_id = id;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), ERRS(EINVAL), "HIST_READ without a table");
	hs.table = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET table 1 before 0");
	hs.table = 0;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), "HIST_SET pid, 128 entries");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EEXIST), "HIST_SET table 0 twice");
	/* table 1: the stack, keyed with the pid */
	hs.table = 1;
	hs.nr_keys = 2;
	hs.keys[1] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_STACK,
						.store = FHOOK_HIST_NO_STORE };
	hs.keys[0].src = FHOOK_HIST_SRC_STACK;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET two stack keys");
	hs.keys[0].src = FHOOK_HIST_SRC_PID;
	hs.keys[1].op = FHOOK_HIST_OP_LOG2;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET log2 of a stack");
	hs.keys[1].op = 0;
	hs.nr_vals = 1;
	hs.vals[0] = hs.keys[1];
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET stack as a value");
	hs.nr_vals = 0;
	memset(&hs.vals[0], 0, sizeof(hs.vals[0]));
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), "HIST_SET table 1: pid, stack");
	/* table 2: the user stack (tgid, frames), the kernel's, comm: the largest key */
	hs.table = 2;
	hs.keys[0] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_USTACK,
						.store = FHOOK_HIST_NO_STORE };
	hs.keys[1] = hs.keys[0];
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET two user stack keys");
	hs.keys[1].src = FHOOK_HIST_SRC_STACK;
	hs.keys[0].op = FHOOK_HIST_OP_DIV;
	hs.keys[0].param = 2;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL), "HIST_SET a user stack divided");
	hs.keys[0].op = 0;
	hs.keys[0].param = 0;
	hs.nr_keys = 3;
	hs.keys[2] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_COMM,
						.store = FHOOK_HIST_NO_STORE };
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), "HIST_SET table 2: user stack, stack, comm");
	memset(&hs.keys[2], 0, sizeof(hs.keys[2]));
	hs.nr_keys = 1;
	hs.keys[0] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_PID,
						.store = FHOOK_HIST_NO_STORE };
	memset(&hs.keys[1], 0, sizeof(hs.keys[1]));
	for (t = 3; t < FHOOK_HIST_MAX_TABLES; t++) {
		hs.table = t;
		EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), "HIST_SET table %u", t);
	}
	hs.table = FHOOK_HIST_MAX_TABLES;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(ENOSPC), "HIST_SET one table too many");
	hs.table = 0;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START), "START with the tables");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EBUSY, EEXIST), "HIST_SET armed");
	{
		/* 20 reads by a child (a session may leave its own process out) */
		pid_t child = fork();

		child_pid = child;
		if (child == 0) {
			int z = open("/dev/zero", O_RDONLY);

			for (int i = 0; i < 20 && z >= 0; i++)
				if (read(z, buf, 1) != 1)
					break;
			_exit(0);
		}
		if (child > 0)
			waitpid(child, NULL, 0);
	}
	hr.buf = (uintptr_t)buf;
	hr.buf_len = 0;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), ERRS(ENOSPC), "HIST_READ into 0 bytes");
	expect(hr.nr >= 1 && hr.key_size == 8 && hr.elt_size == 8 + 24 + 16,
	       "HIST_READ: ENOSPC says the entries (%u) and their layout", hr.nr);
	hr.buf_len = sizeof(buf);
	hr.buf = (uintptr_t)unmapped;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), ERRS(EFAULT, ENOSPC), "HIST_READ unmapped");
	hr.buf = (uintptr_t)buf;
	if (hr.nr * hr.elt_size <= sizeof(buf)) {
		__u64 pid, count;

		EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), "HIST_READ");
		memcpy(&pid, buf, 8);
		memcpy(&count, buf + 8, 8);
		expect(hr.hits >= 20 && count >= 1 && pid > 0, "HIST_READ: a pid with its hits");
	}
	/* the stack table: pid, then vfs_read and its callers (kernel text) */
	hr.table = 1;
	hr.buf_len = sizeof(buf);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), "HIST_READ table 1");
	expect(hr.key_size == 8 + 8 * FHOOK_HIST_STACK_DEPTH &&
	       hr.elt_size == hr.key_size + 24 + 16 && hr.nr >= 1 && hr.hits >= 20,
	       "HIST_READ table 1: %u entries of a pid and a stack, %llu hits", hr.nr,
	       (unsigned long long)hr.hits);
	if (hr.nr >= 1) {
		__u64 f0, f1;

		memcpy(&f0, buf + 8, 8);
		memcpy(&f1, buf + 16, 8);
		expect(ktext(f0) && ktext(f1),
		       "HIST_READ table 1: the stack's first frames are kernel text (%llx %llx)",
		       (unsigned long long)f0, (unsigned long long)f1);
	}
	/* table 2: the child's tgid, a user frame; then kernel text */
	hr.table = 2;
	hr.buf_len = sizeof(buf);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), "HIST_READ table 2");
	expect(hr.key_size == 8 * (1 + 2 * FHOOK_HIST_STACK_DEPTH) + 16 && hr.nr >= 1 &&
	       hr.hits >= 20,
	       "HIST_READ table 2: %u entries of a user and a kernel stack, key %u bytes", hr.nr,
	       hr.key_size);
	if (hr.nr >= 1 && hr.key_size == 8 * (1 + 2 * FHOOK_HIST_STACK_DEPTH) + 16) {
		__u64 best = 0, tgid = 0, u0 = 0, k0 = 0;
		char comm[17] = "";

		for (__u32 i = 0; i < hr.nr && (i + 1) * hr.elt_size <= sizeof(buf); i++) {
			const unsigned char *e = buf + i * hr.elt_size;
			__u64 count;

			memcpy(&count, e + hr.key_size, 8);
			if (count < best)
				continue;
			best = count;
			memcpy(&tgid, e, 8);
			memcpy(&u0, e + 8, 8);
			memcpy(&k0, e + 8 * (1 + FHOOK_HIST_STACK_DEPTH), 8);
			memcpy(comm, e + 8 * (1 + 2 * FHOOK_HIST_STACK_DEPTH), 16);
		}
		expect(best >= 20 && tgid == (__u64)child_pid && u0 && u0 < 0x800000000000ULL &&
		       ktext(k0) && !strcmp(comm, "fhook-abitest"),
		       "HIST_READ table 2: the child (%d) has %llu hits, tgid %llu, user frame %llx, kernel frame %llx, comm %s",
		       (int)child_pid, (unsigned long long)best, (unsigned long long)tgid,
		       (unsigned long long)u0, (unsigned long long)k0, comm);
	}
	hr.table = FHOOK_HIST_MAX_TABLES;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), ERRS(EINVAL), "HIST_READ no such table");
	close(fd);
}

static void test_filters(void)
{
	int fd = open_dev();
	__u32 *pids = zalloc((FHOOK_MAX_FILTER_PIDS + 1) * sizeof(__u32));
	struct fhook_pid_filter pf = { .size = sizeof(pf) };
	struct fhook_cpu_filter cf = { .size = sizeof(cf) };
	__u64 mask[FHOOK_MAX_CPUMASK / 8 + 1];

	handshake(fd, NULL);
	for (int i = 0; i <= FHOOK_MAX_FILTER_PIDS; i++)
		pids[i] = 1;
	pf.pids = (uintptr_t)pids;
	pf.nr_pids = FHOOK_MAX_FILTER_PIDS + 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL, E2BIG),
		   "PID_FILTER nr_pids FHOOK_MAX_FILTER_PIDS+1 -> EINVAL/E2BIG");
	pf.nr_pids = 1;
	pids[0] = 0x7fffffff;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL, ESRCH, ERANGE),
		   "PID_FILTER pid 0x7fffffff -> EINVAL");
	pids[0] = 0xffffffff;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL, ESRCH, ERANGE),
		   "PID_FILTER pid 0xffffffff -> EINVAL");
	pids[0] = 4194304;	/* PID_MAX_LIMIT on 64-bit */
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EINVAL, ESRCH, ERANGE),
		   "PID_FILTER pid 4194304 (PID_MAX_LIMIT) -> EINVAL");
	pf.pids = (uintptr_t)unmapped;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EFAULT),
		   "PID_FILTER unmapped pids pointer -> EFAULT");
	pf.pids = KERNEL_PTR;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EFAULT),
		   "PID_FILTER kernel pids pointer -> EFAULT");
	pf.pids = (uintptr_t)(guard_end() - 4);
	pf.nr_pids = 2;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), ERRS(EFAULT),
		   "PID_FILTER pids array running into PROT_NONE -> EFAULT");

	memset(mask, 0, sizeof(mask));
	cf.mask = (uintptr_t)mask;
	cf.nr_bits = FHOOK_MAX_CPUMASK * 8 + 1;
	mask[0] = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), ERRS(EINVAL, E2BIG),
		   "CPU_FILTER nr_bits 8*FHOOK_MAX_CPUMASK+1 -> EINVAL/E2BIG");
	cf.nr_bits = 0xffffffff;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), ERRS(EINVAL, E2BIG),
		   "CPU_FILTER nr_bits 0xffffffff -> EINVAL/E2BIG");
	cf.nr_bits = FHOOK_MAX_CPUMASK * 8;
	mask[0] = 0;
	mask[FHOOK_MAX_CPUMASK / 8 - 1] = 1ULL << 63;	/* CPU 8191 */
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), ERRS(EINVAL, ENODEV),
		   "CPU_FILTER with only CPU 8191 -> EINVAL");
	cf.mask = (uintptr_t)unmapped;
	cf.nr_bits = 64;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), ERRS(EFAULT),
		   "CPU_FILTER unmapped mask pointer -> EFAULT");
	cf.mask = KERNEL_PTR;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), ERRS(EFAULT),
		   "CPU_FILTER kernel mask pointer -> EFAULT");

	{
		struct fhook_stats st = { .size = sizeof(st), .probe_id = 999 };

		EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, &st), ERRS(ENOENT, EINVAL),
			   "STATS unknown probe id -> ENOENT");
	}
	close(fd);

	fd = ready_session(8192);
	{
		struct fhook_stats st = {
			.size = sizeof(st), .probe_id = FHOOK_STATS_SESSION,
			.nr_cpus = 2, .cpus = (uintptr_t)unmapped,
		};

		EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, &st), ERRS(EFAULT),
			   "STATS unmapped cpus pointer -> EFAULT");
		st.cpus = KERNEL_PTR;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_STATS, &st), ERRS(EFAULT),
			   "STATS kernel cpus pointer -> EFAULT");
		st.cpus = 0;
		EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "STATS with cpus == 0");
	}
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "START a ready session");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_START, 0), ERRS(EBUSY, EINVAL), "second START -> EBUSY");
	EXPECT_ERR(probe_add(fd, "vfs_write", NULL, NULL), ERRS(EBUSY, EINVAL),
		   "PROBE_ADD while armed -> EBUSY");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "STOP");
	close(fd);
	free(pids);
}

static int mmap_err(int fd, size_t len, int prot, int flags, __u64 off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -1;
	munmap(p, len);
	return 0;
}

static void test_mmap(void)
{
	const __u64 size = 16384;
	const __u64 S = FHOOK_MMAP_STRIDE;
	int fd = ready_session(size);
	struct fhook_handshake hs;
	unsigned int n;
	char *meta, *data;
	pid_t pid;
	int status;

	handshake(fd, &hs);
	n = hs.nr_cpus;
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_PRIVATE, 0), ERRS(EINVAL),
		   "mmap meta MAP_PRIVATE -> EINVAL");
	EXPECT_ERR(mmap_err(fd, 2 * size, PROT_READ, MAP_PRIVATE, 2 * page), ERRS(EINVAL),
		   "mmap data MAP_PRIVATE -> EINVAL");
	EXPECT_ERR(mmap_err(fd, page, PROT_READ | PROT_WRITE, MAP_SHARED, 0), ERRS(EPERM, EACCES),
		   "mmap meta PROT_WRITE -> EPERM");
	EXPECT_ERR(mmap_err(fd, 2 * size, PROT_READ | PROT_WRITE, MAP_SHARED, 2 * page),
		   ERRS(EPERM, EACCES), "mmap data PROT_WRITE -> EPERM");
	EXPECT_ERR(mmap_err(fd, 2 * size, PROT_READ | PROT_EXEC, MAP_SHARED, 2 * page),
		   ERRS(EPERM, EACCES), "mmap data PROT_EXEC -> EPERM");
	EXPECT_ERR(mmap_err(fd, 2 * page, PROT_READ, MAP_SHARED, 0), ERRS(EINVAL),
		   "mmap meta 2 pages -> EINVAL");
	EXPECT_ERR(mmap_err(fd, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, page), ERRS(EINVAL),
		   "mmap cons 2 pages -> EINVAL");
	EXPECT_ERR(mmap_err(fd, size, PROT_READ, MAP_SHARED, 2 * page), ERRS(EINVAL),
		   "mmap data 1x buf_size (not 2x) -> EINVAL");
	EXPECT_ERR(mmap_err(fd, 4 * size, PROT_READ, MAP_SHARED, 2 * page), ERRS(EINVAL),
		   "mmap data 4x buf_size -> EINVAL");
	EXPECT_ERR(mmap_err(fd, 3 * page + 2 * size, PROT_READ, MAP_SHARED, 0), ERRS(EINVAL),
		   "mmap the whole region at once -> EINVAL");
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_SHARED, 3 * page), ERRS(EINVAL),
		   "mmap offset inside data -> EINVAL");
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_SHARED, 64 * page), ERRS(EINVAL),
		   "mmap offset past the region -> EINVAL");
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_SHARED, n * S), ERRS(EINVAL, ENODEV, ENXIO),
		   "mmap cpu nr_cpus (%u) -> EINVAL/ENODEV", n);
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_SHARED, 4096 * S),
		   ERRS(EINVAL, ENODEV, ENXIO), "mmap cpu 4096 -> EINVAL/ENODEV");
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_SHARED, 0x7fffULL * S + page),
		   ERRS(EINVAL, ENODEV, ENXIO, EOVERFLOW), "mmap cpu 0x7fff cons -> EINVAL/ENODEV");

	meta = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	data = mmap(NULL, 2 * size, PROT_READ, MAP_SHARED, fd, 2 * page);
	expect(meta != MAP_FAILED, "mmap meta of cpu 0 read-only");
	expect(data != MAP_FAILED, "mmap data of cpu 0 read-only, 2x buf_size");
	if (meta == MAP_FAILED || data == MAP_FAILED)
		fatal("mmap");
	{
		struct fhook_ring_meta *m = (void *)meta;

		expect(m->abi_version == FHOOK_ABI_VERSION && m->cpu == 0 && m->data_size == size,
		       "meta page: abi %u cpu %u data_size %llu", m->abi_version, m->cpu,
		       (unsigned long long)m->data_size);
	}
	EXPECT_ERR(mprotect(meta, page, PROT_READ | PROT_WRITE), ERRS(EACCES, EPERM),
		   "mprotect(meta, RW) -> EACCES");
	EXPECT_ERR(mprotect(data, page, PROT_READ | PROT_WRITE), ERRS(EACCES, EPERM, EINVAL),
		   "mprotect(data, RW) -> EACCES");
	EXPECT_ERR(mprotect(data, 2 * size, PROT_READ | PROT_EXEC), ERRS(EACCES, EPERM),
		   "mprotect(data, RX) -> EACCES");
	EXPECT_ERR(munmap(data, page), ERRS(EINVAL), "partial munmap of data (split) -> EINVAL");
	{
		void *r = mremap(data, 2 * size, 4 * size, MREMAP_MAYMOVE);

		expect(r == MAP_FAILED, "mremap grow of data refused (errno %d)", errno);
		if (r != MAP_FAILED)
			data = r;
	}

	pid = fork();
	if (pid == 0) {
		volatile char c = meta[0];	/* VM_DONTCOPY: not mapped in the child */

		(void)c;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	       "fork child touching the ring gets SIGSEGV (status %#x)", status);

	munmap(meta, page);
	munmap(data, 2 * size);
	close(fd);

	/* cpu regions beyond the rings, on a session without rings */
	fd = open_dev();
	handshake(fd, NULL);
	EXPECT_ERR(mmap_err(fd, page, PROT_READ, MAP_SHARED, 0), ERRS(EINVAL, ENODEV),
		   "mmap meta before RING_SETUP -> EINVAL/ENODEV");
	close(fd);
}

/*
 * The consumer page is user-writable: garbage there must only cause drops,
 * on a function probe's ring and on a direct probe's (on x86-64 the
 * assembly recorder's room check, fhook_fnrec_common).
 */
static void bad_tail(__u32 type)
{
	int fd = open_dev();
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = type,
		.filter = (uintptr_t)"vfs_read", .filter_len = 8,
	};
	struct fhook_handshake hs;
	struct fhook_stats st = { .size = sizeof(st), .probe_id = FHOOK_STATS_SESSION };
	__u32 pid = getpid();
	struct fhook_pid_filter pf = {
		.size = sizeof(pf), .flags = FHOOK_PIDF_RESET, .nr_pids = 1, .pids = (uintptr_t)&pid,
	};
	static const __u64 tails[] = { 0xdeadbeefdeadbeefULL, 4, 1ULL << 63, 8192 * 3 };
	volatile __u64 *cons[64] = { 0 };
	char c;
	int zfd = open("/dev/zero", O_RDONLY);

	if (handshake(fd, &hs) || ring_setup(fd, 8192))
		fatal("setting up a session");
	if (ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa)) {
		expect(type == FHOOK_PROBE_DIRECT && !(hs.features & FHOOK_FEAT_DIRECT),
		       "PROBE_ADD of type %u on vfs_read: %s", type, strerror(errno));
		close(zfd);
		close(fd);
		return;
	}
	for (unsigned int cpu = 0; cpu < hs.nr_cpus && cpu < 64; cpu++) {
		void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			       cpu * FHOOK_MMAP_STRIDE + page);

		cons[cpu] = p == MAP_FAILED ? NULL : p;
	}
	ioctl(fd, FHOOK_IOC_PID_FILTER, &pf);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "START with garbage consumer tails");
	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		for (unsigned int cpu = 0; cpu < 64; cpu++)
			if (cons[cpu])
				*cons[cpu] = tails[t];
		for (int i = 0; i < 200; i++)
			if (read(zfd, &c, 1) != 1)
				break;
	}
	ioctl(fd, FHOOK_IOC_STOP, 0);
	for (unsigned int cpu = 0; cpu < 64; cpu++)
		if (cons[cpu])
			munmap((void *)cons[cpu], page);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "STATS after garbage tails");
	expect(st.total.hits == 800 && st.total.hits == st.total.written + st.total.lost,
	       "garbage tails (%s probe): hits %llu == 800 == written %llu + lost %llu",
	       type == FHOOK_PROBE_DIRECT ? "direct" : "function",
	       (unsigned long long)st.total.hits, (unsigned long long)st.total.written,
	       (unsigned long long)st.total.lost);
	close(zfd);
	close(fd);
}

static void test_bad_tail(void)
{
	bad_tail(FHOOK_PROBE_FUNC);
	bad_tail(FHOOK_PROBE_DIRECT);
}

/*
 * Records larger than a 4 KiB ring, with consumer tails forged relative to
 * data_head (ahead by a little, by the record's size, by the ring; a ring
 * behind; random): before 2026-12-02 a tail just ahead of head let a
 * record of more than the ring through, written past the double mapping
 * (an oops in the bench loop's memcpy, as in a kprobe's string fetch).
 * Now such a record is always dropped, and so is every record under a
 * tail ahead of head; nothing is written, nothing faults.
 */
static void test_forged_tail_big(void)
{
	int fd = open_dev();
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_BENCH };
	volatile struct fhook_ring_meta *meta;
	volatile __u64 *tail;
	cpu_set_t one;
	__u64 written = 0, dropped = 0, tries = 0;
	unsigned int seed = 1;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		fatal("sched_setaffinity to CPU 0");
	if (handshake(fd, NULL) || ring_setup(fd, page) || ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa) ||
	    ioctl(fd, FHOOK_IOC_START, 0))
		fatal("a bench session with a 4 KiB ring");
	meta = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	tail = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	if (meta == MAP_FAILED || tail == MAP_FAILED)
		fatal("mmap CPU 0's meta and consumer pages");
	for (int round = 0; round < 400; round++) {
		/* 4 KiB (or 8 bytes less) of payload plus the header: more than the ring */
		__u32 payload = round & 1 ? FHOOK_BENCH_MAX_PAYLOAD : FHOOK_BENCH_MAX_PAYLOAD - 8;
		__u64 need = (sizeof(struct fhook_rec) + payload + 7) & ~7ULL, head = meta->data_head;
		const __u64 deltas[] = { 8, need - 8, need, page, -(__u64)page - 8,
					 (__u64)rand_r(&seed) << 32 | rand_r(&seed), 0 };
		__u64 d = deltas[round % (sizeof(deltas) / sizeof(deltas[0]))];
		struct fhook_bench b = {
			.size = sizeof(b), .probe_id = pa.probe_id, .nr_events = 4,
			.payload = payload,
		};

		*tail = head + d;
		if (ioctl(fd, FHOOK_IOC_BENCH, &b)) {
			expect(0, "BENCH under a forged tail: %s", strerror(errno));
			break;
		}
		tries += b.nr_events;
		written += b.written;
		dropped += b.dropped;
	}
	expect(written == 0 && dropped == tries,
	       "records larger than a 4 KiB ring under forged tails: written %llu (0), dropped %llu of %llu",
	       (unsigned long long)written, (unsigned long long)dropped, (unsigned long long)tries);
	munmap((void *)meta, page);
	munmap((void *)tail, page);
	close(fd);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static void test_privileges(void)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		fd = open(dev, O_RDWR);
		if (fd >= 0)
			_exit(0);
		_exit(errno == EACCES || errno == EPERM ? 1 : 2);
	}
	waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	       "uid 65534: open -> EACCES/EPERM (child status %#x: 0=opened 2=other errno 3=setuid failed)",
	       status);

	/* uid 0 with no capabilities: DAC allows the open, the module must not */
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = 1 };
		int fd;

		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d))
			_exit(3);
		fd = open(dev, O_RDWR);
		if (fd < 0)
			_exit(errno == EACCES || errno == EPERM ? 1 : 2);
		if (ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs) < 0 && (errno == EPERM || errno == EACCES))
			_exit(1);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	       "uid 0 without capabilities: open or first ioctl -> EPERM (child status %#x)", status);
}

/* ------------------------------------------------------------------ */
/* FHOOK_IOC_SYMBOLS against /proc/kallsyms                            */

struct ksym_line {
	__u64 addr;
	char name[FHOOK_SYMBOL_NAME_LEN];
	char module[FHOOK_SYMBOL_MODULE_LEN];
	char type;
};

static const struct ksym_line *ksym_lines;	/* by_addr_cmp()'s */

static int by_addr_cmp(const void *a, const void *b)
{
	__u64 x = ksym_lines[*(const size_t *)a].addr, y = ksym_lines[*(const size_t *)b].addr;

	return x < y ? -1 : x > y;
}

/* Is everything after the string's NUL zero? */
static int zero_tail(const char *str, size_t size)
{
	for (size_t i = strnlen(str, size); i < size; i++)
		if (str[i])
			return 0;
	return 1;
}

static long symbols(int fd, struct fhook_symbol *e, __u32 nr)
{
	struct fhook_symbols sy = {
		.size = sizeof(sy), .entry_size = sizeof(*e), .nr = nr, .entries = (uintptr_t)e,
	};

	return ioctl(fd, FHOOK_IOC_SYMBOLS, &sy);
}

/*
 * Every 97th text symbol of vmlinux and every text symbol of fhook.ko, at
 * its start and one byte in: the name (one of those listed at that
 * address: the kernel names the first alias), the offset, the module,
 * and for vmlinux (listed in address order) the size: the distance to the
 * next address listed.  Then the refusals.
 */
static void test_symbols(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct ksym_line *l = NULL;
	size_t n = 0, cap = 0, asked = 0, wrong = 0, mod_asked = 0, *by_addr;
	struct fhook_symbol *e = zalloc(sizeof(*e) * (FHOOK_SYMBOLS_MAX + 1));
	char line[1024], first[1024] = "";
	struct timespec t0, t1, t2;
	__u64 vfs_read;
	int fd = open_dev();

	handshake(fd, NULL);
	if (!(features & FHOOK_FEAT_SYMBOLS)) {
		expect(0, "the module announces FHOOK_FEAT_SYMBOLS");
		close(fd);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[FHOOK_SYMBOL_NAME_LEN], module[FHOOK_SYMBOL_MODULE_LEN] = "";

		/* (the module's sizes: 223 and 63 characters) */
		if (sscanf(line, "%llx %c %223s [%63[^]]]", &addr, &type, name, module) < 3)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			l = realloc(l, cap * sizeof(*l));
			if (!l)
				fatal("realloc");
		}
		l[n].addr = addr;
		l[n].type = type;
		memcpy(l[n].name, name, sizeof(name));
		memcpy(l[n].module, module, sizeof(module));
		n++;
	}
	if (f)
		fclose(f);
	expect(n > 1000, "/proc/kallsyms read: %zu symbols", n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* (a module's aliases are not listed together: cleanup_module) */
	by_addr = malloc(n * sizeof(*by_addr));
	if (!by_addr)
		fatal("malloc");
	for (size_t i = 0; i < n; i++)
		by_addr[i] = i;
	ksym_lines = l;
	qsort(by_addr, n, sizeof(*by_addr), by_addr_cmp);
	for (size_t i = 0; i < n; i++) {
		int text = strchr("tTwW", l[i].type) != NULL;
		int ours = !strcmp(l[i].module, "fhook");
		size_t j, k, next;
		int named = 0;

		/*
		 * (vmlinux's text only: is_ksym_addr(); no mapping symbols,
		 * which kallsyms lists and never names: arm64's $x)
		 */
		if (!text || !l[i].addr || l[i].name[0] == '$' || !strncmp(l[i].name, ".L", 2) ||
		    (!ours && (l[i].module[0] || i % 97 || l[i].addr < stext || l[i].addr >= etext)))
			continue;
		/* the next address listed; the names at this one, anywhere */
		for (next = i + 1; next < n && l[next].addr == l[i].addr; next++)
			;
		for (j = 0, k = n; j < k;) {	/* the first in by_addr at addr */
			size_t mid = (j + k) / 2;

			if (l[by_addr[mid]].addr < l[i].addr)
				j = mid + 1;
			else
				k = mid;
		}
		/* (every byte the module does not name must come back zero) */
		memset(e, 0xa5, 2 * sizeof(*e));
		e[0].addr = l[i].addr;
		e[1].addr = l[i].addr + 1;
		if (symbols(fd, e, 2)) {
			expect(0, "SYMBOLS of %s: errno %d", l[i].name, errno);
			break;
		}
		asked++;
		mod_asked += ours;
		for (k = j; k < n && l[by_addr[k]].addr == l[i].addr; k++)
			named |= !strcmp(e[0].name, l[by_addr[k]].name) &&
				 !strcmp(e[0].module, l[by_addr[k]].module);
		if (!named || e[0].offset || strcmp(e[0].module, l[i].module) ||
		    !zero_tail(e[0].name, sizeof(e[0].name)) ||
		    !zero_tail(e[0].module, sizeof(e[0].module)) ||
		    !zero_tail(e[1].name, sizeof(e[1].name)) ||
		    !zero_tail(e[1].module, sizeof(e[1].module)) ||
		    /* (a symbol of one byte: the next one is at +1) */
		    (e[0].size > 1 && (strcmp(e[1].name, e[0].name) || e[1].offset != 1 ||
				       e[1].size != e[0].size)) ||
		    (!l[i].module[0] && next < n && !l[next].module[0] &&
		     e[0].size != l[next].addr - l[i].addr)) {
			int at = strlen(first);

			if (wrong++ < 3 && at < (int)sizeof(first) - 1)
				snprintf(first + at, sizeof(first) - at,
					 "; %s [%s] at %llx (next %llx): %s+%llx/%llx [%s], %s+%llx",
					 l[i].name, l[i].module, (unsigned long long)l[i].addr,
					 next < n ? (unsigned long long)l[next].addr : 0ULL,
					 e[0].name, (unsigned long long)e[0].offset,
					 (unsigned long long)e[0].size, e[0].module, e[1].name,
					 (unsigned long long)e[1].offset);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	expect(asked > 100 && mod_asked > 10 && !wrong,
	       "SYMBOLS agrees with /proc/kallsyms: %zu symbols (%zu of fhook.ko), %zu wrong%s",
	       asked, mod_asked, wrong, first);
	printf("# SYMBOLS: /proc/kallsyms read in %.1f s, %zu asked in %.1f s\n",
	       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9, asked,
	       t2.tv_sec - t1.tv_sec + (t2.tv_nsec - t1.tv_nsec) / 1e9);
	free(by_addr);
	free(l);

	e[0].addr = 0x400000;
	e[0].size = 99;
	strcpy(e[0].name, "junk");
	EXPECT_OK(symbols(fd, e, 1), "SYMBOLS of a user address");
	expect(!e[0].size && !e[0].offset && !e[0].name[0] && !e[0].module[0],
	       "... names nothing (size %llu, name '%s')", (unsigned long long)e[0].size,
	       e[0].name);
	vfs_read = kallsyms("vfs_read");
	for (unsigned int i = 0; i <= FHOOK_SYMBOLS_MAX; i++)
		e[i].addr = vfs_read + i;
	EXPECT_OK(symbols(fd, e, FHOOK_SYMBOLS_MAX), "SYMBOLS of FHOOK_SYMBOLS_MAX addresses");
	expect(!strcmp(e[FHOOK_SYMBOLS_MAX - 1].name, "vfs_read") &&
	       e[FHOOK_SYMBOLS_MAX - 1].offset == FHOOK_SYMBOLS_MAX - 1,
	       "... the last one is vfs_read+%u (%s+%llu)", FHOOK_SYMBOLS_MAX - 1,
	       e[FHOOK_SYMBOLS_MAX - 1].name, (unsigned long long)e[FHOOK_SYMBOLS_MAX - 1].offset);
	EXPECT_ERR(symbols(fd, e, FHOOK_SYMBOLS_MAX + 1), ERRS(EINVAL),
		   "SYMBOLS of FHOOK_SYMBOLS_MAX + 1 -> EINVAL");
	EXPECT_ERR(symbols(fd, e, 0), ERRS(EINVAL), "SYMBOLS of none -> EINVAL");
	EXPECT_ERR(symbols(fd, NULL, 1), ERRS(EINVAL), "SYMBOLS entries NULL -> EINVAL");
	EXPECT_ERR(symbols(fd, unmapped, 1), ERRS(EFAULT), "SYMBOLS entries unmapped -> EFAULT");
	EXPECT_ERR(symbols(fd, (void *)(uintptr_t)KERNEL_PTR, 1), ERRS(EFAULT),
		   "SYMBOLS entries at a kernel address -> EFAULT");
	{
		/* the first entry readable, the second in a PROT_NONE page */
		struct fhook_symbol *g = (struct fhook_symbol *)(guard_end() - sizeof(*g));

		memset(g, 0, sizeof(*g));
		g->addr = vfs_read;
		EXPECT_ERR(symbols(fd, g, 2), ERRS(EFAULT),
			   "SYMBOLS entries running into PROT_NONE -> EFAULT");
		expect(!strcmp(g->name, "vfs_read"), "... after answering the first (%s)", g->name);
	}
	{
		void *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		EXPECT_ERR(symbols(fd, ro, 1), ERRS(EFAULT), "SYMBOLS entries read-only -> EFAULT");
		munmap(ro, page);
	}
	{
		struct fhook_symbols sy = {
			.size = sizeof(sy), .entry_size = sizeof(*e) - 8, .nr = 1,
			.entries = (uintptr_t)e,
		};

		EXPECT_ERR(ioctl(fd, FHOOK_IOC_SYMBOLS, &sy), ERRS(EINVAL),
			   "SYMBOLS entry_size wrong -> EINVAL");
		sy.entry_size = sizeof(*e);
		sy.__pad = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_SYMBOLS, &sy), ERRS(EINVAL), "SYMBOLS __pad -> EINVAL");
		sy.__pad = 0;
		sy.reserved[1] = 1;
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_SYMBOLS, &sy), ERRS(EINVAL),
			   "SYMBOLS reserved -> EINVAL");
	}
	free(e);
	close(fd);
}

/*
 * The observer (CAP_PERFMON and CAP_SYSLOG, which it reads /proc/kallsyms
 * with) names vfs_read; without CAP_SYSLOG, as /proc/kallsyms would show
 * it zeros, the module names nothing (EPERM).
 */
static void test_observer_symbols(void)
{
	struct fhook_symbol e = { .addr = kallsyms_in("vfs_read", 0) };
	int fd = open_dev(), status;
	pid_t pid;

	handshake(fd, NULL);
	EXPECT_OK(symbols(fd, &e, 1), "SYMBOLS with CAP_SYSLOG");
	expect(!strcmp(e.name, "vfs_read") && !e.offset, "... names vfs_read (%s+%llu)", e.name,
	       (unsigned long long)e.offset);
	{
		/* this caller's own attacks: counts, pointers, faulting entries */
		struct fhook_symbol *g = (struct fhook_symbol *)(guard_end() - sizeof(*g));
		void *ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		EXPECT_ERR(symbols(fd, &e, FHOOK_SYMBOLS_MAX + 1), ERRS(EINVAL),
			   "observer: SYMBOLS of FHOOK_SYMBOLS_MAX + 1 -> EINVAL");
		EXPECT_ERR(symbols(fd, unmapped, 1), ERRS(EFAULT),
			   "observer: SYMBOLS entries unmapped -> EFAULT");
		EXPECT_ERR(symbols(fd, (void *)(uintptr_t)KERNEL_PTR, 1), ERRS(EFAULT),
			   "observer: SYMBOLS entries at a kernel address -> EFAULT");
		memset(g, 0, sizeof(*g));
		g->addr = e.addr;
		EXPECT_ERR(symbols(fd, g, 2), ERRS(EFAULT),
			   "observer: SYMBOLS entries running into PROT_NONE -> EFAULT");
		EXPECT_ERR(symbols(fd, ro, 1), ERRS(EFAULT),
			   "observer: SYMBOLS entries read-only -> EFAULT");
		munmap(ro, page);
	}
	pid = fork();
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];

		memset(&e, 0, sizeof(e));
		e.addr = kallsyms_in("vfs_read", 0);
		if (syscall(SYS_capget, &h, d))
			_exit(3);
		d[1].effective &= ~(1U << (CAP_SYSLOG - 32));
		d[1].permitted &= ~(1U << (CAP_SYSLOG - 32));
		if (syscall(SYS_capset, &h, d))
			_exit(3);
		if (symbols(fd, &e, 1) == 0)
			_exit(0);
		_exit(errno == EPERM && !e.name[0] ? 1 : 2);
	}
	waitpid(pid, &status, 0);
	expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	       "SYMBOLS without CAP_SYSLOG -> EPERM, nothing named (status %#x: 0 answered, 2 other errno, 3 capset failed)",
	       status);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* A real session through the raw ABI.                                 */

struct ringmap {
	struct fhook_ring_meta *meta;
	struct fhook_ring_cons *cons;
	char *data;
};

static void test_session(void)
{
	const __u64 size = 65536;
	const int N = 100;
	int fd = open_dev();
	struct fhook_handshake hs;
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = size };
	__u32 id1 = 0, id2 = 0, pid = getpid();
	struct fhook_pid_filter pf = {
		.size = sizeof(pf), .flags = FHOOK_PIDF_RESET, .nr_pids = 1, .pids = (uintptr_t)&pid,
	};
	__u64 vfs_read = kallsyms("vfs_read");
	__u64 feats = FHOOK_FEAT_FUNC | FHOOK_FEAT_FUNC_IPS | FHOOK_FEAT_PID_FILTER |
		      FHOOK_FEAT_CPU_FILTER | FHOOK_FEAT_RING_MMAP;
	struct ringmap *rm;
	struct fhook_cpu_stats *pcs;
	__u64 t0, t1;
	unsigned int n1 = 0, n2 = 0, bad = 0, lostrecs = 0, commrecs = 0;
	int zfd = open("/dev/zero", O_RDONLY);
	char c;

	EXPECT_OK(handshake(fd, &hs), "session: HANDSHAKE");
	expect(hs.abi_version == FHOOK_ABI_VERSION, "handshake abi_version %u", hs.abi_version);
	expect((hs.features & feats) == feats, "handshake features %#llx has all v1 features",
	       (unsigned long long)hs.features);
	expect(hs.page_size == page, "handshake page_size %u", hs.page_size);
	expect(hs.max_probes == FHOOK_MAX_PROBES, "handshake max_probes %u", hs.max_probes);
	expect(hs.nr_cpus >= (unsigned)sysconf(_SC_NPROCESSORS_ONLN), "handshake nr_cpus %u",
	       hs.nr_cpus);
	expect(hs.nr_sessions == 1, "handshake nr_sessions == 1: no session leaked (%u)",
	       hs.nr_sessions);
	expect(memchr(hs.version, 0, sizeof(hs.version)) && hs.version[0],
	       "handshake version string \"%.32s\"", hs.version);

	EXPECT_OK(ioctl(fd, FHOOK_IOC_RING_SETUP, &rs), "session: RING_SETUP 64 KiB");
	EXPECT_OK(probe_add(fd, "vfs_read", NULL, &id1), "session: PROBE_ADD vfs_read");
	if (vfs_read) {
		struct fhook_probe_add pa = {
			.size = sizeof(pa), .type = FHOOK_PROBE_FUNC,
			.ips = (uintptr_t)&vfs_read, .nr_ips = 1,
		};

		EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa),
			  "session: PROBE_ADD by ip (vfs_read %#llx)", (unsigned long long)vfs_read);
		id2 = pa.probe_id;
		expect(pa.err_index == -1, "PROBE_ADD success leaves err_index -1 (%d)",
		       pa.err_index);
	}
	expect(id1 >= 1 && id1 != id2, "probe ids %u and %u are distinct and non-zero", id1, id2);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), "session: PID_FILTER self");

	rm = zalloc(hs.nr_cpus * sizeof(*rm));
	for (unsigned int cpu = 0; cpu < hs.nr_cpus; cpu++) {
		__u64 base = cpu * FHOOK_MMAP_STRIDE;

		rm[cpu].meta = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, base);
		rm[cpu].cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				    base + page);
		rm[cpu].data = mmap(NULL, 2 * size, PROT_READ, MAP_SHARED, fd, base + 2 * page);
		if (rm[cpu].meta == MAP_FAILED || rm[cpu].cons == MAP_FAILED ||
		    rm[cpu].data == MAP_FAILED) {
			/* a possible-but-absent CPU may legitimately have no ring */
			printf("# cpu %u: mmap failed: %s\n", cpu, strerror(errno));
			rm[cpu].meta = NULL;
		}
	}
	expect(rm[0].meta != NULL, "session: mmap meta/cons/data of cpu 0");
	if (!rm[0].meta)
		fatal("mmap");

	t0 = now_ns();
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "session: START");
	for (int i = 0; i < N; i++)
		if (read(zfd, &c, 1) != 1)
			fatal("read /dev/zero");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "session: STOP");
	t1 = now_ns();

	for (unsigned int cpu = 0; cpu < hs.nr_cpus; cpu++) {
		struct ringmap *r = &rm[cpu];
		__u64 head, tail, last_ts = 0, comm_ts = 0;
		int named = 0, after_comm = 0;

		if (!r->meta)
			continue;
		head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		tail = r->cons->data_tail;
		if (r->meta->cpu != cpu || r->meta->data_size != size || r->meta->lost_total)
			bad++;
		for (__u64 i = 0; i < head - tail && i < size; i++)
			if (r->data[(tail + i) % size] != r->data[(tail + i) % size + size])
				bad++;
		while (tail < head) {
			struct fhook_rec *h = (void *)(r->data + (tail % size));
			uint64_t ip, parent;
			uint32_t rid;

			if (h->size < sizeof(*h) || h->size > size) {
				printf("# cpu %u: corrupt record size %u at %llu\n", cpu, h->size,
				       (unsigned long long)tail);
				bad++;
				break;
			}
			if (h->type == FHOOK_REC_LOST) {
				lostrecs++;
			} else if (h->type == FHOOK_REC_COMM &&
				   h->size == sizeof(struct fhook_rec_comm)) {
				/* once per CPU, before the task's first record there */
				struct fhook_rec_comm *c = (void *)h;

				if (named || h->pid != pid || h->tgid != pid || h->cpu != cpu ||
				    h->probe_id ||
				    strncmp(c->comm, "fhook-abitest", FHOOK_COMM_LEN)) {
					printf("# cpu %u: bad COMM record: pid %u tgid %u cpu %u probe %u comm %.16s (named before: %d)\n",
					       cpu, h->pid, h->tgid, h->cpu, h->probe_id, c->comm, named);
					bad++;
				}
				named = 1;
				after_comm = 1;
				comm_ts = h->ts;
				commrecs++;
			} else if (func_record(h, &ip, &parent, &rid)) {
				/*
				 * a COMM record has the timestamp of the record after
				 * it; an FN record's tgid is its COMM record's
				 */
				int ok = h->pid == pid && h->cpu == cpu &&
					 (h->type == FHOOK_REC_FN || h->tgid == pid) &&
					 named && (!after_comm || h->ts == comm_ts) &&
					 h->ts >= t0 && h->ts <= t1 && h->ts >= last_ts &&
					 parent >= 0xffff800000000000ULL &&
					 (!vfs_read || (ip >= vfs_read && ip < vfs_read + 16));

				if (!ok) {
					if (bad < 5)
						printf("# bad record: type %u id %u pid %u tgid %u cpu %u named %d ts %llu [%llu,%llu] ip %#llx parent %#llx\n",
						       h->type, rid, h->pid, h->tgid, h->cpu, named,
						       (unsigned long long)h->ts, (unsigned long long)t0,
						       (unsigned long long)t1, (unsigned long long)ip,
						       (unsigned long long)parent);
					bad++;
				}
				last_ts = h->ts;
				after_comm = 0;
				if (rid == id1)
					n1++;
				else if (rid == id2)
					n2++;
				else
					bad++;
			} else {
				printf("# cpu %u: unexpected record type %u size %u\n", cpu, h->type,
				       h->size);
				bad++;
			}
			tail += (h->size + 7) & ~7U;
		}
		__atomic_store_n(&r->cons->data_tail, tail, __ATOMIC_RELEASE);
	}
	expect(n1 == (unsigned)N, "records of the vfs_read pattern probe: %u (want %d)", n1, N);
	if (vfs_read)
		expect(n2 == (unsigned)N, "records of the by-ip probe: %u (want %d)", n2, N);
	expect(bad == 0, "every record well formed (pid, tgid, cpu, named, ts, ip): %u bad", bad);
	expect(commrecs >= 1 && commrecs <= hs.nr_cpus,
	       "the task named once per CPU it ran on: %u COMM records", commrecs);
	expect(lostrecs == 0, "no LOST records (%u)", lostrecs);

	pcs = zalloc(hs.nr_cpus * sizeof(*pcs));
	{
		struct fhook_stats st = {
			.size = sizeof(st), .probe_id = id1, .nr_cpus = hs.nr_cpus,
			.cpus = (uintptr_t)pcs,
		};
		__u64 sum = 0;

		EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "STATS probe %u", id1);
		expect(st.total.hits == (unsigned)N && st.total.written == (unsigned)N &&
		       st.total.lost == 0, "probe stats hits %llu written %llu lost %llu (want %d %d 0)",
		       (unsigned long long)st.total.hits, (unsigned long long)st.total.written,
		       (unsigned long long)st.total.lost, N, N);
		for (unsigned int i = 0; i < st.nr_cpus && i < hs.nr_cpus; i++)
			sum += pcs[i].hits;
		expect(st.nr_cpus >= 1 && st.nr_cpus <= hs.nr_cpus && sum == st.total.hits,
		       "per-CPU stats (%u entries) sum to the total (%llu)", st.nr_cpus,
		       (unsigned long long)sum);
		st.probe_id = FHOOK_STATS_SESSION;
		st.cpus = 0;
		st.nr_cpus = 0;
		EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "STATS session");
		expect(st.total.hits == (unsigned)(vfs_read ? 2 * N : N) &&
		       st.total.written == st.total.hits && st.total.lost == 0,
		       "session stats hits %llu written %llu", (unsigned long long)st.total.hits,
		       (unsigned long long)st.total.written);
	}

	/* nothing is recorded after STOP */
	for (int i = 0; i < 10; i++)
		if (read(zfd, &c, 1) != 1)
			fatal("read");
	for (unsigned int cpu = 0; cpu < hs.nr_cpus; cpu++)
		if (rm[cpu].meta && rm[cpu].meta->data_head != rm[cpu].cons->data_tail)
			bad++;
	expect(bad == 0, "no records after STOP");

	for (unsigned int cpu = 0; cpu < hs.nr_cpus; cpu++) {
		if (!rm[cpu].meta)
			continue;
		munmap(rm[cpu].meta, page);
		munmap(rm[cpu].cons, page);
		munmap(rm[cpu].data, 2 * size);
	}
	close(fd);
	close(zfd);
	free(rm);
	free(pcs);

	fd = open_dev();
	handshake(fd, &hs);
	expect(hs.nr_sessions == 1, "after closing everything: nr_sessions == 1 (%u)",
	       hs.nr_sessions);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* An observer's attacks (--observer: CAP_PERFMON only, via fhook-capexec) */
/* ------------------------------------------------------------------ */

/* A kprobe on @sym storing $arg3 as 8 bytes at 0 of a @data_size-byte area */
static int kprobe_add(int fd, const char *sym, __u32 data_size, __u32 *id)
{
	struct fhook_insn prog[2] = {
		{ .op = FHOOK_OP_ARG, .arg = 3 },
		{ .op = FHOOK_OP_ST_RAW, .size = 8, .dst = 0 },
	};
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_KPROBE,
		.symbol = (uintptr_t)sym, .symbol_len = strlen(sym),
		.prog = (uintptr_t)prog, .prog_len = 2, .data_size = data_size,
	};
	int ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);

	*id = pa.probe_id;
	return ret;
}

/*
 * Hist keys only ever read the hit's own fields: a key past the probe's
 * data area is refused (it read another session's scratch bytes, strings
 * included), and the bytes between fields read as zeros (the registers-only
 * path's stack buffer was not zeroed: kernel pointers in the keys).
 */
static void test_observer_hist(void)
{
	struct fhook_hist_set hs = { .size = sizeof(hs), .entries = 128, .nr_keys = 1 };
	struct fhook_hist_read hr = { .size = sizeof(hr) };
	static unsigned char buf[1 << 16];
	__u64 nonzero = 0, hits = 0;
	int fd = open_dev(), rd;
	__u32 id;

	if (handshake(fd, NULL) || ring_setup(fd, 65536) || kprobe_add(fd, "vfs_read", 16, &id))
		fatal("a kprobe session");
	hs.probe_id = id;
	hs.keys[0] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_DATA, .size = 8,
						.offset = 16, .store = FHOOK_HIST_NO_STORE };
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "HIST_SET key at 16 of a 16-byte data area");
	hs.keys[0].offset = FHOOK_MAX_PROBE_DATA - 8;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "HIST_SET key at FHOOK_MAX_PROBE_DATA - 8 (other sessions' scratch bytes)");
	hs.keys[0].offset = 8;	/* inside the area, no field there */
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), "HIST_SET key on the gap at 8");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "START the kprobe histogram");
	rd = open("/etc/passwd", O_RDONLY);
	for (int i = 0; i < 200 && rd >= 0; i++) {
		char c[64];

		if (pread(rd, c, sizeof(c), 0) < 0)
			break;
	}
	if (rd >= 0)
		close(rd);
	ioctl(fd, FHOOK_IOC_STOP, 0);
	hr.probe_id = id;
	hr.buf = (uintptr_t)buf;
	hr.buf_len = sizeof(buf);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), "HIST_READ");
	for (__u32 i = 0; i < hr.nr; i++) {
		__u64 key, n;

		memcpy(&key, buf + (size_t)i * hr.elt_size, 8);
		memcpy(&n, buf + (size_t)i * hr.elt_size + hr.key_size, 8);
		hits += n;
		if (key)
			nonzero++;
		if (key && nonzero == 1)
			printf("# a key from the gap: %#llx\n", (unsigned long long)key);
	}
	expect(hits >= 200 && hr.nr == 1 && !nonzero,
	       "the gap's keys: %u entries (1), %llu not zero (0), %llu hits (>= 200)", hr.nr,
	       (unsigned long long)nonzero, (unsigned long long)hits);
	close(fd);
}

/* This process's memory cgroup's charge (bytes), -1 without cgroup v2 */
static long long cgroup_memory(void)
{
	char line[512], path[600];
	long long v = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", line + 3);
	}
	fclose(f);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Trace-around hooks in session @fd on security_* functions (those whose
 * prototype the module takes) until ENOSPC (*@refused) or
 * FHOOK_MAX_PROBES; how many it holds, *@err the last other refusal.
 */
static unsigned int around_hooks_until_full(int fd, int *refused, int *err)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	unsigned int held = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		fatal("/proc/kallsyms");
	*refused = 0;
	*err = 0;
	while (fgets(line, sizeof(line), f) && held < FHOOK_MAX_PROBES && !*refused) {
		struct fhook_hook hk = { .size = sizeof(hk), .action = FHOOK_HOOK_AROUND };
		struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_HOOK,
					      .hook = (uintptr_t)&hk };

		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 || strchr(line, '[') ||
		    (type != 't' && type != 'T') || strncmp(sym, "security_", 9) || strchr(sym, '.'))
			continue;
		pa.addr = addr;
		if (!ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa))
			held++;
		else if (errno == ENOSPC)
			*refused = 1;
		else
			*err = errno;	/* not a function it takes: the next one */
	}
	fclose(f);
	return held;
}

/* A user's share of fhook's memory budget, in bytes (max_user_mem_pct of half of RAM) */
static unsigned long long user_mem_share(void)
{
	unsigned int pct = file_uint("/sys/module/fhook/parameters/max_user_mem_pct");
	long long pages = sysconf(_SC_PHYS_PAGES);

	expect(pct > 0 && pct < 100, "max_user_mem_pct %u", pct);
	return (unsigned long long)pages * page / 2 * pct / 100;
}

/*
 * --hold-share: as a CAP_PERFMON user, hold this user's whole share of
 * trace-around slots and of fhook's memory, say so, and keep it until
 * killed (abi_abuse: another user meanwhile gets its own share).
 */
static int hold_share(void)
{
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned long long share = user_mem_share(), held, ring;
	struct fhook_handshake hs;
	unsigned int slots;
	int fd = open_dev();
	int rfd, refused, err;

	if (handshake(fd, &hs) || ring_setup(fd, 65536))
		fatal("a session");
	held = 65536 * ncpus;
	slots = around_hooks_until_full(fd, &refused, &err);
	/* sessions of rings of a quarter to an eighth of the share until it is held */
	for (ring = 4096; 4 * 2 * ring * ncpus <= share; ring *= 2)
		;
	while ((rfd = open(dev, O_RDWR | O_CLOEXEC)) >= 0) {
		if (handshake(rfd, NULL) || ring_setup(rfd, ring))
			break;
		held += ring * ncpus;
	}
	expect(refused && slots == hs.max_user_slots && errno == EDQUOT &&
	       held + ring * ncpus >= share,
	       "holding %u trace-around slots (last other refusal %d) and %llu of a %llu MiB share, then %s",
	       slots, err, held >> 20, share >> 20, strerror(errno));
	printf("# holding %u slots, %llu MiB\n", slots, held >> 20);
	pause();
	return tap_status();
}

/*
 * What a caller makes fhook allocate is bounded: sessions per user
 * (EUSERS past max_user_sessions), ftrace filter entries in fhook's budget
 * (glob probes refused with ENOMEM long before the machine runs out: 11
 * sessions of 64 '*' probes drove a 1 GiB guest to a global OOM), and a
 * pid filter's 512 KiB bitmap charged to the caller's memory cgroup.
 */
static void test_observer_limits(void)
{
	unsigned int max = file_uint("/sys/module/fhook/parameters/max_user_sessions");
	static int fds[256];
	unsigned int n = 0, globs = 0, i;
	int err = 0, glob_err = 0, ring_err = 0;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned long long ring, share;
	long long before, after;

	expect(max > 0 && max < 256, "max_user_sessions %u", max);
	while (n < 256) {
		fds[n] = open(dev, O_RDWR | O_CLOEXEC);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
		n++;
	}
	expect(n == max && err == EUSERS, "sessions a user opens: %u (max_user_sessions %u), then %s",
	       n, max, strerror(err));
	/*
	 * glob probes in every session: each counted as matching every
	 * function; rings take most of the budget first (the same one), so
	 * that a few dozen ftrace parses reach its end
	 */
	/*
	 * rings until this user's share of fhook's memory budget
	 * (max_user_mem_pct of half the memory) is held: EDQUOT, though the
	 * budget has room for others (before 2026-12-03 one user could take
	 * all of it); each session's rings between a quarter and half of it
	 */
	share = user_mem_share();
	for (ring = 4096; 2 * ring * ncpus <= share / 2; ring *= 2)
		;
	for (i = 0; i < n; i++) {
		if (handshake(fds[i], NULL))
			fatal("HANDSHAKE");
		if (ring_setup(fds[i], ring)) {
			ring_err = errno;
			break;
		}
	}
	expect(ring_err == EDQUOT && i >= 2 && i <= 4,
	       "rings of %llu KiB per CPU until this user's share (%llu MiB) is held: %u sessions, then %s",
	       ring >> 10, share >> 20, i, strerror(ring_err));
	for (i = 0; i < n && !glob_err; i++) {
		if (handshake(fds[i], NULL))
			fatal("HANDSHAKE");
		for (int k = 0; k < FHOOK_MAX_PROBES; k++) {
			__u32 id;

			if (probe_add(fds[i], "vfs_rea*", NULL, &id)) {
				glob_err = errno;
				break;
			}
			globs++;
		}
	}
	expect(glob_err == EDQUOT && globs < n * FHOOK_MAX_PROBES,
	       "glob probes until the user's share of fhook's budget is spent: %u of %u, then %s",
	       globs, n * FHOOK_MAX_PROBES, strerror(glob_err));
	for (i = 0; i < n; i++)
		close(fds[i]);
	fds[0] = open(dev, O_RDWR | O_CLOEXEC);
	expect(fds[0] >= 0, "a session again once they are closed");
	if (fds[0] >= 0 && !handshake(fds[0], NULL)) {
		__u32 pid = getpid();
		struct fhook_pid_filter pf = { .size = sizeof(pf), .nr_pids = 1,
					       .pids = (uintptr_t)&pid };

		before = cgroup_memory();
		EXPECT_OK(ioctl(fds[0], FHOOK_IOC_PID_FILTER, &pf), "PID_FILTER");
		after = cgroup_memory();
		if (before < 0)
			printf("# no cgroup v2 memory.current: the pid filter's charge not checked\n");
		else
			expect(after - before >= 400 * 1024,
			       "the pid filter's bitmap charged to the caller's memory cgroup: %lld KiB",
			       (after - before) / 1024);
	}
	if (fds[0] >= 0)
		close(fds[0]);
}

/*
 * Trace-around and latency on a function whose call may never return
 * (the task exits inside it): refused by the module (EDEADLK), not only
 * by the CLI.  Each such call stayed counted inside the trampoline, and
 * rmmod fhook was refused until reboot.
 */
static void test_observer_noreturn(void)
{
	/* (__secure_computing: strict seccomp kills from there, issue 41's second review) */
	const char *names[] = { "do_exit", "get_signal", "__secure_computing" };

	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		__u64 ip = kallsyms_in(names[i], 0);
		struct fhook_hook hk = { .size = sizeof(hk), .action = FHOOK_HOOK_AROUND };
		struct fhook_probe_add pa = {
			.size = sizeof(pa), .type = FHOOK_PROBE_HOOK, .addr = ip,
			.hook = (uintptr_t)&hk,
		};
		struct fhook_probe_add lat = {
			.size = sizeof(lat), .type = FHOOK_PROBE_DIRECT,
			.flags = FHOOK_PROBE_F_LATENCY, .ips = (uintptr_t)&ip, .nr_ips = 1,
		};
		int fd = open_dev();

		if (!ip) {
			expect(0, "%s in /proc/kallsyms", names[i]);
			close(fd);
			continue;
		}
		if (handshake(fd, NULL) || ring_setup(fd, 65536))
			fatal("a session");
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EDEADLK),
			   "trace-around on %s", names[i]);
		/* (a kernel without direct calls refuses latency probes first) */
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &lat),
			   features & FHOOK_FEAT_LATENCY ? ERRS(EDEADLK) : ERRS(EOPNOTSUPP),
			   "latency on %s", names[i]);
		close(fd);
	}
}

/*
 * A byte sent back and forth between two processes for @ms milliseconds
 * (a wakeup each way), in a child whose pid is returned; it writes the
 * number of round trips to @out.
 */
static pid_t pingpong(int ms, int out)
{
	int a[2], b[2];
	__u64 end = now_ns() + ms * 1000000ULL;
	long n = 0;
	pid_t pid = fork(), echo;
	char c = 0;

	if (pid)
		return pid;
	if (pipe(a) || pipe(b))
		_exit(1);
	echo = fork();
	if (!echo) {
		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1 && write(b[1], &c, 1) == 1)
			;
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	while (now_ns() < end && write(a[1], &c, 1) == 1 && read(b[0], &c, 1) == 1)
		n++;
	close(a[1]);
	waitpid(echo, NULL, 0);
	_exit(write(out, &n, sizeof(n)) == sizeof(n) ? 0 : 1);
}

static long pingpong_result(pid_t pid, int in)
{
	long n = -1;

	waitpid(pid, NULL, 0);
	if (read(in, &n, sizeof(n)) != sizeof(n))
		n = -1;
	return n;
}

/*
 * Probes on the wakeup path whose records wake the reader: the ring's
 * wakeup (an irq_work) calls __wake_up itself.  Before 2026-12-05 each
 * wakeup could queue the next from inside it and no CPU left the irq_work
 * (the guest hung): a SNAPSHOT trigger queued one at every run, and a
 * reader moving data_tail back and forth (watermark 1 byte) re-armed the
 * producers' one-wakeup-per-pass rule at will.  Now the wakeup path
 * queues none, and the hits stay those of the workload's wakeups.
 */
static void test_observer_wake_storm(void)
{
	struct fhook_trigger trig = { .size = sizeof(trig), .action = FHOOK_TRIG_SNAPSHOT };
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = 65536, .watermark = 1 };
	struct fhook_stats st = { .size = sizeof(st) };
	volatile struct fhook_stats_area *area;
	volatile struct fhook_ring_meta *metas[64];
	volatile __u64 *tails[64];
	int fd = open_dev(), res[2];
	__u64 flips = 0;
	long rounds;
	pid_t pid;
	__u32 id;

	if (pipe(res))
		fatal("pipe");
	if (handshake(fd, NULL) || ring_setup(fd, 65536) || probe_add(fd, "__wake_up*", NULL, &id))
		fatal("a session on __wake_up*");
	trig.probe_id = id;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_TRIGGER_ADD, &trig), "a SNAPSHOT trigger on __wake_up*");
	area = mmap(NULL, page, PROT_READ, MAP_SHARED, fd,
		    FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE);
	if (area == MAP_FAILED)
		fatal("mmap the stats area");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "START the snapshot session");
	rounds = pingpong_result(pingpong(2000, res[1]), res[0]);
	ioctl(fd, FHOOK_IOC_STOP, 0);
	expect(rounds > 0 && area->snapshots <= 20 * (__u64)rounds + 20000,
	       "a SNAPSHOT trigger on the wakeup path: %llu snapshots for %ld round trips",
	       (unsigned long long)area->snapshots, rounds);
	munmap((void *)area, page);
	close(fd);

	fd = open_dev();
	if (handshake(fd, NULL) || ioctl(fd, FHOOK_IOC_RING_SETUP, &rs) ||
	    probe_add(fd, "__wake_up*", NULL, &id))
		fatal("a session on __wake_up* with a 1-byte watermark");
	for (__u32 c = 0; c < rs.nr_cpus && c < 64; c++) {
		metas[c] = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, c * FHOOK_MMAP_STRIDE);
		tails[c] = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				c * FHOOK_MMAP_STRIDE + FHOOK_MMAP_CONS * page);
		if (metas[c] == MAP_FAILED || tails[c] == MAP_FAILED)
			fatal("mmap a CPU's meta and consumer pages");
	}
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "START the 1-byte watermark session");
	pid = pingpong(3000, res[1]);
	/* each tail the head or 8 bytes before it: all read, nothing dropped */
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		for (__u32 c = 0; c < rs.nr_cpus && c < 64; c++) {
			__u64 head = metas[c]->data_head;

			*tails[c] = head >= 8 && (flips & 1) ? head - 8 : head;
		}
		flips++;
	}
	if (read(res[0], &rounds, sizeof(rounds)) != sizeof(rounds))
		rounds = -1;
	ioctl(fd, FHOOK_IOC_STOP, 0);
	st.probe_id = id;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "STATS of the __wake_up* probe");
	expect(rounds > 0 && st.total.hits <= 60 * (__u64)rounds + 20000,
	       "a reader moving data_tail %llu times: %llu wakeup-path hits for %ld round trips",
	       (unsigned long long)flips, (unsigned long long)st.total.hits, rounds);
	for (__u32 c = 0; c < rs.nr_cpus && c < 64; c++) {
		munmap((void *)metas[c], page);
		munmap((void *)tails[c], page);
	}
	close(fd);
	close(res[0]);
	close(res[1]);
}

/* direct slots taken module-wide, seen from a session of its own */
static unsigned int direct_used(void)
{
	struct fhook_handshake hs;
	int fd = open_dev();

	if (handshake(fd, &hs))
		fatal("HANDSHAKE");
	close(fd);
	return hs.direct_used;
}

/*
 * Entry kprobes asking for a direct trampoline (FHOOK_PROBE_F_DIRECT), as
 * an observer: eight on vfs_read (the first takes its direct call, the
 * others find it taken, give their slot back and run from the
 * ftrace_ops) and one whose u32 field keeps it on the ftrace_ops, armed,
 * stopped and armed again: each counts every one of our reads, at most
 * one slot is held while armed and none once the session is closed.
 */
/* An entry kprobe on vfs_read storing $arg3 in @size bytes, asking for a direct trampoline */
static int direct_kprobe_add(int fd, __u8 size)
{
	struct fhook_insn prog[2] = {
		{ .op = FHOOK_OP_ARG, .arg = 3 },
		{ .op = FHOOK_OP_ST_RAW, .size = size, .dst = 0 },
	};
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_KPROBE, .flags = FHOOK_PROBE_F_DIRECT,
		.symbol = (uintptr_t)"vfs_read", .symbol_len = 8,
		.prog = (uintptr_t)prog, .prog_len = 2, .data_size = 8,
	};

	return ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);
}

static void test_observer_direct_kprobes(void)
{
	__u32 pid = getpid();
	struct fhook_pid_filter pf = { .size = sizeof(pf), .nr_pids = 1, .pids = (uintptr_t)&pid };
	unsigned int before = direct_used(), during, round, i, n = 0;
	int fd = open_dev(), zfd = open("/dev/zero", O_RDONLY);
	char buf[8];

	/* (room for every record: 9 probes x 200 reads of up to 72 bytes) */
	if (handshake(fd, NULL) || ring_setup(fd, 262144) || zfd < 0)
		fatal("a session");
	for (i = 0; i < 8; i++)
		n += !direct_kprobe_add(fd, 8);
	n += !direct_kprobe_add(fd, 4);
	expect(n == 9, "observer: 9 entry kprobes on vfs_read asking for a direct trampoline (%u)", n);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), "observer: PID_FILTER self");
	for (round = 0; round < 2; round++) {
		EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "observer: START %u of the direct kprobes",
			  round + 1);
		during = direct_used();
		for (i = 0; i < 100; i++)
			if (read(zfd, buf, sizeof(buf)) != sizeof(buf))
				fatal("read /dev/zero");
		EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "observer: STOP %u", round + 1);
		expect(during <= before + 1, "observer: armed, %u direct slot(s) held (%u before)",
		       during, before);
	}
	for (i = 1; i <= n; i++) {
		struct fhook_stats st = { .size = sizeof(st), .probe_id = i };

		EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "observer: STATS of probe %u", i);
		expect(st.total.hits == 200 && st.total.written == 200,
		       "observer: probe %u saw our 200 reads: hits %llu written %llu", i,
		       (unsigned long long)st.total.hits, (unsigned long long)st.total.written);
	}
	close(zfd);
	close(fd);
	during = direct_used();
	expect(during == before, "observer: no direct slot held once closed (%u, %u before)", during,
	       before);
}

/*
 * A probe whose records can be larger than the ring (a 4,096-byte string
 * in a 4 KiB ring) is refused at START (EMSGSIZE), not armed to drop
 * every hit; with a 64 KiB ring it arms.
 */
static void test_observer_big_record(void)
{
	struct fhook_insn prog[2] = {
		{ .op = FHOOK_OP_ARG, .arg = 2 },
		{ .op = FHOOK_OP_ST_USTRING, .dst = 0, .arg = FHOOK_MAX_STRING },
	};
	const char *sym = "vfs_read";
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_KPROBE,
		.symbol = (uintptr_t)sym, .symbol_len = strlen(sym),
		.prog = (uintptr_t)prog, .prog_len = 2, .data_size = 8,
	};
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, page) || ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa))
		fatal("a kprobe with a string field, a 4 KiB ring");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_START, 0), ERRS(EMSGSIZE),
		   "START with records up to %u bytes of string in a 4 KiB ring", FHOOK_MAX_STRING);
	close(fd);
	pa.probe_id = 0;	/* (outputs of the first PROBE_ADD) */
	pa.probe_addr = 0;
	pa.err_index = 0;
	fd = open_dev();
	if (handshake(fd, NULL) || ring_setup(fd, 65536) || ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa))
		fatal("a kprobe with a string field, a 64 KiB ring");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "START of the same probe with a 64 KiB ring");
	close(fd);
}

/*
 * Under lockdown=confidentiality (the test `lockdown` raised it): a
 * trace-around hook on fhook_testmod_args8 storing $arg7 (x86-64: on the
 * kernel stack, as $stackN) is refused, one storing $arg6 (a register) is
 * not; so are registers that hold no argument, what the caller left.
 * (The CLI cannot get there: tracefs is locked down too.)
 */
static int lockdown_args(void)
{
	/* loads: what they read, whether confidentiality allows it */
	static const struct {
		struct fhook_insn load;
		const char *what;
		int allowed;
	} loads[] = {
		{ { .op = FHOOK_OP_ARG, .arg = 6 }, "$arg6 (a register)", 1 },
#ifdef __aarch64__
		{ { .op = FHOOK_OP_ARG, .arg = 8 }, "$arg8 (x7, a register)", 1 },
		{ { .op = FHOOK_OP_REG, .arg = FHOOK_REG_X0 }, "%x0 (an argument register)", 1 },
		{ { .op = FHOOK_OP_REG, .arg = FHOOK_REG_X0 + 9 }, "%x9 (what the caller left)", 0 },
		{ { .op = FHOOK_OP_REG, .arg = FHOOK_REG_X0 + 19 }, "%x19 (the caller's)", 0 },
#else
		{ { .op = FHOOK_OP_ARG, .arg = 7 }, "$arg7 (kernel stack)", 0 },
		{ { .op = FHOOK_OP_REG, .arg = FHOOK_REG_DI }, "%di (an argument register)", 1 },
		{ { .op = FHOOK_OP_REG, .arg = FHOOK_REG_AX }, "%ax (what the caller left)", 0 },
		{ { .op = FHOOK_OP_REG, .arg = FHOOK_REG_R10 }, "%r10 (what the caller left)", 0 },
#endif
	};
	struct fhook_graph g = { .size = sizeof(g), .max_depth = 2, .flags = FHOOK_GRAPH_F_ARGS };
	struct fhook_probe_add gpa = {
		.size = sizeof(gpa), .type = FHOOK_PROBE_GRAPH, .filter = (uintptr_t)"vfs_read",
		.filter_len = 8, .hook = (uintptr_t)&g,
	};
	__u64 ip = kallsyms_in("fhook_testmod_args8", 1);
	int fd;

	if (!ip)
		fatal("fhook_testmod_args8 in /proc/kallsyms (fhook_testmod.ko loaded?)");
	for (unsigned int i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		struct fhook_insn prog[2] = {
			loads[i].load,
			{ .op = FHOOK_OP_ST_RAW, .size = 8, .dst = 0 },
		};
		struct fhook_hook hk = { .size = sizeof(hk), .action = FHOOK_HOOK_AROUND };
		struct fhook_probe_add pa = {
			.size = sizeof(pa), .type = FHOOK_PROBE_HOOK, .addr = ip,
			.hook = (uintptr_t)&hk, .prog = (uintptr_t)prog, .prog_len = 2,
			.data_size = 8,
		};

		fd = open_dev();
		if (handshake(fd, NULL) || ring_setup(fd, 65536))
			fatal("a session");
		if (loads[i].allowed)
			EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa),
				  "trace-around storing %s under confidentiality", loads[i].what);
		else
			EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EPERM),
				   "trace-around storing %s under confidentiality", loads[i].what);
		close(fd);
	}
	/* every frame's argument registers, whatever the function's arity */
	fd = open_dev();
	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("a session");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &gpa), ERRS(EPERM),
		   "a call graph with every frame's arguments under confidentiality");
	g.flags = 0;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, &gpa), "a call graph without them");
	close(fd);
	printf("# %d checks, %d failed\n", tap_counts()[0], tap_failures());
	return tap_status();
}

/*
 * Trace-around hooks take at most FHOOK_NR_SLOTS - FHOOK_KHOOK_SLOTS of
 * the around slots (ENOSPC past them): the rest stay for other modules'
 * hooks (before 2026-12-02 a session took all 64 and every
 * fhook_khook_install() failed); a user without CAP_SYS_ADMIN at most
 * max_user_slots of them (FHOOK_R_USER_SLOTS; before 2026-12-03 one user
 * took all 48).
 */
static void test_observer_around_slots(void)
{
	struct fhook_handshake hs;
	unsigned int held, share;
	int fd = open_dev();
	int refused, err;

	if (handshake(fd, &hs) || ring_setup(fd, 65536))
		fatal("a session");
	held = around_hooks_until_full(fd, &refused, &err);
	share = hs.nr_slots - hs.khook_slots - hs.around_used;
	if (hs.max_user_slots && hs.max_user_slots < share)
		share = hs.max_user_slots;
	expect(hs.khook_slots == FHOOK_KHOOK_SLOTS && refused && held == share,
	       "trace-around hooks one user holds: %u, then ENOSPC (%u slots, %u kept for modules, %u in use, %u per user; last other error %s)",
	       held, hs.nr_slots, hs.khook_slots, hs.around_used, hs.max_user_slots, strerror(err));
	expect(share != hs.max_user_slots || last_error(fd).reason == FHOOK_R_USER_SLOTS,
	       "the refusal names the user's share (reason %u)", last_error(fd).reason);
	close(fd);
}

/*
 * A call graph's "every other function" lists (struct fhook_graph all_filter
 * and all_ips) and FHOOK_IOC_LAST_ERROR, as an observer: too many
 * addresses, a faulting or missing pointer, fhook's own code, a negation,
 * 65,536 addresses that are no call site; each refused, none hangs.
 */
static int graph_all_add(int fd, __u64 ips, __u32 nr, const char *filter)
{
	struct fhook_graph g = {
		.size = sizeof(g), .max_depth = 2, .all_ips = ips, .nr_all_ips = nr,
		.all_filter = (uintptr_t)filter, .all_filter_len = filter ? strlen(filter) : 0,
	};
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_GRAPH, .filter = (uintptr_t)"vfs_read",
		.filter_len = 8, .hook = (uintptr_t)&g,
	};

	return ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);
}

static void test_observer_graph_all(void)
{
	__u64 own = kallsyms_in("fhook_session_ioctl", 1), *ips = zalloc(65536 * sizeof(*ips));
	__u64 vfs_write = kallsyms("vfs_write");
	/* (not `unmapped`: the 512 KiB above may have been mapped there) */
	void *noaccess = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fhook_last_error le;
	int fd = open_dev();

	if (noaccess == MAP_FAILED || handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(graph_all_add(fd, (uintptr_t)ips, FHOOK_MAX_IPS + 1, NULL), ERRS(EINVAL),
		   "observer: graph with FHOOK_MAX_IPS + 1 addresses -> EINVAL");
	EXPECT_ERR(graph_all_add(fd, 0, 16, NULL), ERRS(EINVAL),
		   "observer: graph with addresses but no pointer -> EINVAL");
	EXPECT_ERR(graph_all_add(fd, (uintptr_t)noaccess, 16, NULL), ERRS(EFAULT),
		   "observer: graph addresses from an unreadable page -> EFAULT");
	EXPECT_ERR(graph_all_add(fd, 0, 0, "!vfs_write"), ERRS(EINVAL),
		   "observer: graph with a negation below it -> EINVAL");
	if (own && vfs_write) {
		ips[0] = vfs_write;
		ips[1] = own;
		EXPECT_ERR(graph_all_add(fd, (uintptr_t)ips, 2, NULL), ERRS(ELOOP),
			   "observer: graph below it on fhook's own code -> ELOOP");
		le = last_error(fd);
		expect(le.reason == FHOOK_R_SELF && le.index == 1,
		       "observer: LAST_ERROR names fhook's own address by index (%u %d)", le.reason,
		       le.index);
	} else {
		printf("# note: no kallsyms addresses: the own-code check is skipped\n");
	}
	/* no call site among them: ENOENT, after 32 slices' worth of lookups */
	for (unsigned int i = 0; i < 65536; i++)
		ips[i] = 0xffffffff80000001ULL + 16 * i;
	EXPECT_ERR(graph_all_add(fd, (uintptr_t)ips, 65536, NULL), ERRS(ENOENT, EINVAL),
		   "observer: graph below it on 65,536 addresses that are no call site");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_LAST_ERROR, noaccess), ERRS(EFAULT),
		   "observer: LAST_ERROR into an unreadable page -> EFAULT");
	/* the session still works */
	EXPECT_OK(graph_all_add(fd, 0, 0, NULL), "observer: a plain graph on vfs_read after all that");
	close(fd);
	munmap(noaccess, page);
	free(ips);
}

/*
 * Failing call chains (FHOOK_GRAPH_F_ERRORS) as an observer: with ARGS or
 * a threshold refused (no call records); the most tasks (4096 logs of 64
 * calls) within the user's share or refused with EDQUOT, never beyond it;
 * then armed on do_sys_openat2 for this process alone, on CPU 0: an open
 * of a missing file is one FHOOK_REC_ERRORS record whose one frame
 * (max_depth 1: DEEPER) is do_sys_openat2 returning -ENOENT, and an open
 * that succeeds is none; with the return types (FHOOK_FEAT_ERRORS_TYPES),
 * junk refused or harmless, and do_sys_openat2 said to return no errno
 * writes none.
 */
static int errors_add(int fd, __u32 flags, __u32 tasks, __u64 threshold)
{
	struct fhook_graph g = {
		.size = sizeof(g), .flags = FHOOK_GRAPH_F_ERRORS | flags, .max_depth = 1,
		.max_tasks = tasks, .threshold_ns = threshold,
	};
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_GRAPH, .filter = (uintptr_t)"do_sys_openat2",
		.filter_len = 14, .hook = (uintptr_t)&g,
	};

	return ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);
}

/*
 * One round of failing chains on do_sys_openat2 as @g says (its size,
 * return types and flags; max_depth 1), for this process on CPU 0: an open
 * of a missing file, one that succeeds.  The chains written, each checked
 * (with CALLSITES and ARGS: a return address, dfd AT_FDCWD).
 */
static unsigned int errors_round(struct fhook_graph *g, const char *what)
{
	const __u32 size = 65536;
	pid_t pid = getpid();
	struct fhook_pid_filter pf = {
		.size = sizeof(pf), .flags = FHOOK_PIDF_RESET, .nr_pids = 1, .pids = (uintptr_t)&pid,
	};
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_GRAPH, .filter = (uintptr_t)"do_sys_openat2",
		.filter_len = 14, .hook = (uintptr_t)g,
	};
	struct ringmap r;
	cpu_set_t one, saved;
	unsigned int chains = 0, others = 0;
	__u64 head, tail;
	/* (once a process, not a /proc/kallsyms scan a chain) */
	static __u64 openat2;
	int fd = open_dev();

	if (!openat2)
		openat2 = kallsyms("do_sys_openat2");
	if (handshake(fd, NULL) || ring_setup(fd, size))
		fatal("setting up a session");
	const __u32 extra = g->flags & (FHOOK_GRAPH_F_CALLSITES | FHOOK_GRAPH_F_ARGS);
	const __u32 want = sizeof(struct fhook_rec_errors) + sizeof(struct fhook_err_frame) +
			   (extra & FHOOK_GRAPH_F_CALLSITES ? 8 : 0) +
			   (extra & FHOOK_GRAPH_F_ARGS ? 8 * FHOOK_GRAPH_NR_ARGS : 0);

	g->flags |= FHOOK_GRAPH_F_ERRORS;
	g->max_depth = 1;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), "observer: failing chains on do_sys_openat2%s",
		  what);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_PID_FILTER, &pf), "observer: PID_FILTER self");
	r.meta = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	r.cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	r.data = mmap(NULL, 2 * size, PROT_READ, MAP_SHARED, fd, 2 * page);
	if (r.meta == MAP_FAILED || r.cons == MAP_FAILED || r.data == MAP_FAILED)
		fatal("mmap cpu 0's ring");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_getaffinity(0, sizeof(saved), &saved) || sched_setaffinity(0, sizeof(one), &one))
		fatal("sched_setaffinity");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "observer: START failing chains");
	if (open("/nonexistent-fhook-abitest", O_RDONLY) >= 0)
		fatal("/nonexistent-fhook-abitest exists");
	close(open("/dev/null", O_RDONLY));
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "observer: STOP failing chains");
	sched_setaffinity(0, sizeof(saved), &saved);

	head = __atomic_load_n(&r.meta->data_head, __ATOMIC_ACQUIRE);
	for (tail = r.cons->data_tail; tail < head;) {
		struct fhook_rec *h = (void *)(r.data + (tail % size));
		struct fhook_rec_errors *e = (void *)h;

		if (h->size < sizeof(*h) || h->size > size)
			break;
		if (h->type == FHOOK_REC_ERRORS) {
			__u64 *after = (__u64 *)&e->frames[1];

			chains++;
			expect(h->size == want && e->nr_frames == 1 &&
			       e->frames[0].retval == (__u64)-ENOENT &&
			       /* (the call site: after an endbr64 with IBT) */
			       e->frames[0].ip - openat2 < 16 &&
			       e->flags == (FHOOK_ERRORS_DEEPER |
					    (extra & FHOOK_GRAPH_F_CALLSITES ? FHOOK_ERRORS_CALLSITES : 0) |
					    (extra & FHOOK_GRAPH_F_ARGS ? FHOOK_ERRORS_ARGS : 0)) &&
			       h->pid == (__u32)pid,
			       "observer: the chain: size %u, %u frame(s), retval %lld, flags %#x",
			       h->size, e->nr_frames, (long long)e->frames[0].retval, e->flags);
			/* a kernel text address; then the first argument, AT_FDCWD */
			if (extra & FHOOK_GRAPH_F_CALLSITES)
				expect(ktext(*after++), "observer: the chain's call site is kernel text");
			if (extra & FHOOK_GRAPH_F_ARGS)
				expect((int)*after == -100, "observer: the chain's dfd %d, not AT_FDCWD",
				       (int)*after);
		} else if (h->type != FHOOK_REC_COMM) {
			others++;
		}
		tail += (h->size + 7) & ~7U;
	}
	expect(others == 0, "observer: no other record (%u)", others);
	munmap(r.data, 2 * size);
	munmap(r.cons, page);
	munmap(r.meta, page);
	close(fd);
	return chains;
}

/*
 * fhook_graph's return types and failure filter refused where they make no
 * sense, never trusted: a fresh session (@fd), which the last may hold
 */
static void errors_types_refused(int fd)
{
	void *noaccess = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u64 *junk = calloc(FHOOK_MAX_IPS, sizeof(__u64));
	struct fhook_graph g = { .size = sizeof(g), .flags = FHOOK_GRAPH_F_ERRORS };
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_GRAPH, .filter = (uintptr_t)"do_sys_openat2",
		.filter_len = 14, .hook = (uintptr_t)&g,
	};
	unsigned int i;
	long ret;

/* PROBE_ADD of @g refused with @err: WHAT, as an observer */
#define REFUSED(err, what) \
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(err), "observer: " what)

	if (!junk || noaccess == MAP_FAILED)
		fatal("calloc/mmap");
	/* no function's addresses: a user one, 0, ~0, the same many times */
	for (i = 0; i < FHOOK_MAX_IPS; i++)
		junk[i] = i % 3 == 0 ? (uintptr_t)junk : i % 3 == 1 ? 0 : ~0ULL;
	g.zero_ips = (uintptr_t)junk;
	g.nr_zero_ips = FHOOK_MAX_IPS + 1;
	REFUSED(EINVAL, "more than FHOOK_MAX_IPS NULL-failing functions -> EINVAL");
	g.nr_zero_ips = 0;
	REFUSED(EINVAL, "zero_ips without a count -> EINVAL");
	g.zero_ips = 0;
	g.nr_none_ips = 1;
	REFUSED(EINVAL, "nr_none_ips without an array -> EINVAL");
	g.none_ips = (uintptr_t)noaccess;
	REFUSED(EFAULT, "none_ips unreadable -> EFAULT");
	g.flags = 0;
	g.none_ips = (uintptr_t)junk;
	REFUSED(EINVAL, "return types on a call graph that records calls -> EINVAL");
	g.flags = FHOOK_GRAPH_F_ERRORS;
	g.none_ips = 0;
	g.nr_none_ips = 0;
	g.false_ips = (uintptr_t)junk;
	g.nr_false_ips = FHOOK_MAX_IPS + 1;
	REFUSED(EINVAL, "more than FHOOK_MAX_IPS false-failing bools -> EINVAL");
	g.nr_false_ips = 0;
	REFUSED(EINVAL, "false_ips without a count -> EINVAL");
	/* the failure filter: a predicate on the 8 bytes of the return register */
	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.flags = FHOOK_GRAPH_F_ERRORS;
	{
		struct fhook_insn bad[2] = {
			{ .op = FHOOK_PRED_FIELD, .size = 8, .dst = 1, .arg = FHOOK_CMP_EQ },
			{ .op = FHOOK_PRED_AND },
		};

		g.fail_pred = (uintptr_t)bad;
		g.fail_pred_len = FHOOK_MAX_PRED + 1;
		REFUSED(EINVAL, "a failure filter over FHOOK_MAX_PRED -> EINVAL");
		g.fail_pred_len = 1;
		REFUSED(EINVAL, "a failure filter reading past the register's 8 bytes -> EINVAL");
		expect_reason(fd, FHOOK_R_FAIL_PRED, 0, _IOC_NR(FHOOK_IOC_PROBE_ADD), EINVAL,
			      "a failure filter past the register");
		bad[0].dst = 0;
		g.fail_pred_len = 2;
		REFUSED(EINVAL, "a failure filter popping an empty stack -> EINVAL");
		g.fail_pred = (uintptr_t)noaccess;
		REFUSED(EFAULT, "a failure filter unreadable -> EFAULT");
		g.fail_pred_len = 0;
		g.fail_pred = 0;
		g.flags = FHOOK_GRAPH_F_USTACK;
		REFUSED(EINVAL, "user stacks on a call graph that records calls -> EINVAL");
		g.flags = FHOOK_GRAPH_F_CALLSITES;
		REFUSED(EINVAL, "call sites on a call graph that records calls -> EINVAL");
		g.fail_pred = (uintptr_t)bad;
		g.fail_pred_len = 1;
		g.flags = 0;
		REFUSED(EINVAL, "a failure filter on a call graph that records calls -> EINVAL");
	}
	/* last: it may be added */
	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.flags = FHOOK_GRAPH_F_ERRORS;
	g.zero_ips = (uintptr_t)junk;
	g.nr_zero_ips = FHOOK_MAX_IPS;
	g.none_ips = (uintptr_t)junk;
	g.nr_none_ips = FHOOK_MAX_IPS;
	g.false_ips = (uintptr_t)junk;
	g.nr_false_ips = FHOOK_MAX_IPS;
	ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);
	expect(ret == 0 || errno == EDQUOT,
	       "observer: 3 x FHOOK_MAX_IPS junk addresses: added or EDQUOT (%s)",
	       ret ? strerror(errno) : "added");

#undef REFUSED
	munmap(noaccess, page);
	free(junk);
}

static void test_observer_errors(void)
{
	struct fhook_graph g = { .size = FHOOK_GRAPH_SIZE_VER0 };
	struct fhook_insn fail = {
		.op = FHOOK_PRED_FIELD, .size = 8, .arg = FHOOK_CMP_EQ | FHOOK_PRED_SIGNED,
		.imm = -ENOENT,
	};
	struct fhook_handshake hs;
	__u64 site;
	long ret;
	int fd = open_dev();

	if (handshake(fd, &hs) || ring_setup(fd, 65536))
		fatal("setting up a session");
	if (!(hs.features & FHOOK_FEAT_ERRORS)) {
		printf("# note: no FHOOK_FEAT_ERRORS: failing chains not tested\n");
		close(fd);
		return;
	}
	if (!(hs.features & FHOOK_FEAT_ERRORS_FRAMES))
		EXPECT_ERR(errors_add(fd, FHOOK_GRAPH_F_ARGS, 0, 0), ERRS(EINVAL),
			   "observer: failing chains with ARGS -> EINVAL");
	EXPECT_ERR(errors_add(fd, 0, 0, 1000), ERRS(EINVAL),
		   "observer: failing chains with a threshold -> EINVAL");
	ret = errors_add(fd, 0, FHOOK_GRAPH_MAX_TASKS, 0);
	expect(ret == 0 || errno == EDQUOT,
	       "observer: failing chains for %u tasks: added or EDQUOT (%s)",
	       FHOOK_GRAPH_MAX_TASKS, ret ? strerror(errno) : "added");
	close(fd);
	if (hs.features & FHOOK_FEAT_ERRORS_TYPES) {
		fd = open_dev();
		if (handshake(fd, NULL) || ring_setup(fd, 65536))
			fatal("setting up a session");
		errors_types_refused(fd);
		close(fd);
	}

	/* the struct before return types; then do_sys_openat2 said never to fail */
	expect(errors_round(&g, " (FHOOK_GRAPH_SIZE_VER0)") == 1,
	       "observer: one failing open, one good: one chain");
	if (!(hs.features & FHOOK_FEAT_ERRORS_TYPES))
		return;
	site = kallsyms("do_sys_openat2");
	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.none_ips = (uintptr_t)&site;
	g.nr_none_ips = 1;
	expect(errors_round(&g, " (none_ips: itself)") == 0,
	       "observer: a function whose type says it never fails: no chain");
	g.none_ips = 0;
	g.nr_none_ips = 0;
	g.zero_ips = (uintptr_t)&site;
	g.nr_zero_ips = 1;
	expect(errors_round(&g, " (zero_ips: itself)") == 1,
	       "observer: 0 a failure, not a good open's fd: one chain");
	/* failing by the filter alone: -EACCES is no open of a missing file */
	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.fail_pred = (uintptr_t)&fail;
	g.fail_pred_len = 1;
	expect(errors_round(&g, " (fail_pred: ret == -ENOENT)") == 1,
	       "observer: the failure filter 'ret == -ENOENT': one chain");
	fail.imm = -EACCES;
	expect(errors_round(&g, " (fail_pred: ret == -EACCES)") == 0,
	       "observer: the failure filter 'ret == -EACCES': no chain");
	if (!(hs.features & FHOOK_FEAT_ERRORS_FRAMES))
		return;
	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	g.flags = FHOOK_GRAPH_F_CALLSITES | FHOOK_GRAPH_F_ARGS;
	expect(errors_round(&g, " (CALLSITES, ARGS)") == 1,
	       "observer: one chain with its call site and arguments");
	/* every frame's arguments for every task: charged, or refused */
	fd = open_dev();
	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	ret = errors_add(fd, FHOOK_GRAPH_F_ARGS | FHOOK_GRAPH_F_CALLSITES, FHOOK_GRAPH_MAX_TASKS, 0);
	expect(ret == 0 || errno == EDQUOT,
	       "observer: failing chains with arguments for %u tasks: added or EDQUOT (%s)",
	       FHOOK_GRAPH_MAX_TASKS, ret ? strerror(errno) : "added");
	close(fd);
	/* a chain of 64 frames with all of it does not fit a 4 KiB ring */
	fd = open_dev();
	if (handshake(fd, NULL) || ring_setup(fd, 4096))
		fatal("setting up a session");
	g.flags = FHOOK_GRAPH_F_ERRORS | FHOOK_GRAPH_F_ARGS | FHOOK_GRAPH_F_CALLSITES |
		  FHOOK_GRAPH_F_USTACK;
	g.max_depth = 0;
	{
		struct fhook_probe_add pa = {
			.size = sizeof(pa), .type = FHOOK_PROBE_GRAPH,
			.filter = (uintptr_t)"do_sys_openat2", .filter_len = 14,
			.hook = (uintptr_t)&g,
		};

		EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa),
			  "observer: failing chains with every part on a 4 KiB ring");
		EXPECT_ERR(ioctl(fd, FHOOK_IOC_START, 0), ERRS(EMSGSIZE),
			   "observer: START with records larger than the ring -> EMSGSIZE");
	}
	close(fd);
}

static int wakeup_add(int fd, __u64 cfg, __u32 *id)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_WAKEUP, .hook = cfg };
	int ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);

	if (id)
		*id = pa.probe_id;
	return ret;
}

static int latency_read(int fd, __u32 id, __u32 flags, __u32 cpu, struct fhook_latency *l)
{
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->probe_id = id;
	l->flags = flags;
	l->cpu = cpu;
	return ioctl(fd, FHOOK_IOC_LATENCY, l);
}

/*
 * A wakeup probe's hist table (per task, FHOOK_FEAT_WAKEUP_HIST): only the
 * sample's fields and the CPU, nothing of current (the task switched out
 * at a switch), nothing past the sample.
 */
static void wakeup_hist_set(int fd, __u32 id)
{
	struct fhook_hist_set hs = {
		.size = sizeof(hs), .probe_id = id, .entries = 1024, .nr_keys = 2, .nr_vals = 1,
		.flags = FHOOK_HIST_F_COMM,
	};
	const struct fhook_hist_field data = { .src = FHOOK_HIST_SRC_DATA, .size = 4,
					       .store = FHOOK_HIST_NO_STORE };

	hs.keys[0] = data;
	hs.keys[0].offset = offsetof(struct fhook_wakeup_sample, pid);
	hs.keys[1] = data;
	hs.keys[1].offset = offsetof(struct fhook_wakeup_sample, bucket);
	hs.vals[0] = data;
	hs.vals[0].size = 8;
	hs.vals[0].offset = sizeof(struct fhook_wakeup_sample) - 4;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "observer: a wakeup hist value read past the sample -> EINVAL");
	hs.vals[0].offset = offsetof(struct fhook_wakeup_sample, latency);
	hs.keys[1] = (struct fhook_hist_field){ .src = FHOOK_HIST_SRC_PID,
						.store = FHOOK_HIST_NO_STORE };
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "observer: a wakeup hist key of current's pid (the task switched out) -> EINVAL");
	hs.keys[1].src = FHOOK_HIST_SRC_USTACK;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "observer: a wakeup hist key of current's user stack -> EINVAL");
	hs.keys[1].src = FHOOK_HIST_SRC_STACK;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "observer: a wakeup hist key of current's kernel stack -> EINVAL");
	hs.keys[1].src = FHOOK_HIST_SRC_COMM;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), ERRS(EINVAL),
		   "observer: a wakeup hist key of current's name -> EINVAL");
	hs.keys[1] = data;
	hs.keys[1].offset = offsetof(struct fhook_wakeup_sample, bucket);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_SET, &hs), "observer: a wakeup hist table per pid");
}

/* The table of wakeup_hist_set(): @child's waits there, under its name. */
static void wakeup_hist_check(int fd, __u32 id, pid_t child)
{
	struct fhook_hist_read hr = { .size = sizeof(hr), .probe_id = id };
	static unsigned char buf[1 << 16];
	__u64 hits = 0, child_hits = 0, w[4];
	char comm[17] = "";
	__u32 i;

	hr.buf = (uintptr_t)buf;
	hr.buf_len = sizeof(buf);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_HIST_READ, &hr), "observer: the wakeup hist table read");
	expect(hr.key_size == 16 && hr.elt_size >= 32 + 16, "observer: wakeup hist entries of %u/%u bytes",
	       hr.key_size, hr.elt_size);
	for (i = 0; i < hr.nr && hr.elt_size >= 48 && (__u64)(i + 1) * hr.elt_size <= sizeof(buf); i++) {
		memcpy(w, buf + i * hr.elt_size, sizeof(w));
		hits += w[2];
		expect(w[1] < FHOOK_LAT_BUCKETS, "observer: wakeup hist bucket %llu",
		       (unsigned long long)w[1]);
		if (w[0] == (__u64)child) {
			child_hits += w[2];
			memcpy(comm, buf + (i + 1) * hr.elt_size - 16, 16);
		}
	}
	expect(hits == hr.hits, "observer: the wakeup hist entries add up to its hits (%llu, %llu)",
	       (unsigned long long)hits, (unsigned long long)hr.hits);
	/*
	 * (a wakeup that finds the child still running is no wait: 97 of
	 * its 200 sleeps were waits once on the debug kernel under CI's load)
	 */
	expect(child_hits >= 50 && !strcmp(comm, "fhook-abitest"),
	       "observer: the sleeping child's waits under its pid and name (%llu, '%s')",
	       (unsigned long long)child_hits, comm);
}

/*
 * The wakeup tracer as a CAP_PERFMON caller can drive it: its config from
 * nowhere, an unreadable page, with an unknown class, reserved bits or a
 * size past a page; a second tracer in the session, triggers on it;
 * per-CPU reads of CPUs that do not exist; the tracer armed while tasks
 * wake, then closed without STOP (the tracked task's reference and the
 * tracepoints must go).
 */
static void test_observer_wakeup(void)
{
	void *noaccess = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fhook_wakeup w = { .size = sizeof(w), .wclass = FHOOK_WAKEUP_ALL };
	struct fhook_latency l;
	struct fhook_last_error le;
	unsigned int i;
	__u32 id = 0;
	int fd = open_dev();

	if (noaccess == MAP_FAILED || handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(wakeup_add(fd, 0, NULL), ERRS(EINVAL), "observer: wakeup tracer without a config -> EINVAL");
	le = last_error(fd);
	expect(le.reason == FHOOK_R_WAKEUP_CFG, "observer: LAST_ERROR says WAKEUP_CFG (%u)", le.reason);
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)noaccess, NULL), ERRS(EFAULT),
		   "observer: wakeup config from an unreadable page -> EFAULT");
	w.wclass = 3;
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)&w, NULL), ERRS(EINVAL), "observer: wakeup class 3 -> EINVAL");
	w.wclass = FHOOK_WAKEUP_ALL;
	w.reserved = 1;
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)&w, NULL), ERRS(EINVAL),
		   "observer: wakeup config with a reserved word set -> EINVAL");
	w.reserved = 0;
	w.__pad = 1;
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)&w, NULL), ERRS(EINVAL),
		   "observer: wakeup config with its padding set -> EINVAL");
	w.__pad = 0;
	w.flags = 4;
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)&w, NULL), ERRS(EINVAL),
		   "observer: wakeup config with an unknown flag -> EINVAL");
	/* the waker's stacks: a walk per tracked wakeup while the child sleeps below */
	w.flags = FHOOK_WAKEUP_F_STACK;
	w.size = page + 8;
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)&w, NULL), ERRS(E2BIG, EINVAL, EFAULT),
		   "observer: wakeup config claiming more than a page");
	w.size = sizeof(w);
	{
		struct fhook_probe_add pa = {
			.size = sizeof(pa), .type = FHOOK_PROBE_WAKEUP, .hook = (uintptr_t)&w,
			.filter = (uintptr_t)"vfs_read", .filter_len = 8,
		};

		EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
			   "observer: wakeup tracer with a function filter -> EINVAL");
	}
	EXPECT_OK(wakeup_add(fd, (uintptr_t)&w, &id), "observer: a wakeup tracer");
	w.wclass = FHOOK_WAKEUP_RT;
	EXPECT_ERR(wakeup_add(fd, (uintptr_t)&w, NULL), ERRS(EBUSY),
		   "observer: a second wakeup tracer in the session -> EBUSY");
	le = last_error(fd);
	expect(le.reason == FHOOK_R_WAKEUP_ONE, "observer: LAST_ERROR says WAKEUP_ONE (%u)", le.reason);
	{
		struct fhook_trigger t = {
			.size = sizeof(t), .probe_id = id, .action = FHOOK_TRIG_TRACEOFF,
		};

		EXPECT_ERR(ioctl(fd, FHOOK_IOC_TRIGGER_ADD, &t), ERRS(ENOENT),
			   "observer: a trigger on the wakeup tracer (it runs none) -> ENOENT");
	}
	EXPECT_ERR(latency_read(fd, id, FHOOK_LATENCY_F_CPU, 1U << 30, &l), ERRS(EINVAL),
		   "observer: a wakeup histogram of CPU 2^30 -> EINVAL");
	EXPECT_ERR(latency_read(fd, id, 2, 0, &l), ERRS(EINVAL),
		   "observer: LATENCY with an unknown flag -> EINVAL");
	EXPECT_ERR(latency_read(fd, id, 0, 1, &l), ERRS(EINVAL),
		   "observer: LATENCY naming a CPU without FHOOK_LATENCY_F_CPU -> EINVAL");
	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.probe_id = id;
	l.max_ns = 1;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_LATENCY, &l), ERRS(EINVAL),
		   "observer: LATENCY with an output field set on input -> EINVAL");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_LATENCY, noaccess), ERRS(EFAULT),
		   "observer: LATENCY into an unreadable page -> EFAULT");
	wakeup_hist_set(fd, id);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "observer: the wakeup tracer armed");
	/* wakeups and switches while armed: a child sleeping 200 times */
	{
		pid_t child = fork();

		if (child == 0) {
			for (i = 0; i < 200; i++)
				usleep(500);
			_exit(0);
		}
		waitpid(child, NULL, 0);
		wakeup_hist_check(fd, id, child);
	}
	EXPECT_OK(latency_read(fd, id, 0, 0, &l), "observer: the first tracer's histogram");
	expect(l.count > 0 && l.max_ns >= l.min_ns && l.sum_ns >= l.max_ns,
	       "observer: its histogram has wakeups, min <= max <= sum (%llu, %llu, %llu, %llu)",
	       (unsigned long long)l.count, (unsigned long long)l.min_ns,
	       (unsigned long long)l.max_ns, (unsigned long long)l.sum_ns);
	{
		struct fhook_latency c;
		__u64 sum = 0;
		long cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF);

		for (cpu = 0; cpu < ncpu; cpu++)
			if (!latency_read(fd, id, FHOOK_LATENCY_F_CPU, cpu, &c))
				sum += c.count;
		EXPECT_OK(latency_read(fd, id, 0, 0, &c), "observer: the sum read again");
		expect(sum >= l.count && sum <= c.count,
		       "observer: the CPUs' histograms add up to the sum (%llu in [%llu, %llu])",
		       (unsigned long long)sum, (unsigned long long)l.count,
		       (unsigned long long)c.count);
	}
	/* closed while armed: release must unregister and drop the task */
	close(fd);
	munmap(noaccess, page);
}

/*
 * A function probe recording on the tracked wakeup's CPU only
 * (FHOOK_PROBE_F_WAKEUP_CPU): not counting, not on another kind; in a
 * session without a wakeup tracer it records nothing however often its
 * function runs.
 */
static void test_observer_wakeup_function(void)
{
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_FUNC,
		.flags = FHOOK_PROBE_F_WAKEUP_CPU | FHOOK_PROBE_F_COUNT,
		.filter = (uintptr_t)"schedule", .filter_len = 8,
	};
	struct fhook_stats st = { .size = sizeof(st) };
	struct fhook_last_error le;
	int fd = open_dev(), i;

	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
		   "observer: a counting probe on the wakeup's CPU -> EINVAL");
	pa.type = FHOOK_PROBE_KPROBE;
	pa.flags = FHOOK_PROBE_F_WAKEUP_CPU;
	EXPECT_ERR(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), ERRS(EINVAL),
		   "observer: a kprobe on the wakeup's CPU -> EINVAL");
	le = last_error(fd);
	expect(le.reason == FHOOK_R_FLAGS, "observer: LAST_ERROR says FLAGS (%u)", le.reason);
	pa.type = FHOOK_PROBE_FUNC;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa), "observer: a function probe on the wakeup's CPU");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "observer: the probe armed, no wakeup tracer");
	for (i = 0; i < 100; i++)
		usleep(200);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "observer: stopped");
	st.probe_id = pa.probe_id;
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "observer: the probe's statistics");
	expect(st.total.written == 0 && st.total.hits == 0,
	       "observer: no wakeup tracked, nothing recorded (hits %llu, written %llu)",
	       (unsigned long long)st.total.hits, (unsigned long long)st.total.written);
	close(fd);
}

static int timerlat_add(int fd, __u64 cfg, __u32 *id)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_TIMERLAT, .hook = cfg };
	int ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);

	if (id)
		*id = pa.probe_id;
	return ret;
}

/* Threads whose name starts with @prefix now (/proc/N/comm). */
static int threads_named(const char *prefix)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, prefix, strlen(prefix)))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * The threads named @prefix still there after up to 2 s.  kthread_stop()
 * returns once the thread has left its function (its exit completion, in
 * exit_mm()); the task stays in /proc until kthreadd reaps it just after,
 * so a thread gone is seen by waiting a moment.  A thread the module left
 * running stays, and the count says so.
 */
static int threads_left(const char *prefix)
{
	int n = threads_named(prefix);

	for (int i = 0; n > 0 && i < 200; i++) {
		usleep(10000);
		n = threads_named(prefix);
	}
	return n;
}

/* a probe's hits (its records, written or dropped: nobody reads them here) */
static __u64 probe_hits(int fd, __u32 id)
{
	struct fhook_stats st = { .size = sizeof(st), .probe_id = id };

	return ioctl(fd, FHOOK_IOC_STATS, &st) ? 0 : st.total.hits;
}

/*
 * The timerlat tracer's config as root: from nowhere, an unreadable page,
 * periods and priorities out of range, reserved words; then armed on CPU 0
 * at the shortest period, stopped, armed again, and closed while armed:
 * its threads must go each time.
 */
static void test_timerlat(void)
{
	int n;
	void *noaccess = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fhook_timerlat t = { .size = sizeof(t), .period_us = FHOOK_TIMERLAT_MIN_PERIOD_US };
	struct fhook_last_error le;
	__u64 mask = 1, before;
	struct fhook_cpu_filter cf = { .size = sizeof(cf), .nr_bits = 64, .mask = (uintptr_t)&mask };
	__u32 id = 0;
	int fd = open_dev();

	if (noaccess == MAP_FAILED || handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(timerlat_add(fd, 0, NULL), ERRS(EINVAL), "timerlat without a config -> EINVAL");
	le = last_error(fd);
	expect(le.reason == FHOOK_R_TIMERLAT_CFG, "LAST_ERROR says TIMERLAT_CFG (%u)", le.reason);
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)noaccess, NULL), ERRS(EFAULT),
		   "timerlat config from an unreadable page -> EFAULT");
	t.period_us = FHOOK_TIMERLAT_MIN_PERIOD_US - 1;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EINVAL), "timerlat period 99 us -> EINVAL");
	t.period_us = FHOOK_TIMERLAT_MAX_PERIOD_US + 1;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EINVAL),
		   "timerlat period over a second -> EINVAL");
	t.period_us = 0xffffffffU;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EINVAL), "timerlat period 2^32-1 us -> EINVAL");
	t.period_us = FHOOK_TIMERLAT_MIN_PERIOD_US;
	t.prio = 100;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EINVAL), "timerlat priority 100 -> EINVAL");
	t.prio = 0;
	t.__pad = 1;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EINVAL), "timerlat __pad set -> EINVAL");
	t.__pad = 0;
	t.reserved[1] = 1;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EINVAL), "timerlat reserved word set -> EINVAL");
	t.reserved[1] = 0;
	t.size = page + 8;
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(E2BIG, EINVAL, EFAULT),
		   "timerlat config claiming more than a page");
	t.size = sizeof(t);
	EXPECT_OK(timerlat_add(fd, (uintptr_t)&t, &id), "a timerlat tracer at 100 us");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), "timerlat on CPU 0 only");
	{
		struct fhook_trigger tr = { .size = sizeof(tr), .probe_id = id, .action = FHOOK_TRIG_TRACEOFF };

		EXPECT_ERR(ioctl(fd, FHOOK_IOC_TRIGGER_ADD, &tr), ERRS(ENOENT),
			   "a trigger on the timerlat tracer (it runs none) -> ENOENT");
	}
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "timerlat armed");
	expect(threads_named("fhook-tlat/") == 1, "one timerlat thread for one CPU (%d)", threads_named("fhook-tlat/"));
	usleep(100000);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "timerlat stopped");
	before = probe_hits(fd, id);
	expect(before > 0, "timerlat wrote measures (%llu)", (unsigned long long)before);
	n = threads_left("fhook-tlat/");
	expect(n == 0, "no timerlat thread after STOP (%d)", n);
	usleep(20000);
	expect(probe_hits(fd, id) == before, "no measure after STOP");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "timerlat armed again");
	usleep(50000);
	expect(probe_hits(fd, id) > before, "measures again after the second START");
	/* closed while armed: release must stop the threads */
	close(fd);
	n = threads_left("fhook-tlat/");
	expect(n == 0, "no timerlat thread after close (%d)", n);
	munmap(noaccess, page);
}

/* The timerlat tracer runs real-time threads: CAP_PERFMON is not enough. */
static void test_observer_timerlat(void)
{
	int n;
	struct fhook_timerlat t = { .size = sizeof(t), .period_us = 1000 };
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(timerlat_add(fd, (uintptr_t)&t, NULL), ERRS(EPERM),
		   "observer: a timerlat tracer -> EPERM");
	n = threads_left("fhook-tlat/");
	expect(n == 0, "observer: no timerlat thread (%d)", n);
	close(fd);
}

static int hwlat_add(int fd, __u64 cfg)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_HWLAT, .hook = cfg };

	return ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);
}

/*
 * The hwlat detector's config as root: from nowhere, windows and widths
 * out of range, a width not below the window, flags and reserved words;
 * then armed at the shortest window on CPU 0, stopped (its thread goes),
 * armed again and closed while armed.
 */
static void test_hwlat(void)
{
	int n;
	struct fhook_hwlat h = { .size = sizeof(h), .window_us = 1000, .width_us = 500 };
	__u64 mask = 1;
	struct fhook_cpu_filter cf = { .size = sizeof(cf), .nr_bits = 64, .mask = (uintptr_t)&mask };
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(hwlat_add(fd, 0), ERRS(EINVAL), "hwlat without a config -> EINVAL");
	expect(last_error(fd).reason == FHOOK_R_HWLAT_CFG, "LAST_ERROR says HWLAT_CFG");
	h.window_us = FHOOK_HWLAT_MIN_WINDOW_US - 1;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat window 999 us -> EINVAL");
	h.window_us = ~0ULL;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat window 2^64-1 us -> EINVAL");
	h.window_us = 2000000;
	h.width_us = FHOOK_HWLAT_MAX_WIDTH_US + 1;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat width over a second -> EINVAL");
	h.window_us = 1000;
	h.width_us = 1000;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat width equal to the window -> EINVAL");
	h.width_us = 0;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat width 0 -> EINVAL");
	h.width_us = 500;
	h.threshold_ns = 500000;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat threshold equal to the width -> EINVAL");
	h.threshold_ns = ~0ULL;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat threshold 2^64-1 ns -> EINVAL");
	h.threshold_ns = 0;
	h.flags = 1;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat flags set -> EINVAL");
	h.flags = 0;
	h.reserved[0] = 1;
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EINVAL), "hwlat reserved word set -> EINVAL");
	h.reserved[0] = 0;
	EXPECT_OK(hwlat_add(fd, (uintptr_t)&h), "a hwlat detector, 500 us of every ms");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), "hwlat on CPU 0 only");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "hwlat armed");
	expect(threads_named("fhook-hwlat") == 1, "one hwlat thread (%d)", threads_named("fhook-hwlat"));
	usleep(50000);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "hwlat stopped");
	n = threads_left("fhook-hwlat");
	expect(n == 0, "no hwlat thread after STOP (%d)", n);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "hwlat armed again");
	usleep(20000);
	close(fd);
	n = threads_left("fhook-hwlat");
	expect(n == 0, "no hwlat thread after close (%d)", n);
}

/* The hwlat detector disables interrupts: CAP_PERFMON is not enough. */
static void test_observer_hwlat(void)
{
	struct fhook_hwlat h = { .size = sizeof(h), .window_us = 1000000, .width_us = 500000 };
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(hwlat_add(fd, (uintptr_t)&h), ERRS(EPERM), "observer: a hwlat detector -> EPERM");
	close(fd);
}

static int osnoise_add(int fd, __u64 cfg, __u32 *id)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_OSNOISE, .hook = cfg };
	int ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);

	if (id)
		*id = pa.probe_id;
	return ret;
}

/*
 * The osnoise tracer's config as root: from nowhere, periods, runtimes,
 * thresholds and priorities out of range, flags and reserved words; then
 * a period of 1 ms sampled 500 us on CPU 0 with a record per gap,
 * stopped (its thread goes), armed again and closed while armed; a stop
 * at 1 ns of noise stops it at once.
 */
static void test_osnoise(void)
{
	int n;
	struct fhook_osnoise o = { .size = sizeof(o), .period_us = 1000, .runtime_us = 500,
				   .flags = FHOOK_OSNOISE_EACH };
	__u64 mask = 1, before;
	struct fhook_cpu_filter cf = { .size = sizeof(cf), .nr_bits = 64, .mask = (uintptr_t)&mask };
	__u32 id = 0;
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(osnoise_add(fd, 0, NULL), ERRS(EINVAL), "osnoise without a config -> EINVAL");
	expect(last_error(fd).reason == FHOOK_R_OSNOISE_CFG, "LAST_ERROR says OSNOISE_CFG");
	o.period_us = FHOOK_OSNOISE_MAX_PERIOD_US + 1;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise period over 10 s -> EINVAL");
	o.period_us = 0xffffffffU;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise period 2^32-1 us -> EINVAL");
	o.period_us = 1000;
	o.runtime_us = FHOOK_OSNOISE_MIN_RUNTIME_US - 1;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise runtime 99 us -> EINVAL");
	o.runtime_us = 1001;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL),
		   "osnoise runtime over the period -> EINVAL");
	o.runtime_us = 500;
	o.threshold_ns = 500001;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL),
		   "osnoise threshold over the runtime -> EINVAL");
	o.threshold_ns = ~0ULL;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise threshold 2^64-1 ns -> EINVAL");
	o.threshold_ns = 0;
	o.prio = 100;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise priority 100 -> EINVAL");
	o.prio = 1;
	o.runtime_us = o.period_us;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL),
		   "osnoise at SCHED_FIFO 1 with a runtime of the whole period -> EINVAL");
	o.runtime_us = 500;
	o.prio = 0;
	o.flags = ~0U;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise unknown flags -> EINVAL");
	o.flags = FHOOK_OSNOISE_EACH;
	o.__pad = 1;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise __pad set -> EINVAL");
	o.__pad = 0;
	o.reserved[1] = 1;
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EINVAL), "osnoise reserved word set -> EINVAL");
	o.reserved[1] = 0;
	EXPECT_OK(osnoise_add(fd, (uintptr_t)&o, &id), "an osnoise tracer, 500 us of every ms");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf), "osnoise on CPU 0 only");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "osnoise armed");
	expect(threads_named("fhook-osn/") == 1, "one osnoise thread for one CPU (%d)",
	       threads_named("fhook-osn/"));
	usleep(100000);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "osnoise stopped");
	before = probe_hits(fd, id);
	expect(before > 0, "osnoise wrote periods (%llu)", (unsigned long long)before);
	n = threads_left("fhook-osn/");
	expect(n == 0, "no osnoise thread after STOP (%d)",
	       n);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "osnoise armed again");
	usleep(50000);
	expect(probe_hits(fd, id) > before, "periods again after the second START");
	close(fd);
	n = threads_left("fhook-osn/");
	expect(n == 0, "no osnoise thread after close (%d)",
	       n);

	/*
	 * a stop at 1 ns of noise in a period of 10 ms (two ticks at least):
	 * one record on one CPU, then none on any
	 */
	fd = open_dev();
	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	o.flags = 0;
	o.period_us = o.runtime_us = 10000;
	o.stop_total_ns = 1;
	EXPECT_OK(osnoise_add(fd, (uintptr_t)&o, &id), "an osnoise tracer stopping at 1 ns of noise");
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "osnoise armed on every CPU");
	usleep(200000);
	before = probe_hits(fd, id);
	usleep(50000);
	expect(before == 1 && probe_hits(fd, id) == 1, "one record, the stop's (%llu then %llu)",
	       (unsigned long long)before, (unsigned long long)probe_hits(fd, id));
	close(fd);
	n = threads_left("fhook-osn/");
	expect(n == 0, "no osnoise thread after close (%d)",
	       n);
}

/* The osnoise tracer takes the CPUs' time: CAP_PERFMON is not enough. */
static void test_observer_osnoise(void)
{
	int n;
	struct fhook_osnoise o = { .size = sizeof(o), .period_us = 1000000, .runtime_us = 1000000 };
	int fd = open_dev();

	if (handshake(fd, NULL) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(osnoise_add(fd, (uintptr_t)&o, NULL), ERRS(EPERM),
		   "observer: an osnoise tracer -> EPERM");
	n = threads_left("fhook-osn/");
	expect(n == 0, "observer: no osnoise thread (%d)",
	       n);
	close(fd);
}

static int irqsoff_add(int fd, __u64 cfg, __u32 *id)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_IRQSOFF, .hook = cfg };
	int ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa);

	if (id)
		*id = pa.probe_id;
	return ret;
}

/*
 * The irqsoff tracers' config (an observer's probe): from nowhere, no kind,
 * an unknown kind, a reserved word; a kind whose tracepoints this kernel
 * lacks refused with IRQSOFF_TPS (as the handshake's features say); where
 * it has them, armed with a threshold of 1 ns (every section: the hottest
 * case) on every CPU while this process forks, stopped, armed again and
 * closed while armed.
 */
static void test_irqsoff_as(const char *who)
{
	struct fhook_irqsoff c = { .size = sizeof(c), .kinds = FHOOK_IRQSOFF_IRQ };
	struct fhook_handshake hs;
	__u32 id = 0;
	int fd = open_dev();

	if (handshake(fd, &hs) || ring_setup(fd, 65536))
		fatal("setting up a session");
	EXPECT_ERR(irqsoff_add(fd, 0, NULL), ERRS(EINVAL), "%s: irqsoff without a config -> EINVAL", who);
	expect(last_error(fd).reason == FHOOK_R_IRQSOFF_CFG, "%s: LAST_ERROR says IRQSOFF_CFG", who);
	c.kinds = 0;
	EXPECT_ERR(irqsoff_add(fd, (uintptr_t)&c, NULL), ERRS(EINVAL), "%s: irqsoff of no kind -> EINVAL", who);
	c.kinds = 4;
	EXPECT_ERR(irqsoff_add(fd, (uintptr_t)&c, NULL), ERRS(EINVAL), "%s: irqsoff kind 4 -> EINVAL", who);
	c.kinds = FHOOK_IRQSOFF_IRQ;
	c.reserved[0] = 1;
	EXPECT_ERR(irqsoff_add(fd, (uintptr_t)&c, NULL), ERRS(EINVAL), "%s: irqsoff reserved word -> EINVAL", who);
	c.reserved[0] = 0;
	if (!(hs.features & FHOOK_FEAT_PREEMPTOFF)) {
		c.kinds = FHOOK_IRQSOFF_PREEMPT;
		EXPECT_ERR(irqsoff_add(fd, (uintptr_t)&c, NULL), ERRS(EOPNOTSUPP),
			   "%s: preemptoff without the preempt tracepoints -> EOPNOTSUPP", who);
		expect(last_error(fd).reason == FHOOK_R_IRQSOFF_TPS, "%s: LAST_ERROR says IRQSOFF_TPS", who);
		c.kinds = FHOOK_IRQSOFF_IRQ;
	}
	if (!(hs.features & FHOOK_FEAT_IRQSOFF)) {
		EXPECT_ERR(irqsoff_add(fd, (uintptr_t)&c, NULL), ERRS(EOPNOTSUPP),
			   "%s: irqsoff without the irq tracepoints -> EOPNOTSUPP", who);
		close(fd);
		return;
	}
	c.threshold_ns = 1;
	EXPECT_OK(irqsoff_add(fd, (uintptr_t)&c, &id), "%s: an irqsoff tracer reporting every section", who);
	EXPECT_ERR(irqsoff_add(fd, (uintptr_t)&c, NULL), ERRS(EBUSY), "%s: a second one in the session -> EBUSY",
		   who);
	expect(last_error(fd).reason == FHOOK_R_IRQSOFF_ONE, "%s: LAST_ERROR says IRQSOFF_ONE", who);
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "%s: irqsoff armed", who);
	for (int i = 0; i < 20; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "%s: irqsoff stopped", who);
	expect(probe_hits(fd, id) > 20, "%s: sections reported while forking (%llu)", who,
	       (unsigned long long)probe_hits(fd, id));
	EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "%s: irqsoff armed again", who);
	usleep(20000);
	close(fd);
}

static void test_irqsoff(void)
{
	test_irqsoff_as("root");
}

static void test_observer_irqsoff(void)
{
	test_irqsoff_as("observer");
}

/* Runs @tests, printing each one's seconds: where the time goes. */
static void run_timed(const char *who, void (*const tests[])(void), size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		tests[i]();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("# %s test %zu: %.1f s\n", who, i,
		       t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
}

static void observer(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2] = { 0 };

	if (syscall(SYS_capget, &hdr, caps))
		fatal("capget");
	expect(!(caps[0].effective & (1U << CAP_SYS_ADMIN)) &&
	       (caps[1].effective & (1U << (CAP_PERFMON - 32))),
	       "running with CAP_PERFMON and without CAP_SYS_ADMIN (uid %u)", getuid());
	void (*const tests[])(void) = {
		test_forged_tail_big, test_bad_tail, test_observer_big_record,
		test_observer_wake_storm,
		test_observer_hist,
		test_observer_noreturn, test_observer_around_slots, test_observer_graph_all,
		test_observer_direct_kprobes,
		test_observer_errors,
		test_observer_wakeup, test_observer_wakeup_function, test_observer_timerlat,
		test_observer_hwlat,
		test_observer_osnoise, test_observer_irqsoff, test_observer_limits,
		test_observer_symbols,
	};

	run_timed("observer", tests, sizeof(tests) / sizeof(tests[0]));
}

int main(int argc, char **argv)
{
	int observe = argc > 1 && !strcmp(argv[1], "--observer");
	int lockdown = argc > 1 && !strcmp(argv[1], "--lockdown-args");
	int hold = argc > 1 && !strcmp(argv[1], "--hold-share");

	if (argc > 1 + observe + lockdown + hold)
		dev = argv[1 + observe + lockdown + hold];
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	stext = ksym_any("_stext");
	etext = ksym_any("_etext");
	unmapped = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED)
		fatal("mmap");
	munmap(unmapped, page);
	if (lockdown)
		return lockdown_args();
	if (hold)
		return hold_share();
	if (observe) {
		observer();
		printf("# %d checks, %d failed\n", tap_counts()[0], tap_failures());
		return tap_status();
	}

	{
		int fd = open_dev();
		struct fhook_handshake hs;

		EXPECT_OK(handshake(fd, &hs), "first HANDSHAKE");
		expect(hs.nr_sessions == 1, "no other session open at start (%u)", hs.nr_sessions);
		close(fd);
	}
	{
		void (*const tests[])(void) = {
			test_ioctl_numbers, test_sizes, test_reserved, test_ring_setup,
			test_reasons, test_probe_add, test_filters, test_hist, test_mmap,
			test_bad_tail, test_forged_tail_big, test_privileges, test_symbols,
			test_session, test_timerlat, test_hwlat, test_osnoise, test_irqsoff,
		};

		run_timed("root", tests, sizeof(tests) / sizeof(tests[0]));
	}

	printf("# %d checks, %d failed\n", tap_counts()[0], tap_failures());
	return tap_status();
}
