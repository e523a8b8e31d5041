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
 * Prints "ok - what" or "not ok - what: why" per check (children print
 * their own), "# note: ..." for behaviour worth knowing that is not a
 * failure; exit status 0 if every check passed.
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

static int nfailed;
static long page;
static uint64_t ip_read;

static void check(int good, const char *fmt, ...)
{
	va_list ap;

	nfailed += !good;
	printf("%s - ", good ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
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
	struct { const char *name; unsigned long cmd; void *arg; } ops[] = {
		{ "HANDSHAKE", FHOOK_IOC_HANDSHAKE, &hs },
		{ "RING_SETUP", FHOOK_IOC_RING_SETUP, &rs },
		{ "PROBE_ADD", FHOOK_IOC_PROBE_ADD, &pa },
		{ "PID_FILTER", FHOOK_IOC_PID_FILTER, &pf },
		{ "CPU_FILTER", FHOOK_IOC_CPU_FILTER, &cf },
		{ "START", FHOOK_IOC_START, NULL },
		{ "STOP", FHOOK_IOC_STOP, NULL },
		{ "STATS", FHOOK_IOC_STATS, &st },
		{ "unknown nr 0x7f", _IO(FHOOK_IOC_MAGIC, 0x7f), NULL },
	};
	static const struct { const char *name; off_t off; int prot; int pages; } maps[] = {
		{ "meta", 0, PROT_READ, 1 },
		{ "cons", 1, PROT_READ | PROT_WRITE, 1 },
		{ "data", 2, PROT_READ, 8 },
	};

	memset(cs, 0, sizeof(cs));
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
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
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		void *p = mmap(NULL, maps[i].pages * page, maps[i].prot, MAP_SHARED, fd,
			       maps[i].off * page);

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
		nfailed += WEXITSTATUS(status);
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
		_exit(nfailed);
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
			_exit(nfailed);
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
		_exit(nfailed);
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
			_exit(nfailed);
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
		_exit(nfailed);
	}
	reap(pid, "inherited fd");
	check(r >= 1 && armed() == r, "the unprivileged STOP did nothing: still armed (%d)", armed());

	/* 6. fd kept by uid 0 after dropping the two capabilities */
	pid = fork();
	if (pid == 0) {
		if (set_caps(ALLCAPS & ~CAP(CAP_SYS_ADMIN) & ~CAP(CAP_PERFMON)))
			_exit(102);
		all_denied(fd, "fd kept after capset, uid 0");
		_exit(nfailed);
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
			_exit(nfailed);
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
		_exit(nfailed);
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
	printf("# %d failed\n", nfailed);
	return nfailed ? 1 : 0;
}
