// SPDX-License-Identifier: GPL-2.0
/*
 * fhook bench's BPF streaming peer: loads stream.bpf.o (found beside this
 * binary), attaches its fentry program to FUNC (vmlinux or a module's,
 * by BTF) and reads the ring buffer with libbpf's ring_buffer__poll()
 * until SIGINT/SIGTERM; then writes {"events": N, "lost": M} to the
 * summary file, as fhook's --summary-json does, for the bench's lost
 * column.
 *
 *   fhook-bench-stream [-s SUMMARY.json] FUNC
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;
static uint64_t events, checksum;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* the reader's work: every record read */
static int on_event(void *ctx, void *data, size_t size)
{
	const uint64_t *w = data;

	(void)ctx;
	if (size >= 24)
		checksum += w[0] ^ w[1] ^ w[2];
	events++;
	return 0;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "fhook-bench-stream: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

int main(int argc, char **argv)
{
	const char *summary = NULL;
	char obj_path[PATH_MAX], self[PATH_MAX];
	struct bpf_program *prog;
	struct ring_buffer *ring;
	struct bpf_object *obj;
	struct bpf_link *link;
	struct bpf_map *bss;
	uint64_t dropped = 0;
	int opt, err, zero = 0;
	ssize_t n;

	while ((opt = getopt(argc, argv, "s:")) != -1) {
		if (opt != 's') {
			fprintf(stderr, "usage: fhook-bench-stream [-s SUMMARY.json] FUNC\n");
			return 2;
		}
		summary = optarg;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: fhook-bench-stream [-s SUMMARY.json] FUNC\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		die("/proc/self/exe", errno);
	self[n] = 0;
	snprintf(obj_path, sizeof(obj_path), "%s/stream.bpf.o", dirname(self));

	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj)
		die(obj_path, errno);
	prog = bpf_object__find_program_by_name(obj, "on_entry");
	if (!prog)
		die("program on_entry", ENOENT);
	/* libbpf looks FUNC up in vmlinux's BTF, then in the modules' */
	err = bpf_program__set_attach_target(prog, 0, argv[optind]);
	if (err)
		die(argv[optind], err);
	err = bpf_object__load(obj);
	if (err)
		die("loading stream.bpf.o", err);
	link = bpf_program__attach(prog);
	if (!link)
		die("attaching to the function", errno);
	ring = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "rb"), on_event, NULL, NULL);
	if (!ring)
		die("ring_buffer__new", errno);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		/* (records below the wakeup threshold: read within 100 ms) */
		err = ring_buffer__poll(ring, 100);
		if (err < 0 && err != -EINTR)
			die("ring_buffer__poll", err);
	}
	bpf_link__destroy(link);
	ring_buffer__consume(ring);

	bss = bpf_object__find_map_by_name(obj, ".bss");
	if (bss)
		bpf_map_lookup_elem(bpf_map__fd(bss), &zero, &dropped);
	if (summary) {
		FILE *f = fopen(summary, "w");

		if (!f)
			die(summary, errno);
		fprintf(f, "{\"events\": %llu, \"lost\": %llu}\n", (unsigned long long)events,
			(unsigned long long)dropped);
		fclose(f);
	}
	fprintf(stderr, "fhook-bench-stream: %llu events, %llu lost (checksum %llx)\n",
		(unsigned long long)events, (unsigned long long)dropped,
		(unsigned long long)checksum);
	ring_buffer__free(ring);
	bpf_object__close(obj);
	return 0;
}
