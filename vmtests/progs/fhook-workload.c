// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-workload: deterministic syscall workloads for the guest tests.
 *
 *   fhook-workload [-d MS] read N        N x read(fd, buf, 1) on /dev/zero
 *   fhook-workload [-d MS] write N       N x write(fd, buf, 1) on /dev/null
 *   fhook-workload [-d MS] rw N          N x (read /dev/zero + write /dev/null)
 *   fhook-workload [-d MS] fork N [R]    R reads (default 100), then N children
 *                                        that do R reads each; waits for them
 *   fhook-workload [-d MS] open N        N x: open /tmp/fhk-open-I (O_RDONLY,
 *                                        or O_CREAT|O_WRONLY mode 0600 when I%3
 *                                        == 0, then unlinked), then open
 *                                        /dev/zero and read I%7+1 bytes: the
 *                                        kprobe tests' known arguments
 *   fhook-workload spin SEC [CPU]        reads+writes for SEC seconds (pinned
 *                                        to CPU if given): heavy background load
 *   fhook-workload load SEC [CPU]        light background load: a burst of 20
 *                                        reads+writes every 5 ms for SEC seconds
 *   fhook-workload mix SEC               fork, read, write, sleep in a loop for
 *                                        SEC seconds (the trace_all workload)
 *   fhook-workload -s FILE leader-exit N the main thread waits for FILE and
 *                                        exits alone (pthread_exit); a second
 *                                        thread waits for FILE too, 300 ms
 *                                        more, does N reads and ends the
 *                                        process
 *   fhook-workload [-d MS] bpf-einval N  N x bpf(BPF_MAP_CREATE) of an array
 *                                        map with max_entries 0: EINVAL, from
 *                                        the map type's attribute check
 *   fhook-workload heartbeat SEC         print "hb N T GAP" (CLOCK_MONOTONIC)
 *                                        every second for SEC seconds, then
 *                                        "hb-max-gap G"; stdout is unbuffered
 *   fhook-workload stamps N FILE         N x read(fd, buf, 1) on /dev/zero, each
 *                                        between two CLOCK_MONOTONIC reads, a
 *                                        5 ms sleep and a move to the next CPU
 *                                        after every 10th; then
 *                                        "BEFORE AFTER" (ns) per read into FILE
 *
 * -d MS sleeps MS milliseconds before and after the work (nanosleep only),
 * so that concurrent tracers are guaranteed to overlap.
 *
 * -s FILE (read only): after N/2 reads, create FILE and keep reading while
 * FILE exists (the test removes it when it has done what it wanted to do
 * while the traced process was busy), then do the other N/2 reads and print
 * "reads R" on stderr: R is the exact number of reads done.
 *
 * Between exec and exit the work loops are the only source of vfs_read /
 * vfs_write calls: nothing is printed (except errors, to stderr, which also
 * makes the exit status non-zero) and no file other than /dev/zero and
 * /dev/null is opened.  Static binary, so no dynamic loader reads either.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
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

/* bpf(BPF_MAP_CREATE) refused N times with EINVAL, or die */
static int bpf_einval(long n)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 0;
	for (long i = 0; i < n; i++) {
		if (syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)) >= 0 || errno != EINVAL)
			die("bpf(BPF_MAP_CREATE) with max_entries 0 did not fail with EINVAL");
	}
	return 0;
}

/* The clock_stamps test's reads, each with the monotonic time around it */
static int stamps(long n, const char *file)
{
	unsigned long long *t = calloc(2 * n, sizeof(*t));
	int rfd = open_or_die("/dev/zero", O_RDONLY);
	int out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct timespec ts;
	cpu_set_t cpus;
	int ncpus;

	if (!t || out < 0)
		die(t ? file : "calloc");
	/* (not sysconf(): it reads /sys, a vfs_read of its own) */
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		die("sched_getaffinity");
	ncpus = CPU_COUNT(&cpus);
	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t[2 * i] = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		do_reads(rfd, 1);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t[2 * i + 1] = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		if (i % 10 == 9) {
			cpu_set_t set;

			/* and on to the next CPU: every CPU's anchors */
			CPU_ZERO(&set);
			CPU_SET((i / 10 + 1) % ncpus, &set);
			sched_setaffinity(0, sizeof(set), &set);
			msleep(5);
		}
	}
	for (long i = 0; i < n; i++)
		dprintf(out, "%llu %llu\n", t[2 * i], t[2 * i + 1]);
	return close(out) ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fhook-workload [-d MS] [-s FILE] read N | write N | rw N | open N | reopen N\n"
		"       fhook-workload [-d MS] fork N [R]\n"
		"       fhook-workload spin|load SEC [CPU] | mix SEC | heartbeat SEC | bpf-einval N\n"
		"       fhook-workload stamps N FILE\n");
	exit(2);
}

