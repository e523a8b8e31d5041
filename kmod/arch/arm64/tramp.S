/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook's own trampolines (arm64).
 *
 * fhook_graph_return: where a function of a call graph returns (its
 * ftrace_ops callback put this address in the link register ftrace_caller
 * restores): fhook_graph_exit(the stack pointer the function returned
 * with, its return value) gives the real return address, reached with
 * x0..x8 as the function left them.  The kernel's return_to_handler, line
 * for line.  Entered by a return, not a branch: no BTI landing pad.
 *
 * The other kinds' slot tables (tramp.h) are empty: the module refuses
 * those probes on arm64 (FHOOK_ARCH_NO_FEATURES).
 */
#include <linux/linkage.h>
#include <asm/assembler.h>

#include "tramp.h"

SYM_CODE_START(fhook_graph_return)
	sub	sp, sp, #80
	stp	x0, x1, [sp]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x29, [sp, #64]
	mov	x1, x0
	add	x0, sp, #80
	bl	fhook_graph_exit
	mov	x30, x0
	ldp	x8, x29, [sp, #64]
	ldp	x6, x7, [sp, #48]
	ldp	x4, x5, [sp, #32]
	ldp	x2, x3, [sp, #16]
	ldp	x0, x1, [sp]
	add	sp, sp, #80
	ret
SYM_CODE_END(fhook_graph_return)

/* FHOOK_HOOK_RETURN's stub (hooks are refused on arm64: never reached) */
SYM_FUNC_START(fhook_hook_return)
	ret
SYM_FUNC_END(fhook_hook_return)

	.section .rodata
	.balign 8
SYM_DATA_START(fhook_direct_count_tramps)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(fhook_direct_count_tramps)
SYM_DATA_START(fhook_direct_fast_tramps)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(fhook_direct_fast_tramps)
SYM_DATA_START(fhook_direct_record_tramps)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(fhook_direct_record_tramps)
SYM_DATA_START(fhook_around_tramps)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(fhook_around_tramps)
SYM_DATA_START(fhook_orig_tramps)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(fhook_orig_tramps)
SYM_DATA_START(fhook_lat_tramps)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(fhook_lat_tramps)
SYM_DATA_START(fhook_body_rets)
	.fill	2, 8, 0
SYM_DATA_END(fhook_body_rets)
