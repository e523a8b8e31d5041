// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-kmsg: the kernel log by sequence number, for the guest runner.
 *
 *   fhook-kmsg next        print the sequence number the next record will get
 *   fhook-kmsg since SEQ   print every record with sequence >= SEQ as
 *                          "<level> [seconds] message" (all log levels)
 *
 * Reads /dev/kmsg without blocking.  Records that were overwritten before
 * they could be read (the log buffer wrapped) are reported as one line
 * "fhook-kmsg: N record(s) lost", so that a check on the output never
 * passes silently on a truncated log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int open_kmsg(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		perror("fhook-kmsg: /dev/kmsg");
		exit(2);
	}
	return fd;
}

/*
 * Read records until the end; call fn for each.  Returns the sequence
 * number after the last record.
 */
static unsigned long long walk(unsigned long long from, int print)
{
	static char buf[8192];
	unsigned long long next = 0, expect = from;
	int fd = open_kmsg(), have = 0;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		unsigned int level;
		unsigned long long seq, usec;
		char *msg, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			/* overwritten while we were reading: the next read resyncs */
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			perror("fhook-kmsg: read");
			exit(2);
		}
		if (n == 0)
			break;
		buf[n] = 0;
		/* "prefix,seq,usec,flags[,more];message\n dict lines" */
		if (sscanf(buf, "%u,%llu,%llu", &level, &seq, &usec) != 3)
			continue;
		msg = strchr(buf, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = 0;
		next = seq + 1;
		have = 1;
		if (!print || seq < from)
			continue;
		if (seq > expect)
			printf("fhook-kmsg: %llu record(s) lost\n", seq - expect);
		expect = seq + 1;
		printf("%u [%5llu.%06llu] %s\n", level & 7, usec / 1000000, usec % 1000000, msg);
	}
	close(fd);
	if (!have)
		return from;
	return next;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc == 2 && !strcmp(argv[1], "next")) {
		printf("%llu\n", walk(0, 0));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "since")) {
		walk(strtoull(argv[2], NULL, 10), 1);
		return 0;
	}
	fprintf(stderr, "usage: fhook-kmsg next | since SEQ\n");
	return 2;
}
