/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records' clock: CLOCK_MONOTONIC nanoseconds, as
 * ktime_get_mono_fast_ns() gives them, read for a few instructions where
 * the CPU has a counter the kernel trusts (x86: the TSC, arch.h).
 *
 * Each CPU keeps an anchor, a pair (counter, ns) that brackets one
 * ktime_get_mono_fast_ns() call between two ordered counter reads, and a
 * slope (mult, shift: ns per count) measured between its anchors.  A read
 * is the counter, a subtraction, a multiply and an add, inline: no call.
 * An anchor older than its span (10 ms of counts), a counter that went
 * backwards (suspend, a TSC reset), or a CPU that never anchored takes a
 * new anchor (clock.c), in any context, NMI included:
 * ktime_get_mono_fast_ns() is NMI-safe.
 *
 * Every record stamp on a ring comes from here, so that the stamps of one
 * CPU are one clock that never goes back.  Against
 * ktime_get_mono_fast_ns() a stamp is off by at most half an anchor's
 * bracket plus the slope's error over one span (docs/design/recorder.md,
 * "Step 3"), so two CPUs' stamps differ by up to twice that.  Without a
 * counter (arm64, an unstable TSC, or the module parameter clock=mono)
 * it is ktime_get_mono_fast_ns() itself.  The latency tracers' own
 * measurements (osnoise, timerlat, hwlat, latency) stay on the kernel's
 * clock, as the kernel tracers they are compared with read it.
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

/* ns = anchor.ns + ((counter - anchor.cyc) * mult >> shift), while counter - cyc < span */
struct fhook_clock_anchor {
	u64 cyc;
	u64 ns;
	u32 mult;
	u32 shift;
};

/*
 * A CPU's clock, one cache line.  Its two anchors are a latch, as the
 * timekeeper's fast clock has: readers use anchor[seq & 1]; a new anchor
 * is written into the other one and published by incrementing seq.
 * Readers and writers are this CPU's (a writer is an interrupt or NMI in
 * a reader), so a reader sees a whole anchor, and reads again if seq
 * moved meanwhile (two anchors taken while it read would have rewritten
 * the one it used).  @last keeps the CPU's stamps from going back where a
 * new anchor corrects the last one's extrapolation.
 */
struct fhook_clock_cpu {
	u32 seq;
	u32 busy;		/* an anchor is being taken on this CPU */
	u64 last;		/* the latest stamp */
	struct fhook_clock_anchor anchor[2];
};

DECLARE_PER_CPU_ALIGNED(struct fhook_clock_cpu, fhook_clock_cpu);
DECLARE_STATIC_KEY_FALSE(fhook_clock_counter);
extern u64 fhook_clock_span;

u64 fhook_clock_reanchor(struct fhook_clock_cpu *c);
void fhook_clock_setup(void);
const char *fhook_clock_name(void);

/* @ns, or this CPU's latest stamp if that is later: no stamp goes back */
static __always_inline u64 fhook_clock_keep(struct fhook_clock_cpu *c, u64 ns)
{
	u64 last = READ_ONCE(c->last);

	if (unlikely((s64)(ns - last) < 0))
		return last;
	WRITE_ONCE(c->last, ns);
	return ns;
}

static __always_inline u64 fhook_clock(void)
{
	if (FHOOK_ARCH_CLOCK_COUNTER && static_branch_likely(&fhook_clock_counter)) {
		struct fhook_clock_cpu *c = this_cpu_ptr(&fhook_clock_cpu);
		const struct fhook_clock_anchor *a;
		u64 d, ns;
		u32 seq;

		do {
			seq = READ_ONCE(c->seq);
			/* (L): pairs with (A) in fhook_clock_reanchor(): the anchor after seq */
			barrier();
			a = &c->anchor[seq & 1];
			d = fhook_arch_clock_counter() - a->cyc;
			if (unlikely(d >= fhook_clock_span))
				return fhook_clock_reanchor(c);
			ns = a->ns + ((d * a->mult) >> a->shift);
			barrier();
		} while (unlikely(READ_ONCE(c->seq) != seq));
		return fhook_clock_keep(c, ns);
	}
	return ktime_get_mono_fast_ns();
}

/*
 * The time from stamp @then to stamp @now, 0 if @now is earlier: two
 * CPUs' stamps (a call that returned on another CPU) differ by their
 * anchors' errors.
 */
static __always_inline u64 fhook_clock_since(u64 now, u64 then)
{
	return (s64)(now - then) > 0 ? now - then : 0;
}

#endif /* FHOOK_CLOCK_H */
