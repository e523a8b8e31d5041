/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records' clock: CLOCK_MONOTONIC nanoseconds, as
 * ktime_get_mono_fast_ns() gives them, read for a few instructions where
 * the CPU has a counter the kernel trusts (x86: the TSC, arch.h).
 *
 * Each CPU keeps an anchor, a pair (counter, ns) that brackets one
 * ktime_get_mono_fast_ns() call between two ordered counter reads, and a
 * slope (mult, shift: ns per count) measured between its anchors.  A read
 * is the counter, a subtraction, a multiply and an add, inline: no call,
 * no seqcount loop.  An anchor older than its span (10 ms of counts), a
 * counter that went backwards (suspend, a TSC reset), or a CPU that never
 * anchored takes a new anchor (clock.c), in any context, NMI included:
 * ktime_get_mono_fast_ns() is NMI-safe.
 *
 * Every record stamp on a ring comes from here, so that the stamps of one
 * CPU are one clock, ordered as their writers read it.  Against
 * ktime_get_mono_fast_ns() a stamp is off by at most half an anchor's
 * bracket plus the slope's error over one span (docs/design/recorder.md,
 * "Step 3").  Without a counter (arm64, an unstable TSC, or the module
 * parameter clock=mono) it is ktime_get_mono_fast_ns() itself.
 *
 * Callers run with preemption disabled (the anchor and the counter must be
 * the same CPU's), as every ring writer does.
 */
#ifndef FHOOK_CLOCK_H
#define FHOOK_CLOCK_H

#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <linux/ktime.h>
#include <linux/types.h>

#include "arch.h"

/* ns = anchor.ns + ((counter - anchor.cyc) * mult >> shift), counter - cyc < span */
struct fhook_clock_anchor {
	u64 cyc;
	u64 ns;
	u32 mult;
	u32 shift;
	u64 span;		/* counts an anchor serves; 0 before the first */
};

/*
 * A CPU's two anchors: readers use anchor[idx], a new anchor is written
 * into the other one and then published by flipping idx (a latch, as the
 * timekeeper's fast clock has): a writer that interrupts a reader on this
 * CPU never changes the anchor the reader is using.
 */
struct fhook_clock_cpu {
	struct fhook_clock_anchor anchor[2];
	u32 idx;
	u32 busy;		/* an anchor is being taken on this CPU */
	u64 ref_cyc;		/* where the slope's measurement started */
	u64 ref_ns;
} ____cacheline_aligned;

DECLARE_PER_CPU(struct fhook_clock_cpu, fhook_clock_cpu);
DECLARE_STATIC_KEY_FALSE(fhook_clock_counter);

u64 fhook_clock_reanchor(struct fhook_clock_cpu *c);
void fhook_clock_setup(void);
const char *fhook_clock_name(void);

static __always_inline u64 fhook_clock(void)
{
	if (FHOOK_ARCH_CLOCK_COUNTER && static_branch_likely(&fhook_clock_counter)) {
		struct fhook_clock_cpu *c = this_cpu_ptr(&fhook_clock_cpu);
		/* (B): pairs with the barrier before idx flips in fhook_clock_reanchor() */
		const struct fhook_clock_anchor *a = &c->anchor[READ_ONCE(c->idx) & 1];
		u64 d = fhook_arch_clock_counter() - a->cyc;

		if (likely(d < a->span))
			return a->ns + ((d * a->mult) >> a->shift);
		return fhook_clock_reanchor(c);
	}
	return ktime_get_mono_fast_ns();
}

#endif /* FHOOK_CLOCK_H */
