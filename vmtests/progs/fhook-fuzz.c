// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-fuzz: random and mutated ioctls at /dev/fhook.
 *
 *   fhook-fuzz [-s SEED] [-n CALLS] [-t THREADS] [-r REOPEN] [-p PROGRESS]
 *
 * THREADS threads (default 2) share one session fd and send CALLS calls in
 * total (default 1000000): random command numbers, fhook's type with random
 * nr/dir/size bits, and the real commands with valid-looking arguments of
 * which one field (sometimes two, sometimes none) is mutated: sizes, flags,
 * reserved words, lengths, counts, and pointers (NULL, unmapped, kernel
 * direct-map and text addresses, non-canonical, read-only, a struct that
 * runs into a PROT_NONE page).  Every REOPEN calls (default 2000) thread 0
 * replaces the session with a new one (dup2 onto the shared number, so no
 * call ever reaches another file); one session in eight is first set up
 * for real (ring, vfs_read probe, START) so that calls also land on an
 * armed session.
 *
 * The slow paths of the module are legitimate but must not dominate the
 * run, so they have budgets: pattern text that reaches ftrace's parser
 * (each parse walks every traceable function; "*" at most once), START of
 * a ready session (ftrace_ops registration), valid CPU masks
 * (synchronize_rcu) and fork following switched on or off (tracepoint
 * registration).  Ring sizes above 64 KiB are only ever invalid ones.
 *
 * Checked on every call: no success and no errno other than EFAULT where
 * the argument itself is unreadable (NULL, unmapped, kernel, non-canonical,
 * straddling), ENOTTY for a foreign type or an unknown number, and no
 * errno outside the set the ABI documents.  Meanwhile another thread
 * forges the consumer pages of whatever session is current (tails around
 * data_head, random seq_read) while vfs_read records flow.  At the end no
 * session may be left but a fresh one.  The seed is printed; -s replays the same sequence
 * of generated calls (thread interleaving aside).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fhook_abi.h"
#include "progs.h"

#define MAXT		16
#define NERR		140

/* budgets for the slow paths (whole run) */
static atomic_long b_text = 8, b_star = 1, b_arm = 16, b_cpu = 16, b_follow = 8;
static atomic_long n_text, n_star, n_arm, n_cpu, n_follow;

static int sfd;			/* shared session number */
static long page;
static uint64_t ip_read, ip_write, ip_getattr;
#define NCMD	20		/* the ioctls, HANDSHAKE..SYMBOLS */
static double tsum[NCMD + 1];	/* seconds in the kernel by decoded command, -1..8 */
static long tcnt[NCMD + 1];
static atomic_long n_slowcalls, calls_done, n_ok, n_sessions, n_violations, errs[NERR];
static long target;
static double t_start;
static int reopen_every = 2000;
static long progress_every = 100000;

/* approximate state of the current session (races only cost budget) */
static atomic_int st_ring, st_probes, st_armed, st_follow;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

