// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-ioctlstorm: many threads hammer one session fd while another
 * thread closes it at a random moment.
 *
 *   fhook-ioctlstorm [-s SEED] [-r ROUNDS] [-t THREADS] [-d MS]
 *
 * Each round opens a session (usually with a 16 KiB ring and a vfs_read
 * probe, sometimes with the rings of every CPU mapped and a consumer
 * thread reading them), then THREADS threads (default 8) issue START, STOP,
 * STATS, PROBE_ADD, PID_FILTER, CPU_FILTER, HANDSHAKE, poll and
 * mmap/munmap in a random order, while a background child does reads and
 * writes so that armed probes fire.  At a random moment within MS
 * milliseconds (default 1000) a closer thread replaces the session fd with /dev/null
 * (dup2, atomic: the number never points to anything but the session or
 * /dev/null, so no call can reach an unrelated file).  The session dies on
 * its last reference: the closer's dup2, an ioctl still in flight, or
 * munmap of the last mapping, in whichever thread that happens.
 *
 * The threads go on for another 100 ms on the number (now /dev/null: calls
 * fail with ENOTTY), so that calls in flight during the close overlap
 * with calls that start after it.
 *
 * Every call must succeed or fail with an errno the ABI documents for it;
 * anything else (EFAULT, ENOMEM, ...) is an error.  After each round a new
 * session must be the only one (nr_sessions == 1): the old one was freed.
 * The consumer checks every record it reads (size, type, cpu).
 *
 * Prints one line per round and a total; exit 0 when nothing was wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fhook_abi.h"
#include "progs.h"

#define RING		16384ULL
#define MAXCPU		64
#define MAXPROBES	6	/* successful PROBE_ADDs per round: arming is slow */

enum { OP_START, OP_STOP, OP_STATS, OP_PROBE, OP_PID, OP_CPU, OP_HS, OP_POLL, OP_MMAP, NOPS };
static const char *const opname[NOPS] = {
	"START", "STOP", "STATS", "PROBE_ADD", "PID_FILTER", "CPU_FILTER", "HANDSHAKE",
	"poll", "mmap",
};

static int sfd;			/* the session fd number shared by all threads */
static int nullfd;
static long page;
static unsigned int ncpu;
static uint64_t ip_read, ip_write;
static pid_t bgpid;
static atomic_int stop_threads, nprobes, unexpected;
static atomic_long nok[NOPS], nerr[NOPS], nstarted, nlive;
static atomic_long consumed, badrecs;

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void check(int op, long ret, int err, const int *allowed)
{
	if (ret >= 0) {
		atomic_fetch_add(&nok[op], 1);
		if (op != OP_POLL)
			atomic_fetch_add(&nlive, 1);
		return;
	}
	atomic_fetch_add(&nerr[op], 1);
	/* after the close, the number is /dev/null (ENOTTY, ENODEV) */
	if (err == ENOTTY || err == EBADF || (op == OP_MMAP && err == ENODEV))
		return;
	atomic_fetch_add(&nlive, 1);
	for (; *allowed; allowed++)
		if (*allowed == err)
			return;
	if (atomic_fetch_add(&unexpected, 1) < 20)
		printf("unexpected: %s -> errno %d (%s)\n", opname[op], err, strerror(err));
}

#define ALLOW(...)	((const int[]){ __VA_ARGS__, 0 })

