// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-gone WHEN GOFILE: probes on fhook_testmod.ko whose module is
 * unloaded under them.  Adds a direct probe on fhook_testmod_target and a
 * trace-around hook on fhook_testmod_ret, then:
 *   before  prints "added", waits for GOFILE (the module is gone by then),
 *           and STARTs: the probes touch freed text, START must fail with
 *           EIDRM and nothing may be attached
 *   after   STARTs, prints "armed", waits for GOFILE (the unload unhooked
 *           both), STOPs and STARTs again: EIDRM, never a re-hook of the
 *           stale addresses
 *   glob    a counting direct probe on the glob vfs_rea*, which also
 *           matches fhook_testmod's notrace vfs_read_fhook_testmod():
 *           STARTs, prints "armed", waits for GOFILE; the unload must
 *           leave it alone (ftrace never had that function in its hash):
 *           it still counts read(2) calls and STARTs again after a STOP
 *   going   while fhook_testmod's unload is held between its GOING
 *           notification and its free (fhook_linger.ko): its symbols
 *           still resolve, but a direct probe or a hook on them must be
 *           refused with EAGAIN (the addresses are about to be freed)
 * Prints TAP lines (progs.h); exit status 0 if all passed.
 */
#include "progs.h"

static void check(int good, const char *what, int err)
{
	tap(good, "%s (errno %d)", what, err);
}

static void wait_file(const char *path)
{
	while (access(path, F_OK))
		usleep(50000);
}

static uint64_t hits(struct sess *s, uint32_t id)
{
	struct fhook_stats st = { .size = sizeof(st), .probe_id = id };

	if (ioctl(s->fd, FHOOK_IOC_STATS, &st))
		die("STATS");
	return st.total.hits;
}

static int glob_probe(const char *gofile)
{
	const char *glob = "vfs_rea*";
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_DIRECT,
				      .flags = FHOOK_PROBE_F_COUNT, .filter = (uintptr_t)glob,
				      .filter_len = strlen(glob) };
	uint64_t before;
	struct sess s;
	char c;
	int fd, i, r;

	if (!kallsyms_in("vfs_read_fhook_testmod", 1))
		die("fhook_testmod.ko not loaded (kallsyms)");
	sess_open(&s, 16384, 0, 0, 0, 0);
	if (ioctl(s.fd, FHOOK_IOC_PROBE_ADD, &pa))
		die("PROBE_ADD vfs_rea*");
	if (ioctl(s.fd, FHOOK_IOC_START, 0))
		die("START");
	printf("armed\n");
	wait_file(gofile);
	fd = open("/proc/self/stat", O_RDONLY);
	if (fd < 0)
		die("open /proc/self/stat");
	before = hits(&s, pa.probe_id);
	for (i = 0; i < 100; i++)
		if (pread(fd, &c, 1, 0) != 1)
			die("pread");
	close(fd);
	check(hits(&s, pa.probe_id) - before >= 100,
	      "a glob probe counts on after a module with only a notrace namesake went", 0);
	if (ioctl(s.fd, FHOOK_IOC_STOP, 0))
		die("STOP");
	errno = 0;
	r = ioctl(s.fd, FHOOK_IOC_START, 0);
	check(!r, "and STARTs again", errno);
	return tap_status();
}

/* A direct probe on fhook_testmod_target, a trace-around hook on fhook_testmod_ret. */
struct testmod_probes {
	uint64_t target, ret;
	struct fhook_hook hk;
	struct fhook_probe_add direct, around;
};

static void testmod_probes(struct testmod_probes *t)
{
	memset(t, 0, sizeof(*t));
	t->target = kallsyms_in("fhook_testmod_target", 1);
	t->ret = kallsyms_in("fhook_testmod_ret", 1);
	t->hk.size = sizeof(t->hk);
	t->hk.action = FHOOK_HOOK_AROUND;
	t->direct.size = sizeof(t->direct);
	t->direct.type = FHOOK_PROBE_DIRECT;
	t->direct.ips = (uintptr_t)&t->target;
	t->direct.nr_ips = 1;
	t->around.size = sizeof(t->around);
	t->around.type = FHOOK_PROBE_HOOK;
	t->around.addr = t->ret;
	t->around.hook = (uintptr_t)&t->hk;
}

static int going(void)
{
	struct testmod_probes t;
	struct sess s;
	int r;

	testmod_probes(&t);
	tap(t.target && t.ret, "fhook_testmod's functions still resolve while its unload is held");
	sess_open(&s, 16384, 0, 0, 0, 0);
	errno = 0;
	r = ioctl(s.fd, FHOOK_IOC_PROBE_ADD, &t.direct);
	check(r == -1 && errno == EAGAIN, "a direct probe on a going module: EAGAIN", errno);
	errno = 0;
	r = ioctl(s.fd, FHOOK_IOC_PROBE_ADD, &t.around);
	check(r == -1 && errno == EAGAIN, "a hook on a going module: EAGAIN", errno);
	return tap_status();
}

int main(int argc, char **argv)
{
	struct testmod_probes t;
	struct sess s;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "glob"))
		return glob_probe(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "going"))
		return going();
	if (argc != 3 || (strcmp(argv[1], "before") && strcmp(argv[1], "after"))) {
		fprintf(stderr, "usage: fhook-gone before|after|glob GOFILE | going\n");
		return 2;
	}
	testmod_probes(&t);
	if (!t.target || !t.ret)
		die("fhook_testmod.ko not loaded (kallsyms)");
	sess_open(&s, 16384, 0, 0, 0, 0);
	if (ioctl(s.fd, FHOOK_IOC_PROBE_ADD, &t.direct) ||
	    ioctl(s.fd, FHOOK_IOC_PROBE_ADD, &t.around))
		die("PROBE_ADD");
	if (!strcmp(argv[1], "before")) {
		printf("added\n");
		wait_file(argv[2]);
	} else {
		if (ioctl(s.fd, FHOOK_IOC_START, 0))
			die("START");
		printf("armed\n");
		wait_file(argv[2]);
		if (ioctl(s.fd, FHOOK_IOC_STOP, 0))
			die("STOP");
	}
	errno = 0;
	r = ioctl(s.fd, FHOOK_IOC_START, 0);
	check(r == -1 && errno == EIDRM, "START with probes on an unloaded module -> EIDRM", errno);
	return tap_status();
}
