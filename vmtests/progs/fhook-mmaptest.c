// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-mmaptest: abuse the ring mappings of /dev/fhook.  Each operation
 * must fail with an error or work; it must never corrupt anything.  At the
 * end the session, mapped afresh and through a moved mapping, must deliver
 * exactly the records of a known workload, intact.
 *
 * One line per check, "ok N - what" or "not ok N - what: why" (like
 * fhook-abitest).  Exit status 0 if every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fhook_abi.h"
#include "progs.h"

#define SIZE	16384ULL
#define END	0

static long page;
static unsigned int ncpu;
static uint64_t ip_read;

static void report(int good, const char *why, const char *fmt, va_list ap)
{
	tap_vreport(good, why, fmt, ap);
}

static void expect(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(cond, "condition false", fmt, ap);
	va_end(ap);
}

/* ret < 0 (or MAP_FAILED) with errno in the END-terminated list */
static void expect_err(long ret, int err, const int *allowed, const char *fmt, ...)
{
	char why[128];
	int good = 0;
	va_list ap;

	if (ret >= 0) {
		snprintf(why, sizeof(why), "unexpected success");
	} else {
		for (; *allowed; allowed++)
			good |= *allowed == err;
		snprintf(why, sizeof(why), "errno %d (%s)", err, strerror(err));
	}
	va_start(ap, fmt);
	report(good, why, fmt, ap);
	va_end(ap);
}

static void expect_ok(long ret, const char *fmt, ...)
{
	char why[128];
	va_list ap;

	snprintf(why, sizeof(why), "errno %d (%s)", errno, strerror(errno));
	va_start(ap, fmt);
	report(ret >= 0, why, fmt, ap);
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

/* mmap as a long: -1 on failure */
static long map_err(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -1;
	munmap(p, len);
	return 0;
}

static void *map(int fd, size_t len, int prot, off_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		fatal("mmap");
	return p;
}

static int session(__u32 *probe_id)
{
	int fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = SIZE };
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
	if (probe_id)
		*probe_id = pa.probe_id;
	ncpu = rs.nr_cpus;
	return fd;
}

static void reads(int n)
{
	int z = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	char c;

	for (int i = 0; i < n; i++)
		if (read(z, &c, 1) != 1)
			fatal("read /dev/zero");
	close(z);
}

static int enabled_functions_empty(void)
{
	FILE *f = fopen("/sys/kernel/tracing/enabled_functions", "r");
	char line[256];
	int empty = 1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		empty = 0;
	fclose(f);
	return empty;
}

/* Run fn in a child; returns its wait status. */
static int in_child(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		fatal("fork");
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return status;
}

static void touch(void *p)
{
	volatile char c = *(volatile char *)p;

	(void)c;
}

struct meta_check {
	struct fhook_ring_meta *m;
};

/* exit 0: the meta page reads correctly; 1: it reads wrong */
static void touch_meta(void *arg)
{
	touch(((struct meta_check *)arg)->m);
}

struct racer {
	volatile char *data;
	volatile int go;
	volatile unsigned long passes;	/* whole passes over data */
};

static void *reader(void *arg)
{
	struct racer *r = arg;
	unsigned long sum = 0;

	r->go = 1;
	for (;;) {
		for (size_t i = 0; i < 2 * SIZE; i += 64)
			sum += r->data[i];
		r->passes++;
	}
	return (void *)sum;
}

/* child: one thread reads the data mapping, the other unmaps it */
static void munmap_race(void *arg)
{
	int fd = *(int *)arg;
	struct racer r = { .data = map(fd, 2 * SIZE, PROT_READ, 2 * page) };
	pthread_t th;
	struct timespec ts = { 0, 1000000 };
	unsigned long after;

	pthread_create(&th, NULL, reader, &r);
	while (!r.go)
		;
	nanosleep(&ts, NULL);
	munmap((void *)r.data, 2 * SIZE);
	/*
	 * Wait for the reader to start a pass after the munmap and finish it:
	 * no fixed sleep, a loaded guest may not run it for a while.
	 */
	after = r.passes + 2;
	for (int ms = 0; ms < 60000; ms++) {
		if (r.passes >= after)
			_exit(0);	/* read the whole unmapped range: impossible */
		nanosleep(&ts, NULL);
	}
	_exit(3);	/* the reader never ran */
}

