// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-ring: checks of the ring transport through the raw ABI, against
 * the independent call counts of fhook_testmod.ko (/proc/fhook_testmod).
 * It is also a second consumer written from docs/ring-protocol.md alone.
 *
 *   fhook-ring account N      4 KiB discard rings, a slow consumer, two
 *                             probes, "mix N" on every CPU at once: per CPU
 *                             and probe, delivered + lost == calls
 *   fhook-ring overwrite N    32 KiB overwrite ring, "call N": the ring
 *                             holds exactly the newest records
 *   fhook-ring snapshot       freeze / resume
 *   fhook-ring wakeup         wakeup_events and the flush timer (poll)
 *   fhook-ring closerace      the fd closed while another thread reads
 *
 * One line per check, "ok N - what" or "not ok N - what"; exit 0 if all
 * passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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
#include "progs.h"

#define MAXSEQ	(1U << 24)	/* seqs tracked per CPU */


static void __attribute__((format(printf, 2, 3))) expect(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vreport(cond, NULL, fmt, ap);
	va_end(ap);
}


static void sess_ioc(struct sess *s, unsigned long cmd, const char *what)
{
	if (ioctl(s->fd, cmd, NULL))
		die(what);
}

static void snapshot(struct sess *s, uint32_t op)
{
	struct fhook_snapshot ss = { .size = sizeof(ss), .op = op };

	if (ioctl(s->fd, FHOOK_IOC_SNAPSHOT, &ss))
		die("snapshot");
}

static struct fhook_probe_counters ctr(struct sess *s, unsigned int cpu, uint32_t id)
{
	const struct fhook_probe_counters *base =
		(const void *)((const char *)s->st + s->st->entries_offset);
	struct fhook_probe_counters c = base[cpu * s->st->max_probes + id - 1];

	return c;
}

/* Run "CMD" on /proc/fhook_testmod in a child pinned to CPU (no wait). */
static pid_t testmod_async(const char *cmd, int cpu)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		cpu_set_t set;
		int fd;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(2);
		fd = open("/proc/fhook_testmod", O_WRONLY);
		if (fd < 0 || write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
			_exit(3);
		_exit(0);
	}
	return pid;
}

static void testmod(const char *cmd, int cpu)
{
	int status;
	pid_t pid = testmod_async(cmd, cpu);

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die(cmd);
}

struct counts {
	uint64_t target, other, nmi;
};

static void testmod_counts(struct counts *out, unsigned int ncpu)
{
	FILE *f = fopen("/proc/fhook_testmod", "r");
	unsigned long long t, o, i, so, nmi;
	unsigned int cpu;

	if (!f)
		die("/proc/fhook_testmod");
	memset(out, 0, sizeof(*out) * ncpu);
	while (fscanf(f, "cpu %u target %llu other %llu irq %llu softirq %llu nmi %llu\n", &cpu,
		      &t, &o, &i, &so, &nmi) == 6)
		if (cpu < ncpu) {
			out[cpu].target = t;
			out[cpu].other = o;
			out[cpu].nmi = nmi;
		}
	fclose(f);
}

/* ------------------------------------------------------------ reader */

struct acct {
	uint64_t delivered[FHOOK_MAX_PROBES + 1];
	uint64_t lost[FHOOK_MAX_PROBES + 1];
	uint64_t lost_records, bad_lost, bad_rec, dup_seq, wrong_cpu;
	uint64_t ctx_nmi, ctx_hardirq, ctx_softirq;	/* FUNC records by context */
	uint64_t fn;			/* FN records read */
	/*
	 * kprobe records (FHOOK_REC_KPROBE, FHOOK_REC_FN_KPROBE) whose two
	 * fields ($arg1, %di: fhook_testmod's argument, 1 in hard irqs, 2 in
	 * softirqs, 3 in NMIs) disagree with each other or with the context
	 */
	uint64_t fn_kprobe, bad_arg;
	uint64_t last_seq;		/* of the last function record read */
	/*
	 * an FN record's number (ABI 4: it has none): one more than the
	 * highest before it in the ring, as the module places them
	 * (fhook_ring_fn_choose()) and libfhook's SeqCount counts
	 */
	uint32_t next_seq;
	uint8_t *seen;			/* MAXSEQ bits */
};

static void acct_init(struct acct *a)
{
	memset(a, 0, sizeof(*a));
	a->seen = calloc(MAXSEQ / 8, 1);
	if (!a->seen)
		die("calloc");
}

