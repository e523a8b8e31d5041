// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-wakeprog: a wakeup workload with known behaviour (the wakeup
 * tracers' tests).
 *
 *   fhook-wakeprog [-f PRIO | -D] [-c CPU] [-w CPU] N PERIOD_US
 *
 * A sleeper thread (SCHED_FIFO PRIO with -f, SCHED_DEADLINE with -D,
 * else SCHED_OTHER; pinned to CPU with -c) blocks in read() on a pipe; the
 * main thread (SCHED_OTHER, pinned with -w) writes to it every PERIOD_US
 * microseconds, N times, each time sending the CLOCK_MONOTONIC time taken
 * just before its write().  The sleeper takes the time when read()
 * returns: that difference contains the scheduler's wakeup latency (from
 * the wakeup inside write() to the switch to the sleeper) and a little
 * more (the rest of write(), read()'s return).  At the end, on stdout:
 *
 *   wakeups N tid TID max_ns M sum_ns S
 *
 * TID is the sleeper's thread id; M and S its largest and total measured
 * latency.  Exit status 0 once N wakeups were measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

struct sched_attr_dl {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/* a one-line error on stderr, exit status 1 */
static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fhook-wakeprog: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static int fds[2];
static long n;
static int prio, dl, sleeper_cpu = -1;
static uint64_t max_ns, sum_ns;
static long got;
static pid_t sleeper_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

static void *sleeper(void *arg)
{
	uint64_t sent;

	sleeper_tid = syscall(SYS_gettid);
	pin(sleeper_cpu);
	if (dl) {
		/* 200 us of every 1 ms: more than a wakeup's work */
		struct sched_attr_dl a = {
			.size = sizeof(a), .sched_policy = SCHED_DEADLINE,
			.sched_runtime = 200000, .sched_deadline = 1000000,
			.sched_period = 1000000,
		};

		if (syscall(SYS_sched_setattr, 0, &a, 0))
			die("sched_setattr(SCHED_DEADLINE): %s", strerror(errno));
	} else if (prio) {
		struct sched_param sp = { .sched_priority = prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			die("sched_setscheduler(SCHED_FIFO %d): %s", prio, strerror(errno));
	}
	while (got < n) {
		ssize_t r = read(fds[0], &sent, sizeof(sent));
		uint64_t d;

		if (r != sizeof(sent))
			die("read: %zd %s", r, strerror(errno));
		d = now_ns() - sent;
		if (d > max_ns)
			max_ns = d;
		sum_ns += d;
		got++;
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct timespec period;
	int opt, waker_cpu = -1;
	pthread_t th;
	long i, us;

	while ((opt = getopt(argc, argv, "f:Dc:w:")) != -1) {
		switch (opt) {
		case 'f':
			prio = atoi(optarg);
			break;
		case 'D':
			dl = 1;
			break;
		case 'c':
			sleeper_cpu = atoi(optarg);
			break;
		case 'w':
			waker_cpu = atoi(optarg);
			break;
		default:
			die("usage: fhook-wakeprog [-f PRIO | -D] [-c CPU] [-w CPU] N PERIOD_US");
		}
	}
	if (argc - optind != 2)
		die("usage: fhook-wakeprog [-f PRIO | -D] [-c CPU] [-w CPU] N PERIOD_US");
	n = atol(argv[optind]);
	us = atol(argv[optind + 1]);
	if (n <= 0 || us <= 0)
		die("N and PERIOD_US must be positive");
	period.tv_sec = us / 1000000;
	period.tv_nsec = us % 1000000 * 1000;
	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	pin(waker_cpu);
	if (pthread_create(&th, NULL, sleeper, NULL))
		die("pthread_create");
	/* let the sleeper set its policy and block */
	nanosleep(&period, NULL);
	for (i = 0; i < n; i++) {
		uint64_t t;

		nanosleep(&period, NULL);
		t = now_ns();
		if (write(fds[1], &t, sizeof(t)) != sizeof(t))
			die("write: %s", strerror(errno));
	}
	pthread_join(th, NULL);
	printf("wakeups %ld tid %d max_ns %llu sum_ns %llu\n", got, (int)sleeper_tid,
	       (unsigned long long)max_ns, (unsigned long long)sum_ns);
	return 0;
}
