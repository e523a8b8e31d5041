// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-bench-transport: how many events per second a consumer keeps up
 * with, and what happens past that, for three rings fed by an in-kernel
 * loop on 1 or 2 producer CPUs, a consumer thread on the last CPU:
 *
 *   fhook   FHOOK_IOC_BENCH records (32-byte header + payload; the
 *           task's name once per CPU, in a COMM record) in the
 *           per-CPU mmap'd rings, read in place (poll + drain); the
 *           watermark is one page (BPF's ringbuf wakes its reader at the
 *           first record after it caught up; fhook's CLI default is a
 *           quarter of the ring)
 *   bpf     BPF_PROG_TEST_RUN of ringbuf.bpf.o: bpf_loop() +
 *           bpf_ringbuf_reserve/submit (8-byte header + payload) in one
 *           shared ring, read with libbpf's ring_buffer__poll()
 *   bpf+ctx the same, each record also carrying what fhook's header
 *           holds (time, pid/tgid, cpu, sequence) and the task's name
 *           (48 bytes) from the usual helpers: the like-for-like
 *           comparison (a BPF program has no cheaper way to name a task)
 *   ftrace  fhook_testmod's trace event (4-byte event header, 8 bytes of
 *           common fields, 4-byte dynamic-array descriptor + payload) in
 *           the kernel's per-CPU ftrace rings, read from trace_pipe_raw
 *
 * Every producer fills `payload` bytes with u64 words i, i+1, ...; every
 * consumer only counts and checks sizes.
 *
 * 1. Cost per event: on CPU 0 alone, write N events into rings that hold
 *    them all (8 MiB), then read them all back: guest ns per event written
 *    and read.  No concurrency, so under qemu -icount (one guest ns = one
 *    instruction) the figures repeat.  A consumer on its own CPU keeps up
 *    with a producer as long as neither cost is exceeded: 1 / max(write,
 *    read) is the lossless rate that pair of CPUs can sustain.
 * 2. Flat out: 1 or 2 producer CPUs as fast as they can into 1 MiB rings
 *    (BPF: one ring of 1 MiB per producer), a consumer on the last CPU
 *    waiting the mechanism's own way: produced/s (each producer timed on
 *    its own CPU), delivered/s and drops.  Wall-clock only: with several
 *    vCPUs -icount's clock is not meaningful across them.
 * Every run checks delivered == written and written + dropped == produced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fhook_abi.h"
#include "progs.h"

/* per CPU (per producer for BPF's one shared ring); 8 MiB for the cost runs */
static unsigned int ring_bytes = 1U << 20;
#define TRACEFS		"/sys/kernel/tracing"

static const char *bpf_obj = "/fhook/bench/ringbuf.bpf.o";
static unsigned int ncpu;
static volatile int consumer_stop;
static pthread_barrier_t start_barrier;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

struct result {
	uint64_t produced, written, dropped, consumed;
	double secs;
};

/* One mechanism: setup, produce on one CPU, consume, teardown. */
struct mech {
	const char *name;
	void (*setup)(unsigned int payload, unsigned int producers);
	void (*produce)(int cpu, uint64_t n, unsigned int payload);
	void *(*consume)(void *arg);	/* until consumer_stop, then drains */
	uint64_t (*consume_all)(void);	/* read everything there now */
	void (*finish)(struct result *r);	/* counters, teardown */
};

static uint64_t consumed;

/* ------------------------------------------------------------- fhook */

static struct sess fs;
static uint32_t fprobe;

static void fhook_setup(unsigned int payload, unsigned int producers)
{
	sess_open(&fs, ring_bytes, 0, 4096, 0, 0);
	fprobe = add_bench_probe(&fs);
	if (ioctl(fs.fd, FHOOK_IOC_START, NULL))
		die("start");
}

static void fhook_produce(int cpu, uint64_t n, unsigned int payload)
{
	struct fhook_bench b = { .size = sizeof(b), .probe_id = fprobe, .nr_events = n,
				 .payload = payload };

	if (ioctl(fs.fd, FHOOK_IOC_BENCH, &b))
		die("bench ioctl");
}

