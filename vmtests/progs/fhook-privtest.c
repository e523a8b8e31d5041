// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-privtest: who may use /dev/fhook.  Run as root.
 *
 * Only CAP_SYS_ADMIN or CAP_PERFMON (in the initial user namespace) may
 * open the device, and the module checks again on every ioctl and mmap, so
 * an fd that a privileged process hands to an unprivileged one (inherited
 * across fork + setuid, or sent with SCM_RIGHTS, or kept across a capset
 * or into a new user namespace) is useless: every ioctl and mmap is EPERM.
 *
 * Then the per-ioctl policy, as a table (10): observing (HANDSHAKE, rings,
 * function, direct, kprobe, tracepoint and uprobe probes, trace-around
 * hooks, filters, START/STOP, STATS, SNAPSHOT, triggers, LATENCY, HIST,
 * DIRECT_MODIFY, mmap) needs only CAP_PERFMON; hooks that change what the
 * kernel does (RETURN, REDIRECT) need CAP_SYS_ADMIN and lab mode (lab=1,
 * seen in FHOOK_FEAT_LAB); READ_TEXT needs CAP_SYS_RAWIO.  Each row runs
 * as root, as uid 0 with only CAP_PERFMON, as uid 0 with only
 * CAP_SYS_ADMIN, as uid 65534 with only CAP_PERFMON, and as uid 65534
 * without capabilities holding root's fd.  A session that holds a RETURN
 * hook needs CAP_SYS_ADMIN for every ioctl and mmap (11); a trace-around
 * hook does not make a session need more than CAP_PERFMON (12).  No
 * RETURN or REDIRECT hook is ever armed except in 11, on
 * fhook_testmod_ret (which nobody calls) when fhook_testmod is loaded,
 * and every such hook acts only on a 2^62nd call anyway.
 *
 * Prints TAP lines (progs.h), one per check (children print their own),
 * "# note: ..." for behaviour worth knowing that is not a failure; exit
 * status 0 if every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fhook_abi.h"
#include "progs.h"

#define NOBODY	65534
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static long page;
static uint64_t ip_read;

static void __attribute__((format(printf, 2, 3))) check(int good, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(good, NULL, fmt, ap);
	va_end(ap);
}

static void fatal(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* keep only the capabilities in @keep (a bitmask of CAP_* numbers) */
static int set_caps(uint64_t keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	return syscall(SYS_capset, &h, d);
}

#define CAP(c)	(1ULL << (c))
#define ALLCAPS	((1ULL << (CAP_LAST_CAP + 1)) - 1)

static int become_nobody(void)
{
	return setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ? -1 : 0;
}

/* A session with a ring and a vfs_read probe; armed if @start. */
static int session(int start)
{
	int fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = 16384 };
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_FUNC, .ips = (uintptr_t)&ip_read, .nr_ips = 1,
	};
	__u32 pid = getpid();
	struct fhook_pid_filter pf = {
		.size = sizeof(pf), .flags = FHOOK_PIDF_RESET, .nr_pids = 1, .pids = (uintptr_t)&pid,
	};

	if (fd < 0)
		fatal("open " FHOOK_DEVICE_PATH);
	if (ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs) || ioctl(fd, FHOOK_IOC_RING_SETUP, &rs) ||
	    ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa) || ioctl(fd, FHOOK_IOC_PID_FILTER, &pf))
		fatal("session setup");
	if (start && ioctl(fd, FHOOK_IOC_START, 0))
		fatal("START");
	return fd;
}

/*
 * Every operation on a session fd that an unprivileged holder might try:
 * each must fail with EPERM.  Runs in the (already unprivileged) child.
 */