#define R(n)	(rnd(rs) % (n))
#define ONEIN(n) (R(n) == 0)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int take(atomic_long *budget, atomic_long *used)
{
	if (atomic_fetch_sub(budget, 1) <= 0) {
		atomic_fetch_add(budget, 1);
		return 0;
	}
	atomic_fetch_add(used, 1);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Memory the kernel may read from and write to: per-thread scratch.   */

#define RO_OFF(w)	((w) * 256)
/* COUNTS' counts[] in sc->ips, after room for its ips[] */
#define COUNTS_OFF	32768
_Static_assert(COUNTS_OFF >= FHOOK_MAX_COUNT_IPS && COUNTS_OFF + FHOOK_MAX_COUNT_IPS <= 65536,
	       "COUNTS arrays overlap or leave sc->ips");

struct scratch {
	char *area;		/* 4 pages RW, then a PROT_NONE page */
	char *guard;		/* = area + 4 * page */
	char *ro;		/* a read-only page */
	char *text;		/* pattern text, within area */
	uint64_t *ips;		/* 65536 entries, separate mapping */
	uint32_t *pids;		/* 4097 entries */
	uint64_t *mask;		/* 129 words */
};

static char *unmapped;		/* PROT_NONE */
/* READ_TEXT's buffer: FHOOK_MAX_READ_TEXT bytes, then a PROT_NONE page */
static unsigned char *read_text_buf;
/* FHOOK_IOC_KHOOKS: room for what R(8) asks */
static struct fhook_khook_info khook_buf[8];
/* FHOOK_IOC_SYMBOLS: room for the most it answers */
static struct fhook_symbol sym_buf[FHOOK_SYMBOLS_MAX];

static void scratch_init(struct scratch *sc)
{
	char *p = mmap(NULL, 5 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + 4 * page, page, PROT_NONE)) {
		perror("scratch");
		exit(1);
	}
	sc->area = p;
	sc->guard = p + 4 * page;
	sc->ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sc->text = p + 2 * page;
	sc->ips = mmap(NULL, 65537 * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sc->pids = calloc(4097, 4);
	sc->mask = calloc(129, 8);
	if (sc->ro == MAP_FAILED || sc->ips == MAP_FAILED || !sc->pids || !sc->mask) {
		perror("scratch");
		exit(1);
	}
	/*
	 * A read-only page of valid structs: the module reads the input,
	 * acts, and then cannot write the result back.
	 */
	{
		struct fhook_handshake *h = (void *)(sc->ro + RO_OFF(0));
		struct fhook_ring_setup *r = (void *)(sc->ro + RO_OFF(1));
		struct fhook_probe_add *p = (void *)(sc->ro + RO_OFF(2));
		struct fhook_pid_filter *f = (void *)(sc->ro + RO_OFF(3));
		struct fhook_cpu_filter *c = (void *)(sc->ro + RO_OFF(4));
		struct fhook_stats *st = (void *)(sc->ro + RO_OFF(7));
		uint64_t *ip = (void *)(sc->ro + RO_OFF(8));

		*ip = ip_read;
		h->size = sizeof(*h);
		h->abi_version = FHOOK_ABI_VERSION;
		r->size = sizeof(*r);
		r->buf_size = 16384;
		p->size = sizeof(*p);
		p->type = FHOOK_PROBE_FUNC;
		p->ips = (uintptr_t)ip;
		p->nr_ips = 1;
		f->size = sizeof(*f);
		f->flags = FHOOK_PIDF_RESET;
		c->size = sizeof(*c);
		st->size = sizeof(*st);
		st->probe_id = FHOOK_STATS_SESSION;
		if (mprotect(sc->ro, page, PROT_READ)) {
			perror("mprotect");
			exit(1);
		}
	}
}

enum ptrkind { P_GOOD, P_NULL, P_UNMAPPED, P_KDIRECT, P_KTEXT, P_NONCANON, P_MINUS1, P_RO, NPTR };

/* An address that can never be read: class != P_GOOD/P_RO. */
static uint64_t bad_ptr(uint64_t *rs, int *kind)
{
	int k = 1 + R(6);

	if (kind)
		*kind = k;
	switch (k) {
	case P_NULL: return R(4) ? 0 : R(4096);
	case P_UNMAPPED: return (uintptr_t)unmapped + R(page);
	case P_KDIRECT: return 0xffff888000000000ULL + (R(1ULL << 30) & ~7ULL);
	case P_KTEXT: return 0xffffffff81000000ULL + R(1 << 24);
	case P_NONCANON:
		switch (R(3)) {
		case 0: return 0x0000800000000000ULL + R(1ULL << 40);
		case 1: return 0x8000000000000000ULL;
		default: return 0xdead000000000000ULL + R(4096);
		}
	default: return ~0ULL - R(16);
	}
}

/* ------------------------------------------------------------------ */

static const size_t cmd_size[NCMD] = {
	sizeof(struct fhook_handshake), sizeof(struct fhook_ring_setup),
	sizeof(struct fhook_probe_add), sizeof(struct fhook_pid_filter),
	sizeof(struct fhook_cpu_filter), 0, 0, sizeof(struct fhook_stats),
	sizeof(struct fhook_snapshot), sizeof(struct fhook_bench), sizeof(struct fhook_trigger),
	sizeof(struct fhook_direct_modify), sizeof(struct fhook_read_text),
	sizeof(struct fhook_latency), sizeof(struct fhook_counts), sizeof(struct fhook_khooks),
	sizeof(struct fhook_hist_set), sizeof(struct fhook_hist_read),
	sizeof(struct fhook_last_error), sizeof(struct fhook_symbols),
};
static const unsigned long cmd_num[NCMD] = {
	FHOOK_IOC_HANDSHAKE, FHOOK_IOC_RING_SETUP, FHOOK_IOC_PROBE_ADD, FHOOK_IOC_PID_FILTER,
	FHOOK_IOC_CPU_FILTER, FHOOK_IOC_START, FHOOK_IOC_STOP, FHOOK_IOC_STATS,
	FHOOK_IOC_SNAPSHOT, FHOOK_IOC_BENCH, FHOOK_IOC_TRIGGER_ADD, FHOOK_IOC_DIRECT_MODIFY,
	FHOOK_IOC_READ_TEXT, FHOOK_IOC_LATENCY, FHOOK_IOC_COUNTS, FHOOK_IOC_KHOOKS,
	FHOOK_IOC_HIST_SET, FHOOK_IOC_HIST_READ, FHOOK_IOC_LAST_ERROR, FHOOK_IOC_SYMBOLS,
};
static unsigned char hist_buf[1 << 16];	/* HIST_READ's entries (threads share it) */

/* the module's dispatch: type, nr, dir; the size bits are ignored */
static int decode(unsigned int cmd)
{
	for (int i = 0; i < NCMD; i++) {
		unsigned int a = cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);
		unsigned int b = cmd_num[i] & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);

		if (i == 5 || i == 6) {		/* START/STOP: exact match in the switch */
			if (a == cmd_num[i])
				return i;
		} else if (a == b) {
			return i;
		}
	}
	return -1;
}

static uint32_t mut32(uint64_t *rs, uint32_t v)
{
	switch (R(8)) {
	case 0: return 0;
	case 1: return ~0U;
	case 2: return v + 1;
	case 3: return v - 1;
	case 4: return 1U << R(32);
	case 5: return 0x80000000U;
	case 6: return v ^ (1U << R(32));
	default: return (uint32_t)rnd(rs);
	}
}

static uint64_t mut64(uint64_t *rs, uint64_t v)
{
	switch (R(8)) {
	case 0: return 0;
	case 1: return ~0ULL;
	case 2: return v + 1;
	case 3: return 1ULL << R(64);
	case 4: return 0x8000000000000000ULL;
	case 5: return v ^ (1ULL << R(64));
	default: return rnd(rs);
	}
}

/* a mutated size field: around sizeof, around a page, absurd */
static uint32_t mutsize(uint64_t *rs, uint32_t sz)
{
	static const int32_t d[] = { -8, -4, -1, 1, 4, 8, 16, 64 };

	switch (R(6)) {
	case 0: return R(sz);
	case 1: return sz + d[R(8)];
	case 2: return page - 4 + R(9);
	case 3: return sz + 8 + R(page - sz - 8);	/* newer layout, zero tail */
	case 4: return ~0U - R(4);
	default: return (uint32_t)rnd(rs);
	}
}

struct call {
	unsigned int cmd;
	uint64_t arg;
	int which;		/* decoded command, -1 if none */
	int must_efault;	/* the argument itself is unreadable */
	int slow;		/* took a budget: 1 text, 2 arm, 3 cpu, 4 follow */
};

static const char *const fast_texts[] = {
	"   ", "\t\n\v\f\r ", "",
};
static const char *const slow_texts[] = {
	"vfs_read", "no_such_function_fuzz", "vfs_*", "*_fuzz_nomatch", "[", "?", "!vfs_read",
	"vfs_read vfs_write", "a*b*c*d", "\\", "*:mod:loop",
};