static uint64_t fhook_drain(void)
{
	uint64_t n = 0;
	unsigned int c;

	for (c = 0; c < fs.ncpu; c++) {
		struct ring *r = &fs.r[c];
		uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t pos = r->cons->data_tail;

		while (pos < head) {
			const struct fhook_rec *rec = (const void *)(r->data + (pos & (r->size - 1)));

			if (rec->size < sizeof(*rec))
				die("corrupt fhook ring");
			n += rec->type == FHOOK_REC_BENCH;
			pos += (rec->size + 7) & ~7ULL;
		}
		__atomic_store_n(&r->cons->data_tail, head, __ATOMIC_RELEASE);
	}
	return n;
}

static void *fhook_consume(void *arg)
{
	struct pollfd p = { .fd = fs.fd, .events = POLLIN };

	pin(ncpu - 1);
	while (!consumer_stop) {
		poll(&p, 1, 100);
		consumed += fhook_drain();
	}
	return NULL;
}

static uint64_t bpf_consume_all(void);
static uint64_t ftrace_read_all(void);

static void fhook_finish(struct result *r)
{
	unsigned int c;

	if (ioctl(fs.fd, FHOOK_IOC_STOP, NULL))
		die("stop");
	consumed += fhook_drain();
	for (c = 0; c < fs.ncpu; c++) {
		const struct fhook_probe_counters *k = (const void *)((const char *)fs.st +
			fs.st->entries_offset) + (c * fs.st->max_probes + fprobe - 1) *
			sizeof(struct fhook_probe_counters);

		r->written += k->written;
		r->dropped += k->dropped;
	}
	sess_unmap(&fs);
	close(fs.fd);
}

/* --------------------------------------------------------------- bpf */

static struct bpf_object *bobj;
static struct ring_buffer *brb;
static int bprog;

static int bpf_count(void *ctx, void *data, size_t size)
{
	consumed++;
	return 0;
}

static uint32_t bpf_ctx;

static void bpf_setup_ctx(unsigned int payload, unsigned int producers);

static void bpf_setup(unsigned int payload, unsigned int producers)
{
	bpf_ctx = 0;
	bpf_setup_ctx(payload, producers);
}

static void bpf_setup_with_ctx(unsigned int payload, unsigned int producers)
{
	bpf_ctx = 1;
	bpf_setup_ctx(payload, producers);
}

static void bpf_setup_ctx(unsigned int payload, unsigned int producers)
{
	struct bpf_map *map;
	uint32_t ro[2] = { payload, bpf_ctx };

	bobj = bpf_object__open_file(bpf_obj, NULL);
	if (!bobj)
		die(bpf_obj);
	map = bpf_object__find_map_by_name(bobj, "rb");
	if (!map || bpf_map__set_max_entries(map, ring_bytes * producers))
		die("ringbuf map");
	map = bpf_object__find_map_by_name(bobj, ".rodata");
	if (!map || bpf_map__value_size(map) != sizeof(ro) ||
	    bpf_map__set_initial_value(map, ro, sizeof(ro)))
		die(".rodata (payload, with_ctx)");
	if (bpf_object__load(bobj))
		die("loading the BPF program");
	bprog = bpf_program__fd(bpf_object__find_program_by_name(bobj, "produce"));
	brb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(bobj, "rb")), bpf_count,
			       NULL, NULL);
	if (!brb)
		die("ring_buffer__new");
}

static void bpf_set_events(uint64_t n)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(bobj, ".bss");
	uint32_t zero = 0;
	size_t sz = bpf_map__value_size(bss);
	uint64_t *v = calloc(1, sz);

	/* nr_events is the first variable of .bss */
	v[0] = n;
	if (bpf_map_update_elem(bpf_map__fd(bss), &zero, v, 0))
		die("bss");
	free(v);
}