static void all_denied(int fd, const char *who)
{
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = 8192 };
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_FUNC, .ips = (uintptr_t)&ip_read, .nr_ips = 1,
	};
	__u32 pid = getpid();
	struct fhook_pid_filter pf = {
		.size = sizeof(pf), .flags = FHOOK_PIDF_RESET, .nr_pids = 1, .pids = (uintptr_t)&pid,
	};
	__u64 mask = 1;
	struct fhook_cpu_filter cf = { .size = sizeof(cf), .nr_bits = 64, .mask = (uintptr_t)&mask };
	struct fhook_cpu_stats cs[64];
	struct fhook_stats st = {
		.size = sizeof(st), .probe_id = FHOOK_STATS_SESSION, .nr_cpus = 64,
		.cpus = (uintptr_t)cs,
	};
	struct fhook_snapshot ss = { .size = sizeof(ss), .op = FHOOK_SNAPSHOT_FREEZE };
	struct fhook_trigger tr = { .size = sizeof(tr), .probe_id = 1, .action = FHOOK_TRIG_TRACEOFF };
	struct fhook_direct_modify dm = {
		.size = sizeof(dm), .probe_id = 1, .flags = FHOOK_PROBE_F_COUNT,
	};
	struct fhook_latency lat = { .size = sizeof(lat), .probe_id = 1 };
	struct fhook_hist_set hset = {
		.size = sizeof(hset), .probe_id = 1, .entries = FHOOK_HIST_MIN_SIZE, .nr_keys = 1,
		.keys[0] = { .src = FHOOK_HIST_SRC_PID, .store = FHOOK_HIST_NO_STORE },
	};
	struct fhook_hist_read hrd = { .size = sizeof(hrd), .probe_id = 1 };
	struct fhook_bench b = { .size = sizeof(b), .probe_id = 1, .nr_events = 1 };
	struct fhook_last_error le = { .size = sizeof(le) };
	unsigned char text[16] = { 0 };
	struct fhook_read_text rt = {
		.size = sizeof(rt), .len = sizeof(text), .addr = ip_read, .buf = (uintptr_t)text,
	};
	struct { const char *name; unsigned long cmd; void *arg; } ops[] = {
		{ "HANDSHAKE", FHOOK_IOC_HANDSHAKE, &hs },
		{ "RING_SETUP", FHOOK_IOC_RING_SETUP, &rs },
		{ "PROBE_ADD", FHOOK_IOC_PROBE_ADD, &pa },
		{ "PID_FILTER", FHOOK_IOC_PID_FILTER, &pf },
		{ "CPU_FILTER", FHOOK_IOC_CPU_FILTER, &cf },
		{ "START", FHOOK_IOC_START, NULL },
		{ "STOP", FHOOK_IOC_STOP, NULL },
		{ "STATS", FHOOK_IOC_STATS, &st },
		{ "SNAPSHOT", FHOOK_IOC_SNAPSHOT, &ss },
		{ "TRIGGER_ADD", FHOOK_IOC_TRIGGER_ADD, &tr },
		{ "DIRECT_MODIFY", FHOOK_IOC_DIRECT_MODIFY, &dm },
		{ "LATENCY", FHOOK_IOC_LATENCY, &lat },
		{ "HIST_SET", FHOOK_IOC_HIST_SET, &hset },
		{ "HIST_READ", FHOOK_IOC_HIST_READ, &hrd },
		{ "BENCH", FHOOK_IOC_BENCH, &b },
		{ "READ_TEXT", FHOOK_IOC_READ_TEXT, &rt },
		{ "LAST_ERROR", FHOOK_IOC_LAST_ERROR, &le },
		{ "unknown nr 0x7f", _IO(FHOOK_IOC_MAGIC, 0x7f), NULL },
	};
	static const struct { const char *name; off_t off; int prot; int pages; } maps[] = {
		{ "meta", 0, PROT_READ, 1 },
		{ "cons", 1, PROT_READ | PROT_WRITE, 1 },
		{ "data", 2, PROT_READ, 8 },
		{ "stats area", -1, PROT_READ, 1 },
	};

	memset(cs, 0, sizeof(cs));
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		int r;

		errno = 0;
		r = ioctl(fd, ops[i].cmd, ops[i].arg);
		check(r == -1 && errno == EPERM, "%s: %s -> EPERM (ret %d errno %d)", who, ops[i].name,
		      r, errno);
	}
	/* nothing came back either */
	check(hs.abi_version == FHOOK_ABI_VERSION && hs.nr_cpus == 0 && hs.features == 0,
	      "%s: HANDSHAKE output untouched", who);
	check(st.total.hits == 0 && cs[0].hits == 0, "%s: STATS output untouched", who);
	check(lat.nr_buckets == 0 && text[0] == 0, "%s: LATENCY and READ_TEXT output untouched", who);
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++) {
		off_t off = maps[i].off < 0 ? (off_t)(FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE) :
			    maps[i].off * page;
		void *p = mmap(NULL, maps[i].pages * page, maps[i].prot, MAP_SHARED, fd, off);

		check(p == MAP_FAILED && errno == EPERM, "%s: mmap %s -> EPERM (errno %d)", who,
		      maps[i].name, p == MAP_FAILED ? errno : 0);
		if (p != MAP_FAILED)
			munmap(p, maps[i].pages * page);
	}
	check(close(fd) == 0, "%s: close works", who);
}