static void one_call(uint64_t *rs)
{
	int op = rnd(rs) % NOPS;
	long ret;

	errno = 0;
	switch (op) {
	case OP_START:
		ret = ioctl(sfd, FHOOK_IOC_START, 0);
		if (ret == 0)
			atomic_fetch_add(&nstarted, 1);
		check(op, ret, errno, ALLOW(EBUSY, EINVAL));
		break;
	case OP_STOP:
		ret = ioctl(sfd, FHOOK_IOC_STOP, 0);
		check(op, ret, errno, ALLOW(0));
		break;
	case OP_STATS: {
		struct fhook_cpu_stats cs[MAXCPU];
		struct fhook_stats st = {
			.size = sizeof(st),
			.probe_id = rnd(rs) % 2 ? FHOOK_STATS_SESSION : rnd(rs) % 8,
			.nr_cpus = rnd(rs) % (MAXCPU + 1),
			.cpus = rnd(rs) % 2 ? (uintptr_t)cs : 0,
		};

		ret = ioctl(sfd, FHOOK_IOC_STATS, &st);
		check(op, ret, errno, ALLOW(ENOENT));
		if (ret == 0 && st.total.hits < st.total.written + st.total.lost &&
		    atomic_load(&nstarted) == 0) {
			/* only exact once disarmed; nothing can be armed before a START */
			printf("STATS: hits %llu < written %llu + lost %llu\n",
			       (unsigned long long)st.total.hits,
			       (unsigned long long)st.total.written,
			       (unsigned long long)st.total.lost);
			atomic_fetch_add(&unexpected, 1);
		}
		break;
	}
	case OP_PROBE: {
		uint64_t ips[2] = { ip_read, ip_write };
		uint64_t bogus = 0xffffffff81000001ULL;
		struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_FUNC };
		int kind = rnd(rs) % 4;

		if (kind < 2 && atomic_load(&nprobes) >= MAXPROBES)
			kind = 3;
		if (kind == 0) {		/* vfs_read */
			pa.ips = (uintptr_t)ips;
			pa.nr_ips = 1;
		} else if (kind == 1) {		/* vfs_read + vfs_write */
			pa.ips = (uintptr_t)ips;
			pa.nr_ips = 2;
		} else if (kind == 2) {		/* not a function */
			pa.ips = (uintptr_t)&bogus;
			pa.nr_ips = 1;
		} else {			/* no filter at all */
			pa.nr_ips = 0;
		}
		ret = ioctl(sfd, FHOOK_IOC_PROBE_ADD, &pa);
		if (ret == 0)
			atomic_fetch_add(&nprobes, 1);
		check(op, ret, errno, ALLOW(EBUSY, EINVAL, ENOENT, ENOSPC));
		break;
	}
	case OP_PID: {
		__u32 pids[3] = { getpid(), bgpid, 1 };
		struct fhook_pid_filter pf = {
			.size = sizeof(pf),
			.flags = rnd(rs) & FHOOK_PIDF_ALL,
			.nr_pids = rnd(rs) % 4,
			.pids = (uintptr_t)pids,
		};

		/* following forks registers tracepoints: not too often */
		if (rnd(rs) % 4)
			pf.flags &= ~FHOOK_PIDF_FOLLOW_FORK;
		ret = ioctl(sfd, FHOOK_IOC_PID_FILTER, &pf);
		check(op, ret, errno, ALLOW(EINVAL));
		break;
	}
	case OP_CPU: {
		__u64 mask = rnd(rs) & ((1ULL << ncpu) - 1);
		struct fhook_cpu_filter cf = {
			.size = sizeof(cf),
			.nr_bits = rnd(rs) % 3 ? 64 : 0,
			.mask = (uintptr_t)&mask,
		};

		ret = ioctl(sfd, FHOOK_IOC_CPU_FILTER, &cf);
		check(op, ret, errno, ALLOW(EINVAL));
		break;
	}
	case OP_HS: {
		struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };

		ret = ioctl(sfd, FHOOK_IOC_HANDSHAKE, &hs);
		check(op, ret, errno, ALLOW(0));
		break;
	}
	case OP_POLL: {
		struct pollfd p = { .fd = sfd, .events = POLLIN };

		ret = poll(&p, 1, 0);
		check(op, ret, errno, ALLOW(0));
		break;
	}
	case OP_MMAP: {
		unsigned int cpu = rnd(rs) % ncpu;
		void *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, sfd,
			       (off_t)cpu * FHOOK_MMAP_STRIDE + page);

		if (m == MAP_FAILED) {
			check(op, -1, errno, ALLOW(ENODEV, EINVAL));
		} else {
			check(op, 0, 0, ALLOW(0));
			munmap(m, page);
		}
		break;
	}
	}
}

