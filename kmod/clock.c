// SPDX-License-Identifier: GPL-2.0
/*
 * The records' clock, its slow path (clock.h has the fast one): a CPU's
 * anchors, their slope, and the choice of counter at load time.
 *
 * An anchor brackets ktime_get_mono_fast_ns() between two ordered counter
 * reads, twice, and keeps the narrower bracket: the pair (its middle, the
 * ns) is exact to half its width.  The slope starts as the counter's
 * nominal rate (tsc_khz, which the kernel's TSC clocksource was
 * registered with) and is then measured between anchors 1 to 10 s apart,
 * so that it follows NTP's frequency correction of the kernel's clock
 * (fhook_clock_slope()).
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "clock.h"

/* how long one anchor serves; a slope is measured over 1 to 10 s */
#define FHOOK_CLOCK_SPAN_MS	10
#define FHOOK_CLOCK_SLOPE_MIN_NS	NSEC_PER_SEC
#define FHOOK_CLOCK_SLOPE_MAX_NS	(10 * NSEC_PER_SEC)

DEFINE_PER_CPU_ALIGNED(struct fhook_clock_cpu, fhook_clock_cpu);
DEFINE_STATIC_KEY_FALSE(fhook_clock_counter);
u64 fhook_clock_span __read_mostly;

/* where a CPU's slope measurement started, and a slope not yet trusted */
struct fhook_clock_ref {
	u64 cyc;
	u64 ns;
	u32 odd;		/* a measurement far from the nominal rate, 0 if none */
};

static DEFINE_PER_CPU(struct fhook_clock_ref, fhook_clock_ref);

static u32 fhook_clock_nominal __read_mostly;
static u32 fhook_clock_shift __read_mostly;

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
	return sysfs_emit(buf, "%s\n", fhook_clock_name());
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

static bool fhook_clock_near(u64 m, u32 to, u32 shift)
{
	return m > to - (to >> shift) && m < to + (to >> shift);
}

/*
 * The slope of this CPU's anchor at (@cyc, @ns): @mult (the last one's)
 * until 1 s has passed since the measurement started, then the one
 * measured if it is within 1/1024 of the nominal rate; one farther off (a
 * suspend in the interval, where the counter ran and the clock did not)
 * only when the next measurement agrees with it to 1/65536 (the kernel's
 * own tick adjusted by more than NTP's frequency range can).  Over 10 s
 * (an idle CPU), or with the counter or the clock gone back, the
 * measurement starts again.
 */
static notrace u32 fhook_clock_slope(u32 mult, u64 cyc, u64 ns)
{
	struct fhook_clock_ref *r = this_cpu_ptr(&fhook_clock_ref);
	u64 dc = cyc - r->cyc, dn = ns - r->ns, m;
	bool on = r->cyc && (s64)dc > 0 && (s64)dn > 0;

	if (on && dn < FHOOK_CLOCK_SLOPE_MIN_NS)
		return mult;
	if (on && dn <= FHOOK_CLOCK_SLOPE_MAX_NS) {
		/* (ns << shift must fit: 10 s needs a few bits less) */
		while (dn >= BIT_ULL(63 - fhook_clock_shift)) {
			dn >>= 1;
			dc >>= 1;
		}
		m = dc ? div64_u64(dn << fhook_clock_shift, dc) : 0;
		if (m && m <= U32_MAX) {
			bool nominal = fhook_clock_near(m, fhook_clock_nominal, 10);

			if (nominal || (r->odd && fhook_clock_near(m, r->odd, 16)))
				mult = m;
			r->odd = nominal ? 0 : m;
		}
	}
	r->cyc = cyc;
	r->ns = ns;
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
	struct fhook_clock_anchor *a;
	u64 cyc = 0, ns;
	u32 seq, mult;

	if (READ_ONCE(c->busy) || !fhook_arch_clock_khz())
		return fhook_clock_keep(c, ktime_get_mono_fast_ns());
	WRITE_ONCE(c->busy, 1);
	/* an anchor of an interrupt before this point is published whole */
	barrier();
	seq = READ_ONCE(c->seq);
	a = &c->anchor[!(seq & 1)];
	mult = c->anchor[seq & 1].mult ?: fhook_clock_nominal;
	ns = fhook_clock_bracket(&cyc);
	a->mult = fhook_clock_slope(mult, cyc, ns);
	a->shift = fhook_clock_shift;
	a->cyc = cyc;
	a->ns = ns;
	/*
	 * (A): pairs with (L) in fhook_clock(): the anchor whole before seq
	 * chooses it; readers are this CPU's, so program order is enough
	 */
	barrier();
	WRITE_ONCE(c->seq, seq + 1);
	barrier();
	WRITE_ONCE(c->busy, 0);
	return fhook_clock_keep(c, ns);
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
