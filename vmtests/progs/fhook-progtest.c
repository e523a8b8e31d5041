// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-progtest: the module's fetch-program verifier and interpreter under
 * hostile input (TAP output).
 *
 *   fhook-progtest verify      hand-made bad programs: each one EINVAL with
 *                              err_index on the bad instruction
 *   fhook-progtest fuzz N SEED N random programs (mostly well formed, some
 *                              corrupted); the accepted ones are armed as a
 *                              kprobe or kretprobe on vfs_read, hit, and
 *                              their records checked for size and data_loc
 *                              bounds; wild addresses must only fault
 *   fhook-progtest holes       a kprobe of registers only (written straight
 *                              into the ring): its fields right, the bytes
 *                              between and after them zero where the ring
 *                              held other records before
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progs.h"

#define I(o, sz, d, a, im) ((struct fhook_insn){ .op = (o), .size = (sz), .dst = (d), \
						 .arg = (a), .imm = (im) })

/*
 * Registers of this CPU (the module refuses the others' at the load):
 * ANY_REG, any one, for the checks about something else; REG_ARG1, the first
 * argument's; REG_OTHER, one of the other CPU's
 */
#if defined(__aarch64__)
#define ANY_REG		(FHOOK_REG_X0 + 1)
#define REG_ARG1	FHOOK_REG_X0
#define REG_OTHER	FHOOK_REG_BX
#elif defined(__x86_64__)
#define ANY_REG		FHOOK_REG_BX
#define REG_ARG1	FHOOK_REG_DI
#define REG_OTHER	FHOOK_REG_X0
#else
#error "fhook-progtest: registers for x86-64 and arm64 only"
#endif

static void expect(int ok, const char *fmt, const char *what, long a, long b)
{
	char line[256];

	snprintf(line, sizeof(line), fmt, what, a, b);
	tap(ok, "%s", line);
}

/* PROBE_ADD of a kprobe on vfs_read; returns -errno or the probe id. */
static long add(int fd, int ret, const struct fhook_insn *p, unsigned int n, unsigned int entry,
		unsigned int data, int *err_index)
{
	struct fhook_probe_add pa = { .size = sizeof(pa) };

	pa.type = ret ? FHOOK_PROBE_KRETPROBE : FHOOK_PROBE_KPROBE;
	pa.symbol = (uintptr_t)"vfs_read";
	pa.symbol_len = 8;
	pa.prog = (uintptr_t)p;
	pa.prog_len = n;
	pa.entry_len = entry;
	pa.data_size = data;
	pa.err_index = -1;
	if (ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa)) {
		*err_index = pa.err_index;
		return -errno;
	}
	*err_index = pa.err_index;
	return pa.probe_id;
}

struct bad {
	const char *what;
	int ret;
	unsigned int entry, data;
	int want_index;		/* -1: EINVAL without an index */
	unsigned int n;
	struct fhook_insn p[70];
};