struct worker {
	pthread_t th;
	uint64_t seed;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop_threads))
		one_call(&w->seed);
	return NULL;
}

struct ringmap {
	struct fhook_ring_meta *meta;
	struct fhook_ring_cons *cons;
	char *data;
};

static struct ringmap rings[MAXCPU];

static void *consumer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_threads)) {
		for (unsigned int c = 0; c < ncpu; c++) {
			struct ringmap *r = &rings[c];
			uint64_t head, tail;

			if (!r->meta)
				continue;
			head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
			tail = r->cons->data_tail;
			if (head - tail > RING) {
				printf("cpu %u: head %llu tail %llu\n", c,
				       (unsigned long long)head, (unsigned long long)tail);
				atomic_fetch_add(&badrecs, 1);
				tail = head;
			}
			while (tail < head) {
				struct fhook_rec *h = (void *)(r->data + (tail & (RING - 1)));

				/* LOST records carry one entry per probe with drops */
				unsigned int max = h->type == FHOOK_REC_LOST ? FHOOK_MAX_LOST_SIZE :
						   h->type == FHOOK_REC_COMM ?
						   sizeof(struct fhook_rec_comm) :
						   sizeof(struct fhook_rec_func);

				if (h->size < sizeof(*h) || h->size > max || h->cpu != c ||
				    (h->type != FHOOK_REC_FUNC && h->type != FHOOK_REC_FN &&
				     h->type != FHOOK_REC_LOST && h->type != FHOOK_REC_COMM)) {
					if (atomic_fetch_add(&badrecs, 1) < 5)
						printf("cpu %u: bad record at %llu: size %u type %u cpu %u\n",
						       c, (unsigned long long)tail, h->size, h->type,
						       h->cpu);
					tail = head;
					break;
				}
				atomic_fetch_add(&consumed, 1);
				tail += (h->size + 7) & ~7U;
			}
			__atomic_store_n(&r->cons->data_tail, tail, __ATOMIC_RELEASE);
		}
		msleep(1);
	}
	return NULL;
}