/* exit status of a child: its failed checks, or 100 + step if it could not run */
static int reap(pid_t pid, const char *what)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		fatal("waitpid");
	if (WIFEXITED(status) && WEXITSTATUS(status) < 100) {
		tap_add_failures(WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	check(0, "%s: child status %#x", what, status);
	return -1;
}

static int armed(void)
{
	FILE *f = fopen("/sys/kernel/tracing/enabled_functions", "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "vfs_read ", 9);
	fclose(f);
	return n;
}

static void send_fd(int sock, int fd)
{
	char dummy = 'x', buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &dummy, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			      .msg_controllen = sizeof(buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &msg, 0) != 1)
		fatal("sendmsg");
}

static int recv_fd(int sock)
{
	char dummy, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &dummy, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			      .msg_controllen = sizeof(buf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* ------------------------------------------------------------------ */
/* The per-ioctl policy                                                */

#define NODE_PERFMON	"/tmp/fhook-perfmon"	/* a node of the device for uid 65534 */
#define RING_SIZE	16384
/* RETURN and REDIRECT hooks act on this matching call only: never */
#define NEVER		(1ULL << 62)

static uint64_t ip_write;	/* vfs_write: a REDIRECT target */
static uint64_t ip_testmod;	/* fhook_testmod_ret, or 0: nobody calls it */
static uint32_t tp_switch;	/* sched:sched_switch's event id, or 0 */
static char exe[4096];		/* this program, for uprobes ("" if unknown) */
static uint64_t exe_off;	/* the file offset of uprobe_target() in it */
static int lab;			/* FHOOK_FEAT_LAB: loaded with lab=1 */
static __u64 features;		/* the module's (HANDSHAKE) */
static int lockdown;		/* 0 none, 1 integrity, 2 confidentiality */

/* what the uprobe rows probe (never armed) */
static __attribute__((noinline, used)) int uprobe_target(int x)
{
	return 3 * x + 1;
}

/* The file offset of @addr in this program's mapping, or -1. */
static uint64_t exe_offset(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, off;
	char line[4608];
	uint64_t found = -1;

	if (!f)
		return -1;
	while (found == (uint64_t)-1 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && addr >= lo &&
		    addr < hi && strstr(line, exe))
			found = addr - lo + off;
	fclose(f);
	return found;
}

/* the kernel lockdown level (securityfs is mounted for a moment if need be) */
static int lockdown_level(void)
{
	static const char dir[] = "/sys/kernel/security", path[] = "/sys/kernel/security/lockdown";
	char buf[128] = "";
	FILE *f = fopen(path, "r");
	int mounted = 0;

	if (!f && !mount("securityfs", dir, "securityfs", 0, NULL)) {
		mounted = 1;
		f = fopen(path, "r");
	}
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	if (mounted)
		umount(dir);
	if (!f) {
		printf("# note: no %s: lockdown assumed off\n", path);
		return 0;
	}
	return strstr(buf, "[confidentiality]") ? 2 : strstr(buf, "[integrity]") ? 1 : 0;
}

static int probe_add(int fd, struct fhook_probe_add *pa)
{
	pa->size = sizeof(*pa);
	return ioctl(fd, FHOOK_IOC_PROBE_ADD, pa);
}

static int add_ips(int fd, uint32_t type, uint32_t flags)
{
	struct fhook_probe_add pa = {
		.type = type, .flags = flags, .ips = (uintptr_t)&ip_read, .nr_ips = 1,
	};

	return probe_add(fd, &pa);
}

/* a hook on @addr; RETURN and REDIRECT act on the NEVERth call only */
static int add_hook(int fd, uint64_t addr, uint32_t action)
{
	struct fhook_hook hk = { .size = sizeof(hk), .action = action };
	struct fhook_probe_add pa = {
		.type = FHOOK_PROBE_HOOK, .addr = addr, .hook = (uintptr_t)&hk,
	};

	if (action == FHOOK_HOOK_RETURN)
		hk.retval = -EIO;
	if (action == FHOOK_HOOK_REDIRECT)
		hk.redirect = ip_write;
	if (action != FHOOK_HOOK_AROUND)
		hk.nth = NEVER;
	return probe_add(fd, &pa);
}

static int pid_self(int fd)
{
	__u32 pid = getpid();
	struct fhook_pid_filter pf = {
		.size = sizeof(pf), .flags = FHOOK_PIDF_RESET, .nr_pids = 1, .pids = (uintptr_t)&pid,
	};

	return ioctl(fd, FHOOK_IOC_PID_FILTER, &pf);
}

static int map_region(int fd, off_t off, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		return -1;
	munmap(p, len);
	return 0;
}

/* The operations of the table: 0, or -1 with errno. */
static int op_handshake(int fd)
{
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };

	return ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs);
}

static int op_ring(int fd)
{
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = RING_SIZE };

	return ioctl(fd, FHOOK_IOC_RING_SETUP, &rs);
}

static int op_func(int fd)
{
	return add_ips(fd, FHOOK_PROBE_FUNC, 0);
}

static int op_func_count(int fd)
{
	return add_ips(fd, FHOOK_PROBE_FUNC, FHOOK_PROBE_F_COUNT);
}

static int op_direct(int fd)
{
	return add_ips(fd, FHOOK_PROBE_DIRECT, 0);
}

static int op_direct_count(int fd)
{
	return add_ips(fd, FHOOK_PROBE_DIRECT, FHOOK_PROBE_F_COUNT);
}

static int op_direct_latency(int fd)
{
	return add_ips(fd, FHOOK_PROBE_DIRECT, FHOOK_PROBE_F_LATENCY);
}

static int add_kprobe(int fd, uint32_t type, uint32_t flags)
{
	static const char sym[] = "vfs_read";
	struct fhook_probe_add pa = {
		.type = type, .flags = flags, .symbol = (uintptr_t)sym,
		.symbol_len = sizeof(sym) - 1,
	};

	return probe_add(fd, &pa);
}

static int op_kprobe(int fd)
{
	return add_kprobe(fd, FHOOK_PROBE_KPROBE, 0);
}

static int op_kprobe_count(int fd)
{
	return add_kprobe(fd, FHOOK_PROBE_KPROBE, FHOOK_PROBE_F_COUNT);
}

static int op_kretprobe(int fd)
{
	return add_kprobe(fd, FHOOK_PROBE_KRETPROBE, 0);
}

static int op_tracepoint(int fd)
{
	struct fhook_probe_add pa = { .type = FHOOK_PROBE_TRACEPOINT, .addr = tp_switch };

	return probe_add(fd, &pa);
}

static int add_uprobe(int fd, uint32_t type)
{
	struct fhook_probe_add pa = {
		.type = type, .symbol = (uintptr_t)exe, .symbol_len = strlen(exe),
		.offset = exe_off,
	};

	return probe_add(fd, &pa);
}

static int op_uprobe(int fd)
{
	return add_uprobe(fd, FHOOK_PROBE_UPROBE);
}

static int op_uretprobe(int fd)
{
	return add_uprobe(fd, FHOOK_PROBE_URETPROBE);
}

static int op_hook_around(int fd)
{
	return add_hook(fd, ip_read, FHOOK_HOOK_AROUND);
}

static int op_hook_return(int fd)
{
	return add_hook(fd, ip_read, FHOOK_HOOK_RETURN);
}

static int op_hook_redirect(int fd)
{
	return add_hook(fd, ip_read, FHOOK_HOOK_REDIRECT);
}

static int op_pid_filter(int fd)
{
	return pid_self(fd);
}

