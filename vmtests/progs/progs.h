/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the guest test programs (header only: each program
 * is one static binary built from one .c file). */
#ifndef FHOOK_PROGS_H
#define FHOOK_PROGS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * TAP-style results, one line per check: "ok N - what" or "not ok N -
 * what: why" (vmtests/guest/lib.sh's run_checks counts and reports them);
 * a program exits with tap_status().
 */
static inline int *tap_counts(void)
{
	static int counts[2];	/* checks, failures */

	return counts;
}

static inline void tap_vreport(int good, const char *why, const char *fmt, va_list ap)
{
	int *n = tap_counts();

	n[0]++;
	n[1] += !good;
	printf("%s %d - ", good ? "ok" : "not ok", n[0]);
	vprintf(fmt, ap);
	if (!good && why)
		printf(": %s", why);
	putchar('\n');
	fflush(stdout);
}

static inline __attribute__((format(printf, 2, 3))) void tap(int good, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(good, NULL, fmt, ap);
	va_end(ap);
}

/* failures a child process reported (its exit status) */
static inline void tap_add_failures(int n)
{
	tap_counts()[1] += n;
}

static inline int tap_failures(void)
{
	return tap_counts()[1];
}

static inline int tap_status(void)
{
	return tap_failures() ? 1 : 0;
}

/* The unsigned number in the file at @path (sysfs, tracefs), 0 if none */
static inline unsigned int file_uint(const char *path)
{
	unsigned int v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * The address of the text symbol NAME in /proc/kallsyms, or 0: of vmlinux
 * only, or of a module too if @modules.
 */
static inline uint64_t kallsyms_in(const char *name, int modules)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    (type == 'T' || type == 't') && !strcmp(sym, name) && (modules || !strchr(line, '['))) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static inline uint64_t kallsyms(const char *name)
{
	return kallsyms_in(name, 0);
}

/* ------------------------------------------------------------------ */
/* A raw-ABI session: rings and stats area mapped (fhook-ring, bench). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fhook_abi.h"

#define MAXCPU	64

/* the largest record fhook.ko writes: a LOST record naming every probe */
#define FHOOK_MAX_LOST_SIZE \
	(sizeof(struct fhook_rec_lost) + FHOOK_MAX_PROBES * sizeof(struct fhook_lost_probe))

static inline void die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	exit(1);
}

struct ring {
	struct fhook_ring_meta *meta;
	struct fhook_ring_cons *cons;
	unsigned char *data;
	uint64_t size;
};

struct sess {
	int fd;
	unsigned int ncpu;
	long page;
	struct ring r[MAXCPU];
	struct fhook_stats_area *st;
};

static inline void sess_open(struct sess *s, uint64_t size, uint32_t flags, uint32_t watermark,
		      uint32_t wakeup_events, uint32_t flush_ms)
{
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct fhook_ring_setup rs = { .size = sizeof(rs) };
	unsigned int c;

	memset(s, 0, sizeof(*s));
	s->page = sysconf(_SC_PAGESIZE);
	s->fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		die("open " FHOOK_DEVICE_PATH);
	if (ioctl(s->fd, FHOOK_IOC_HANDSHAKE, &hs))
		die("handshake");
	rs.flags = flags;
	rs.buf_size = size;
	rs.watermark = watermark;
	rs.wakeup_events = wakeup_events;
	rs.flush_ms = flush_ms;
	if (ioctl(s->fd, FHOOK_IOC_RING_SETUP, &rs))
		die("ring setup");
	s->ncpu = rs.nr_cpus < MAXCPU ? rs.nr_cpus : MAXCPU;
	for (c = 0; c < s->ncpu; c++) {
		off_t base = (off_t)c * FHOOK_MMAP_STRIDE;
		struct ring *r = &s->r[c];

		r->meta = mmap(NULL, s->page, PROT_READ, MAP_SHARED, s->fd, base);
		r->cons = mmap(NULL, s->page, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
			       base + FHOOK_MMAP_CONS * s->page);
		r->data = mmap(NULL, 2 * size, PROT_READ, MAP_SHARED, s->fd,
			       base + FHOOK_MMAP_DATA * s->page);
		if (r->meta == MAP_FAILED || r->cons == MAP_FAILED || r->data == MAP_FAILED)
			die("mmap ring");
		r->size = size;
	}
	s->st = mmap(NULL, s->page, PROT_READ, MAP_SHARED, s->fd,
		     (off_t)(FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE));
	if (s->st == MAP_FAILED)
		die("mmap stats header");
	size = s->st->map_size;
	munmap(s->st, s->page);
	s->st = mmap(NULL, size, PROT_READ, MAP_SHARED, s->fd,
		     (off_t)(FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE));
	if (s->st == MAP_FAILED)
		die("mmap stats");
}

static inline void sess_unmap(struct sess *s)
{
	unsigned int c;

	for (c = 0; c < s->ncpu; c++) {
		munmap(s->r[c].meta, s->page);
		munmap(s->r[c].cons, s->page);
		munmap(s->r[c].data, 2 * s->r[c].size);
	}
	munmap(s->st, s->st->map_size);
}

static inline uint32_t add_probe_type(struct sess *s, const char *func, uint32_t type)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = type };

	pa.filter = (uintptr_t)func;
	pa.filter_len = strlen(func);
	if (ioctl(s->fd, FHOOK_IOC_PROBE_ADD, &pa))
		die(func);
	return pa.probe_id;
}

static inline uint32_t add_probe(struct sess *s, const char *func)
{
	return add_probe_type(s, func, FHOOK_PROBE_FUNC);
}

/*
 * A function entry's record, FHOOK_REC_FUNC or ABI 4's FHOOK_REC_FN (its
 * addresses sign-extended, its probe id in a slot of its own): 1 with
 * *ip, *parent and *probe_id set, 0 for another type or size.
 */
static inline int func_record(const struct fhook_rec *h, uint64_t *ip, uint64_t *parent,
			      uint32_t *probe_id)
{
	if (h->type == FHOOK_REC_FUNC && h->size == sizeof(struct fhook_rec_func)) {
		const struct fhook_rec_func *f = (const void *)h;

		*ip = f->ip;
		*parent = f->parent_ip;
		*probe_id = h->probe_id;
		return 1;
	}
	if (h->type == FHOOK_REC_FN && h->size == sizeof(struct fhook_rec_fn)) {
		const struct fhook_rec_fn *f = (const void *)h;

		*ip = (uint64_t)(int64_t)f->ip;
		*parent = (uint64_t)(int64_t)f->parent_ip;
		*probe_id = f->probe_id;
		return 1;
	}
	return 0;
}

static inline uint32_t add_bench_probe(struct sess *s)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_BENCH };

	if (ioctl(s->fd, FHOOK_IOC_PROBE_ADD, &pa))
		die("bench probe");
	return pa.probe_id;
}

#endif