/*
 * Pattern text.  Blank text and tokens longer than FHOOK_MAX_PATTERN_LEN
 * are rejected before ftrace sees them; anything else is parsed by
 * ftrace, which walks every traceable function: budgeted (*budgeted = 1).
 */
static uint32_t fill_text(uint64_t *rs, struct scratch *sc, __u64 *ptr, int *budgeted)
{
	char *t = sc->text;
	size_t len;

	*ptr = (uintptr_t)t;
	if (atomic_load(&b_text) > 0 && ONEIN(64) && take(&b_text, &n_text)) {
		*budgeted = 1;
		if (ONEIN(8) && take(&b_star, &n_star)) {
			strcpy(t, "*");
		} else if (ONEIN(4)) {
			len = 1 + R(40);
			for (size_t i = 0; i < len; i++)
				t[i] = 1 + R(255);
			t[len] = 0;
		} else {
			strcpy(t, slow_texts[R(sizeof(slow_texts) / sizeof(slow_texts[0]))]);
		}
		return strlen(t) + (ONEIN(4) ? 1 : 0);	/* sometimes with its NUL */
	}
	if (R(2)) {
		strcpy(t, fast_texts[R(3)]);
		return strlen(t);
	}
	/* one token longer than FHOOK_MAX_PATTERN_LEN, no blank in it */
	len = FHOOK_MAX_PATTERN_LEN + 1 + R(page - FHOOK_MAX_PATTERN_LEN - 1);
	memset(t, 'a' + R(26), len);
	t[len] = 0;
	return len;
}

/*
 * Build one ioctl.  The struct is built at the start of the scratch area
 * (zero tail up to the guard page), or so that it ends at / runs into the
 * guard page, or in the read-only page.
 */