/* The count moves on to @to, never back (a nested writer's lower number) */
static void raise_seq(struct acct *a, uint32_t to)
{
	if ((int32_t)(to - a->next_seq) > 0)
		a->next_seq = to;
}

/* Read [tail, head) of CPU c's ring, as ring-protocol.md says. */
static void drain_cpu(struct sess *s, unsigned int c, struct acct *a, uint64_t from)
{
	struct ring *r = &s->r[c];
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t pos = from;

	while (pos < head) {
		const struct fhook_rec *rec = (const void *)(r->data + (pos & (r->size - 1)));
		uint32_t i;

		if (rec->size < sizeof(*rec) || pos + ((rec->size + 7) & ~7ULL) > head) {
			a->bad_rec++;
			break;
		}
		if (rec->type == FHOOK_REC_LOST) {
			const struct fhook_rec_lost *l = (const void *)rec;
			uint64_t sum = 0;

			if (l->nr_probes > FHOOK_MAX_PROBES ||
			    rec->size < sizeof(*l) + l->nr_probes * sizeof(l->probes[0])) {
				a->bad_rec++;
				break;
			}
			for (i = 0; i < l->nr_probes; i++) {
				if (l->probes[i].probe_id && l->probes[i].probe_id <= FHOOK_MAX_PROBES)
					a->lost[l->probes[i].probe_id] += l->probes[i].count;
				sum += l->probes[i].count;
			}
			a->lost_records++;
			a->bad_lost += sum != l->lost;
			raise_seq(a, l->last_seq + 1);
		} else if (rec->type == FHOOK_REC_COMM) {
			/* the record it names follows with the same number */
			raise_seq(a, rec->seq);
		} else if (rec->type == FHOOK_REC_FUNC || rec->type == FHOOK_REC_FN ||
			   rec->type == FHOOK_REC_KPROBE || rec->type == FHOOK_REC_FN_KPROBE) {
			uint64_t ip, parent;
			const uint64_t *args = NULL;
			uint32_t id, seq;
			unsigned int flags;

			if (rec->type == FHOOK_REC_KPROBE &&
			    rec->size == sizeof(struct fhook_rec_probe) + 16) {
				args = (const uint64_t *)((const struct fhook_rec_probe *)rec)->data;
				id = rec->probe_id;
			} else if (rec->type == FHOOK_REC_FN_KPROBE &&
				   rec->size == sizeof(struct fhook_rec_fn) + 16) {
				args = (const uint64_t *)((const struct fhook_rec_fn *)rec + 1);
				id = ((const struct fhook_rec_fn *)rec)->probe_id;
				a->fn_kprobe++;
			} else if (!func_record(rec, &ip, &parent, &id)) {
				a->bad_rec++;
				break;
			}
			if (id > FHOOK_MAX_PROBES) {
				a->bad_rec++;
				break;
			}
			if (rec->type == FHOOK_REC_FN || rec->type == FHOOK_REC_FN_KPROBE) {
				/* ABI 4: numbered by the reader, its context raw */
				uint32_t ctx = ((const struct fhook_rec_fn *)rec)->ctx;

				seq = a->next_seq;
				a->fn++;
				flags = (ctx & FHOOK_FN_CTX_NMI_MASK ? FHOOK_CTX_NMI : 0) |
					(ctx & FHOOK_FN_CTX_HARDIRQ_MASK ? FHOOK_CTX_HARDIRQ : 0) |
					(ctx & FHOOK_FN_CTX_SOFTIRQ_OFFSET ? FHOOK_CTX_SOFTIRQ : 0);
			} else {
				seq = rec->seq;
				flags = rec->flags;
			}
			if (args) {
				uint64_t want = flags & FHOOK_CTX_NMI ? 3 :
						flags & FHOOK_CTX_HARDIRQ ? 1 :
						flags & FHOOK_CTX_SOFTIRQ ? 2 : args[0];

				a->bad_arg += args[0] != args[1] || args[0] != want;
			}
			a->delivered[id]++;
			a->wrong_cpu += rec->cpu != c;
			a->ctx_nmi += !!(flags & FHOOK_CTX_NMI);
			a->ctx_hardirq += (flags & (FHOOK_CTX_HARDIRQ | FHOOK_CTX_NMI)) ==
					  FHOOK_CTX_HARDIRQ;
			a->ctx_softirq += !!(flags & FHOOK_CTX_SOFTIRQ);
			/* an FN record's counted number too: none twice */
			if (seq < MAXSEQ) {
				if (a->seen[seq / 8] & (1 << (seq % 8)))
					a->dup_seq++;
				a->seen[seq / 8] |= 1 << (seq % 8);
			}
			a->last_seq = seq;
			raise_seq(a, seq + 1);
		} else {
			raise_seq(a, rec->seq + 1);
		}
		pos += (rec->size + 7) & ~7ULL;
	}
	r->cons->seq_read = (uint32_t)(a->last_seq + 1);
	__atomic_store_n(&r->cons->data_tail, head, __ATOMIC_RELEASE);
}

