// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-execpid: under fork following, a thread that execs takes its
 * process's pid (de_thread()) without an exit event for its own tid; that
 * tid must not stay in the pid filter, or whatever process gets the number
 * next is traced.  A child process C (the filter's only pid, fork
 * following on) starts a thread that execs this program again ("exec'd":
 * 10 reads, exit).  Then a process outside the filter is created with the
 * thread's old tid (clone3() with set_tid) and reads 100 times:
 * none of its vfs_read() calls may be recorded, while the exec'd image's
 * were.  Prints TAP lines (progs.h).
 */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "progs.h"

static int tid_pipe[2];

static void reads(int n)
{
	char c;
	int fd = open("/proc/self/stat", O_RDONLY);

	if (fd < 0)
		die("open /proc/self/stat");
	while (n--)
		if (pread(fd, &c, 1, 0) != 1)
			die("pread");
	close(fd);
}

static void *exec_thread(void *arg)
{
	pid_t tid = gettid();

	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		die("write tid");
	execl("/proc/self/exe", "fhook-execpid", "exec'd", (char *)NULL);
	die("exec");
	return NULL;
}

static uint64_t hits(struct sess *s, uint32_t id)
{
	struct fhook_stats st = { .size = sizeof(st), .probe_id = id };

	if (ioctl(s->fd, FHOOK_IOC_STATS, &st))
		die("STATS");
	return st.total.hits;
}

/* a child with pid @want reads (clone3() with set_tid: fork with a pid) */
static pid_t reader_with_pid(pid_t want)
{
	struct clone_args args = { .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&want,
				   .set_tid_size = 1 };
	pid_t pid = syscall(SYS_clone3, &args, sizeof(args));

	if (pid < 0)
		die("clone3 with set_tid");
	if (pid == 0) {
		reads(100);
		_exit(0);
	}
	if (waitpid(pid, NULL, 0) != pid)
		die("waitpid reader");
	return pid;
}

int main(int argc, char **argv)
{
	struct fhook_pid_filter pf = { .size = sizeof(pf),
				       .flags = FHOOK_PIDF_RESET | FHOOK_PIDF_FOLLOW_FORK,
				       .nr_pids = 1 };
	int go[2], status;
	uint64_t before, after;
	pthread_t thread;
	struct sess s;
	uint32_t id;
	pid_t child, tid;
	__u32 filter_pid;
	char c;

	if (argc == 2 && !strcmp(argv[1], "exec'd")) {
		reads(10);
		return 0;
	}
	if (pipe(go) || pipe(tid_pipe))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)
			die("read go");
		if (pthread_create(&thread, NULL, exec_thread, NULL))
			die("pthread_create");
		pthread_join(thread, NULL);	/* the exec ends this thread */
		_exit(98);
	}
	sess_open(&s, 1 << 16, 0, 0, 0, 0);
	id = add_probe(&s, "vfs_read");
	filter_pid = child;
	pf.pids = (uintptr_t)&filter_pid;
	if (ioctl(s.fd, FHOOK_IOC_PID_FILTER, &pf) || ioctl(s.fd, FHOOK_IOC_START, 0))
		die("PID_FILTER/START");
	if (write(go[1], "g", 1) != 1 || read(tid_pipe[0], &tid, sizeof(tid)) != sizeof(tid))
		die("go/tid");
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the exec'd child");
	before = hits(&s, id);
	tap(before >= 10, "the exec'd image's reads are traced (%llu hits)",
	    (unsigned long long)before);
	reader_with_pid(tid);
	after = hits(&s, id);
	tap(after == before,
	    "a process that got the exec'd thread's old tid %d is not traced (%llu hits)", tid,
	    (unsigned long long)(after - before));
	return tap_status();
}