static int op_cpu_filter(int fd)
{
	__u64 mask = 1;
	struct fhook_cpu_filter cf = { .size = sizeof(cf), .nr_bits = 64, .mask = (uintptr_t)&mask };

	return ioctl(fd, FHOOK_IOC_CPU_FILTER, &cf);
}

static int op_start(int fd)
{
	return ioctl(fd, FHOOK_IOC_START, 0);
}

static int op_stop(int fd)
{
	return ioctl(fd, FHOOK_IOC_STOP, 0);
}

static int op_stats(int fd)
{
	struct fhook_stats st = { .size = sizeof(st), .probe_id = FHOOK_STATS_SESSION };

	return ioctl(fd, FHOOK_IOC_STATS, &st);
}

static int op_snapshot(int fd)
{
	struct fhook_snapshot ss = { .size = sizeof(ss), .op = FHOOK_SNAPSHOT_FREEZE };

	return ioctl(fd, FHOOK_IOC_SNAPSHOT, &ss);
}

static int op_trigger(int fd)
{
	struct fhook_trigger t = { .size = sizeof(t), .probe_id = 1, .action = FHOOK_TRIG_TRACEOFF };

	return ioctl(fd, FHOOK_IOC_TRIGGER_ADD, &t);
}

static int op_latency(int fd)
{
	struct fhook_latency l = { .size = sizeof(l), .probe_id = 1 };

	return ioctl(fd, FHOOK_IOC_LATENCY, &l);
}

static int op_hist_set(int fd)
{
	struct fhook_hist_set h = {
		.size = sizeof(h), .probe_id = 1, .entries = FHOOK_HIST_MIN_SIZE, .nr_keys = 1,
		.keys[0] = { .src = FHOOK_HIST_SRC_PID, .store = FHOOK_HIST_NO_STORE },
	};

	return ioctl(fd, FHOOK_IOC_HIST_SET, &h);
}

static int op_hist_read(int fd)
{
	static unsigned char buf[4096];
	struct fhook_hist_read h = {
		.size = sizeof(h), .probe_id = 1, .buf = (uintptr_t)buf, .buf_len = sizeof(buf),
	};

	return ioctl(fd, FHOOK_IOC_HIST_READ, &h);
}

static int op_khooks(int fd)
{
	struct fhook_khook_info e[4];
	struct fhook_khooks k = {
		.size = sizeof(k), .entry_size = sizeof(e[0]), .nr = 4, .entries = (uintptr_t)e,
	};

	return ioctl(fd, FHOOK_IOC_KHOOKS, &k);
}

static int op_direct_modify(int fd)
{
	struct fhook_direct_modify m = {
		.size = sizeof(m), .probe_id = 1, .flags = FHOOK_PROBE_F_COUNT,
	};

	return ioctl(fd, FHOOK_IOC_DIRECT_MODIFY, &m);
}

static int op_mmap_meta(int fd)
{
	return map_region(fd, FHOOK_MMAP_META * page, page, PROT_READ);
}

static int op_mmap_cons(int fd)
{
	return map_region(fd, FHOOK_MMAP_CONS * page, page, PROT_READ | PROT_WRITE);
}

static int op_mmap_data(int fd)
{
	return map_region(fd, FHOOK_MMAP_DATA * page, 2 * RING_SIZE, PROT_READ);
}

static int op_mmap_stats(int fd)
{
	return map_region(fd, (off_t)(FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE), page,
			  PROT_READ);
}

static int op_read_text(int fd)
{
	unsigned char buf[16];
	struct fhook_read_text rt = {
		.size = sizeof(rt), .len = sizeof(buf), .addr = ip_read, .buf = (uintptr_t)buf,
	};

	return ioctl(fd, FHOOK_IOC_READ_TEXT, &rt);
}

/* what a row's session holds before its operation runs, in this order */
#define S_RING		(1U << 0)	/* a 16 KiB ring per CPU */
#define S_FUNC		(1U << 1)	/* probe 1: a function probe on vfs_read */
#define S_DIRECT	(1U << 2)	/* probe 1: a direct probe on vfs_read */
#define S_LAT		(1U << 3)	/* probe 1: a latency probe on vfs_read */
#define S_PID		(1U << 4)	/* pid filter: this process */
#define S_START		(1U << 5)	/* armed */
#define S_HIST		(1U << 6)	/* probe 1's hits into a table in the module */

enum need {
	N_PERFMON,	/* CAP_PERFMON (or CAP_SYS_ADMIN) */
	N_CHANGE,	/* CAP_SYS_ADMIN and lab mode */
	N_RAWIO,	/* CAP_SYS_RAWIO */
};

struct row {
	const char *name;
	unsigned int setup;	/* S_* */
	int (*op)(int fd);
	enum need need;
	int lockdown;		/* refused from this lockdown level on, 0 = never */
};