static void drain_all(struct sess *s, struct acct *a)
{
	unsigned int c;

	for (c = 0; c < s->ncpu; c++)
		drain_cpu(s, c, &a[c], s->r[c].cons->data_tail);
}

struct consumer {
	struct sess *s;
	struct acct *a;
	volatile int stop;
	unsigned int passes;
};

static void *consumer_main(void *arg)
{
	struct consumer *k = arg;

	while (!k->stop) {
		drain_all(k->s, k->a);
		k->passes++;
		usleep(1000);	/* slower than the producers: drops */
	}
	return NULL;
}

/* ----------------------------------------------------------- account */

/* A kprobe at @func's entry storing a = $arg1 and b = %di (x86-64) as u64 */
static uint32_t add_kprobe_args(struct sess *s, const char *func)
{
	struct fhook_insn prog[4] = {
		{ .op = FHOOK_OP_ARG, .arg = 1 },
		{ .op = FHOOK_OP_ST_RAW, .size = 8, .dst = 0 },
		{ .op = FHOOK_OP_REG, .arg = FHOOK_REG_DI },
		{ .op = FHOOK_OP_ST_RAW, .size = 8, .dst = 8 },
	};
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_KPROBE, .flags = FHOOK_PROBE_F_DIRECT,
	};

#ifdef __aarch64__
	prog[2].arg = FHOOK_REG_X0;
#endif
	pa.symbol = (uintptr_t)func;
	pa.symbol_len = strlen(func);
	pa.prog = (uintptr_t)prog;
	pa.prog_len = 4;
	pa.data_size = 16;
	if (ioctl(s->fd, FHOOK_IOC_PROBE_ADD, &pa))
		die(func);
	return pa.probe_id;
}

