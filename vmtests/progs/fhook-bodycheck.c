// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-bodycheck: trace-around and latency trampolines run a function's
 * body on a copy of the caller's stack words; the module counts them from
 * BTF itself and refuses what it cannot pass on, whatever the caller
 * declares (raw ABI, as root and as a process with only CAP_PERFMON):
 *   - a variadic function (seq_printf) is refused (EOPNOTSUPP), for root too,
 *     as a hook and as a latency probe
 *   - a latency probe by globs is refused (EINVAL): the module checks
 *     each function it is given, by address
 *   - a function without BTF (a compiler clone CLONE given on the command
 *     line; fhook_testmod.ko's functions where it was built without BTF,
 *     as against Debian's 6.1 headers) is refused to CAP_PERFMON
 *     (ENODATA) and taken from root, who vouches; with BTF (6.12's headers
 *     carry vmlinux) CAP_PERFMON may trace fhook_testmod_args8 around
 *   - vfs_read (BTF, no stack argument) is taken from CAP_PERFMON whatever
 *     stack_args it declares
 * Where the kernel has no hooks (arm64 6.12: ftrace gives no full
 * registers) or no latency probes (arm64 6.1: no direct calls) each of
 * those is refused (EOPNOTSUPP) and the other kind carries the checks.
 * Before the module checked, CAP_PERFMON could arm a trace-around hook on
 * fhook_testmod_args8 declaring no stack argument, and its callers got
 * garbage for their 7th and 8th arguments.
 * Usage: fhook-bodycheck [CLONE].  Prints TAP lines (progs.h);
 * exit status 0 if all passed.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "progs.h"

static void check(int good, const char *what, int ret, int err)
{
	tap(good, "%s (ret %d errno %d)", what, ret, err);
}

static int perfmon_only(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	d[CAP_PERFMON / 32].effective = d[CAP_PERFMON / 32].permitted = 1U << (CAP_PERFMON % 32);
	return syscall(SYS_capset, &h, d);
}

static __u64 features;	/* what the module announces */

static int session(void)
{
	struct fhook_handshake hs = { .size = sizeof(hs), .abi_version = FHOOK_ABI_VERSION };
	struct fhook_ring_setup rs = { .size = sizeof(rs), .buf_size = 16384 };
	int fd = open(FHOOK_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0 || ioctl(fd, FHOOK_IOC_HANDSHAKE, &hs) || ioctl(fd, FHOOK_IOC_RING_SETUP, &rs))
		die("session");
	features = hs.features;
	return fd;
}

/* a trace-around hook on @addr declaring @stack_args; 0 or -errno */
static int around(uint64_t addr, uint32_t stack_args)
{
	struct fhook_hook hk = { .size = sizeof(hk), .action = FHOOK_HOOK_AROUND,
				 .stack_args = stack_args };
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_HOOK,
				      .addr = addr, .hook = (uintptr_t)&hk };
	int fd = session(), ret;

	ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa) ? -errno : 0;
	close(fd);
	return ret;
}

/* a latency probe on @addr (or on the glob @glob); 0 or -errno */
static int latency(uint64_t addr, const char *glob)
{
	struct fhook_probe_add pa = { .size = sizeof(pa), .type = FHOOK_PROBE_DIRECT,
				      .flags = FHOOK_PROBE_F_LATENCY };
	int fd = session(), ret;

	if (glob) {
		pa.filter = (uintptr_t)glob;
		pa.filter_len = strlen(glob);
	} else {
		pa.ips = (uintptr_t)&addr;
		pa.nr_ips = 1;
	}
	ret = ioctl(fd, FHOOK_IOC_PROBE_ADD, &pa) ? -errno : 0;
	close(fd);
	return ret;
}

