// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-events: the event lines of a trace text, for the guest tests.
 *
 *   fhook-events [-t] FILE   print "PID CPU FUNCTION" for each event line
 *                            of FILE ("-" for stdin), and with -t the
 *                            line's timestamp as a fourth field
 *
 * An event line is the one the function tracer, `fhook trace` and their
 * kin print: "COMM-PID [CPU] FLAGS SECONDS.FRACTION: FUNCTION ...".  Its
 * CPU is the first field that is a bracketed number, after at least one
 * other; its time, the first field after that which is digits, a dot,
 * digits and a colon, with one more field after it.  Every other line is
 * left out.  The rules are those of the awk that vmtests/guest/lib.sh's
 * events() was before: under TCG busybox awk took 15 to 20 s to split a
 * 35,000-line trace this way, this takes well under one.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 64

static int all_digits(const char *s, const char *end)
{
	if (s == end)
		return 0;
	for (; s < end; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* "[123]" */
static int is_cpu(const char *f)
{
	size_t n = strlen(f);

	return n >= 3 && f[0] == '[' && f[n - 1] == ']' && all_digits(f + 1, f + n - 1);
}

/* "123.456:" */
static int is_time(const char *f)
{
	size_t n = strlen(f);
	const char *dot = strchr(f, '.');

	return n >= 4 && f[n - 1] == ':' && dot && all_digits(f, dot) &&
	       all_digits(dot + 1, f + n - 1);
}

int main(int argc, char **argv)
{
	char *field[MAX_FIELDS], *line = NULL, *save, *p;
	int times = 0, nf, i, j;
	size_t cap = 0;
	FILE *in;

	if (argc > 1 && !strcmp(argv[1], "-t")) {
		times = 1;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: fhook-events [-t] FILE\n");
		return 2;
	}
	in = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!in) {
		perror(argv[1]);
		return 2;
	}
	while (getline(&line, &cap, in) >= 0) {
		nf = 0;
		for (p = strtok_r(line, " \t\n", &save); p && nf < MAX_FIELDS;
		     p = strtok_r(NULL, " \t\n", &save))
			field[nf++] = p;
		for (i = 0; i < nf && !is_cpu(field[i]); i++)
			;
		if (i < 1 || i >= nf)
			continue;
		for (j = i + 1; j < nf && !is_time(field[j]); j++)
			;
		if (j >= nf - 1)
			continue;
		p = strrchr(field[i - 1], '-');
		field[j][strlen(field[j]) - 1] = '\0';
		printf("%s %ld %s", p ? p + 1 : field[i - 1], strtol(field[i] + 1, NULL, 10),
		       field[j + 1]);
		if (times)
			printf(" %s", field[j]);
		putchar('\n');
	}
	free(line);
	return ferror(in) ? 2 : 0;
}