static void verify(void)
{
	static struct bad cases[] = {
		{ "op 0", 0, 0, 8, 0, 1, { I(0, 0, 0, 0, 0) } },
		{ "op past the last", 0, 0, 8, 0, 1, { I(FHOOK_OP_MAX, 0, 0, 0, 0) } },
		{ "register past the last", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_REG, 0, 0, FHOOK_REG_MAX, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "the other CPU's register", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_REG, 0, 0, REG_OTHER, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "$arg0", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_ARG, 0, 0, 0, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "$arg33", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_ARG, 0, 0, FHOOK_MAX_ARGN + 1, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "$stack1025", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_STACK, 0, 0, FHOOK_MAX_STACKN + 1, 0),
		    I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "store without a load", 0, 0, 8, 0, 1, { I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "dangling load", 0, 0, 8, 2, 3,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0),
		    I(FHOOK_OP_REG, 0, 0, ANY_REG, 0) } },
		{ "two loads", 0, 0, 8, 1, 3,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_IMM, 0, 0, 0, 5),
		    I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "deref without a load", 0, 0, 8, 0, 1, { I(FHOOK_OP_DEREF, 0, 0, 0, 0) } },
		{ "store size 3", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 3, 0, 0, 0) } },
		{ "store size 16", 0, 0, 16, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 16, 0, 0, 0) } },
		{ "store past data_size", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 8, 4, 0, 0) } },
		{ "store at dst 65535", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 1, 65535, 0, 0) } },
		{ "array of 0", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_MEM, 8, 0, 0, 0) } },
		{ "array of 257", 0, 0, 2048, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_MEM, 1, 0, FHOOK_MAX_ARRAY + 1, 0) } },
		{ "array past data_size", 0, 0, 2047, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_MEM, 8, 0, 256, 0) } },
		{ "string of 0", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_STRING, 0, 0, 0, 0) } },
		{ "string of 4097", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0),
		    I(FHOOK_OP_ST_STRING, 0, 0, FHOOK_MAX_STRING + 1, 0) } },
		{ "data_loc past data_size", 0, 0, 6, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_USTRING, 0, 4, 16, 0) } },
		{ "comm after a load", 0, 0, 8, 1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_COMM, 0, 0, 0, 0) } },
		{ "$retval in a kprobe", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_RETVAL, 0, 0, 0, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "$retval at entry", 1, 2, 8, 0, 2,
		  { I(FHOOK_OP_RETVAL, 0, 0, 0, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "$arg at return", 1, 0, 8, 0, 2,
		  { I(FHOOK_OP_ARG, 0, 0, 1, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "entry part ending in a load", 1, 1, 8, 0, 2,
		  { I(FHOOK_OP_ARG, 0, 0, 1, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "reserved bits: REG with imm", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 7), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "reserved bits: IMM with arg", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_IMM, 0, 0, 1, 7), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "reserved bits: load with dst", 0, 0, 8, 0, 2,
		  { I(FHOOK_OP_REG, 0, 3, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "reserved bits: deref with arg", 0, 0, 8, 1, 3,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_DEREF, 0, 0, 1, 0),
		    I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "entry_len on a kprobe", 0, 1, 8, -1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "entry_len past prog_len", 1, 3, 8, -1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "data_size past the max", 0, 0, FHOOK_MAX_DATA_SIZE + 1, -1, 2,
		  { I(FHOOK_OP_REG, 0, 0, ANY_REG, 0), I(FHOOK_OP_ST_RAW, 8, 0, 0, 0) } },
		{ "data_size without a program", 0, 0, 8, -1, 0, { I(0, 0, 0, 0, 0) } },
	};
	static struct fhook_insn many[2 * FHOOK_MAX_FIELDS + 2];
	static struct fhook_insn deep[FHOOK_MAX_DEREF + 3];
	static struct fhook_insn huge[FHOOK_MAX_INSNS + 1];
	struct sess s;
	int idx;
	long r;
	unsigned int i;

	sess_open(&s, 1 << 16, 0, 0, 0, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bad *c = &cases[i];

		r = add(s.fd, c->ret, c->p, c->n, c->entry, c->data, &idx);
		expect(r == -EINVAL && idx == c->want_index, "%s: error %ld, err_index %ld",
		       c->what, r, idx);
	}
	/* 65 fields: the 65th store is refused */
	for (i = 0; i < FHOOK_MAX_FIELDS + 1; i++) {
		many[2 * i] = I(FHOOK_OP_REG, 0, 0, ANY_REG, 0);
		many[2 * i + 1] = I(FHOOK_OP_ST_RAW, 1, i, 0, 0);
	}
	r = add(s.fd, 0, many, 2 * (FHOOK_MAX_FIELDS + 1), 0, 128, &idx);
	expect(r == -EINVAL && idx == 2 * FHOOK_MAX_FIELDS + 1, "%s: error %ld, err_index %ld",
	       "65 fields", r, idx);
	/* 17 dereferences */
	deep[0] = I(FHOOK_OP_REG, 0, 0, ANY_REG, 0);
	for (i = 1; i <= FHOOK_MAX_DEREF + 1; i++)
		deep[i] = I(FHOOK_OP_DEREF, 0, 0, 0, 0);
	deep[i] = I(FHOOK_OP_ST_RAW, 8, 0, 0, 0);
	r = add(s.fd, 0, deep, i + 1, 0, 8, &idx);
	expect(r == -EINVAL && idx == FHOOK_MAX_DEREF + 1, "%s: error %ld, err_index %ld",
	       "17 dereferences", r, idx);
	/* too long, and unreadable */
	r = add(s.fd, 0, huge, FHOOK_MAX_INSNS + 1, 0, 8, &idx);
	expect(r == -EINVAL && idx == -1, "%s: error %ld, err_index %ld", "1025 instructions", r,
	       idx);
	r = add(s.fd, 0, (struct fhook_insn *)8, 2, 0, 8, &idx);
	expect(r == -EFAULT, "%s: error %ld (%ld)", "program at address 8", r, 0);
	/* and the good one still works */
	cases[2].p[0].arg = REG_ARG1;
	r = add(s.fd, 0, cases[2].p, 2, 0, 8, &idx);
	expect(r > 0, "%s: probe id %ld (%ld)", "a well-formed program", r, 0);
	sess_unmap(&s);
	close(s.fd);
}

static uint64_t rnd(void)
{
	return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 11) ^ random();
}

static char user_buf[64] = "user string";

static uint64_t wild_address(void)
{
	static const uint64_t addrs[] = {
		0, 8, 0x1000, 0xffff800000000000ULL, 0x0000800000000000ULL,
		0xffffffffffffffffULL,
#if defined(__aarch64__)
		/* the linear map's start (52-bit VA, 48-bit), the kernel
		 * image's place without KASLR */
		0xfff0000000000000ULL, 0xffff000000000000ULL, 0xffff800080000000ULL,
#else
		0xffffffffff600000ULL /* vsyscall */,
		0xffffffff81000000ULL, 0xffff888000000000ULL, 0xffffc90000000000ULL,
#endif
	};

	if (random() % 4 == 0)
		return (uintptr_t)user_buf;
	if (random() % 4 == 0)
		return rnd();
	return addrs[random() % (sizeof(addrs) / sizeof(addrs[0]))];
}

/* A random program: nf fields, each a load, 0-3 derefs and a store. */
static unsigned int gen(struct fhook_insn *p, int ret, unsigned int *entry, unsigned int *data)
{
	unsigned int nf = 1 + random() % 8, n = 0, dst = 0, f, d;

	*entry = 0;
	for (f = 0; f < nf; f++) {
		int at_entry = ret && f < nf / 2;
		unsigned int k = random() % 6;

		if (ret && f == nf / 2)
			*entry = n;
		if (random() % 8 == 0) {
			p[n++] = I(FHOOK_OP_ST_COMM, 0, dst, 0, 0);
			dst += 4;
			continue;
		}
		switch (k) {
		case 0:
			p[n++] = I(FHOOK_OP_REG, 0, 0, random() % FHOOK_REG_MAX, 0);
			break;
		case 1:
			p[n++] = (ret && !at_entry) ? I(FHOOK_OP_RETVAL, 0, 0, 0, 0)
						    : I(FHOOK_OP_ARG, 0, 0, 1 + random() % 8, 0);
			break;
		case 2:
			p[n++] = I(FHOOK_OP_STACK, 0, 0, random() % 64, 0);
			break;
		case 3:
			p[n++] = I(FHOOK_OP_STACKP, 0, 0, 0, 0);
			break;
		default:
			p[n++] = I(FHOOK_OP_IMM, 0, 0, 0, (int64_t)wild_address());
		}
		for (d = random() % 4; d; d--)
			p[n++] = I(random() % 3 ? FHOOK_OP_DEREF : FHOOK_OP_UDEREF, 0, 0, 0,
				   (int64_t)(random() % 3 ? (random() % 64) * 8 : rnd()));
		switch (random() % 5) {
		case 0:
			p[n++] = I(FHOOK_OP_ST_RAW, 1 << (random() % 4), dst, 0, 0);
			dst += 8;
			break;
		case 1:
			p[n++] = I(random() % 2 ? FHOOK_OP_ST_MEM : FHOOK_OP_ST_UMEM,
				   1 << (random() % 4), dst, 1 + random() % 16, random() % 64);
			dst += 128;
			break;
		case 2:
		case 3:
			p[n++] = I(random() % 2 ? FHOOK_OP_ST_STRING : FHOOK_OP_ST_USTRING, 0, dst,
				   1 + random() % FHOOK_MAX_STRING, random() % 16);
			dst += 4;
			break;
		default:
			p[n++] = I(FHOOK_OP_ST_RAW, 8, dst, 0, 0);
			dst += 8;
		}
	}
	*data = dst;
	/* corrupt one byte of one in five programs */
	if (random() % 5 == 0)
		((uint8_t *)p)[random() % (n * sizeof(*p))] ^= 1 << (random() % 8);
	return n;
}

static void fuzz(long count, unsigned int seed)
{
	static struct fhook_insn p[8 * 6];
	long accepted = 0, rejected = 0, records = 0, bad_records = 0;
	char buf[16];
	int zfd = open("/dev/zero", O_RDONLY);

	srandom(seed);
	for (long i = 0; i < count; i++) {
		unsigned int entry, data, n;
		int ret = random() % 3 == 0, idx, k;
		struct sess s;
		long id;

		n = gen(p, ret, &entry, &data);
		sess_open(&s, 1 << 16, 0, 0, 0, 0);
		id = add(s.fd, ret, p, n, entry, data, &idx);
		if (id < 0) {
			if (id != -EINVAL)
				tap(0, "program %ld: error %ld, not EINVAL", i, id);
			rejected++;
			sess_unmap(&s);
			close(s.fd);
			continue;
		}
		accepted++;
		if (ioctl(s.fd, FHOOK_IOC_START))
			die("start");
		for (k = 0; k < 3; k++)
			if (read(zfd, buf, 1) != 1)
				die("read /dev/zero");
		if (ioctl(s.fd, FHOOK_IOC_STOP))
			die("stop");
		for (unsigned int c = 0; c < s.ncpu; c++) {
			struct ring *r = &s.r[c];
			uint64_t pos = r->cons->data_tail, head = r->meta->data_head;

			while (pos < head) {
				const struct fhook_rec_probe *rec =
					(const void *)((const char *)r->data + (pos & (r->size - 1)));
				unsigned int sz = rec->hdr.size;

				if (rec->hdr.type == FHOOK_REC_KPROBE ||
				    rec->hdr.type == FHOOK_REC_KRETPROBE) {
					records++;
					if (sz < sizeof(*rec) + data ||
					    sz > sizeof(*rec) + FHOOK_MAX_PROBE_DATA)
						bad_records++;
				}
				pos += (sz + 7) & ~7u;
			}
		}
		sess_unmap(&s);
		close(s.fd);
	}
	expect(accepted > count / 2 && rejected > 0, "%s: accepted %ld, rejected %ld",
	       "random programs", accepted, rejected);
	expect(records >= accepted && bad_records == 0, "%s: %ld records, %ld of a bad size",
	       "records of the accepted programs", records, bad_records);
}

/*
 * vfs_read's kprobe stores arg1's low 4 bytes at 0 and arg2 (the buffer) at
 * 8 of a 20-byte data area: 4..8 and 16..24 (the record's padding) are no
 * field's.  Function probes on vfs_read and ksys_read put records of
 * another size between the kprobe's, so that each time the 64 KiB ring
 * wraps the kprobe's records land on bytes of function records (kernel
 * addresses, timestamps: never zero).
 */
static void holes(void)
{
	static const struct fhook_insn p[] = {
		I(FHOOK_OP_ARG, 0, 0, 1, 0), I(FHOOK_OP_ST_RAW, 4, 0, 0, 0),
		I(FHOOK_OP_ARG, 0, 0, 2, 0), I(FHOOK_OP_ST_RAW, 8, 8, 0, 0),
	};
	long records = 0, bad_hole = 0, bad_value = 0;
	uint64_t written = 0;
	char buf[16];
	int zfd = open("/dev/zero", O_RDONLY), idx;
	struct sess s;
	long id;

	sess_open(&s, 1 << 16, 0, 0, 0, 0);
	add_probe(&s, "vfs_read ksys_read");
	id = add(s.fd, 0, p, 4, 0, 20, &idx);
	if (id < 0) {
		tap(0, "register-only kprobe: error %ld", id);
		return;
	}
	if (ioctl(s.fd, FHOOK_IOC_START))
		die("start");
	for (int batch = 0; batch < 64; batch++) {
		for (int k = 0; k < 64; k++)
			if (read(zfd, buf, 1) != 1)
				die("read /dev/zero");
		for (unsigned int c = 0; c < s.ncpu; c++) {
			struct ring *r = &s.r[c];
			uint64_t pos = r->cons->data_tail;
			uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);

			written += head - pos;
			while (pos < head) {
				const struct fhook_rec_probe *rec =
					(const void *)(r->data + (pos & (r->size - 1)));
				unsigned int sz = rec->hdr.size;
				uint64_t arg2;
				uint32_t hole;

				if (rec->hdr.type == FHOOK_REC_KPROBE && rec->hdr.probe_id == id) {
					records++;
					memcpy(&hole, rec->data + 4, 4);
					memcpy(&arg2, rec->data + 8, 8);
					if (hole || sz != sizeof(*rec) + 20 ||
					    memcmp(rec->data + 16, "\0\0\0\0\0\0\0\0", 8))
						bad_hole++;
					if (arg2 != (uintptr_t)buf || rec->faults)
						bad_value++;
				}
				pos += (sz + 7) & ~7u;
			}
			__atomic_store_n(&r->cons->data_tail, head, __ATOMIC_RELEASE);
		}
	}
	if (ioctl(s.fd, FHOOK_IOC_STOP))
		die("stop");
	expect(records >= 64 * 64 && written > 3 * (1 << 16),
	       "%s: %ld records, the rings wrapped (%ld bytes written)", "register-only kprobe",
	       records, (long)written);
	expect(bad_hole == 0 && bad_value == 0,
	       "%s: %ld with a stale byte, %ld with a wrong field", "its records", bad_hole,
	       bad_value);
	sess_unmap(&s);
	close(s.fd);
	close(zfd);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "verify")) {
		verify();
	} else if (argc >= 4 && !strcmp(argv[1], "fuzz")) {
		fuzz(atol(argv[2]), atoi(argv[3]));
	} else if (argc >= 2 && !strcmp(argv[1], "holes")) {
		holes();
	} else {
		fprintf(stderr, "usage: fhook-progtest verify | fuzz N SEED | holes\n");
		return 2;
	}
	return tap_status();
}