static void bpf_produce(int cpu, uint64_t n, unsigned int payload)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

	if (bpf_prog_test_run_opts(bprog, &opts))
		die("BPF_PROG_TEST_RUN");
}

static void *bpf_consume(void *arg)
{
	pin(ncpu - 1);
	while (!consumer_stop)
		ring_buffer__poll(brb, 100);
	return NULL;
}

static uint64_t bpf_consume_all(void)
{
	uint64_t before = consumed;

	ring_buffer__consume(brb);
	return consumed - before;
}

static void bpf_finish(struct result *r)
{
	struct bpf_map *bss = bpf_object__find_map_by_name(bobj, ".bss");
	size_t sz = bpf_map__value_size(bss);
	uint64_t *v = calloc(1, sz);
	uint32_t zero = 0;
	unsigned int c;

	ring_buffer__consume(brb);
	if (bpf_map_lookup_elem(bpf_map__fd(bss), &zero, v))
		die("bss");
	/* nr_events, written[64 * 8], dropped[64 * 8] */
	for (c = 0; c < 64; c++) {
		r->written += v[1 + c * 8];
		r->dropped += v[1 + 64 * 8 + c * 8];
	}
	free(v);
	ring_buffer__free(brb);
	bpf_object__close(bobj);
}

/* ------------------------------------------------------------ ftrace */

static int tfd[MAXCPU];

static void ftrace_setup(unsigned int payload, unsigned int producers)
{
	char path[128];
	unsigned int c;

	put(TRACEFS "/tracing_on", "0");
	put(TRACEFS "/trace", "");
	char kb[32];

	snprintf(kb, sizeof(kb), "%u", ring_bytes / 1024);
	put(TRACEFS "/buffer_size_kb", kb);
	put(TRACEFS "/options/overwrite", "0");	/* drop the newest, like the others */
	put(TRACEFS "/events/fhook_testmod/fhook_testmod_bench/enable", "1");
	for (c = 0; c < ncpu; c++) {
		snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%u/trace_pipe_raw", c);
		tfd[c] = open(path, O_RDONLY | O_NONBLOCK);
		if (tfd[c] < 0)
			die(path);
	}
	put(TRACEFS "/tracing_on", "1");
}

static void ftrace_produce(int cpu, uint64_t n, unsigned int payload)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "bench %llu %u", (unsigned long long)n, payload);
	put("/proc/fhook_testmod", cmd);
}

/* Data events in one trace_pipe_raw page (kernel/trace/ring_buffer.c). */
static uint64_t ftrace_page_events(const unsigned char *page, ssize_t len)
{
	uint64_t commit, n = 0;
	size_t off = 16;	/* u64 time_stamp, local_t commit */

	if (len < 16)
		return 0;
	memcpy(&commit, page + 8, 8);
	commit &= (1ULL << 30) - 1;	/* RB_MISSED_* flags above */
	while (off + 4 <= 16 + commit && off + 4 <= (size_t)len) {
		uint32_t h, type_len, a0 = 0;

		memcpy(&h, page + off, 4);
		type_len = h & 31;
		if (off + 8 <= (size_t)len)
			memcpy(&a0, page + off + 4, 4);
		if (type_len == 29) {		/* padding */
			if (!(h >> 5))
				break;		/* the rest of the page */
			off += 4 + a0;
		} else if (type_len >= 30) {	/* time extend / stamp */
			off += 8;
		} else {
			n++;
			off += 4 + (type_len ? type_len * 4 : a0);
		}
	}
	return n;
}

static uint64_t ftrace_read_all(void)
{
	static unsigned char page[1 << 16];
	uint64_t n = 0;
	unsigned int c;
	ssize_t len;

	for (c = 0; c < ncpu; c++)
		while ((len = read(tfd[c], page, 4096)) > 0)
			n += ftrace_page_events(page, len);
	return n;
}