static void dontneed(void *arg)
{
	int fd = *(int *)arg;
	struct fhook_ring_meta *m = map(fd, page, PROT_READ, 0);

	if (madvise(m, page, MADV_DONTNEED))
		_exit(2);	/* refused: fine too */
	/* zapped: a fault with no handler is SIGBUS; refilled is fine */
	_exit(m->abi_version == FHOOK_ABI_VERSION && m->cpu == 0 ? 0 : 1);
}

/*
 * Read every ring of a session: count function records of @id from us, check
 * every record.  Returns the count, adds to *bad.
 */
static unsigned int drain(struct fhook_ring_meta **meta, struct fhook_ring_cons **cons,
			  char **data, __u32 id, unsigned int *bad)
{
	unsigned int n = 0;
	pid_t pid = getpid();

	for (unsigned int c = 0; c < ncpu; c++) {
		uint64_t head, tail;

		if (!meta[c])
			continue;
		head = __atomic_load_n(&meta[c]->data_head, __ATOMIC_ACQUIRE);
		tail = cons[c]->data_tail;
		if (head - tail > SIZE) {
			printf("# cpu %u: head %llu tail %llu\n", c, (unsigned long long)head,
			       (unsigned long long)tail);
			(*bad)++;
			continue;
		}
		while (tail < head) {
			struct fhook_rec *h = (void *)(data[c] + (tail & (SIZE - 1)));
			uint64_t ip, parent;
			uint32_t rid;

			if (h->size < sizeof(*h) || h->size > FHOOK_MAX_LOST_SIZE || h->cpu != c) {
				printf("# cpu %u: corrupt record at %llu (size %u cpu %u)\n", c,
				       (unsigned long long)tail, h->size, h->cpu);
				(*bad)++;
				break;
			}
			if (h->type == FHOOK_REC_FUNC || h->type == FHOOK_REC_FN) {
				if (!func_record(h, &ip, &parent, &rid) || rid != id ||
				    h->pid != (__u32)pid || ip < ip_read || ip >= ip_read + 16)
					(*bad)++;
				else
					n++;
			} else if (h->type == FHOOK_REC_COMM) {
				/* the task's name, before its first record on a CPU */
				if (h->size != sizeof(struct fhook_rec_comm) || h->pid != (__u32)pid)
					(*bad)++;
			} else {
				(*bad)++;	/* no LOST record expected either */
			}
			tail += (h->size + 7) & ~7U;
		}
		__atomic_store_n(&cons[c]->data_tail, tail, __ATOMIC_RELEASE);
	}
	return n;
}

