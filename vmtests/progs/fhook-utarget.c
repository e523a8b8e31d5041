// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-utarget N: the uprobe tests' target.  Calls fhk_target(&o, i % 5)
 * for i = 0..N-1 with o = { .a = 10 * i, .b = -i, .in = &in, .n = i } and
 * in = { .label = "alpha" | "beta" | "gamma" (i % 3), .id = i }, so that
 * +0(+0(+16(%di))):string is the label and $retval is i + i % 5.
 * -d MS sleeps before and after, like fhook-workload.  -m FILE: the
 * labels are the strings at the start of FILE's pages (call i: page i),
 * mapped and never touched by the program, so that reading one from the
 * probe handler needs a page fault.
 *
 * Even calls go main -> fhk_via_even -> fhk_step -> fhk_target, odd ones
 * through fhk_via_odd: user stacks by frame pointers (built with them)
 * taken at fhk_target's entry are fhk_target, fhk_via_even or
 * fhk_via_odd, main (fhk_step's frame is not made yet when fhk_target is
 * entered: its caller is the one that a frame pointer walk skips).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct inner {
	const char *label;
	int id;
};

struct outer {
	long a;
	long b;
	struct inner *in;
	int n;
};

__attribute__((noinline)) int fhk_target(struct outer *o, int k)
{
	asm volatile("" : : "r"(o) : "memory");
	return o->n + k;
}

/* no tail calls: each caller's frame stays on the stack */
__attribute__((noinline)) int fhk_step(struct outer *o, int k)
{
	int r = fhk_target(o, k);

	asm volatile("" : "+r"(r));
	return r;
}

/* noipa: not merged with fhk_via_odd, whose body is the same */
__attribute__((noipa)) int fhk_via_even(struct outer *o, int k)
{
	int r = fhk_step(o, k);

	asm volatile("" : "+r"(r));
	return r;
}

__attribute__((noipa)) int fhk_via_odd(struct outer *o, int k)
{
	int r = fhk_step(o, k);

	asm volatile("" : "+r"(r));
	return r;
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	static const char *const labels[] = { "alpha", "beta", "gamma" };
	const char *pages = NULL;
	long n, delay = 0, sum = 0, npages = 0;
	struct inner in;
	struct outer o;

	if (argc > 3 && !strcmp(argv[1], "-m")) {
		int fd = open(argv[2], O_RDONLY);
		struct stat st;

		if (fd < 0 || fstat(fd, &st))
			return 2;
		npages = st.st_size / 4096;
		pages = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (pages == MAP_FAILED || !npages)
			return 2;
		argv += 2;
		argc -= 2;
	}
	if (argc > 3 && !strcmp(argv[1], "-d")) {
		delay = atol(argv[2]);
		argv += 2;
	}
	n = argv[1] ? atol(argv[1]) : 10;
	msleep(delay);
	for (long i = 0; i < n; i++) {
		in.label = pages ? pages + i % npages * 4096 : labels[i % 3];
		in.id = i;
		o.a = 10 * i;
		o.b = -i;
		o.in = &in;
		o.n = i;
		sum += i % 2 ? fhk_via_odd(&o, i % 5) : fhk_via_even(&o, i % 5);
	}
	msleep(delay);
	return sum == -1;
}
