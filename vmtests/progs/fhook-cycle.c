// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-cycle: one complete session through the raw ABI, for insmod_cycles.
 *
 *   fhook-cycle [-m MS] [FUNC]
 *
 * open /dev/fhook, HANDSHAKE (this must be the only session), RING_SETUP
 * 64 KiB per CPU, PROBE_ADD FUNC (default vfs_read), mmap every CPU's ring,
 * START, fork a child that reads /dev/zero for MS milliseconds (default 50),
 * STOP, then read every ring: each record must be well formed (size, type,
 * probe id, cpu) and the FUNC records must add up to the probe's "written"
 * counter (and hits == written + lost).  At least one event must have
 * arrived.  Prints "events E lost L hits H" and exits 0, or prints what
 * was wrong on stderr and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
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

#define RING	65536ULL
#define MAXCPU	64
/* the largest record: a LOST record naming every probe */
#define FHOOK_MAX_LOST_SIZE \
	(sizeof(struct fhook_rec_lost) + FHOOK_MAX_PROBES * sizeof(struct fhook_lost_probe))

static void die(const char *what)
{
	fprintf(stderr, "fhook-cycle: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fhook-cycle: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *func = "vfs_read";
	long ms = 50, page = sysconf(_SC_PAGESIZE);
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = RING };
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_FUNC };
	struct fhook_stats st = { .size = sizeof(st) };
	struct fhook_ring_meta *meta[MAXCPU] = { 0 };
	struct fhook_ring_cons *cons[MAXCPU] = { 0 };
	char *data[MAXCPU] = { 0 };
	unsigned long long events = 0, lostrec = 0;
	unsigned int ncpu;
	int fd, status;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "-m")) {
		ms = atol(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc > 1)
		func = argv[1];

	fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open " FHOOK_DEVICE_PATH);
	if (ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs))
		die("HANDSHAKE");
	if (hs.nr_sessions != 1)
		bad("%u sessions open, expected only this one", hs.nr_sessions);
	if (ioctl(fd, FHOOK_IOC_RING_SETUP, &rs))
		die("RING_SETUP");
	pa.filter = (uintptr_t)func;
	pa.filter_len = strlen(func);
	if (ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa))
		die("PROBE_ADD");
	ncpu = rs.nr_cpus < MAXCPU ? rs.nr_cpus : MAXCPU;
	for (unsigned int c = 0; c < ncpu; c++) {
		off_t base = (off_t)c * FHOOK_MMAP_STRIDE;
		void *m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, base);
		void *k = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base + page);
		void *d = mmap(NULL, 2 * RING, PROT_READ, MAP_SHARED, fd, base + 2 * page);

		if (m == MAP_FAILED || k == MAP_FAILED || d == MAP_FAILED) {
			/* a possible but absent CPU may have no ring */
			if (c == 0)
				die("mmap cpu 0");
			continue;
		}
		meta[c] = m;
		cons[c] = k;
		data[c] = d;
	}

	if (ioctl(fd, FHOOK_IOC_START, 0))
		die("START");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int z = open("/dev/zero", O_RDONLY);
		double end = now() + ms / 1000.0;
		char c;

		while (now() < end)
			for (int i = 0; i < 64; i++)
				if (read(z, &c, 1) != 1)
					_exit(1);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		bad("the workload child failed (status %#x)", status);
	if (ioctl(fd, FHOOK_IOC_STOP, 0))
		die("STOP");

	for (unsigned int c = 0; c < ncpu; c++) {
		uint64_t head, tail;

		if (!meta[c])
			continue;
		if (meta[c]->cpu != c || meta[c]->data_size != RING)
			bad("cpu %u: meta page says cpu %u size %llu", c, meta[c]->cpu,
			    (unsigned long long)meta[c]->data_size);
		head = __atomic_load_n(&meta[c]->data_head, __ATOMIC_ACQUIRE);
		tail = cons[c]->data_tail;
		if (head - tail > RING)
			bad("cpu %u: head %llu tail %llu", c, (unsigned long long)head,
			    (unsigned long long)tail);
		while (tail < head) {
			struct fhook_rec *r = (void *)(data[c] + (tail & (RING - 1)));

			if (r->size < sizeof(*r) || r->size > FHOOK_MAX_LOST_SIZE || r->cpu != c)
				bad("cpu %u: corrupt record at %llu: size %u cpu %u", c,
				    (unsigned long long)tail, r->size, r->cpu);
			if (r->type == FHOOK_REC_FUNC || r->type == FHOOK_REC_FN) {
				/* (ABI 4's FN record: its probe id has a slot of its own) */
				unsigned int id = r->type == FHOOK_REC_FN ?
						  ((struct fhook_rec_fn *)r)->probe_id : r->probe_id;
				unsigned int want = r->type == FHOOK_REC_FN ?
						    sizeof(struct fhook_rec_fn) :
						    sizeof(struct fhook_rec_func);

				if (r->size != want || id != pa.probe_id)
					bad("cpu %u: bad function record: type %u size %u probe %u", c,
					    r->type, r->size, id);
				events++;
			} else if (r->type == FHOOK_REC_LOST) {
				lostrec += ((struct fhook_rec_lost *)r)->lost;
			} else if (r->type == FHOOK_REC_COMM) {
				if (r->size != sizeof(struct fhook_rec_comm) || r->probe_id)
					bad("cpu %u: bad COMM record: size %u probe %u", c, r->size,
					    r->probe_id);
			} else {
				bad("cpu %u: record type %u", c, r->type);
			}
			tail += (r->size + 7) & ~7U;
		}
		__atomic_store_n(&cons[c]->data_tail, tail, __ATOMIC_RELEASE);
	}

	st.probe_id = pa.probe_id;
	if (ioctl(fd, FHOOK_IOC_STATS, &st))
		die("STATS");
	if (st.total.hits != st.total.written + st.total.lost)
		bad("stats: hits %llu != written %llu + lost %llu",
		    (unsigned long long)st.total.hits, (unsigned long long)st.total.written,
		    (unsigned long long)st.total.lost);
	if (st.total.written != events)
		bad("stats: written %llu, but %llu FUNC records in the rings",
		    (unsigned long long)st.total.written, events);
	if (!events)
		bad("no event in %ld ms of reads (hits %llu)", ms, (unsigned long long)st.total.hits);
	for (unsigned int c = 0; c < ncpu; c++) {
		if (!meta[c])
			continue;
		munmap(meta[c], page);
		munmap(cons[c], page);
		munmap(data[c], 2 * RING);
	}
	close(fd);
	printf("events %llu lost %llu (in band %llu) hits %llu\n", events,
	       (unsigned long long)st.total.lost, lostrec,
	       (unsigned long long)st.total.hits);
	return 0;
}