static const struct row rows[] = {
	{ "HANDSHAKE", 0, op_handshake, N_PERFMON, 0 },
	{ "RING_SETUP", 0, op_ring, N_PERFMON, 0 },
	{ "PROBE_ADD function", S_RING, op_func, N_PERFMON, 0 },
	{ "PROBE_ADD function F_COUNT", S_RING, op_func_count, N_PERFMON, 0 },
	{ "PROBE_ADD direct", S_RING, op_direct, N_PERFMON, 0 },
	{ "PROBE_ADD direct F_COUNT", S_RING, op_direct_count, N_PERFMON, 0 },
	{ "PROBE_ADD direct F_LATENCY", S_RING, op_direct_latency, N_PERFMON, 0 },
	{ "PROBE_ADD kprobe vfs_read", S_RING, op_kprobe, N_PERFMON, 2 },
	{ "PROBE_ADD kprobe vfs_read F_COUNT", S_RING, op_kprobe_count, N_PERFMON, 2 },
	{ "PROBE_ADD kretprobe vfs_read", S_RING, op_kretprobe, N_PERFMON, 2 },
	{ "PROBE_ADD tracepoint sched:sched_switch", S_RING, op_tracepoint, N_PERFMON, 0 },
	{ "PROBE_ADD uprobe", S_RING, op_uprobe, N_PERFMON, 0 },
	{ "PROBE_ADD uretprobe", S_RING, op_uretprobe, N_PERFMON, 0 },
	{ "PROBE_ADD hook AROUND", S_RING, op_hook_around, N_PERFMON, 0 },
	{ "PROBE_ADD hook RETURN", S_RING, op_hook_return, N_CHANGE, 1 },
	{ "PROBE_ADD hook REDIRECT", S_RING, op_hook_redirect, N_CHANGE, 1 },
	{ "PID_FILTER", S_RING, op_pid_filter, N_PERFMON, 0 },
	{ "CPU_FILTER", S_RING, op_cpu_filter, N_PERFMON, 0 },
	{ "START", S_RING | S_FUNC | S_PID, op_start, N_PERFMON, 0 },
	{ "STOP", S_RING | S_FUNC | S_PID | S_START, op_stop, N_PERFMON, 0 },
	{ "STATS", S_RING | S_FUNC, op_stats, N_PERFMON, 0 },
	{ "SNAPSHOT freeze", S_RING | S_FUNC | S_PID | S_START, op_snapshot, N_PERFMON, 0 },
	{ "TRIGGER_ADD", S_RING | S_FUNC, op_trigger, N_PERFMON, 0 },
	{ "LATENCY", S_RING | S_LAT, op_latency, N_PERFMON, 0 },
	{ "KHOOKS", 0, op_khooks, N_PERFMON, 0 },
	{ "HIST_SET", S_RING | S_FUNC, op_hist_set, N_PERFMON, 0 },
	{ "HIST_READ", S_RING | S_FUNC | S_HIST, op_hist_read, N_PERFMON, 0 },
	{ "DIRECT_MODIFY", S_RING | S_DIRECT | S_PID | S_START, op_direct_modify, N_PERFMON, 0 },
	{ "mmap meta page", S_RING, op_mmap_meta, N_PERFMON, 0 },
	{ "mmap consumer page", S_RING, op_mmap_cons, N_PERFMON, 0 },
	{ "mmap data", S_RING, op_mmap_data, N_PERFMON, 0 },
	{ "mmap stats area", 0, op_mmap_stats, N_PERFMON, 0 },
	{ "READ_TEXT", 0, op_read_text, N_RAWIO, 2 },
};

enum who { ROOT, PERFMON, ADMIN, PERFMON_NOBODY, NOBODY_FD, NR_WHO };

static const char *const who_name[NR_WHO] = {
	[ROOT] = "root",
	[PERFMON] = "CAP_PERFMON uid 0",
	[ADMIN] = "CAP_SYS_ADMIN uid 0",
	[PERFMON_NOBODY] = "CAP_PERFMON uid 65534",
	[NOBODY_FD] = "no caps uid 65534 with root's fd",
};

/* uid 65534 keeping CAP_PERFMON (effective and permitted) and nothing else */
static int become_perfmon_nobody(void)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || become_nobody())
		return -1;
	return set_caps(CAP(CAP_PERFMON));
}

static int become(enum who w)
{
	switch (w) {
	case ROOT:
		return 0;
	case PERFMON:
		return set_caps(CAP(CAP_PERFMON));
	case ADMIN:
		return set_caps(CAP(CAP_SYS_ADMIN));
	case PERFMON_NOBODY:
		return become_perfmon_nobody();
	default:
		return become_nobody();
	}
}

/* Does the policy let @w do @r? */
static int allowed(const struct row *r, enum who w)
{
	if (w == NOBODY_FD || (r->lockdown && lockdown >= r->lockdown))
		return 0;
	switch (r->need) {
	case N_PERFMON:
		return 1;
	case N_CHANGE:
		return lab && (w == ROOT || w == ADMIN);
	default:
		return w == ROOT;
	}
}

/* @r's session, opened and set up by this process; -1 if that failed */
static int row_session(const struct row *r, enum who w)
{
	static const struct { unsigned int bit; const char *name; int (*op)(int fd); } steps[] = {
		{ S_RING, "RING_SETUP", op_ring },
		{ S_FUNC, "PROBE_ADD function", op_func },
		{ S_DIRECT, "PROBE_ADD direct", op_direct },
		{ S_LAT, "PROBE_ADD direct F_LATENCY", op_direct_latency },
		{ S_HIST, "HIST_SET", op_hist_set },
		{ S_PID, "PID_FILTER", op_pid_filter },
		{ S_START, "START", op_start },
	};
	const char *path = w == PERFMON_NOBODY ? NODE_PERFMON : FHOOK_DEVICE_PATH;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		check(0, "%s: %s: setup: open %s: %s", who_name[w], r->name, path, strerror(errno));
		return -1;
	}
	if (op_handshake(fd)) {
		check(0, "%s: %s: setup: HANDSHAKE: %s", who_name[w], r->name, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if ((r->setup & steps[i].bit) && steps[i].op(fd)) {
			/* a step the holder may not do is the row's refusal */
			int refused = errno == EPERM && !allowed(r, w);

			check(refused, "%s: %s -> %s at setup (%s: %s)", who_name[w], r->name,
			      refused ? "EPERM" : "failed", steps[i].name, strerror(errno));
			return -1;
		}
	}
	return fd;
}

