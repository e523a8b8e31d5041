// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-capexec UID GID GROUPS CAPS -- COMMAND [ARGS...]: run COMMAND as
 * UID:GID with the supplementary GROUPS (comma list, "-" for none) and
 * only the capabilities CAPS ("perfmon", "perfmon,syslog", "-" for none),
 * raised as ambient capabilities so that COMMAND keeps them across exec,
 * as `setcap cap_perfmon+ep` on COMMAND's binary would give them.  The
 * guest has no setpriv or setcap (busybox).
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int cap_number(const char *name)
{
	if (!strcmp(name, "perfmon"))
		return CAP_PERFMON;
	if (!strcmp(name, "syslog"))
		return CAP_SYSLOG;
	if (!strcmp(name, "sys_admin"))
		return CAP_SYS_ADMIN;
	return -1;
}

static void die(const char *what)
{
	fprintf(stderr, "fhook-capexec: %s: %s\n", what, strerror(errno));
	exit(126);
}

int main(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	gid_t groups[16];
	int ngroups = 0, caps[8], ncaps = 0;
	char *list, *tok;

	if (argc < 7 || strcmp(argv[5], "--")) {
		fprintf(stderr, "usage: fhook-capexec UID GID GROUPS CAPS -- COMMAND [ARGS...]\n");
		return 2;
	}
	list = strcmp(argv[3], "-") ? argv[3] : "";
	for (tok = strtok(list, ","); tok && ngroups < 16; tok = strtok(NULL, ","))
		groups[ngroups++] = (gid_t)atoi(tok);
	list = strcmp(argv[4], "-") ? argv[4] : "";
	for (tok = strtok(list, ","); tok && ncaps < 8; tok = strtok(NULL, ",")) {
		caps[ncaps] = cap_number(tok);
		if (caps[ncaps] < 0) {
			fprintf(stderr, "fhook-capexec: unknown capability %s\n", tok);
			return 2;
		}
		ncaps++;
	}
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		die("PR_SET_KEEPCAPS");
	if (setgroups(ngroups, groups) || setgid((gid_t)atoi(argv[2])) ||
	    setuid((uid_t)atoi(argv[1])))
		die("setgroups/setgid/setuid");
	/* exactly CAPS: permitted, effective and inheritable, then ambient */
	for (int i = 0; i < ncaps; i++) {
		data[caps[i] / 32].permitted |= 1U << (caps[i] % 32);
		data[caps[i] / 32].effective |= 1U << (caps[i] % 32);
		data[caps[i] / 32].inheritable |= 1U << (caps[i] % 32);
	}
	if (syscall(SYS_capset, &hdr, data))
		die("capset");
	for (int i = 0; i < ncaps; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, caps[i], 0, 0))
			die("PR_CAP_AMBIENT_RAISE");
	execvp(argv[6], argv + 6);
	die(argv[6]);
	return 126;
}