static void gen(uint64_t *rs, struct scratch *sc, struct call *c)
{
	char tmp[4096];
	size_t sz;
	int w, mutate, nmut, argptr = R(16), text_budgeted = 0;
	uint32_t text_len = 0, text_xlen = 0;
	uint64_t *u64;
	uint32_t *u32;

	memset(c, 0, sizeof(*c));
	c->which = -1;
	switch (R(10)) {
	case 0: case 1:		/* anything */
		c->cmd = (uint32_t)rnd(rs);
		if (ONEIN(4))	/* fhook's type, everything else random */
			c->cmd = (c->cmd & ~(0xffU << _IOC_TYPESHIFT)) | FHOOK_IOC_MAGIC << _IOC_TYPESHIFT;
		break;
	case 2:			/* fhook's type, a small nr, random dir and size */
		c->cmd = _IOC(R(4), FHOOK_IOC_MAGIC, R(12), R(_IOC_SIZEMASK + 1));
		break;
	default:
		w = R(NCMD);
		c->cmd = cmd_num[w];
		if (ONEIN(4))	/* other size bits: must not matter */
			c->cmd = (c->cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
				 (R(_IOC_SIZEMASK + 1) << _IOC_SIZESHIFT);
		break;
	}
	c->which = decode(c->cmd);
	w = c->which;

	/* START/STOP: no argument; START of a ready session arms ftrace */
	if (w == 5 || w == 6 || w < 0) {
		c->arg = R(2) ? bad_ptr(rs, NULL) : (uintptr_t)sc->area;
		/*
		 * A ring may exist although RING_SETUP said EFAULT (its
		 * result could not be written back): any session with a
		 * probe may arm.
		 */
		if (w == 5 && atomic_load(&st_probes) && !atomic_load(&st_armed)) {
			if (take(&b_arm, &n_arm))
				c->slow = 2;
			else
				c->cmd = FHOOK_IOC_STOP, c->which = 6;
		}
		return;
	}

	sz = cmd_size[w];
	memset(tmp, 0, sizeof(tmp));
	u32 = (uint32_t *)tmp;
	u64 = (uint64_t *)tmp;
	u32[0] = sz;
	switch (w) {
	case 0: {
		struct fhook_handshake *h = (void *)tmp;

		h->abi_version = R(8) ? FHOOK_ABI_VERSION : (uint32_t)rnd(rs);
		break;
	}
	case 1: {
		struct fhook_ring_setup *r = (void *)tmp;

		r->buf_size = R(4) ? 4096ULL << R(5) : 0;	/* 4..64 KiB, default 1 MiB */
		if (r->buf_size == 0 && R(4))
			r->buf_size = 8192;
		r->watermark = R(4) ? 0 : R(r->buf_size + 2);
		break;
	}
	case 2: {
		struct fhook_probe_add *p = (void *)tmp;
		int k;

		p->type = FHOOK_PROBE_FUNC;
		k = R(8);
		/*
		 * a kprobe, kretprobe or uprobe with a program: (un)registering
		 * one patches text and waits for RCU, keep them rare
		 */
		if (ONEIN(64)) {
			static const struct fhook_insn prog[] = {
				{ .op = FHOOK_OP_REG, .arg = FHOOK_REG_DX },
				{ .op = FHOOK_OP_ST_RAW, .size = 8 },
				{ .op = FHOOK_OP_REG, .arg = FHOOK_REG_SI },
				{ .op = FHOOK_OP_ST_USTRING, .dst = 8, .arg = 64 },
				{ .op = FHOOK_OP_ST_COMM, .dst = 12 },
			};
			static const struct fhook_insn pred[] = {
				{ .op = FHOOK_PRED_FIELD, .size = 8, .arg = FHOOK_CMP_GT, .imm = 2 },
			};
			static const char *const where[] = { "vfs_read", "vfs_write",
							     "/fhook/bin/fhook-workload" };
			int u = ONEIN(4), wi = u ? 2 : R(2);

			p->type = u ? FHOOK_PROBE_UPROBE + R(2) : FHOOK_PROBE_KPROBE + R(2);
			p->symbol = (uintptr_t)where[wi];
			p->symbol_len = strlen(where[wi]);
			p->offset = u ? 0x1000 + 16 * R(64) : 0;
			p->prog = (uintptr_t)prog;
			p->prog_len = R(6);
			p->data_size = p->prog_len ? 16 : 0;
			if (R(2)) {
				p->pred = (uintptr_t)pred;
				p->pred_len = 1;
			}
			p->flags = R(4) ? 0 : FHOOK_PROBE_F_STACK;
			if (ONEIN(3)) {
				/* a direct probe (count, record, latency) on vfs_read */
				memset(p, 0, sizeof(*p));
				p->size = sz;
				p->type = FHOOK_PROBE_DIRECT;
				p->filter = (uintptr_t)"vfs_read";
				p->filter_len = 8;
				p->flags = R(3) == 0 ? FHOOK_PROBE_F_COUNT :
					   R(2) ? FHOOK_PROBE_F_LATENCY : 0;
				if (p->flags == FHOOK_PROBE_F_LATENCY && R(2))
					p->stack_args = R(10);
			} else if (ONEIN(2) && ip_getattr) {
				/*
				 * a hook on vfs_getattr (nobody sleeps there for
				 * long: a removed trace-around hook drains); without
				 * lab mode RETURN and REDIRECT are EPERM
				 */
				static __thread struct fhook_hook hk;

				memset(p, 0, sizeof(*p));
				memset(&hk, 0, sizeof(hk));
				p->size = sz;
				p->type = FHOOK_PROBE_HOOK;
				p->addr = R(8) ? ip_getattr : rnd(rs);
				hk.size = sizeof(hk);
				hk.action = 1 + R(FHOOK_HOOK_ACTION_MAX);
				hk.retval = hk.action == FHOOK_HOOK_RETURN ? -(int64_t)R(40) : 0;
				hk.redirect = hk.action == FHOOK_HOOK_REDIRECT ? ip_read : 0;
				hk.nth = R(4) ? 0 : R(10);
				hk.probability = R(4) ? 0 : R(2000000);
				p->hook = (uintptr_t)&hk;
				p->prog = (uintptr_t)prog;
				p->prog_len = R(3);
				p->data_size = p->prog_len ? 16 : 0;
			}
			break;
		}
		if (k < 2) {			/* by address: a real probe */
			p->ips = (uintptr_t)sc->ips;
			p->nr_ips = 1 + R(3);
			for (uint32_t i = 0; i < p->nr_ips; i++)
				sc->ips[i] = R(2) ? ip_read : ip_write;
			if (ONEIN(4))
				sc->ips[R(p->nr_ips)] = rnd(rs);
			/* one counter per function, read with COUNTS */
			if (ONEIN(3))
				p->flags = FHOOK_PROBE_F_COUNT | FHOOK_PROBE_F_COUNT_IPS;
		} else if (k < 6) {		/* garbage addresses, first one bad */
			p->ips = (uintptr_t)sc->ips;
			p->nr_ips = ONEIN(64) ? FHOOK_MAX_IPS - R(2) : 1 + R(64);
			sc->ips[0] = rnd(rs) | 1;
		} else {			/* text (budgeted when it reaches ftrace) */
			p->filter_len = fill_text(rs, sc, &p->filter, &text_budgeted);
			if (ONEIN(4))
				p->exclude_len = fill_text(rs, sc, &p->exclude, &text_budgeted);
			text_len = p->filter_len;
			text_xlen = p->exclude_len;
		}
		break;
	}
	case 3: {
		struct fhook_pid_filter *f = (void *)tmp;

		f->flags = rnd(rs) & FHOOK_PIDF_ALL;
		/* RESET clears a 512 KiB bitmap: legitimate, but not every time */
		if (!ONEIN(8))
			f->flags &= ~FHOOK_PIDF_RESET;
		f->nr_pids = R(4) ? R(4) : R(FHOOK_MAX_FILTER_PIDS + 2);
		for (uint32_t i = 0; i < f->nr_pids && i < 4097; i++)
			sc->pids[i] = R(4) ? 1 + R(32768) : (uint32_t)rnd(rs);
		f->pids = (uintptr_t)sc->pids;
		break;
	}
	case 4: {
		struct fhook_cpu_filter *f = (void *)tmp;

		f->nr_bits = R(3) ? 0 : R(4) ? 64 : R(FHOOK_MAX_CPUMASK * 8 + 2);
		for (int i = 0; i < 129; i++)
			sc->mask[i] = 0;
		sc->mask[0] = R(4) ? 1 + R(3) : rnd(rs);
		if (ONEIN(8))
			sc->mask[R(129)] = rnd(rs);
		f->mask = (uintptr_t)sc->mask;
		break;
	}
	case 7: {
		struct fhook_stats *s = (void *)tmp;

		s->probe_id = R(2) ? FHOOK_STATS_SESSION : R(70);
		s->nr_cpus = R(4) ? R(8) : (uint32_t)rnd(rs);
		s->cpus = R(3) ? (uintptr_t)(sc->area + 3 * page) : 0;	/* a page of room */
		break;
	}
	case 8:
		/* a freeze waits for an RCU grace period: rare */
		((struct fhook_snapshot *)tmp)->op = ONEIN(256) ? FHOOK_SNAPSHOT_FREEZE :
						     R(2) ? FHOOK_SNAPSHOT_RESUME : R(8);
		break;
	case 9: {
		struct fhook_bench *b = (void *)tmp;

		b->probe_id = R(4);
		b->nr_events = 1 + R(64);
		b->payload = R(4) ? 8 * R(64) : R(8192);
		break;
	}
	case 11: {
		struct fhook_direct_modify *d = (void *)tmp;

		d->probe_id = R(4);
		d->flags = R(4) ? (R(2) ? FHOOK_PROBE_F_COUNT : 0) : (uint32_t)rnd(rs);
		break;
	}
	case 13: {
		struct fhook_latency *l = (void *)tmp;

		l->probe_id = R(4) ? R(4) : (uint32_t)rnd(rs);
		l->flags = R(8) ? 0 : (uint32_t)rnd(rs);
		break;
	}
	case 14: {
		struct fhook_counts *n = (void *)tmp;

		n->probe_id = R(4) ? R(4) : (uint32_t)rnd(rs);
		n->nr = R(4) ? R(8) : (uint32_t)rnd(rs);
		n->ips = R(8) ? (uintptr_t)sc->ips : bad_ptr(rs, NULL);
		n->counts = R(8) ? (uintptr_t)(sc->ips + COUNTS_OFF) : bad_ptr(rs, NULL);
		n->flags = R(8) ? 0 : (uint32_t)rnd(rs);
		break;
	}
	case 15: {
		/* no module uses the hook API here: nothing is ever written */
		struct fhook_khooks *k = (void *)tmp;

		k->entry_size = R(4) ? sizeof(struct fhook_khook_info) : (uint32_t)rnd(rs);
		k->nr = R(4) ? R(8) : (uint32_t)rnd(rs);
		k->entries = R(4) ? (uintptr_t)khook_buf : bad_ptr(rs, NULL);
		break;
	}
	case 16: {
		/* a table for a probe: mostly small, sometimes the largest */
		struct fhook_hist_set *h = (void *)tmp;
		int i;

		h->probe_id = R(4);
		h->entries = R(16) ? 128U << R(3) : R(2) ? FHOOK_HIST_MAX_SIZE : (uint32_t)rnd(rs);
		h->nr_keys = R(4) ? 1 + R(FHOOK_HIST_MAX_KEYS) : R(8);
		h->nr_vals = R(4) ? R(FHOOK_HIST_MAX_VALS + 1) : R(8);
		h->flags = R(4) ? R(2) : (uint32_t)rnd(rs);
		h->table = R(4) ? R(FHOOK_HIST_MAX_TABLES + 1) : (uint32_t)rnd(rs);
		for (i = 0; i < FHOOK_HIST_MAX_KEYS + FHOOK_HIST_MAX_VALS; i++) {
			struct fhook_hist_field *f = i < FHOOK_HIST_MAX_KEYS ? &h->keys[i]
					: &h->vals[i - FHOOK_HIST_MAX_KEYS];

			f->src = 1 + R(9);
			f->op = R(5);
			f->param = R(2) ? 0 : R(4) ? 1 + R(1000) : rnd(rs);
			f->size = f->src == FHOOK_HIST_SRC_DATA ? 1U << R(4) : 0;
			f->offset = f->src == FHOOK_HIST_SRC_DATA ? R(64) : 0;
			f->store = R(2) ? FHOOK_HIST_NO_STORE : R(70);
			f->flags = R(2);
		}
		break;
	}
	case 17: {
		struct fhook_hist_read *h = (void *)tmp;

		h->probe_id = R(4) ? R(4) : (uint32_t)rnd(rs);
		h->buf = R(4) ? (uintptr_t)hist_buf : bad_ptr(rs, NULL);
		h->buf_len = R(4) ? sizeof(hist_buf) : R(2) ? R(256) : rnd(rs);
		h->table = R(2) ? R(FHOOK_HIST_MAX_TABLES + 1) : (uint32_t)rnd(rs);
		break;
	}
	case 19: {
		/* addresses in vfs_read, anywhere, in user space */
		struct fhook_symbols *y = (void *)tmp;

		y->entry_size = R(8) ? sizeof(struct fhook_symbol) : (uint32_t)rnd(rs);
		y->nr = R(4) ? 1 + R(16) : R(2) ? FHOOK_SYMBOLS_MAX + R(2) : (uint32_t)rnd(rs);
		y->entries = R(4) ? (uintptr_t)sym_buf : bad_ptr(rs, NULL);
		for (int i = 0; i < 16; i++)
			sym_buf[i].addr = R(2) ? ip_read + R(4096) : R(2) ? rnd(rs) : R(1U << 30);
		y->reserved[1] = R(16) ? 0 : rnd(rs);
		break;
	}
	case 12: {
		struct fhook_read_text *t = (void *)tmp;

		t->addr = R(2) ? ip_read + R(64) : R(2) ? rnd(rs) : bad_ptr(rs, NULL);
		t->len = R(4) ? 1 + R(128) : (uint32_t)rnd(rs);
		t->buf = R(4) ? (uintptr_t)read_text_buf : bad_ptr(rs, NULL);
		break;
	}
	case 10: {
		struct fhook_trigger *t = (void *)tmp;

		t->probe_id = R(4);
		t->action = R(FHOOK_TRIG_MAX + 1);
		/* traceoff and snapshot stop a session's records: not too often */
		if ((t->action == FHOOK_TRIG_TRACEOFF || t->action == FHOOK_TRIG_SNAPSHOT) && R(8))
			t->action = FHOOK_TRIG_STACKTRACE;
		t->target_id = t->action >= FHOOK_TRIG_ENABLE ? R(4) : 0;
		t->count = R(2) ? 0 : R(100);
		break;
	}
	}

	/* one mutation usually, sometimes none or two */
	nmut = ONEIN(10) ? 0 : ONEIN(8) ? 2 : 1;
	for (int m = 0; m < nmut; m++) {
		mutate = R(8);
		if (mutate == 0) {
			u32[0] = mutsize(rs, sz);
		} else if (mutate == 1) {	/* a reserved or padding word, from the end */
			size_t nres = w == 3 || w == 4 ? 2 : 4;

			u64[sz / 8 - 1 - R(nres)] = R(2) ? 1 : rnd(rs);
		} else if (mutate == 2) {	/* any 32-bit field after size */
			size_t i = 1 + R(sz / 4 - 1);

			u32[i] = mut32(rs, u32[i]);
		} else if (mutate == 3) {	/* any 64-bit word */
			size_t i = R(sz / 8);

			u64[i] = mut64(rs, u64[i]);
			if (i == 0)		/* keep the size sane-ish half the time */
				u32[0] = R(2) ? sz : u32[0];
		} else if (mutate == 4) {	/* an inner pointer */
			uint64_t p = R(4) ? bad_ptr(rs, NULL) : (uintptr_t)sc->ro;

			switch (w) {
			case 2: *(R(3) == 0 ? &((struct fhook_probe_add *)tmp)->filter :
				  R(2) ? &((struct fhook_probe_add *)tmp)->exclude :
					 &((struct fhook_probe_add *)tmp)->ips) = p;
				if (!((struct fhook_probe_add *)tmp)->filter_len && ONEIN(2))
					((struct fhook_probe_add *)tmp)->filter_len = 1 + R(FHOOK_MAX_PATTERN_TEXT);
				break;
			case 3: ((struct fhook_pid_filter *)tmp)->pids = p; break;
			case 4: ((struct fhook_cpu_filter *)tmp)->mask = p;
				((struct fhook_cpu_filter *)tmp)->nr_bits = 1 + R(128);
				break;
			case 7: ((struct fhook_stats *)tmp)->cpus = p;
				((struct fhook_stats *)tmp)->nr_cpus = 1 + R(64);
				break;
			default: u64[R(sz / 8)] = p; break;
			}
		} else if (mutate == 5) {	/* lengths and counts: huge */
			switch (w) {
			case 1: ((struct fhook_ring_setup *)tmp)->buf_size = mut64(rs, 4096); break;
			case 2: {
				struct fhook_probe_add *p = (void *)tmp;

				switch (R(3)) {
				case 0: p->filter_len = FHOOK_MAX_PATTERN_TEXT + 1 + R(1 << 20); break;
				case 1: p->exclude_len = ~0U - R(16); break;
				default: p->nr_ips = FHOOK_MAX_IPS + 1 + R(1 << 20); break;
				}
				break;
			}
			case 3: ((struct fhook_pid_filter *)tmp)->nr_pids = FHOOK_MAX_FILTER_PIDS + 1 + R(1 << 30); break;
			case 4: ((struct fhook_cpu_filter *)tmp)->nr_bits = FHOOK_MAX_CPUMASK * 8 + 1 + R(1 << 30); break;
			case 7: ((struct fhook_stats *)tmp)->nr_cpus = ~0U; break;
			default: u32[1] = ~0U; break;
			}
		} else if (mutate == 6) {	/* flags */
			if (w == 1 || w == 2 || w == 3 || w == 7)
				u32[w == 3 || w == 7 ? (w == 3 ? 1 : 3) : (w == 1 ? 1 : 2)] = 1U << R(32);
			else
				u32[1] = 1U << R(32);
		} else {			/* type / version / ids */
			u32[1] = (uint32_t)rnd(rs);
		}
	}

	/*
	 * READ_TEXT writes up to 4096 bytes wherever buf points: a mutated
	 * buf into the fuzzer's own memory would corrupt it, not test fhook.
	 * Only the real buffer or an address that can never be written.
	 */
	if (w == 12) {
		struct fhook_read_text *t = (void *)tmp;

		if (t->buf != (uintptr_t)read_text_buf)
			t->buf = bad_ptr(rs, NULL);
	}
	/*
	 * COUNTS writes at most FHOOK_MAX_COUNT_IPS entries to each array,
	 * whatever nr says: the halves of sc->ips hold that, anything else
	 * must be an address that can never be written.
	 */
	if (w == 14) {
		struct fhook_counts *n = (void *)tmp;

		if (n->ips != (uintptr_t)sc->ips)
			n->ips = bad_ptr(rs, NULL);
		if (n->counts != (uintptr_t)(sc->ips + COUNTS_OFF))
			n->counts = bad_ptr(rs, NULL);
	}

	/* keep the slow paths within their budgets */
	if (w == 9 && ((struct fhook_bench *)tmp)->nr_events > 4096)
		((struct fhook_bench *)tmp)->nr_events = 1 + R(4096);
	if (w == 1) {
		struct fhook_ring_setup *r = (void *)tmp;

		/* never a large valid ring: only invalid sizes above 64 KiB */
		if (r->buf_size > 65536 && r->buf_size <= FHOOK_RING_MAX_SIZE &&
		    !(r->buf_size & (r->buf_size - 1)))
			r->buf_size += 4096;
	}
	if (w == 2) {
		struct fhook_probe_add *p = (void *)tmp;

		/*
		 * Text reaches ftrace only if fill_text budgeted it: a mutated
		 * length could cut a short token out of a long one.
		 */
		if (!text_budgeted) {
			if (p->filter == (uintptr_t)sc->text && p->filter_len != text_len &&
			    p->filter_len <= FHOOK_MAX_PATTERN_TEXT)
				p->filter_len = text_len;
			if (p->exclude == (uintptr_t)sc->text && p->exclude_len != text_xlen &&
			    p->exclude_len <= FHOOK_MAX_PATTERN_TEXT)
				p->exclude_len = text_xlen;
		} else {
			c->slow = 1;
		}
		/* many valid addresses would take one ftrace hash update each */
		if (p->ips == (uintptr_t)sc->ips && p->nr_ips > 4)
			sc->ips[0] = 1;
	}
	if (w == 3) {
		struct fhook_pid_filter *f = (void *)tmp;
		int toggles = !!(f->flags & FHOOK_PIDF_FOLLOW_FORK) != atomic_load(&st_follow);

		if (toggles && !take(&b_follow, &n_follow))
			f->flags ^= FHOOK_PIDF_FOLLOW_FORK;
		else if (toggles)
			c->slow = 4;
	}
	if (w == 7) {
		struct fhook_stats *st = (void *)tmp;
		uint64_t a = (uintptr_t)sc->area;

		/* the only inner output pointer: never into our own memory */
		if (st->cpus && st->cpus < 0x800000000000ULL &&
		    !(st->cpus >= a && st->cpus < a + 4 * page))
			st->cpus = (uintptr_t)unmapped;
	}
	if (w == 4) {
		struct fhook_cpu_filter *f = (void *)tmp;

		if (f->nr_bits && f->nr_bits <= FHOOK_MAX_CPUMASK * 8 && f->mask == (uintptr_t)sc->mask) {
			if (take(&b_cpu, &n_cpu))
				c->slow = 3;
			else
				f->nr_bits = 0;
		}
	}

	/* where the struct lives */
	if (argptr == 0) {
		int k;

		c->arg = bad_ptr(rs, &k);
		c->must_efault = 1;
	} else if (argptr == 1) {		/* runs into the guard page */
		size_t in = 1 + R(sz < 8 ? 4 : sz - 4);

		if (in < 4)
			in = 4;
		memcpy(sc->guard - in, tmp, in);
		c->arg = (uintptr_t)(sc->guard - in);
		/* the size word is readable; the struct is not (unless size < in) */
		c->must_efault = u32[0] > in && u32[0] >= sz && u32[0] <= (uint32_t)page;
	} else if (argptr == 2) {		/* read-only: input works, output faults */
		c->arg = (uintptr_t)sc->ro + RO_OFF(w);
	} else {
		memset(sc->area, 0, 2 * page);
		memcpy(sc->area, tmp, sz);
		c->arg = (uintptr_t)sc->area;
	}
}

/* ------------------------------------------------------------------ */

static const int known[] = {
	EFAULT, EINVAL, E2BIG, ENOTTY, EBUSY, ENOENT, ENOSPC, ENODEV, EOPNOTSUPP, ENOMEM,
	/* kprobes and uprobes (docs/kernel-module.md, PROBE_ADD and START) */
	EILSEQ, ELOOP, ERANGE, EISDIR, ENOTDIR, ENAMETOOLONG, EACCES,
	/* hooks without lab mode, direct trampolines not armed */
	EPERM, ENOTCONN,
	/* a record larger than the ring (START), a function that may not return */
	EMSGSIZE, EDEADLK, 0
};

static void violation(const struct call *c, long ret, int err, const char *why)
{
	if (atomic_fetch_add(&n_violations, 1) < 20)
		printf("VIOLATION: cmd %#x arg %#llx (decoded %d): ret %ld errno %d (%s): %s\n",
		       c->cmd, (unsigned long long)c->arg, c->which, ret, err, strerror(err), why);
}

static void setup_ready(uint64_t *rs)
{
	struct fhook_ring_setup r = { .size = sizeof(r), .buf_size = 16384 };
	struct fhook_probe_add pa = {
		.size = sizeof(pa), .type = FHOOK_PROBE_FUNC, .ips = (uintptr_t)&ip_read, .nr_ips = 1,
	};

	if (ioctl(sfd, FHOOK_IOC_RING_SETUP, &r) == 0)
		atomic_store(&st_ring, 1);
	if (ioctl(sfd, FHOOK_IOC_PROBE_ADD, &pa) == 0)
		atomic_fetch_add(&st_probes, 1);
	if (R(2) && take(&b_arm, &n_arm) && ioctl(sfd, FHOOK_IOC_START, 0) == 0)
		atomic_store(&st_armed, 1);
}

static void reopen(uint64_t *rs)
{
	int fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror("open " FHOOK_DEVICE_PATH);
		exit(1);
	}
	/* the old session dies when the last call on it returns */
	if (dup2(fd, sfd) < 0) {
		perror("dup2");
		exit(1);
	}
	close(fd);
	atomic_store(&st_ring, 0);
	atomic_store(&st_probes, 0);
	atomic_store(&st_armed, 0);
	atomic_store(&st_follow, 0);
	atomic_fetch_add(&n_sessions, 1);
	if (ONEIN(8))
		setup_ready(rs);
}

