/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the guest test programs (header only: each program
 * is one static binary built from one .c file). */
#ifndef FHOOK_PROGS_H
#define FHOOK_PROGS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The address of the vmlinux text symbol NAME in /proc/kallsyms, or 0. */
static inline uint64_t kallsyms(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    (type == 'T' || type == 't') && !strcmp(sym, name) && !strchr(line, '[')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

#endif