static int count_sessions(void)
{
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	int fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	int n;

	if (fd < 0)
		return -1;
	n = ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs) ? -1 : (int)hs.nr_sessions;
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	unsigned long long seed = 0;
	int rounds = 20, nthreads = 8, ms = 1000, opt;
	uint64_t rs;
	double t0 = now();
	long total = 0;

	while ((opt = getopt(argc, argv, "s:r:t:d:")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'r': rounds = atoi(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'd': ms = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: fhook-ioctlstorm [-s SEED] [-r ROUNDS] [-t THREADS] [-d MS]\n");
			return 2;
		}
	}
	if (!seed)
		seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %llu rounds %d threads %d ms %d\n", seed, rounds, nthreads, ms);
	rs = seed | 1;
	page = sysconf(_SC_PAGESIZE);
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu > MAXCPU)
		ncpu = MAXCPU;
	ip_read = kallsyms("vfs_read");
	ip_write = kallsyms("vfs_write");
	if (!ip_read || !ip_write) {
		printf("vfs_read/vfs_write not in /proc/kallsyms\n");
		return 1;
	}
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);

	bgpid = fork();
	if (bgpid == 0) {
		int z = open("/dev/zero", O_RDONLY), n = open("/dev/null", O_WRONLY);
		char c = 0;

		for (;;) {
			for (int i = 0; i < 32; i++)
				if (read(z, &c, 1) != 1 || write(n, &c, 1) != 1)
					_exit(1);
			msleep(1);
		}
	}

	for (int round = 0; round < rounds; round++) {
		struct worker *w = calloc(nthreads, sizeof(*w));
		pthread_t cons_th;
		int mapped = rnd(&rs) % 2, with_ring = rnd(&rs) % 8 != 0;
		long close_ms = rnd(&rs) % (ms + 1);
		long calls_before = 0, calls = 0;
		int n;

		for (int i = 0; i < NOPS; i++)
			calls_before += atomic_load(&nok[i]) + atomic_load(&nerr[i]);
		sfd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (sfd < 0) {
			perror("open " FHOOK_DEVICE_PATH);
			return 1;
		}
		{
			struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = 1 };
			struct fhook_ring_setup r = { .size = sizeof(r), .buf_size = RING };
			struct fhook_probe_add pa = {
				.size = sizeof(pa), .type = FHOOK_PROBE_FUNC,
				.ips = (uintptr_t)&ip_read, .nr_ips = 1,
			};

			if (ioctl(sfd, FHOOK_IOC_HANDSHAKE, &hs) ||
			    (with_ring && ioctl(sfd, FHOOK_IOC_RING_SETUP, &r)) ||
			    ioctl(sfd, FHOOK_IOC_PROBE_ADD, &pa)) {
				perror("session setup");
				return 1;
			}
		}
		atomic_store(&nprobes, 1);
		atomic_store(&nstarted, 0);
		memset(rings, 0, sizeof(rings));
		if (mapped && with_ring) {
			for (unsigned int c = 0; c < ncpu; c++) {
				off_t base = (off_t)c * FHOOK_MMAP_STRIDE;

				rings[c].meta = mmap(NULL, page, PROT_READ, MAP_SHARED, sfd, base);
				rings[c].cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
						     sfd, base + page);
				rings[c].data = mmap(NULL, 2 * RING, PROT_READ, MAP_SHARED, sfd,
						     base + 2 * page);
				if (rings[c].meta == MAP_FAILED || rings[c].cons == MAP_FAILED ||
				    rings[c].data == MAP_FAILED) {
					perror("mmap");
					return 1;
				}
			}
		} else {
			mapped = 0;
		}
		atomic_store(&stop_threads, 0);
		if (mapped)
			pthread_create(&cons_th, NULL, consumer, NULL);
		for (int i = 0; i < nthreads; i++) {
			w[i].seed = rnd(&rs) | 1;
			pthread_create(&w[i].th, NULL, hammer, &w[i]);
		}
		msleep(close_ms);
		dup2(nullfd, sfd);	/* the close, atomically */
		msleep(100);
		atomic_store(&stop_threads, 1);
		for (int i = 0; i < nthreads; i++)
			pthread_join(w[i].th, NULL);
		if (mapped) {
			pthread_join(cons_th, NULL);
			for (unsigned int c = 0; c < ncpu; c++) {
				munmap(rings[c].meta, page);
				munmap(rings[c].cons, page);
				munmap(rings[c].data, 2 * RING);
			}
		}
		close(sfd);
		free(w);
		for (int i = 0; i < NOPS; i++)
			calls += atomic_load(&nok[i]) + atomic_load(&nerr[i]);
		calls -= calls_before;
		total += calls;
		n = count_sessions();
		printf("round %d: ring %d mapped %d close at %ld ms, %ld calls, %ld STARTs ok, %d probes; sessions after: %d\n",
		       round, with_ring, mapped, close_ms, calls, atomic_load(&nstarted),
		       atomic_load(&nprobes), n);
		if (n != 1) {
			printf("the session of round %d was not freed (%d sessions open)\n", round, n);
			atomic_fetch_add(&unexpected, 1);
		}
	}
	kill(bgpid, SIGKILL);
	waitpid(bgpid, NULL, 0);

	for (int i = 0; i < NOPS; i++)
		printf("%-10s ok %ld failed %ld\n", opname[i], atomic_load(&nok[i]),
		       atomic_load(&nerr[i]));
	printf("calls %ld live %ld secs %.1f consumed %ld bad_records %ld unexpected %d\n", total,
	       atomic_load(&nlive), now() - t0, atomic_load(&consumed), atomic_load(&badrecs),
	       atomic_load(&unexpected));
	return atomic_load(&unexpected) || atomic_load(&badrecs) ? 1 : 0;
}
