// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-uffd-khooks MODULE.ko: read the hook ledger (FHOOK_IOC_KHOOKS)
 * into a page that faults until this program releases it (userfaultfd),
 * and meanwhile insmod and rmmod MODULE.ko, each within 20 s: the ledger's
 * copy to the caller must not hold the lock module loads and unloads take
 * (the module notifier).  Then the page is released and the read must
 * complete with the ledger's entries.  Exit 0 when all of that held.
 * Root: a userfaultfd that catches the kernel's own faults.  Exit 77
 * where the kernel has no userfaultfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fhook_abi.h"

static int fd;
static void *area;
static struct fhook_khooks arg;
static long ret_ioctl;
static int err_ioctl;

static void die(const char *what)
{
	printf("fhook-uffd-khooks: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void *reader(void *unused)
{
	arg.size = sizeof(arg);
	arg.entry_size = sizeof(struct fhook_khook_info);
	arg.nr = 4;
	arg.entries = (uintptr_t)area;
	ret_ioctl = ioctl(fd, FHOOK_IOC_KHOOKS, &arg);
	err_ioctl = errno;
	return NULL;
}

/* run ARGV, at most 20 s: its exit status, or -1 if it had to be killed */
static int run(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		die("fork");
	if (!pid) {
		execvp(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		usleep(100000);
	}
	printf("%s %s: still running after 20 s\n", argv[0], argv[1]);
	return -1;	/* left to finish once the page is released */
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_zeropage zero = { 0 };
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct uffd_msg msg = { 0 };
	struct pollfd pfd;
	char name[256], *base, *dot;
	long page = sysconf(_SC_PAGESIZE);
	pthread_t t;
	int uffd, bad = 0, n;

	if (argc != 2)
		return fprintf(stderr, "usage: fhook-uffd-khooks MODULE.ko\n"), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	snprintf(name, sizeof(name), "%s", base);
	dot = strstr(name, ".ko");
	if (dot)
		*dot = 0;
	fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs))
		die("open /dev/fhook");
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);	/* poll: POLLERR on a blocking one */
	if (uffd < 0 && errno == ENOSYS) {
		printf("no userfaultfd in this kernel (CONFIG_USERFAULTFD)\n");
		return 77;
	}
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		die("userfaultfd");
	area = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		die("mmap");
	reg.range.start = (uintptr_t)area;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	if (pthread_create(&t, NULL, reader, NULL))
		die("pthread_create");
	pfd.fd = uffd;
	pfd.events = POLLIN;
	n = poll(&pfd, 1, 10000);
	if (n != 1 || !(pfd.revents & POLLIN) || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		printf("KHOOKS did not fault on the page (is a hook on the ledger?): poll %d revents %#x event %#x; KHOOKS %ld (%s) nr %u\n",
		       n, pfd.revents, msg.event, ret_ioctl, strerror(err_ioctl), arg.nr);
		bad = 1;
	}
	if (!bad) {
		char *ins[] = { "insmod", argv[1], NULL }, *rm[] = { "rmmod", name, NULL };

		if (run(ins) != 0 || run(rm) != 0) {
			printf("insmod/rmmod %s while KHOOKS faulted: failed or hung\n", name);
			bad = 1;
		}
	}
	zero.range.start = (uintptr_t)area;
	zero.range.len = page;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zero) && errno != EEXIST)
		die("UFFDIO_ZEROPAGE");
	pthread_join(t, NULL);
	if (ret_ioctl || !arg.nr) {
		printf("KHOOKS after the page came: ret %ld (%s), %u hooks\n", ret_ioctl,
		       strerror(err_ioctl), arg.nr);
		bad = 1;
	}
	if (!bad)
		printf("insmod and rmmod %s while KHOOKS waited on a faulting page; then %u hook(s) read\n",
		       name, arg.nr);
	return bad;
}
