/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's trampolines (tramp.S): the call graphs' return trampoline.  The
 * slot tables of the kinds x86 has (direct calls, latency, trace-around)
 * are there, empty: those probes are refused before any is used
 * (FHOOK_ARCH_NO_FEATURES, arch.h).
 */
#ifndef FHOOK_TRAMP_H
#define FHOOK_TRAMP_H

#define FHOOK_NR_SLOTS		64

#ifndef __ASSEMBLY__
extern const unsigned long fhook_direct_count_tramps[FHOOK_NR_SLOTS];
extern const unsigned long fhook_direct_fast_tramps[FHOOK_NR_SLOTS];
extern unsigned long fhook_direct_fast_ctrs[FHOOK_NR_SLOTS];
extern const unsigned long fhook_direct_record_tramps[FHOOK_NR_SLOTS];
extern const unsigned long fhook_around_tramps[FHOOK_NR_SLOTS];
extern const unsigned long fhook_orig_tramps[FHOOK_NR_SLOTS];
extern unsigned long fhook_around_bodies[FHOOK_NR_SLOTS];
extern const unsigned long fhook_lat_tramps[FHOOK_NR_SLOTS];
extern unsigned long fhook_lat_ctxs[FHOOK_NR_SLOTS];
void fhook_hook_return(void);
extern const unsigned long fhook_body_rets[2];
/* where functions in a call graph return (probe_graph.c) */
void fhook_graph_return(void);

/* The around trampoline's frame (around.c): none on arm64, never called */
static __always_inline const u64 *fhook_arch_around_args(struct fhook_around_frame *f)
{
	return NULL;
}

static __always_inline void fhook_arch_around_regs(struct fhook_around_frame *f, unsigned long ip)
{
}

static __always_inline unsigned long fhook_arch_around_parent(struct fhook_around_frame *f)
{
	return 0;
}
#endif

#endif /* FHOOK_TRAMP_H */