static void *ftrace_consume(void *arg)
{
	pin(ncpu - 1);
	while (!consumer_stop) {
		consumed += ftrace_read_all();
		usleep(1000);	/* trace_pipe_raw has no watermark wakeup per CPU set */
	}
	return NULL;
}

static uint64_t ftrace_stat(unsigned int cpu, const char *key)
{
	char path[128], line[128];
	unsigned long long v = 0, total = 0;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%u/stats", cpu);
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && sscanf(line + strlen(key), " %llu", &v) == 1)
			total += v;
	fclose(f);
	return total;
}

static void ftrace_finish(struct result *r)
{
	unsigned int c;

	put(TRACEFS "/tracing_on", "0");
	consumed += ftrace_read_all();
	for (c = 0; c < ncpu; c++) {
		r->dropped += ftrace_stat(c, "dropped events:") + ftrace_stat(c, "overrun:");
		close(tfd[c]);
	}
	r->written = r->produced - r->dropped;
	put(TRACEFS "/events/fhook_testmod/fhook_testmod_bench/enable", "0");
	put(TRACEFS "/options/overwrite", "1");
	put(TRACEFS "/trace", "");
	put(TRACEFS "/tracing_on", "1");
}

/* ------------------------------------------------------------ driver */

static const struct mech mechs[] = {
	{ "fhook", fhook_setup, fhook_produce, fhook_consume, fhook_drain, fhook_finish },
	{ "bpf-ringbuf", bpf_setup, bpf_produce, bpf_consume, bpf_consume_all, bpf_finish },
	{ "bpf+ctx", bpf_setup_with_ctx, bpf_produce, bpf_consume, bpf_consume_all, bpf_finish },
	{ "ftrace", ftrace_setup, ftrace_produce, ftrace_consume, ftrace_read_all, ftrace_finish },
};

struct producer {
	const struct mech *m;
	int cpu;
	uint64_t n;
	unsigned int payload;
	double secs;		/* measured on the producer's own CPU */
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	double t0;

	pin(p->cpu);
	pthread_barrier_wait(&start_barrier);
	t0 = now_s();
	p->m->produce(p->cpu, p->n, p->payload);
	p->secs = now_s() - t0;
	return NULL;
}

