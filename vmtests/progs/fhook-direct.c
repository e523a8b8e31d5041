// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-direct ROUNDS CALLS: a direct probe (fhook's trampolines through
 * the ftrace direct-call API) on fhook_testmod_target while a child makes
 * ROUNDS x CALLS calls of it (/proc/fhook_testmod "call CALLS"), and the
 * probe is switched between the counting and the recording trampoline
 * (FHOOK_IOC_DIRECT_MODIFY: modify_ftrace_direct) every 2 ms meanwhile.
 * Every call must be counted exactly once, by one trampoline or the other:
 * hits == the calls the child made (ROUNDS x CALLS, or more until three
 * switches happened), records were written, and some hits were only
 * counted; the stats area's hits_elsewhere bit is set while the fast
 * counting trampoline is armed and clear once STOP folded its hits into
 * the area.  Then the same for unregistering under load: STOP while the
 * child still calls, START again, STOP: no crash, hits <= calls.
 * One TAP line per check (progs.h).
 */
#include <signal.h>
#include <sys/wait.h>

#include "progs.h"

static uint64_t sum(struct sess *s, uint32_t id, uint64_t *written)
{
	const struct fhook_probe_counters *base =
		(const void *)((const char *)s->st + s->st->entries_offset);
	uint64_t hits = 0;
	unsigned int cpu;

	*written = 0;
	for (cpu = 0; cpu < s->st->nr_cpus; cpu++) {
		hits += base[cpu * s->st->max_probes + id - 1].hits;
		*written += base[cpu * s->st->max_probes + id - 1].written;
	}
	return hits;
}

/*
 * Shared with the caller: how many switches the parent has made, how many
 * calls the child has made.  The child goes on past ROUNDS until
 * min_modifies switches happened, so that calls and switches overlap
 * however slow a switch is (seconds of RCU-tasks grace periods on the debug
 * kernel) or fast a call is (the fast counting trampoline).
 */
static struct {
	unsigned long modifies;
	unsigned long calls;
} *sh;

static pid_t caller(unsigned long rounds, unsigned long calls, unsigned long min_modifies)
{
	char cmd[64];
	pid_t pid = fork();
	unsigned long i;
	int fd, len;

	if (pid < 0)
		die("fork");
	if (pid)
		return pid;
	len = snprintf(cmd, sizeof(cmd), "call %lu\n", calls);
	fd = open("/proc/fhook_testmod", O_WRONLY);
	if (fd < 0)
		die("open /proc/fhook_testmod");
	for (i = 0; i < 1000 * rounds &&
		    (i < rounds || __atomic_load_n(&sh->modifies, __ATOMIC_ACQUIRE) < min_modifies);
	     i++) {
		if (write(fd, cmd, len) != len)
			die("write /proc/fhook_testmod");
		__atomic_store_n(&sh->calls, sh->calls + calls, __ATOMIC_RELEASE);
		usleep(3000);	/* let the switches fall between and inside rounds */
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_DIRECT };
	struct fhook_direct_modify dm = { .size = sizeof(dm) };
	const char *func = "fhook_testmod_target";
	unsigned long rounds, calls, modifies = 0;
	uint64_t hits, written;
	struct sess s;
	int status;
	pid_t pid;

	if (argc != 3)
		return 2;
	rounds = strtoul(argv[1], NULL, 0);
	calls = strtoul(argv[2], NULL, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap");
	sess_open(&s, 1 << 20, 0, 0, 0, 0);
	pa.flags = FHOOK_PROBE_F_COUNT;
	pa.filter = (uintptr_t)func;
	pa.filter_len = strlen(func);
	if (ioctl(s.fd, FHOOK_IOC_PROBE_ADD, &pa))
		die("PROBE_ADD direct");
	dm.probe_id = pa.probe_id;
	/* not armed yet: nothing to modify */
	tap(ioctl(s.fd, FHOOK_IOC_DIRECT_MODIFY, &dm) && errno == ENOTCONN,
	    "DIRECT_MODIFY before START is refused with ENOTCONN");
	if (ioctl(s.fd, FHOOK_IOC_START))
		die("START");
	/* on the fast trampoline: the stats area says its hits are elsewhere */
	tap(__atomic_load_n(&s.st->hits_elsewhere, __ATOMIC_ACQUIRE) & (1ULL << (pa.probe_id - 1)),
	    "an armed fast counting probe is marked in hits_elsewhere");
	pid = caller(rounds, calls, 3);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		dm.flags = modifies % 2 ? FHOOK_PROBE_F_COUNT : 0;
		if (ioctl(s.fd, FHOOK_IOC_DIRECT_MODIFY, &dm))
			die("DIRECT_MODIFY");
		modifies++;
		__atomic_store_n(&sh->modifies, modifies, __ATOMIC_RELEASE);
		usleep(2000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("caller");
	if (ioctl(s.fd, FHOOK_IOC_STOP))
		die("STOP");
	/* disarmed: folded into the area, which says so */
	tap(!__atomic_load_n(&s.st->hits_elsewhere, __ATOMIC_ACQUIRE),
	    "hits_elsewhere is clear after STOP folded the hits in");
	hits = sum(&s, pa.probe_id, &written);
	printf("# %lu modifies, hits %llu of %lu calls, %llu records\n", modifies,
	       (unsigned long long)hits, sh->calls, (unsigned long long)written);
	tap(hits == sh->calls, "every call counted once while switching trampolines (%llu of %lu)",
	    (unsigned long long)hits, sh->calls);
	tap(modifies >= 2 && written && written < hits,
	    "both trampolines ran (%lu modifies, %llu records of %llu hits)", modifies,
	    (unsigned long long)written, (unsigned long long)hits);

	/* STOP and START while the calls go on: unregister under load */
	pid = caller(rounds, calls, 0);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (ioctl(s.fd, FHOOK_IOC_START))
			die("START again");
		usleep(3000);
		if (ioctl(s.fd, FHOOK_IOC_STOP))
			die("STOP again");
		modifies++;
	}
	hits = sum(&s, pa.probe_id, &written);
	tap(hits <= sh->calls, "START/STOP under load: no call counted twice (%llu hits, %lu calls)",
	    (unsigned long long)hits, sh->calls);
	sess_unmap(&s);
	close(s.fd);
	return tap_status();
}