int main(void)
{
	const off_t D = 2 * sysconf(_SC_PAGESIZE), S = FHOOK_MMAP_STRIDE;
	struct fhook_ring_meta *meta;
	struct fhook_ring_cons *cons;
	char *data, *data2;
	struct meta_check mc;
	int fd, fd2, status;
	__u32 id;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	ip_read = kallsyms("vfs_read");
	if (!ip_read)
		fatal("vfs_read not in /proc/kallsyms");
	fd = session(&id);

	/* ---- offsets and sizes */
	EXPECT_ERR(map_err(fd, 0, PROT_READ, MAP_SHARED, 0), ERRS(EINVAL), "mmap length 0 -> EINVAL");
	EXPECT_ERR(map_err(fd, page, PROT_READ, MAP_SHARED, 100), ERRS(EINVAL),
		   "mmap offset not page aligned -> EINVAL");
	EXPECT_ERR(map_err(fd, page + 1, PROT_READ, MAP_SHARED, 0), ERRS(EINVAL),
		   "mmap meta page+1 bytes (2 pages) -> EINVAL");
	EXPECT_ERR(map_err(fd, 2 * SIZE - page, PROT_READ, MAP_SHARED, D), ERRS(EINVAL),
		   "mmap data one page short -> EINVAL");
	EXPECT_ERR(map_err(fd, 2 * SIZE + page, PROT_READ, MAP_SHARED, D), ERRS(EINVAL),
		   "mmap data one page long -> EINVAL");
	EXPECT_ERR(map_err(fd, page, PROT_READ, MAP_SHARED, D + page), ERRS(EINVAL),
		   "mmap at a page inside data -> EINVAL");
	EXPECT_ERR(map_err(fd, page, PROT_READ, MAP_SHARED, ncpu * S), ERRS(EINVAL, ENODEV),
		   "mmap cpu nr_cpus -> EINVAL/ENODEV");
	EXPECT_ERR(map_err(fd, page, PROT_READ, MAP_SHARED, 0x7fffULL * S), ERRS(EINVAL, ENODEV),
		   "mmap cpu 0x7fff -> EINVAL/ENODEV");
	EXPECT_ERR(map_err(fd, page, PROT_READ, MAP_SHARED, 0x7ffffffffffff000LL),
		   ERRS(EINVAL, ENODEV, EOVERFLOW), "mmap offset 2^63 - page -> EINVAL/EOVERFLOW");

	/* ---- permissions */
	EXPECT_ERR(map_err(fd, page, PROT_READ | PROT_WRITE, MAP_SHARED, 0), ERRS(EPERM, EACCES),
		   "mmap meta writable -> EPERM");
	EXPECT_ERR(map_err(fd, 2 * SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, D), ERRS(EPERM, EACCES),
		   "mmap data writable -> EPERM");
	EXPECT_ERR(map_err(fd, page, PROT_READ | PROT_EXEC, MAP_SHARED, 0), ERRS(EPERM, EACCES),
		   "mmap meta PROT_EXEC -> EPERM");
	EXPECT_ERR(map_err(fd, page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, page),
		   ERRS(EPERM, EACCES), "mmap cons PROT_EXEC -> EPERM");
	EXPECT_ERR(map_err(fd, 2 * SIZE, PROT_READ | PROT_EXEC, MAP_SHARED, D), ERRS(EPERM, EACCES),
		   "mmap data PROT_EXEC -> EPERM");
	EXPECT_ERR(map_err(fd, page, PROT_READ, MAP_PRIVATE, 0), ERRS(EINVAL),
		   "mmap meta MAP_PRIVATE -> EINVAL");
	EXPECT_ERR(map_err(fd, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, page), ERRS(EINVAL),
		   "mmap cons MAP_PRIVATE -> EINVAL");
	EXPECT_ERR(map_err(fd, 2 * SIZE, PROT_READ, MAP_PRIVATE, D), ERRS(EINVAL),
		   "mmap data MAP_PRIVATE -> EINVAL");

	meta = map(fd, page, PROT_READ, 0);
	cons = map(fd, page, PROT_READ | PROT_WRITE, page);
	data = map(fd, 2 * SIZE, PROT_READ, D);
	expect(meta->abi_version == FHOOK_ABI_VERSION && meta->cpu == 0 && meta->data_size == SIZE,
	       "meta/cons/data of cpu 0 mapped, meta reads right");

	/* ---- mprotect */
	EXPECT_ERR(mprotect(meta, page, PROT_READ | PROT_WRITE), ERRS(EACCES, EPERM),
		   "mprotect meta RW -> EACCES");
	EXPECT_ERR(mprotect(data, 2 * SIZE, PROT_READ | PROT_WRITE), ERRS(EACCES, EPERM),
		   "mprotect data RW -> EACCES");
	EXPECT_ERR(mprotect(data, 2 * SIZE, PROT_READ | PROT_EXEC), ERRS(EACCES, EPERM),
		   "mprotect data RX -> EACCES");
	EXPECT_ERR(mprotect(cons, page, PROT_READ | PROT_WRITE | PROT_EXEC), ERRS(EACCES, EPERM),
		   "mprotect cons RWX -> EACCES");
	EXPECT_ERR(mprotect(data, page, PROT_NONE), ERRS(EINVAL),
		   "mprotect of one page of data (a split) -> EINVAL");
	EXPECT_OK(mprotect(cons, page, PROT_READ), "mprotect cons read-only");
	EXPECT_OK(mprotect(cons, page, PROT_READ | PROT_WRITE), "mprotect cons back to RW");
	EXPECT_OK(mprotect(meta, page, PROT_NONE), "mprotect meta PROT_NONE");
	mc.m = meta;
	status = in_child(touch_meta, &mc);
	expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	       "a PROT_NONE meta page faults (status %#x)", status);
	EXPECT_OK(mprotect(meta, page, PROT_READ), "mprotect meta back to PROT_READ");
	expect(meta->abi_version == FHOOK_ABI_VERSION && meta->cpu == 0,
	       "meta reads right after PROT_NONE and back");

	/* ---- partial munmap */
	EXPECT_ERR(munmap(data, page), ERRS(EINVAL), "munmap first page of data -> EINVAL");
	EXPECT_ERR(munmap(data + 2 * SIZE - page, page), ERRS(EINVAL),
		   "munmap last page of data -> EINVAL");
	EXPECT_ERR(munmap(data + page, page), ERRS(EINVAL), "munmap a middle page of data -> EINVAL");
	expect(msync(data, 2 * SIZE, MS_ASYNC) == 0, "data still mapped whole after the refusals");

	/* ---- mremap */
	{
		void *r = mremap(data, 2 * SIZE, 4 * SIZE, MREMAP_MAYMOVE);

		expect(r == MAP_FAILED, "mremap grow of data refused (errno %d)", errno);
		if (r != MAP_FAILED)
			data = r;
		r = mremap(data, 2 * SIZE, SIZE, 0);
		expect(r == MAP_FAILED, "mremap shrink of data refused (errno %d)", errno);
		if (r != MAP_FAILED)
			fatal("shrunk the data mapping");
		r = mremap(meta, page, 2 * page, MREMAP_MAYMOVE);
		expect(r == MAP_FAILED, "mremap grow of meta refused (errno %d)", errno);
		r = mremap(cons, page, page, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
		if (r == MAP_FAILED) {
			expect(errno == EINVAL, "mremap DONTUNMAP of cons -> EINVAL (errno %d)", errno);
		} else {
			expect(1, "mremap DONTUNMAP of cons worked");
			munmap(r, page);
		}
		/* a whole mapping may move; the old place is gone, the new one works */
		{
			char *dst = mmap(NULL, 2 * SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			char *old = data;

			r = mremap(data, 2 * SIZE, 2 * SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
			if (r == MAP_FAILED) {
				expect(errno == EINVAL || errno == EFAULT,
				       "mremap move of data refused (errno %d)", errno);
				munmap(dst, 2 * SIZE);
			} else {
				data = r;
				expect(msync(old, 2 * SIZE, MS_ASYNC) == -1 && errno == ENOMEM,
				       "mremap move of data: old range unmapped");
				expect(msync(data, 2 * SIZE, MS_ASYNC) == 0,
				       "mremap move of data: new range mapped");
			}
		}
	}

	/* ---- fork */
	mc.m = meta;
	status = in_child(touch_meta, &mc);
	expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	       "fork: a child touching the ring gets SIGSEGV (VM_DONTCOPY) (status %#x)", status);
	expect(madvise(meta, page, MADV_DOFORK) == -1 && errno == EINVAL,
	       "MADV_DOFORK refused with EINVAL (VM_IO) (errno %d)", errno);
	status = in_child(dontneed, &fd);
	expect((WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 2)) ||
	       (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS),
	       "MADV_DONTNEED on a meta mapping: refused, SIGBUS or still right (status %#x)",
	       status);
	status = in_child(munmap_race, &fd);
	expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
	       "munmap in one thread while another reads: the reader gets SIGSEGV (status %#x)",
	       status);

	/* ---- writes through the back doors */
	{
		int mfd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		struct fhook_ring_meta copy;
		char junk[64];
		struct iovec l = { junk, sizeof(junk) }, rm = { meta, sizeof(junk) };

		memset(junk, 0x5a, sizeof(junk));
		if (mfd >= 0) {
			EXPECT_ERR(pwrite(mfd, junk, sizeof(junk), (uintptr_t)meta), ERRS(EIO, EFAULT, EPERM),
				   "write to the meta page through /proc/self/mem refused");
			EXPECT_ERR(pwrite(mfd, junk, sizeof(junk), (uintptr_t)data), ERRS(EIO, EFAULT, EPERM),
				   "write to the data pages through /proc/self/mem refused");
			EXPECT_ERR(pread(mfd, &copy, sizeof(copy), (uintptr_t)meta), ERRS(EIO, EFAULT),
				   "reading the meta page through /proc/self/mem refused (VM_IO)");
			close(mfd);
		}
		EXPECT_ERR(process_vm_writev(getpid(), &l, 1, &rm, 1, 0), ERRS(EFAULT, EPERM),
			   "process_vm_writev to the meta page refused");
		EXPECT_ERR(process_vm_readv(getpid(), &l, 1, &rm, 1, 0), ERRS(EFAULT, EPERM),
			   "process_vm_readv from the meta page refused (VM_IO)");
		expect(meta->abi_version == FHOOK_ABI_VERSION && meta->cpu == 0 &&
		       meta->data_size == SIZE, "meta page intact");
	}

	/* ---- two mappings of the same data, MAP_FIXED over a ring mapping */
	data2 = map(fd, 2 * SIZE, PROT_READ, D);
	expect(data2 != data, "a second mapping of the same data");
	{
		void *p = mmap(data2, 2 * SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

		expect(p == data2, "MAP_FIXED anonymous memory over the second data mapping");
		munmap(p, 2 * SIZE);
	}

	/* ---- sessions that are gone, or have no ring */
	fd2 = session(NULL);
	close(fd2);
	EXPECT_ERR(map_err(fd2, page, PROT_READ, MAP_SHARED, 0), ERRS(EBADF),
		   "mmap of a closed session fd -> EBADF");
	fd2 = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	EXPECT_ERR(map_err(fd2, page, PROT_READ, MAP_SHARED, 0), ERRS(ENODEV, EINVAL),
		   "mmap of a session without rings -> ENODEV");
	close(fd2);

	/* ---- the mapping outlives the fd: events keep coming, munmap ends it */
	{
		struct fhook_ring_meta *m2[64] = { 0 };
		struct fhook_ring_cons *c2[64] = { 0 };
		char *d2[64] = { 0 };
		unsigned int bad = 0, n;
		__u32 id2;

		fd2 = session(&id2);
		for (unsigned int c = 0; c < ncpu && c < 64; c++) {
			m2[c] = map(fd2, page, PROT_READ, c * S);
			c2[c] = map(fd2, page, PROT_READ | PROT_WRITE, c * S + page);
			d2[c] = map(fd2, 2 * SIZE, PROT_READ, c * S + D);
		}
		EXPECT_OK(ioctl(fd2, FHOOK_IOC_START, 0), "second session: START");
		close(fd2);
		reads(100);
		n = drain(m2, c2, d2, id2, &bad);
		expect(n == 100 && bad == 0,
		       "fd closed, mapping kept: still armed, 100 reads -> %u records, %u bad", n, bad);
		expect(enabled_functions_empty() == 0, "... and vfs_read is still in enabled_functions");
		for (unsigned int c = 0; c < ncpu && c < 64; c++) {
			munmap(m2[c], page);
			munmap(c2[c], page);
			munmap(d2[c], 2 * SIZE);
		}
		expect(enabled_functions_empty() == 1,
		       "last munmap: the session is gone, enabled_functions is empty");
	}

	/* ---- finally, the abused session still delivers exactly and intact */
	{
		struct fhook_ring_meta *m[64] = { 0 };
		struct fhook_ring_cons *c[64] = { 0 };
		char *d[64] = { 0 };
		struct fhook_stats st = { .size = sizeof(st), .probe_id = FHOOK_STATS_SESSION };
		unsigned int bad = 0, n;

		m[0] = meta;
		c[0] = cons;
		d[0] = data;	/* possibly the moved mapping */
		for (unsigned int i = 1; i < ncpu && i < 64; i++) {
			m[i] = map(fd, page, PROT_READ, i * S);
			c[i] = map(fd, page, PROT_READ | PROT_WRITE, i * S + page);
			d[i] = map(fd, 2 * SIZE, PROT_READ, i * S + D);
		}
		EXPECT_OK(ioctl(fd, FHOOK_IOC_START, 0), "abused session: START");
		reads(200);
		EXPECT_OK(ioctl(fd, FHOOK_IOC_STOP, 0), "abused session: STOP");
		n = drain(m, c, d, id, &bad);
		EXPECT_OK(ioctl(fd, FHOOK_IOC_STATS, &st), "abused session: STATS");
		expect(n == 200 && bad == 0, "abused session: 200 reads -> %u intact records, %u bad",
		       n, bad);
		expect(st.total.hits == 200 && st.total.written == 200 && st.total.lost == 0,
		       "abused session: stats hits %llu written %llu lost %llu",
		       (unsigned long long)st.total.hits, (unsigned long long)st.total.written,
		       (unsigned long long)st.total.lost);
	}
	close(fd);
	printf("# %d checks, %d failed\n", tap_counts()[0], tap_failures());
	return tap_status();
}