/*
 * One row as one holder, in a child: who opens and sets up the session
 * (root for NOBODY_FD, which then drops everything), then runs the
 * operation.  Closing the session on exit disarms whatever it armed.
 */
static void run_row(const struct row *r, enum who w)
{
	int ok = allowed(r, w);
	pid_t pid = fork();

	if (pid < 0)
		fatal("fork");
	if (pid == 0) {
		char got[80] = "";
		int fd, ret, err, good;

		if (w != NOBODY_FD && become(w))
			_exit(102);
		fd = row_session(r, w);
		if (fd < 0)
			_exit(tap_failures());
		if (w == NOBODY_FD && become(w))
			_exit(101);
		errno = 0;
		ret = r->op(fd);
		err = errno;
		good = ok ? ret == 0 : ret == -1 && err == EPERM;
		if (!good)
			snprintf(got, sizeof(got), ", got %d (%s)", ret, ret ? strerror(err) : "success");
		check(good, "%s: %s -> %s%s", who_name[w], r->name, ok ? "0" : "EPERM", got);
		_exit(tap_failures());
	}
	reap(pid, r->name);
}

/* 10. The table: every row as every holder. */
static void policy_table(dev_t rdev)
{
	unlink(NODE_PERFMON);
	if (mknod(NODE_PERFMON, S_IFCHR | 0600, rdev) || chown(NODE_PERFMON, NOBODY, NOBODY))
		fatal("mknod " NODE_PERFMON);
	printf("# policy table: lab mode %s, lockdown %s\n", lab ? "on" : "off",
	       lockdown == 2 ? "confidentiality" : lockdown ? "integrity" : "none");
	if (!lab)
		printf("# note: lab mode off: PROBE_ADD hook RETURN/REDIRECT expect EPERM for everyone\n");
	if (!(features & FHOOK_FEAT_DIRECT))
		printf("# note: no direct calls on this kernel: the direct and latency rows are skipped\n");
	if (lockdown)
		printf("# note: lockdown: rows it refuses (kprobes and READ_TEXT under confidentiality, RETURN/REDIRECT hooks) expect EPERM for everyone\n");
	for (int w = 0; w < NR_WHO; w++) {
		for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
			const struct row *r = &rows[i];

			if ((r->op == op_uprobe || r->op == op_uretprobe) && !exe[0])
				continue;
			if (r->op == op_tracepoint && !tp_switch)
				continue;
			/* (a kernel without direct calls: arm64 6.1) */
			if (!(features & FHOOK_FEAT_DIRECT) &&
			    ((r->setup & (S_DIRECT | S_LAT)) || r->op == op_direct ||
			     r->op == op_direct_count || r->op == op_direct_latency ||
			     r->op == op_direct_modify))
				continue;
			run_row(r, w);
		}
	}
	unlink(NODE_PERFMON);
}

/* lines of enabled_functions for @func */
static int attached_to(const char *func)
{
	FILE *f = fopen("/sys/kernel/tracing/enabled_functions", "r");
	size_t len = strlen(func);
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, func, len) && (line[len] == ' ' || line[len] == '\t');
	fclose(f);
	return n;
}

/*
 * 11. A session that holds a RETURN hook needs CAP_SYS_ADMIN for every
 * ioctl and mmap: a holder with only CAP_PERFMON can neither read, change,
 * arm nor disarm it, and a session it has mapped before takes no RETURN
 * hook.  Armed only on fhook_testmod_ret (nobody calls it).
 */
