// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-workload: deterministic syscall workloads for the guest tests.
 *
 *   fhook-workload [-d MS] read N        N x read(fd, buf, 1) on /dev/zero
 *   fhook-workload [-d MS] write N       N x write(fd, buf, 1) on /dev/null
 *   fhook-workload [-d MS] rw N          N x (read /dev/zero + write /dev/null)
 *   fhook-workload [-d MS] fork N [R]    R reads (default 100), then N children
 *                                        that do R reads each; waits for them
 *   fhook-workload spin SEC [CPU]        reads+writes for SEC seconds (pinned
 *                                        to CPU if given): heavy background load
 *   fhook-workload load SEC [CPU]        light background load: a burst of 20
 *                                        reads+writes every 5 ms for SEC seconds
 *
 * -d MS sleeps MS milliseconds before and after the work (nanosleep only),
 * so that concurrent tracers are guaranteed to overlap.
 *
 * Between exec and exit the work loops are the only source of vfs_read /
 * vfs_write calls: nothing is printed (except errors, to stderr, which also
 * makes the exit status non-zero) and no file other than /dev/zero and
 * /dev/null is opened.  Static binary, so no dynamic loader reads either.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "fhook-workload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static long num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "fhook-workload: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		die(path);
	return fd;
}

static void do_reads(int fd, long n)
{
	char c;

	for (long i = 0; i < n; i++)
		if (read(fd, &c, 1) != 1)
			die("read /dev/zero");
}

static void do_writes(int fd, long n)
{
	char c = 0;

	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1)
			die("write /dev/null");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fhook-workload [-d MS] read N | write N | rw N | fork N [R]\n"
		"       fhook-workload spin|load SEC [CPU]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long delay = 0;
	const char *mode;

	if (argc > 2 && !strcmp(argv[1], "-d")) {
		delay = num(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3)
		usage();
	mode = argv[1];

	if (!strcmp(mode, "spin") || !strcmp(mode, "load")) {
		int light = !strcmp(mode, "load");
		double end = now() + num(argv[2]);
		int rfd, wfd;

		if (argc > 3) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(num(argv[3]), &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				die("sched_setaffinity");
		}
		rfd = open_or_die("/dev/zero", O_RDONLY);
		wfd = open_or_die("/dev/null", O_WRONLY);
		while (now() < end) {
			if (light) {
				for (int i = 0; i < 20; i++) {
					do_reads(rfd, 1);
					do_writes(wfd, 1);
				}
				msleep(5);
				continue;
			}
			do_reads(rfd, 64);
			do_writes(wfd, 64);
		}
		return 0;
	}

	if (delay)
		msleep(delay);
	if (!strcmp(mode, "read")) {
		do_reads(open_or_die("/dev/zero", O_RDONLY), num(argv[2]));
	} else if (!strcmp(mode, "write")) {
		do_writes(open_or_die("/dev/null", O_WRONLY), num(argv[2]));
	} else if (!strcmp(mode, "rw")) {
		int rfd = open_or_die("/dev/zero", O_RDONLY);
		int wfd = open_or_die("/dev/null", O_WRONLY);
		long n = num(argv[2]);

		for (long i = 0; i < n; i++) {
			do_reads(rfd, 1);
			do_writes(wfd, 1);
		}
	} else if (!strcmp(mode, "fork")) {
		long n = num(argv[2]), r = argc > 3 ? num(argv[3]) : 100;
		int fd = open_or_die("/dev/zero", O_RDONLY);
		int status, failed = 0;

		do_reads(fd, r);
		for (long i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0)
				die("fork");
			if (pid == 0) {
				do_reads(fd, r);
				_exit(0);
			}
		}
		while (wait(&status) > 0)
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				failed = 1;
		if (failed) {
			fprintf(stderr, "fhook-workload: a child failed\n");
			return 1;
		}
	} else {
		usage();
	}
	if (delay)
		msleep(delay);
	return 0;
}