struct worker {
	pthread_t th;
	int id;
	uint64_t seed;
	long ncalls;
};

static atomic_int fuzz_done;
static atomic_long n_tails;

/*
 * The consumer page, forged while records flow: whatever session the
 * shared number holds, map a CPU's meta and consumer pages and write
 * tails around data_head (a little ahead, a ring ahead or behind, far
 * off, random) and random seq_read, reading files meanwhile (the ready
 * sessions trace vfs_read).  The producers must drop what does not fit
 * and never write outside the ring.
 */
static void *tails(void *arg)
{
	uint64_t *rs = arg;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int rd = open("/etc/passwd", O_RDONLY);

	while (!atomic_load(&fuzz_done)) {
		off_t base = (off_t)(R(ncpu) * FHOOK_MMAP_STRIDE);
		volatile struct fhook_ring_meta *meta;
		volatile struct fhook_ring_cons *cons;
		char c[64];

		meta = mmap(NULL, page, PROT_READ, MAP_SHARED, sfd, base);
		cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, base + page);
		if (meta != MAP_FAILED && cons != MAP_FAILED) {
			for (int i = 0; i < 64; i++) {
				uint64_t head = meta->data_head, size = meta->data_size;
				const uint64_t d[] = { 8, size, -size, size + 8, rnd(rs), 0 };

				cons->data_tail = head + d[R(6)];
				cons->seq_read = rnd(rs);
				if (rd >= 0 && pread(rd, c, sizeof(c), 0) < 0)
					break;
			}
			atomic_fetch_add(&n_tails, 64);
		}
		if (meta != MAP_FAILED)
			munmap((void *)meta, page);
		if (cons != MAP_FAILED)
			munmap((void *)cons, page);
		usleep(1000);
	}
	if (rd >= 0)
		close(rd);
	return NULL;
}