/* @ret of a probe of @feature's kind: @want, or refused where the module lacks it */
static void expect(__u64 feature, int ret, int want, const char *what)
{
	if (!(features & feature)) {
		want = -EOPNOTSUPP;
		printf("# (this kernel has no such probes: refused)\n");
	}
	check(ret == want, what, ret, ret < 0 ? -ret : 0);
}

#define AROUND	FHOOK_FEAT_HOOK
#define LAT	FHOOK_FEAT_LATENCY

int main(int argc, char **argv)
{
	uint64_t snp = kallsyms("seq_printf"), rd = kallsyms("vfs_read");
	uint64_t a8 = kallsyms_in("fhook_testmod_args8", 1);
	uint64_t clone = argc > 1 ? kallsyms(argv[1]) : 0;
	int a8_btf = access("/sys/kernel/btf/fhook_testmod", F_OK) == 0;
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!snp || !rd || !a8)
		die("kallsyms: seq_printf, vfs_read, fhook_testmod_args8 (fhook_testmod.ko loaded?)");
	close(session());	/* (features) */
	expect(AROUND, around(snp, 8), -EOPNOTSUPP,
	       "root: trace-around on variadic seq_printf -> EOPNOTSUPP");
	expect(LAT, latency(snp, NULL), -EOPNOTSUPP,
	       "root: latency on variadic seq_printf -> EOPNOTSUPP");
	expect(LAT, latency(0, "vfs_read"), -EINVAL, "root: latency by glob -> EINVAL");
	expect(AROUND, around(a8, 2), 0,
	       "root: trace-around on fhook_testmod_args8 (no BTF) vouched -> 0");
	expect(LAT, latency(a8, NULL), 0,
	       "root: latency on fhook_testmod_args8 (no BTF) vouched -> 0");
	expect(AROUND, around(rd, 8), 0, "root: trace-around on vfs_read -> 0");
	if (clone) {
		expect(AROUND, around(clone, 0), 0,
		       "root: trace-around on a clone (no BTF) vouched -> 0");
		expect(LAT, latency(clone, NULL), 0, "root: latency on a clone (no BTF) vouched -> 0");
	}

	pid = fork();
	if (pid == 0) {
		if (perfmon_only())
			die("capset CAP_PERFMON");
		if (a8_btf) {
			expect(AROUND, around(a8, 0), 0,
			       "CAP_PERFMON: trace-around on fhook_testmod_args8 (BTF) -> 0");
			expect(LAT, latency(a8, NULL), 0,
			       "CAP_PERFMON: latency on fhook_testmod_args8 (BTF) -> 0");
		} else {
			expect(AROUND, around(a8, 0), -ENODATA,
			       "CAP_PERFMON: trace-around on fhook_testmod_args8 (no BTF) -> ENODATA");
			expect(LAT, latency(a8, NULL), -ENODATA,
			       "CAP_PERFMON: latency on fhook_testmod_args8 (no BTF) -> ENODATA");
		}
		if (clone) {
			expect(AROUND, around(clone, 0), -ENODATA,
			       "CAP_PERFMON: trace-around on a clone (no BTF) -> ENODATA");
			expect(LAT, latency(clone, NULL), -ENODATA,
			       "CAP_PERFMON: latency on a clone (no BTF) -> ENODATA");
		}
		expect(AROUND, around(snp, 8), -EOPNOTSUPP,
		       "CAP_PERFMON: trace-around on seq_printf -> EOPNOTSUPP");
		expect(LAT, latency(snp, NULL), -EOPNOTSUPP,
		       "CAP_PERFMON: latency on seq_printf -> EOPNOTSUPP");
		expect(AROUND, around(rd, 8), 0,
		       "CAP_PERFMON: trace-around on vfs_read declaring 8 words -> 0");
		expect(LAT, latency(rd, NULL), 0, "CAP_PERFMON: latency on vfs_read -> 0");
		_exit(tap_failures());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		die("child");
	tap_add_failures(WEXITSTATUS(status));
	printf("# %d failed\n", tap_failures());
	return tap_status();
}
