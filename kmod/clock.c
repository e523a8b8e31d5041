// SPDX-License-Identifier: GPL-2.0
/*
 * The records' clock, its slow path (clock.h has the fast one): a CPU's
 * anchors, their slope, and the choice of counter at load time.
 *
 * An anchor brackets ktime_get_mono_fast_ns() between two ordered counter
 * reads, twice, and keeps the narrower bracket: the pair (its middle, the
 * ns) is exact to half its width.  The slope starts as the counter's
 * nominal rate (tsc_khz, which the kernel's TSC clocksource was
 * registered with) and is then measured between anchors at least a second
 * apart, so that it follows NTP's frequency correction of the kernel's
 * clock; a measurement more than 1/1024 off the nominal rate (a suspend
 * in between, where the counter ran and the clock did not) is not used.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "clock.h"

/* how long one anchor serves, and the least interval a slope is measured over */
#define FHOOK_CLOCK_SPAN_MS	10
#define FHOOK_CLOCK_SLOPE_NS	NSEC_PER_SEC

DEFINE_PER_CPU(struct fhook_clock_cpu, fhook_clock_cpu);
DEFINE_STATIC_KEY_FALSE(fhook_clock_counter);

static u32 fhook_clock_nominal __read_mostly;
static u32 fhook_clock_shift __read_mostly;
static u64 fhook_clock_span __read_mostly;

/* clock=mono at load time: ktime_get_mono_fast_ns() for every stamp */
static bool fhook_clock_mono;

static int fhook_clock_param_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "mono"))
		fhook_clock_mono = true;
	else if (FHOOK_ARCH_CLOCK_NAME && sysfs_streq(val, FHOOK_ARCH_CLOCK_NAME))
		fhook_clock_mono = false;
	else
		return -EINVAL;
	return 0;
}

static int fhook_clock_param_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n", fhook_clock_name());
}

static const struct kernel_param_ops fhook_clock_param_ops = {
	.set = fhook_clock_param_set,
	.get = fhook_clock_param_get,
};
module_param_cb(clock, &fhook_clock_param_ops, NULL, 0444);
MODULE_PARM_DESC(clock, "The records' clock: tsc (x86, where the kernel trusts it) or mono (ktime_get_mono_fast_ns()); reads back the one in use");

const char *fhook_clock_name(void)
{
	if (FHOOK_ARCH_CLOCK_COUNTER && static_branch_likely(&fhook_clock_counter))
		return FHOOK_ARCH_CLOCK_NAME;
	return "mono";
}

/* The kernel's clock and the counter at that moment (the narrower of two brackets) */
static notrace u64 fhook_clock_bracket(u64 *cyc)
{
	u64 width = U64_MAX, ns = 0;
	int i;

	for (i = 0; i < 2; i++) {
		u64 t1 = fhook_arch_clock_counter_ordered();
		u64 n = ktime_get_mono_fast_ns();
		u64 t2 = fhook_arch_clock_counter_ordered();

		if (t2 - t1 < width) {
			width = t2 - t1;
			*cyc = t1 + width / 2;
			ns = n;
		}
	}
	return ns;
}

/* The slope of the anchor at (@cyc, @ns): measured once a second has passed */
static notrace u32 fhook_clock_slope(struct fhook_clock_cpu *c, u64 cyc, u64 ns)
{
	u32 mult = c->anchor[c->seq & 1].mult ?: fhook_clock_nominal;
	u64 dc = cyc - c->ref_cyc, dn = ns - c->ref_ns, m;

	if (c->ref_cyc && (s64)dc > 0 && (s64)dn > 0) {
		if (dn < FHOOK_CLOCK_SLOPE_NS)
			return mult;
		/* (an idle CPU's interval can be hours: the shifted ns must fit) */
		while (dn >= BIT_ULL(63 - fhook_clock_shift)) {
			dn >>= 1;
			dc >>= 1;
		}
		m = div64_u64(dn << fhook_clock_shift, dc);
		mult = fhook_clock_nominal;
		if (m > mult - (mult >> 10) && m < mult + (mult >> 10))
			mult = m;
	}
	c->ref_cyc = cyc;
	c->ref_ns = ns;
	return mult;
}

/*
 * A new anchor for this CPU (@c, preemption disabled), the time now
 * returned.  Nested in another anchor on this CPU, or once the kernel has
 * stopped trusting the counter, the stamp is ktime_get_mono_fast_ns()
 * and the anchor stays expired, so that every stamp comes here.
 */
notrace u64 fhook_clock_reanchor(struct fhook_clock_cpu *c)
{
	u32 seq = READ_ONCE(c->seq);
	struct fhook_clock_anchor *a = &c->anchor[!(seq & 1)];
	u64 cyc = 0, ns;

	if (c->busy || !fhook_arch_clock_khz())
		return ktime_get_mono_fast_ns();
	c->busy = 1;
	barrier();
	ns = fhook_clock_bracket(&cyc);
	a->mult = fhook_clock_slope(c, cyc, ns);
	a->shift = fhook_clock_shift;
	a->span = fhook_clock_span;
	a->cyc = cyc;
	a->ns = ns;
	/*
	 * (A): pairs with (L) in fhook_clock(): the anchor whole before seq
	 * chooses it; readers are this CPU's, so program order is enough
	 */
	barrier();
	WRITE_ONCE(c->seq, seq + 1);
	barrier();
	c->busy = 0;
	return ns;
}

/* At load: the counter if the CPU has one the kernel trusts, and clock=mono was not asked */
void fhook_clock_setup(void)
{
	unsigned int khz = fhook_arch_clock_khz();
	u32 shift = 32;

	if (!FHOOK_ARCH_CLOCK_COUNTER || fhook_clock_mono || !khz)
		return;
	/* the largest shift that leaves mult twice the room of the nominal rate */
	while (div_u64((u64)NSEC_PER_MSEC << shift, khz) >= BIT_ULL(31))
		shift--;
	fhook_clock_shift = shift;
	fhook_clock_nominal = div_u64((u64)NSEC_PER_MSEC << shift, khz);
	fhook_clock_span = (u64)khz * FHOOK_CLOCK_SPAN_MS;
	static_branch_enable(&fhook_clock_counter);
}