/* Reads in the middle of a "read N" run, while @file exists. */
static long sync_reads(int fd, const char *file)
{
	long n = 0;
	int cfd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (cfd < 0)
		die(file);
	close(cfd);
	while (access(file, F_OK) == 0) {
		do_reads(fd, 1);
		n++;
		if (n % 16 == 0)	/* a steady stream, not a flood */
			msleep(1);
	}
	return n;
}

/* trace_all's workload: processes come and go, reads, writes, sleeps. */
static int mix(long secs)
{
	double end = now() + secs;
	int rfd = open_or_die("/dev/zero", O_RDONLY);
	int wfd = open_or_die("/dev/null", O_WRONLY);
	long rounds = 0;

	while (now() < end) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			do_reads(rfd, 10);
			do_writes(wfd, 10);
			_exit(0);
		}
		do_reads(rfd, 50);
		do_writes(wfd, 50);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			die("child");
		msleep(20);
		rounds++;
	}
	fprintf(stderr, "mix rounds %ld\n", rounds);
	return 0;
}

static int heartbeat(long secs)
{
	double start = now(), last = start, max = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (long i = 1; now() < start + secs; i++) {
		double t;

		msleep(1000);
		t = now();
		if (t - last > max)
			max = t - last;
		printf("hb %ld %.3f %.3f\n", i, t - start, t - last);
		last = t;
	}
	printf("hb-max-gap %.3f\n", max);
	return 0;
}

struct leader_exit_arg {
	const char *file;
	long n;
};

static void *leader_exit_thread(void *p)
{
	const struct leader_exit_arg *a = p;

	while (access(a->file, F_OK))
		msleep(20);
	msleep(300);	/* the leader is gone by then */
	do_reads(open_or_die("/dev/zero", O_RDONLY), a->n);
	exit(0);
}

static int leader_exit(const char *file, long n)
{
	static struct leader_exit_arg a;
	pthread_t t;

	if (!file)
		usage();
	a.file = file;
	a.n = n;
	if (pthread_create(&t, NULL, leader_exit_thread, &a))
		die("pthread_create");
	while (access(file, F_OK))
		msleep(20);
	pthread_exit(NULL);
}

int main(int argc, char **argv)
{
	long delay = 0;
	const char *mode, *syncfile = NULL;

	for (;;) {
		if (argc > 2 && !strcmp(argv[1], "-d")) {
			delay = num(argv[2]);
		} else if (argc > 2 && !strcmp(argv[1], "-s")) {
			syncfile = argv[2];
		} else {
			break;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc < 3)
		usage();
	mode = argv[1];
	if (syncfile && strcmp(mode, "read") && strcmp(mode, "leader-exit"))
		usage();
	if (!strcmp(mode, "leader-exit"))
		return leader_exit(syncfile, num(argv[2]));

	if (!strcmp(mode, "mix"))
		return mix(num(argv[2]));
	if (!strcmp(mode, "heartbeat"))
		return heartbeat(num(argv[2]));
	if (!strcmp(mode, "stamps")) {
		if (argc < 4)
			usage();
		return stamps(num(argv[2]), argv[3]);
	}
	if (!strcmp(mode, "bpf-einval")) {
		int ret = bpf_einval(num(argv[2]));

		/* (-d: the process stays for its user stacks to be named) */
		if (delay)
			msleep(delay);
		return ret;
	}

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
	if (!strcmp(mode, "read") && syncfile) {
		int fd = open_or_die("/dev/zero", O_RDONLY);
		long n = num(argv[2]), extra;

		do_reads(fd, n / 2);
		extra = sync_reads(fd, syncfile);
		do_reads(fd, n - n / 2);
		if (delay)
			msleep(delay);
		fprintf(stderr, "reads %ld\n", n + extra);
		return 0;
	} else if (!strcmp(mode, "read")) {
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
	} else if (!strcmp(mode, "open")) {
		long n = num(argv[2]);
		char path[64], buf[8];

		for (long i = 0; i < n; i++) {
			int flags = i % 3 ? O_RDONLY : O_CREAT | O_WRONLY;
			int fd, zfd;

			snprintf(path, sizeof(path), "/tmp/fhk-open-%ld", i);
			fd = open(path, flags, 0600);
			if (fd >= 0) {
				close(fd);
				unlink(path);
			}
			zfd = open_or_die("/dev/zero", O_RDONLY);
			if (read(zfd, buf, i % 7 + 1) != i % 7 + 1)
				die("read");
			close(zfd);
		}
	} else if (!strcmp(mode, "reopen")) {
		/* the same open of one file, N times: identical call trees */
		long n = num(argv[2]);
		int fd = open("/tmp/fhk-reopen", O_CREAT | O_WRONLY, 0600);

		if (fd < 0)
			die("/tmp/fhk-reopen");
		close(fd);
		for (long i = 0; i < n; i++)
			close(open_or_die("/tmp/fhk-reopen", O_RDONLY));
		unlink("/tmp/fhk-reopen");
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