static void changing_session(void)
{
	const char *tname = ip_testmod ? "fhook_testmod_ret" : "vfs_read";
	uint64_t target = ip_testmod ? ip_testmod : ip_read;
	int fd, sv[2], n = 0;
	pid_t pid;

	/*
	 * a mapping outlives every check: a session a CAP_PERFMON holder has
	 * mapped never takes a RETURN hook, whose events would reach it
	 */
	fd = session(0);
	pid = fork();
	if (pid == 0) {
		if (set_caps(CAP(CAP_PERFMON)))
			_exit(102);
		check(op_mmap_stats(fd) == 0, "uid 0 with only CAP_PERFMON maps a root session (%s)",
		      strerror(errno));
		_exit(tap_failures());
	}
	reap(pid, "mapping a root session, CAP_PERFMON");
	errno = 0;
	check(add_hook(fd, target, FHOOK_HOOK_RETURN) && errno == EPERM,
	      "root: no RETURN hook on a session a CAP_PERFMON holder has mapped (%s)",
	      strerror(errno));
	close(fd);

	fd = session(0);
	if (add_hook(fd, target, FHOOK_HOOK_RETURN)) {
		check(0, "root: a RETURN hook on %s: %s", tname, strerror(errno));
		close(fd);
		return;
	}
	if (ip_testmod) {
		check(ioctl(fd, FHOOK_IOC_START, 0) == 0,
		      "root arms a session holding a RETURN hook on fhook_testmod_ret (%s)",
		      strerror(errno));
		n = attached_to(tname);
		check(n == 1, "the hook is in enabled_functions (%d)", n);
	} else {
		printf("# note: fhook_testmod not loaded: the RETURN hook (on vfs_read) is never armed\n");
	}
	check(op_stats(fd) == 0 && op_mmap_stats(fd) == 0,
	      "root: STATS and mmap of a session holding a RETURN hook work");

	/* fork + capset: uid 0 keeping only CAP_PERFMON */
	pid = fork();
	if (pid == 0) {
		if (set_caps(CAP(CAP_PERFMON)))
			_exit(102);
		all_denied(fd, "RETURN hook session, uid 0 with only CAP_PERFMON");
		_exit(tap_failures());
	}
	reap(pid, "RETURN hook session, CAP_PERFMON");

	/* SCM_RIGHTS to uid 65534 holding CAP_PERFMON */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		fatal("socketpair");
	pid = fork();
	if (pid == 0) {
		int got;

		close(fd);
		close(sv[0]);
		if (become_perfmon_nobody())
			_exit(101);
		got = recv_fd(sv[1]);
		check(got >= 0, "SCM_RIGHTS: CAP_PERFMON uid 65534 received the RETURN hook session (%d)",
		      got);
		if (got >= 0)
			all_denied(got, "RETURN hook session sent with SCM_RIGHTS, CAP_PERFMON uid 65534");
		_exit(tap_failures());
	}
	close(sv[1]);
	send_fd(sv[0], fd);
	close(sv[0]);
	reap(pid, "RETURN hook session, SCM_RIGHTS");

	/* CAP_SYS_ADMIN alone is enough */
	pid = fork();
	if (pid == 0) {
		if (set_caps(CAP(CAP_SYS_ADMIN)))
			_exit(102);
		check(op_handshake(fd) == 0 && op_stats(fd) == 0 && op_mmap_stats(fd) == 0,
		      "RETURN hook session, uid 0 with only CAP_SYS_ADMIN: HANDSHAKE, STATS, mmap work (%s)",
		      strerror(errno));
		_exit(tap_failures());
	}
	reap(pid, "RETURN hook session, CAP_SYS_ADMIN");

	if (ip_testmod) {
		check(attached_to(tname) == n, "the CAP_PERFMON holders' STOP did nothing: still hooked");
		check(op_stop(fd) == 0 && attached_to(tname) == 0, "root disarms it: unhooked");
	}
	close(fd);
}

/*
 * 12. A trace-around hook only observes: its session stays open to a
 * CAP_PERFMON holder.
 */
static void observing_hook_session(void)
{
	int fd = session(0);
	pid_t pid;

	check(add_hook(fd, ip_read, FHOOK_HOOK_AROUND) == 0, "root: a trace-around hook on vfs_read (%s)",
	      strerror(errno));
	pid = fork();
	if (pid == 0) {
		if (set_caps(CAP(CAP_PERFMON)))
			_exit(102);
		check(op_handshake(fd) == 0 && op_stats(fd) == 0 && op_mmap_stats(fd) == 0 &&
		      op_mmap_meta(fd) == 0 && op_func(fd) == 0,
		      "AROUND hook session, uid 0 with only CAP_PERFMON: HANDSHAKE, STATS, mmap, PROBE_ADD work (%s)",
		      strerror(errno));
		_exit(tap_failures());
	}
	reap(pid, "AROUND hook session, CAP_PERFMON");
	close(fd);
}