static int do_account(unsigned long n, uint32_t type)
{
	static struct acct a[MAXCPU];
	struct counts calls[MAXCPU];
	struct consumer k = { 0 };
	pthread_t thread;
	struct sess s;
	pid_t pids[MAXCPU];
	char cmd[64];
	uint32_t id[3];
	unsigned int c, p;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	sess_open(&s, 4096, 0, 0, 0, 0);
	if (type == FHOOK_PROBE_KPROBE) {
		id[1] = add_kprobe_args(&s, "fhook_testmod_target");
		id[2] = add_kprobe_args(&s, "fhook_testmod_other");
	} else {
		id[1] = add_probe_type(&s, "fhook_testmod_target", type);
		id[2] = add_probe_type(&s, "fhook_testmod_other", type);
	}
	expect(id[1] == 1 && id[2] == 2, "probe ids are 1 and 2 (got %u, %u)", id[1], id[2]);
	for (c = 0; c < s.ncpu; c++)
		acct_init(&a[c]);
	testmod("reset", 0);
	sess_ioc(&s, FHOOK_IOC_START, "start");
	k.s = &s;
	k.a = a;
	if (pthread_create(&thread, NULL, consumer_main, &k))
		die("pthread_create");
	snprintf(cmd, sizeof(cmd), "mix %lu", n);
	for (c = 0; c < (unsigned int)online && c < s.ncpu; c++)
		pids[c] = testmod_async(cmd, c);
	for (c = 0; c < (unsigned int)online && c < s.ncpu; c++) {
		int status;

		if (waitpid(pids[c], &status, 0) != pids[c] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			die("mix");
	}
	sess_ioc(&s, FHOOK_IOC_STOP, "stop");
	k.stop = 1;
	pthread_join(thread, NULL);
	drain_all(&s, a);
	testmod_counts(calls, s.ncpu);

	for (c = 0; c < s.ncpu; c++) {
		uint64_t seq_next = s.r[c].meta->seq_next, taken = 0, delivered = 0;
		uint64_t lost_total = 0;

		for (p = 1; p <= 2; p++) {
			struct fhook_probe_counters k2 = ctr(&s, c, p);
			uint64_t want = p == 1 ? calls[c].target : calls[c].other;
			uint64_t rest = k2.dropped - a[c].lost[p];

			printf("# cpu %u probe %u: calls %llu hits %llu written %llu dropped %llu "
			       "missed %llu filtered %llu frozen %llu; read %llu, LOST in band %llu, "
			       "after the last record %llu\n", c, p,
			       (unsigned long long)want, (unsigned long long)k2.hits,
			       (unsigned long long)k2.written, (unsigned long long)k2.dropped,
			       (unsigned long long)k2.missed, (unsigned long long)k2.filtered,
			       (unsigned long long)k2.frozen,
			       (unsigned long long)a[c].delivered[p], (unsigned long long)a[c].lost[p],
			       (unsigned long long)rest);
			expect(a[c].lost[p] <= k2.dropped,
			       "cpu %u probe %u: LOST records carry no more than were dropped", c, p);
			expect(a[c].delivered[p] + a[c].lost[p] + rest + k2.missed + k2.filtered == want,
			       "cpu %u probe %u: read + lost + missed == calls of fhook_testmod (%llu)",
			       c, p, (unsigned long long)want);
			expect(a[c].delivered[p] == k2.written,
			       "cpu %u probe %u: read == written", c, p);
			expect(k2.hits == k2.written + k2.dropped + k2.frozen,
			       "cpu %u probe %u: hits == written + dropped + frozen", c, p);
			taken += k2.written + k2.dropped;
			delivered += a[c].delivered[p];
			lost_total += k2.dropped;
		}
		expect(seq_next == taken, "cpu %u: seq_next %llu == written + dropped", c,
		       (unsigned long long)seq_next);
		expect(s.r[c].meta->lost_total == lost_total, "cpu %u: meta lost_total == dropped", c);
		expect(!a[c].dup_seq && !a[c].wrong_cpu && !a[c].bad_rec && !a[c].bad_lost,
		       "cpu %u: %llu records (%llu FN), unique seqs, right cpu, LOST sums match breakdown",
		       c, (unsigned long long)delivered, (unsigned long long)a[c].fn);
		if (type == FHOOK_PROBE_KPROBE)
			expect(!a[c].bad_arg,
			       "cpu %u: both fields the argument of the call's context (%llu FN_KPROBE)",
			       c, (unsigned long long)a[c].fn_kprobe);
	}
	/* every context produced records that were read */
	{
		uint64_t nmi = 0, hard = 0, soft = 0, nmi_calls = 0;

		for (c = 0; c < s.ncpu; c++) {
			nmi += a[c].ctx_nmi;
			hard += a[c].ctx_hardirq;
			soft += a[c].ctx_softirq;
			nmi_calls += calls[c].nmi;
		}
		printf("# records read from NMI %llu (of %llu NMI handler runs), hardirq %llu, "
		       "softirq %llu\n", (unsigned long long)nmi, (unsigned long long)nmi_calls,
		       (unsigned long long)hard, (unsigned long long)soft);
#ifdef __aarch64__
		/* (Debian's arm64 kernels have no pseudo-NMIs: nothing to send) */
		if (!nmi_calls)
			printf("# no NMI handler ran: arm64 without pseudo-NMIs has no NMI producers\n");
		else
#endif
		expect(nmi_calls > 0 && nmi > 0, "NMI-context producers were recorded");
		expect(hard > 0 && soft > 0, "hardirq and softirq producers were recorded");
	}
	/* the point of the exercise: both probes lost records, reported in band */
	for (p = 1; p <= 2; p++) {
		uint64_t inband = 0;

		for (c = 0; c < s.ncpu; c++)
			inband += a[c].lost[p];
		expect(inband > 0, "probe %u: drops reported in LOST records (%llu)", p,
		       (unsigned long long)inband);
	}
	printf("# consumer passes: %u\n", k.passes);
	sess_unmap(&s);
	close(s.fd);
	return tap_status();
}

/* --------------------------------------------------------- overwrite */

/* Records of CPU 0 from data_oldest: the count, first and last seq. */
static void read_oldest(struct sess *s, uint64_t *nr, uint64_t *first, uint64_t *last,
			int *contiguous)
{
	struct ring *r = &s->r[0];
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t pos = r->meta->data_oldest;
	uint64_t prev = 0;

	*nr = 0;
	*contiguous = 1;
	while (pos < head) {
		const struct fhook_rec *rec = (const void *)(r->data + (pos & (r->size - 1)));

		if (rec->size < sizeof(*rec))
			break;
		if (rec->type == FHOOK_REC_FUNC) {
			if (!*nr)
				*first = rec->seq;
			else if (rec->seq != prev + 1)
				*contiguous = 0;
			prev = rec->seq;
			*last = rec->seq;
			(*nr)++;
		} else if (rec->type == FHOOK_REC_FN) {
			/* unnumbered: never in an overwrite ring (ABI 4) */
			*contiguous = 0;
			(*nr)++;
		}
		pos += (rec->size + 7) & ~7ULL;
	}
}

static int do_overwrite(unsigned long n)
{
	uint64_t nr = 0, first = 0, last = 0, used;
	struct fhook_probe_counters k;
	struct sess s;
	char cmd[64];
	int contiguous;

	sess_open(&s, FHOOK_RING_MIN_OVERWRITE, FHOOK_RING_OVERWRITE, 0, 0, 0);
	add_probe(&s, "fhook_testmod_target");
	sess_ioc(&s, FHOOK_IOC_START, "start");
	snprintf(cmd, sizeof(cmd), "call %lu", n);
	testmod(cmd, 0);
	sess_ioc(&s, FHOOK_IOC_STOP, "stop");
	read_oldest(&s, &nr, &first, &last, &contiguous);
	k = ctr(&s, 0, 1);
	used = s.r[0].meta->data_head - s.r[0].meta->data_oldest;
	printf("# kept %llu records, seq %llu..%llu, %llu of %llu bytes; written %llu "
	       "overwritten %llu dropped %llu\n", (unsigned long long)nr,
	       (unsigned long long)first, (unsigned long long)last, (unsigned long long)used,
	       (unsigned long long)s.r[0].size, (unsigned long long)k.written,
	       (unsigned long long)k.overwritten, (unsigned long long)k.dropped);
	expect(k.written == n && k.dropped == 0, "written == calls (%lu), nothing dropped", n);
	expect(s.r[0].meta->seq_next == n, "seq_next == calls");
	expect(nr > 0 && last == n - 1, "the newest record (seq %lu) is kept", n - 1);
	expect(contiguous && first == n - nr, "the kept records are seq %llu..%lu, contiguous",
	       (unsigned long long)(n - nr), n - 1);
	expect(nr + k.overwritten == n, "kept (%llu) + overwritten (%llu) == calls",
	       (unsigned long long)nr, (unsigned long long)k.overwritten);
	expect(k.overwritten == n - nr, "overwritten == calls - kept");
	expect(used <= s.r[0].size && used + sizeof(struct fhook_rec_func) > s.r[0].size,
	       "the ring is full: no older record would have fit");
	sess_unmap(&s);
	close(s.fd);
	return tap_status();
}

/* ---------------------------------------------------------- snapshot */

static int do_snapshot(void)
{
	uint64_t nr = 0, first = 0, last = 0;
	struct fhook_probe_counters k;
	struct sess s;
	int contiguous;

	sess_open(&s, FHOOK_RING_MIN_OVERWRITE, FHOOK_RING_OVERWRITE, 0, 0, 0);
	add_probe(&s, "fhook_testmod_target");
	sess_ioc(&s, FHOOK_IOC_START, "start");
	testmod("call 1000", 0);
	snapshot(&s, FHOOK_SNAPSHOT_FREEZE);
	snapshot(&s, FHOOK_SNAPSHOT_FREEZE);	/* a no-op */
	testmod("call 500", 0);
	k = ctr(&s, 0, 1);
	expect(k.frozen == 500 && k.written == 1000 && k.hits == 1500,
	       "frozen: 500 hits not recorded (frozen %llu written %llu hits %llu)",
	       (unsigned long long)k.frozen, (unsigned long long)k.written,
	       (unsigned long long)k.hits);
	expect(s.r[0].meta->seq_next == 1000, "frozen hits take no sequence number");
	read_oldest(&s, &nr, &first, &last, &contiguous);
	expect(last == 999 && contiguous, "the frozen ring ends at seq 999 (got %llu)",
	       (unsigned long long)last);
	snapshot(&s, FHOOK_SNAPSHOT_RESUME);
	testmod("call 10", 0);
	sess_ioc(&s, FHOOK_IOC_STOP, "stop");
	read_oldest(&s, &nr, &first, &last, &contiguous);
	k = ctr(&s, 0, 1);
	expect(last == 1009 && contiguous && k.written == 1010,
	       "resumed: 10 more records, last seq %llu", (unsigned long long)last);
	{
		struct fhook_snapshot bad = { .size = sizeof(bad), .op = 3 };

		expect(ioctl(s.fd, FHOOK_IOC_SNAPSHOT, &bad) < 0 && errno == EINVAL,
		       "unknown snapshot op: EINVAL");
	}
	sess_unmap(&s);
	close(s.fd);
	return tap_status();
}

/* ------------------------------------------------------------ wakeup */

static int poll_in(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int do_wakeup(void)
{
	const uint64_t size = 65536;
	struct sess s;
	double t0;
	int r;

	/* wakeup_events 10, no byte watermark, no timer within the test */
	sess_open(&s, size, 0, size, 10, FHOOK_FLUSH_MAX_MS);
	add_probe(&s, "fhook_testmod_target");
	sess_ioc(&s, FHOOK_IOC_START, "start");
	testmod("call 9", 0);
	expect(!poll_in(s.fd, 500), "9 pending events < wakeup_events 10: not readable");
	testmod("call 1", 0);
	expect(poll_in(s.fd, 5000), "10 pending events: readable");
	sess_unmap(&s);
	close(s.fd);

	/* one event, no watermark reached: only the flush timer delivers it */
	sess_open(&s, size, 0, size, 0, FHOOK_FLUSH_MAX_MS);
	add_probe(&s, "fhook_testmod_target");
	sess_ioc(&s, FHOOK_IOC_START, "start");
	testmod("call 1", 0);
	expect(!poll_in(s.fd, 1000), "flush 60 s: one event is not readable within 1 s");
	sess_unmap(&s);
	close(s.fd);

	sess_open(&s, size, 0, size, 0, 50);
	add_probe(&s, "fhook_testmod_target");
	sess_ioc(&s, FHOOK_IOC_START, "start");
	testmod("call 1", 0);
	t0 = now_ms();
	r = poll_in(s.fd, 10000);
	expect(r, "flush 50 ms: one event becomes readable (after %.0f ms)", now_ms() - t0);
	sess_unmap(&s);
	close(s.fd);
	return tap_status();
}

/* --------------------------------------------------------- closerace */

static void *reader_main(void *arg)
{
	struct consumer *k = arg;
	struct pollfd p = { .fd = k->s->fd, .events = POLLIN };

	while (!k->stop) {
		poll(&p, 1, 5);		/* POLLNVAL once the fd is closed */
		drain_all(k->s, k->a);
		k->passes++;
	}
	return NULL;
}

static int do_closerace(void)
{
	static struct acct a[MAXCPU];
	struct consumer k = { 0 };
	pthread_t thread;
	struct sess s;
	unsigned int c;

	/* room for every record: this is about lifetime, not loss */
	sess_open(&s, 1 << 20, 0, 0, 0, 0);
	add_probe(&s, "fhook_testmod_target");
	for (c = 0; c < s.ncpu; c++)
		acct_init(&a[c]);
	sess_ioc(&s, FHOOK_IOC_START, "start");
	k.s = &s;
	k.a = a;
	if (pthread_create(&thread, NULL, reader_main, &k))
		die("pthread_create");
	testmod("call 2000", 0);
	expect(close(s.fd) == 0, "close() while another thread polls and reads");
	/* the mappings keep the session alive: still armed, still readable */
	testmod("call 2000", 0);
	usleep(200000);
	k.stop = 1;
	pthread_join(thread, NULL);
	drain_all(&s, a);
	expect(a[0].delivered[1] == 4000 && !a[0].bad_rec,
	       "all 4000 records read through the mappings after close (%llu)",
	       (unsigned long long)a[0].delivered[1]);
	sess_unmap(&s);	/* the last reference: the session goes away */
	return tap_status();
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "account"))
		return do_account(strtoul(argv[2], NULL, 0),
				  argc < 4			? FHOOK_PROBE_FUNC :
				  !strcmp(argv[3], "direct")	? FHOOK_PROBE_DIRECT :
				  !strcmp(argv[3], "kprobe")	? FHOOK_PROBE_KPROBE :
								  FHOOK_PROBE_FUNC);
	if (argc >= 3 && !strcmp(argv[1], "overwrite"))
		return do_overwrite(strtoul(argv[2], NULL, 0));
	if (argc >= 2 && !strcmp(argv[1], "snapshot"))
		return do_snapshot();
	if (argc >= 2 && !strcmp(argv[1], "wakeup"))
		return do_wakeup();
	if (argc >= 2 && !strcmp(argv[1], "closerace"))
		return do_closerace();
	fprintf(stderr, "usage: fhook-ring account N [direct|kprobe] | overwrite N | snapshot | wakeup | closerace\n");
	return 2;
}
