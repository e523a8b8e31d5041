/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every CPU's tramp.S (arch/<arch>/tramp.h includes this) defines for
 * C: the slots' entry addresses by kind (a kind the CPU has no trampoline
 * for has a table of zeros, its probes refused: FHOOK_ARCH_NO_FEATURES),
 * the RETURN stub and the call graphs' return trampoline.
 */
#ifndef FHOOK_TRAMP_TABLES_H
#define FHOOK_TRAMP_TABLES_H

extern const unsigned long fhook_direct_count_tramps[FHOOK_NR_SLOTS];
extern const unsigned long fhook_direct_fast_tramps[FHOOK_NR_SLOTS];
/* slot -> the probe's per-CPU hit counter (a __percpu address) */
extern unsigned long fhook_direct_fast_ctrs[FHOOK_NR_SLOTS];
extern const unsigned long fhook_direct_record_tramps[FHOOK_NR_SLOTS];
/* the assembly recorder's (x86-64: FHOOK_ARCH_FNREC_ASM) */
extern const unsigned long fhook_direct_fnrec_tramps[FHOOK_NR_SLOTS];
/* ... its kprobes' (FHOOK_REC_FN_KPROBE, probe_kprobe.c) */
extern const unsigned long fhook_direct_fnk_tramps[FHOOK_NR_SLOTS];
/* slot -> its direct probe (probe_direct.c), read by the assembly recorder */
struct fhook_probe;
extern struct fhook_probe *fhook_direct_slots[FHOOK_NR_SLOTS];
extern const unsigned long fhook_around_tramps[FHOOK_NR_SLOTS];
/* fhook_orig_N: continue at slot N's body (fhook_around_bodies[N]) */
extern const unsigned long fhook_orig_tramps[FHOOK_NR_SLOTS];
extern unsigned long fhook_around_bodies[FHOOK_NR_SLOTS];
extern const unsigned long fhook_lat_tramps[FHOOK_NR_SLOTS];
/* slot -> the latency probe's struct fhook_lat (latency.c) */
extern unsigned long fhook_lat_ctxs[FHOOK_NR_SLOTS];
void fhook_hook_return(void);
/* where the bodies the around and latency trampolines run return to, by frame kind */
extern const unsigned long fhook_body_rets[2];
/* where functions in a call graph return (probe_graph.c) */
void fhook_graph_return(void);

#endif /* FHOOK_TRAMP_TABLES_H */