int main(void)
{
	struct stat sb;
	int fd, status, r;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	ip_read = kallsyms("vfs_read");
	if (getuid() != 0 || !ip_read)
		fatal("run as root, with /proc/kallsyms readable");
	if (stat(FHOOK_DEVICE_PATH, &sb))
		fatal("stat " FHOOK_DEVICE_PATH);
	check((sb.st_mode & 07777) == 0600 && sb.st_uid == 0, "/dev/fhook is root's, mode 0600 (%o)",
	      sb.st_mode & 07777);

	/* 1. uid 65534 cannot open the node (DAC) */
	pid = fork();
	if (pid == 0) {
		if (become_nobody())
			_exit(101);
		errno = 0;
		fd = open(FHOOK_DEVICE_PATH, O_RDWR);
		check(fd < 0 && (errno == EACCES || errno == EPERM),
		      "uid %d: open /dev/fhook -> EACCES/EPERM (errno %d)", NOBODY, errno);
		_exit(tap_failures());
	}
	reap(pid, "uid 65534 open");

	/* 2. a world-writable node of the same device: the module itself says no */
	if (mknod("/tmp/fhook-node", S_IFCHR | 0666, sb.st_rdev) == 0 &&
	    chmod("/tmp/fhook-node", 0666) == 0) {
		pid = fork();
		if (pid == 0) {
			if (become_nobody())
				_exit(101);
			errno = 0;
			fd = open("/tmp/fhook-node", O_RDWR);
			check(fd < 0 && errno == EPERM,
			      "uid %d: open of a 0666 node of the device -> EPERM from the module (errno %d)",
			      NOBODY, errno);
			_exit(tap_failures());
		}
		reap(pid, "0666 node");
		unlink("/tmp/fhook-node");
	} else {
		check(0, "mknod /tmp/fhook-node: %s", strerror(errno));
	}

	/* 3. uid 0 without CAP_SYS_ADMIN and CAP_PERFMON (all others kept) */
	pid = fork();
	if (pid == 0) {
		if (set_caps(ALLCAPS & ~CAP(CAP_SYS_ADMIN) & ~CAP(CAP_PERFMON)))
			_exit(102);
		errno = 0;
		fd = open(FHOOK_DEVICE_PATH, O_RDWR);
		check(fd < 0 && errno == EPERM,
		      "uid 0 without CAP_SYS_ADMIN/CAP_PERFMON: open -> EPERM (errno %d)", errno);
		_exit(tap_failures());
	}
	reap(pid, "uid 0 minus caps");

	/* 4. either capability alone is enough */
	for (int c = 0; c < 2; c++) {
		int cap = c ? CAP_SYS_ADMIN : CAP_PERFMON;

		pid = fork();
		if (pid == 0) {
			struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = 1 };

			if (set_caps(CAP(cap)))
				_exit(102);
			fd = open(FHOOK_DEVICE_PATH, O_RDWR);
			check(fd >= 0 && ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs) == 0,
			      "uid 0 with only %s: open and HANDSHAKE work (errno %d)",
			      c ? "CAP_SYS_ADMIN" : "CAP_PERFMON", errno);
			_exit(tap_failures());
		}
		reap(pid, "single capability");
	}

	/* 5. fd inherited across fork + setuid(65534), session armed */
	fd = session(1);
	r = armed();
	pid = fork();
	if (pid == 0) {
		if (become_nobody())
			_exit(101);
		all_denied(fd, "inherited fd, uid 65534");
		_exit(tap_failures());
	}
	reap(pid, "inherited fd");
	check(r >= 1 && armed() == r, "the unprivileged STOP did nothing: still armed (%d)", armed());

	/* 6. fd kept by uid 0 after dropping the two capabilities */
	pid = fork();
	if (pid == 0) {
		if (set_caps(ALLCAPS & ~CAP(CAP_SYS_ADMIN) & ~CAP(CAP_PERFMON)))
			_exit(102);
		all_denied(fd, "fd kept after capset, uid 0");
		_exit(tap_failures());
	}
	reap(pid, "capset");

	/* 7. fd sent with SCM_RIGHTS to a process that is already uid 65534 */
	{
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			fatal("socketpair");
		pid = fork();
		if (pid == 0) {
			int got;

			close(fd);	/* this child never had the fd */
			close(sv[0]);
			if (become_nobody())
				_exit(101);
			got = recv_fd(sv[1]);
			check(got >= 0, "SCM_RIGHTS: uid 65534 received an fd (%d)", got);
			if (got >= 0)
				all_denied(got, "fd received with SCM_RIGHTS, uid 65534");
			_exit(tap_failures());
		}
		close(sv[1]);
		send_fd(sv[0], fd);
		close(sv[0]);
		reap(pid, "SCM_RIGHTS");
	}

	/* 8. root of a new user namespace is not root */
	pid = fork();
	if (pid == 0) {
		if (become_nobody())
			_exit(101);
		if (unshare(CLONE_NEWUSER)) {
			printf("# note: unshare(CLONE_NEWUSER) as uid %d: %s: user-namespace check skipped\n",
			       NOBODY, strerror(errno));
			_exit(0);
		}
		all_denied(fd, "inherited fd in a new user namespace (full caps there)");
		_exit(tap_failures());
	}
	reap(pid, "user namespace");

	check(armed() == r, "after all that the session is still armed, untouched");
	{
		struct fhook_stats st = { .size = sizeof(st), .probe_id = FHOOK_STATS_SESSION };

		check(ioctl(fd, FHOOK_IOC_STOP, 0) == 0 && ioctl(fd, FHOOK_IOC_STATS, &st) == 0,
		      "the owner can still STOP and read STATS");
	}

	/*
	 * 9. A mapping is not an fd: VM_DONTCOPY keeps it out of fork
	 * children and VM_IO makes madvise(MADV_DOFORK) fail, so a child
	 * that drops its privileges never inherits a ring.
	 */
	{
		struct fhook_ring_meta *m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);

		check(m != MAP_FAILED, "the owner maps the meta page");
		if (m != MAP_FAILED) {
			check(madvise(m, page, MADV_DOFORK) == -1 && errno == EINVAL,
			      "MADV_DOFORK on a ring is refused (EINVAL)");
			pid = fork();
			if (pid == 0) {
				if (become_nobody())
					_exit(101);
				_exit(m->abi_version == FHOOK_ABI_VERSION ? 0 : 1);
			}
			waitpid(pid, &status, 0);
			check(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
			      "a uid %d child touching the parent's ring gets SIGSEGV (status %#x)",
			      NOBODY, status);
			munmap(m, page);
		}
	}
	close(fd);

	/* 10-12: the per-ioctl policy */
	ip_write = kallsyms("vfs_write");
	ip_testmod = kallsyms_in("fhook_testmod_ret", 1);
	if (!ip_write)
		fatal("no vfs_write in /proc/kallsyms");
	tp_switch = file_uint("/sys/kernel/tracing/events/sched/sched_switch/id");
	if (!tp_switch)
		printf("# note: no sched:sched_switch event id in tracefs: tracepoint rows skipped\n");
	r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[r > 0 ? r : 0] = 0;
	exe_off = exe[0] ? exe_offset((uintptr_t)uprobe_target) : (uint64_t)-1;
	if (exe_off == (uint64_t)-1) {
		printf("# note: uprobe_target() not found in /proc/self/maps: uprobe rows skipped\n");
		exe[0] = 0;
	}
	lockdown = lockdown_level();
	{
		struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };

		fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs))
			fatal("HANDSHAKE");
		lab = !!(hs.features & FHOOK_FEAT_LAB);
		features = hs.features;
		close(fd);
	}
	policy_table(sb.st_rdev);
	if (lab && lockdown < 1)
		changing_session();
	else
		printf("# note: %s: no session can hold a RETURN hook, the CAP_SYS_ADMIN-only-session rule is not checked\n",
		       lab ? "lockdown" : "lab mode off");
	observing_hook_session();
	printf("# %d failed\n", tap_failures());
	return tap_status();
}