/* n events per producer, flat out */
static struct result run(const struct mech *m, unsigned int payload, unsigned int producers,
			 uint64_t n)
{
	struct producer prod[2];
	pthread_t pt[2], ct;
	struct result r = { 0 };
	unsigned int i;

	m->setup(payload, producers);
	if (m->produce == bpf_produce)
		bpf_set_events(n);
	consumed = 0;
	consumer_stop = 0;
	if (pthread_create(&ct, NULL, m->consume, NULL))
		die("pthread_create");
	pthread_barrier_init(&start_barrier, NULL, producers + 1);
	for (i = 0; i < producers; i++) {
		prod[i] = (struct producer){ m, (int)i, n, payload, 0 };
		if (pthread_create(&pt[i], NULL, producer_main, &prod[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < producers; i++)
		pthread_join(pt[i], NULL);
	/* the slowest producer, timed on its own CPU */
	for (i = 0; i < producers; i++)
		if (prod[i].secs > r.secs)
			r.secs = prod[i].secs;
	consumer_stop = 1;
	pthread_join(ct, NULL);
	pthread_barrier_destroy(&start_barrier);
	r.produced = n * producers;
	m->finish(&r);
	r.consumed = consumed;
	return r;
}

static int check(const struct result *r)
{
	if (r->consumed == r->written && r->written + r->dropped == r->produced)
		return 1;
	printf("ACCOUNTING MISMATCH: produced %llu written %llu dropped %llu delivered %llu\n",
	       (unsigned long long)r->produced, (unsigned long long)r->written,
	       (unsigned long long)r->dropped, (unsigned long long)r->consumed);
	return 0;
}

/*
 * Cost per event, one CPU, no concurrency: produce n events into rings big
 * enough for all of them (nothing may drop), then read them all, both on
 * CPU 0 and timed there.  Deterministic under -icount.
 */
static int cost(const struct mech *m, unsigned int payload, uint64_t n, double *prod_ns,
		double *cons_ns)
{
	struct result r = { 0 };
	double t0, t1, t2;

	pin(0);
	ring_bytes = 8U << 20;
	m->setup(payload, 1);
	if (m->produce == bpf_produce)
		bpf_set_events(n);
	consumed = 0;
	t0 = now_s();
	m->produce(0, n, payload);
	t1 = now_s();
	consumed = m->consume_all();
	t2 = now_s();
	r.produced = n;
	m->finish(&r);
	r.consumed = consumed;
	ring_bytes = 1U << 20;
	*prod_ns = (t1 - t0) * 1e9 / n;
	*cons_ns = (t2 - t1) * 1e9 / n;
	return check(&r) && !r.dropped;
}

int main(int argc, char **argv)
{
	static const unsigned int payloads[] = { 16, 64, 256 };
	uint64_t n = 200000, cn = 20000;
	int opt, reps = 2, only = -1, ok = 1;

	while ((opt = getopt(argc, argv, "n:c:r:m:o:")) != -1) {
		switch (opt) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'c': cn = strtoull(optarg, NULL, 0); break;
		case 'r': reps = atoi(optarg); break;
		case 'm': only = atoi(optarg); break;
		case 'o': bpf_obj = optarg; break;
		default:
			fprintf(stderr, "usage: fhook-bench-transport [-n EVENTS] [-c COST_EVENTS] [-r REPEATS] [-m MECH] [-o BPF_OBJ]\n");
			return 2;
		}
	}
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 3 || ncpu > MAXCPU || !n || !cn || cn > 25000) {
		fprintf(stderr, "needs 3..%d CPUs (2 producers, 1 consumer), have %u; 0 < -c <= 25000\n",
			MAXCPU, ncpu);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("\n1. Cost per event on one CPU (%llu events into rings that hold them all, then\n"
	       "   read back; ns of guest time per event, each run %d times)\n",
	       (unsigned long long)cn, reps);
	printf("%-12s %7s | %10s %10s | %14s\n", "ring", "payload", "write ns", "read ns",
	       "lossless bound");
	for (unsigned int mi = 0; mi < sizeof(mechs) / sizeof(mechs[0]); mi++) {
		if (only >= 0 && (int)mi != only)
			continue;
		for (unsigned int pi = 0; pi < 3; pi++)
			for (int rep = 0; rep < reps; rep++) {
				double w, rd;

				ok &= cost(&mechs[mi], payloads[pi], cn, &w, &rd);
				printf("%-12s %5uB | %10.0f %10.0f | %11.2f M/s\n", mechs[mi].name,
				       payloads[pi], w, rd, 1e3 / (w > rd ? w : rd));
			}
	}

	printf("\n2. Flat out: %llu events per producer CPU, 1 MiB rings, consumer on CPU %u\n"
	       "   (M events/s; each producer timed on its own CPU)\n",
	       (unsigned long long)n, ncpu - 1);
	printf("%-12s %7s %4s | %10s %10s %8s\n", "ring", "payload", "prod", "produced",
	       "delivered", "dropped");
	for (unsigned int mi = 0; mi < sizeof(mechs) / sizeof(mechs[0]); mi++) {
		if (only >= 0 && (int)mi != only)
			continue;
		for (unsigned int pi = 0; pi < 3; pi++)
			for (unsigned int producers = 1; producers <= 2; producers++)
				for (int rep = 0; rep < reps; rep++) {
					struct result r = run(&mechs[mi], payloads[pi], producers, n);

					ok &= check(&r);
					printf("%-12s %5uB %4u | %9.3fM %9.3fM %7.2f%%\n", mechs[mi].name,
					       payloads[pi], producers, r.produced / r.secs / 1e6,
					       r.consumed / r.secs / 1e6, 100.0 * r.dropped / r.produced);
				}
	}
	return ok ? 0 : 1;
}