static void *fuzz(void *arg)
{
	struct worker *wk = arg;
	uint64_t *rs = &wk->seed;
	struct scratch sc;
	struct call c;

	scratch_init(&sc);
	for (long i = 0; i < wk->ncalls; i++) {
		long ret;
		int err;
		double t;

		if (wk->id == 0 && i && i % reopen_every == 0)
			reopen(rs);
		gen(rs, &sc, &c);
		errno = 0;
		t = now();
		ret = ioctl(sfd, c.cmd, c.arg);
		err = errno;
		t = now() - t;
		tsum[c.which + 1] += t;
		tcnt[c.which + 1]++;
		if (t > 0.5 && atomic_fetch_add(&n_slowcalls, 1) < 20)
			printf("slow call: %.2f s: cmd %#x (decoded %d, slow path %d) ret %ld errno %d\n",
			       t, c.cmd, c.which, c.slow, ret, ret < 0 ? err : 0);
		if ((atomic_fetch_add(&calls_done, 1) + 1) % progress_every == 0)
			printf("%ld calls, %.1f s, sessions %ld, slow paths: text %ld arm %ld cpumask %ld follow %ld\n",
			       atomic_load(&calls_done), now() - t_start, atomic_load(&n_sessions),
			       atomic_load(&n_text), atomic_load(&n_arm), atomic_load(&n_cpu),
			       atomic_load(&n_follow));
		if (ret == 0) {
			atomic_fetch_add(&n_ok, 1);
			switch (c.which) {
			case 1: atomic_store(&st_ring, 1); break;
			case 2: atomic_fetch_add(&st_probes, 1); break;
			case 3: atomic_store(&st_follow,
					     !!(((struct fhook_pid_filter *)c.arg)->flags &
						FHOOK_PIDF_FOLLOW_FORK));
				break;
			case 5: atomic_store(&st_armed, 1); break;
			case 6: atomic_store(&st_armed, 0); break;
			}
		} else {
			atomic_fetch_add(&errs[err < NERR && err > 0 ? err : 0], 1);
		}
		if (ret > 0)
			violation(&c, ret, err, "positive return");
		if (c.which < 0 && !(ret < 0 && err == ENOTTY))
			violation(&c, ret, err, "not an fhook command: ENOTTY expected");
		if (c.must_efault && c.which >= 0 && c.which != 5 && c.which != 6 &&
		    !(ret < 0 && err == EFAULT))
			violation(&c, ret, err, "unreadable argument: EFAULT expected");
		if (ret < 0) {
			int ok = 0;

			for (const int *k = known; *k; k++)
				ok |= *k == err;
			if (!ok)
				violation(&c, ret, err, "errno outside the documented set");
		}
		(void)c.slow;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long long seed = 0;
	int nthreads = 2, opt;
	struct worker w[MAXT];
	double t0, t1;
	long calls = 1000000;

	while ((opt = getopt(argc, argv, "s:n:t:r:p:")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': calls = atol(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'r': reopen_every = atoi(optarg); break;
		case 'p': progress_every = atol(optarg); break;
		default:
			fprintf(stderr, "usage: fhook-fuzz [-s SEED] [-n CALLS] [-t THREADS] [-r REOPEN] [-p PROGRESS]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAXT || reopen_every < 1)
		return 2;
	if (!seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (ts.tv_sec * 1000000007ULL) ^ ts.tv_nsec ^ ((unsigned long long)getpid() << 40);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("fhook-fuzz: seed %llu calls %ld threads %d reopen every %d\n", seed, calls,
	       nthreads, reopen_every);
	page = sysconf(_SC_PAGESIZE);
	/* never unmapped: an unmapped page could be reused by a later mmap */
	unmapped = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ip_read = kallsyms("vfs_read");
	ip_write = kallsyms("vfs_write");
	ip_getattr = kallsyms("vfs_getattr");
	read_text_buf = mmap(NULL, 2 * FHOOK_MAX_READ_TEXT, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (read_text_buf == MAP_FAILED ||
	    mprotect(read_text_buf + FHOOK_MAX_READ_TEXT, FHOOK_MAX_READ_TEXT, PROT_NONE)) {
		perror("mmap");
		return 1;
	}
	if (!ip_read || !ip_write) {
		printf("vfs_read/vfs_write not in /proc/kallsyms\n");
		return 1;
	}
	target = calls;
	sfd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (sfd < 0) {
		perror("open " FHOOK_DEVICE_PATH);
		return 1;
	}
	n_sessions = 1;

	t0 = t_start = now();
	{
		static uint64_t tail_seed;
		static pthread_t tail_th;

		tail_seed = seed ^ 0x5bd1e995ULL;
		pthread_create(&tail_th, NULL, tails, &tail_seed);
		for (int i = 0; i < nthreads; i++) {
			w[i].id = i;
			w[i].seed = (seed + 0x9e3779b97f4a7c15ULL * (i + 1)) | 1;
			w[i].ncalls = calls / nthreads + (i < calls % nthreads);
			pthread_create(&w[i].th, NULL, fuzz, &w[i]);
		}
		for (int i = 0; i < nthreads; i++)
			pthread_join(w[i].th, NULL);
		atomic_store(&fuzz_done, 1);
		pthread_join(tail_th, NULL);
	}
	t1 = now();
	close(sfd);

	{
		struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
		int fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);

		if (fd < 0 || ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs)) {
			perror("final handshake");
			return 1;
		}
		if (hs.nr_sessions != 1) {
			printf("VIOLATION: %u sessions open after closing everything\n", hs.nr_sessions);
			n_violations++;
		}
		close(fd);
	}

	printf("errno histogram:");
	for (int e = 0; e < NERR; e++)
		if (errs[e])
			printf(" %s=%ld", e ? strerrorname_np(e) : "other", errs[e]);
	printf("\n");
	printf("seconds in ioctl by command:");
	for (int i = 0; i < NCMD + 1; i++)
		printf(" %s=%.1f/%ld", i ? (const char *[]){ "HANDSHAKE", "RING_SETUP", "PROBE_ADD",
			"PID_FILTER", "CPU_FILTER", "START", "STOP", "STATS", "SNAPSHOT", "BENCH", "TRIGGER_ADD", "DIRECT_MODIFY", "READ_TEXT",
			"LATENCY", "COUNTS", "KHOOKS", "HIST_SET", "HIST_READ", "LAST_ERROR" }[i - 1] : "other",
		       tsum[i], tcnt[i]);
	printf("\n");
	printf("slow paths: text %ld (star %ld), arm %ld, cpumask %ld, follow %ld\n", n_text, n_star,
	       n_arm, n_cpu, n_follow);
	printf("forged consumer tails: %ld\n", n_tails);
	printf("calls %ld ok %ld sessions %ld secs %.1f calls_per_sec %.0f violations %ld seed %llu\n",
	       calls_done, n_ok, n_sessions, t1 - t0, calls_done / (t1 - t0), n_violations, seed);
	return n_violations ? 1 : 0;
}
