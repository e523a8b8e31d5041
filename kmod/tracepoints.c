// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's tracepoints fhook attaches probes to directly (sched_switch,
 * fork, exit, wakeups): not exported as symbols, found by name through
 * for_each_kernel_tracepoint() when the module loads.
 */
#include "fhook.h"

#include <linux/tracepoint.h>

struct fhook_tp_find {
	const char *name;
	struct tracepoint *tp;
};

static void fhook_tp_match(struct tracepoint *tp, void *priv)
{
	struct fhook_tp_find *f = priv;

	if (!f->tp && !strcmp(tp->name, f->name))
		f->tp = tp;
}

/* The built-in tracepoint @name, or NULL. */
struct tracepoint *fhook_tracepoint(const char *name)
{
	struct fhook_tp_find f = { .name = name };

	for_each_kernel_tracepoint(fhook_tp_match, &f);
	return f.tp;
}
