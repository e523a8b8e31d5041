// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-conflict: a direct probe refused because an IPMODIFY hook holds
 * its function must leave nothing behind in ftrace.  A trace-around hook
 * on fhook_testmod_ret is armed in one session; a direct counting probe
 * on the same function in another session fails to START with EBUSY
 * (register_ftrace_direct() fails after adding the function to ftrace's
 * direct_functions: kernels without the stable fix "ftrace: Fix BPF
 * fexit with livepatch" keep that entry, and every later direct call on
 * the function is refused as a duplicate); once the hook is stopped the
 * direct probe must START and count.  Prints TAP lines (progs.h).
 */
#include "progs.h"

static void check(int good, const char *what, int err)
{
	tap(good, "%s (errno %d)", what, err);
}

int main(void)
{
	uint64_t ret = kallsyms_in("fhook_testmod_ret", 1);
	struct fhook_hook hk = { .size = sizeof(hk), .action = FHOOK_HOOK_AROUND };
	struct fhook_probe_add around = { .size = sizeof(around), .type = FHOOK_PROBE_HOOK,
					  .addr = ret, .hook = (uintptr_t)&hk };
	struct fhook_probe_add direct = { .size = sizeof(direct), .type = FHOOK_PROBE_DIRECT,
					  .ips = (uintptr_t)&ret, .nr_ips = 1,
					  .flags = FHOOK_PROBE_F_COUNT };
	struct fhook_stats st = { .size = sizeof(st), .probe_id = FHOOK_STATS_SESSION };
	struct sess a, b;
	int r;

	if (!ret)
		die("fhook_testmod.ko not loaded (kallsyms)");
	sess_open(&a, 16384, 0, 0, 0, 0);
	sess_open(&b, 16384, 0, 0, 0, 0);
	if (ioctl(a.fd, FHOOK_IOC_PROBE_ADD, &around) || ioctl(a.fd, FHOOK_IOC_START, 0))
		die("trace-around hook");
	if (ioctl(b.fd, FHOOK_IOC_PROBE_ADD, &direct))
		die("PROBE_ADD direct");
	errno = 0;
	r = ioctl(b.fd, FHOOK_IOC_START, 0);
	check(r == -1 && errno == EBUSY, "a direct probe on a hooked function: EBUSY", errno);
	if (ioctl(a.fd, FHOOK_IOC_STOP, 0))
		die("STOP hook");
	errno = 0;
	r = ioctl(b.fd, FHOOK_IOC_START, 0);
	check(!r, "the hook gone, the refused direct probe STARTs", errno);
	if (!r) {
		system("echo ret 7 > /proc/fhook_testmod_hooks");
		if (ioctl(b.fd, FHOOK_IOC_STOP, 0) || ioctl(b.fd, FHOOK_IOC_STATS, &st))
			die("STOP/STATS direct");
		check(st.total.hits == 7, "and counts the function's 7 calls", 0);
	}
	return tap_status();
}
