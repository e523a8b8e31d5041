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
 * The around trampoline is where an IPMODIFY hook sends a call:
 * ftrace_regs_caller "returns" into slot N's entry (ret x9) with the
 * function's arguments in x0..x8, its return address in x30 and the
 * stack as at its entry.  It stands in for the function: saves the
 * arguments in a struct fhook_around_frame, reports the entry to C
 * (around.c), runs its slot's target (the function's body after its patch
 * site, or a replacement) with the arguments and a copy of the caller's
 * stack words, reports the return, and returns to the caller.  Targets
 * are reached with a return too (ret x16, x30 set to where they come
 * back), as ftrace_caller reaches a body: not a branch, which a BTI
 * kernel would check for a landing pad the body does not start with.
 *
 * Direct-call trampolines (kernels with DYNAMIC_FTRACE_WITH_DIRECT_CALLS,
 * 6.12): the patch site (MOV X9, LR; BL) calls them, or ftrace_caller
 * branches to them (BR X17) after other callbacks, with the function's
 * arguments in x0..x8, the return address into its caller in x9 and the
 * one into its body in x30; they return into the body with x30 = x9
 * (ret x10), as the kernel's ftrace_stub_direct_tramp does.  The counting
 * one calls fhook_direct_count(slot), the recording one
 * fhook_direct_record(slot, return address into the body, parent), each
 * between two frame records as ftrace_caller makes them (the callsite's,
 * then the trampoline's), so stacks taken inside name the function and
 * its caller; the fast one increments the probe's per-CPU counter with
 * an exclusive pair (atomic: the task may move between reading this
 * CPU's offset and the increment, and another CPU may be counting there).
 * The latency one runs the body itself, as the around trampoline does,
 * and returns to the caller.  Without direct calls every direct kind has
 * an empty slot table: refused (FHOOK_ARCH_NO_FEATURES).
 */
#include <linux/linkage.h>
#include <asm/assembler.h>

#include "tramp.h"

/* 0 .. FHOOK_NR_SLOTS - 1 */
#define FHOOK_SLOT_LIST	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,		\
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,		\
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,		\
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63

/* x0..x8, the arguments, into the frame at sp, from \at on */
.macro FHOOK_SAVE_ARGS at
	stp	x0, x1, [sp, #\at]
	stp	x2, x3, [sp, #\at + 16]
	stp	x4, x5, [sp, #\at + 32]
	stp	x6, x7, [sp, #\at + 48]
	str	x8, [sp, #\at + 64]
.endm

/*
 * Before a body runs: the 8 words C copied into the frame at sp (at
 * \stack: the caller's stack arguments, read with fault handling) pushed
 * below it, where the body finds them; x0..x8 from the frame (at \regs);
 * x9 = the frame
 */
.macro FHOOK_BODY_ARGS stack, regs
	sub	sp, sp, #64
	add	x9, sp, #64 + \stack
	.irp off, 0, 16, 32, 48
	ldp	x10, x11, [x9, #\off]
	stp	x10, x11, [sp, #\off]
	.endr
	add	x9, sp, #64
	ldp	x0, x1, [x9, #\regs]
	ldp	x2, x3, [x9, #\regs + 16]
	ldp	x4, x5, [x9, #\regs + 32]
	ldp	x6, x7, [x9, #\regs + 48]
	ldr	x8, [x9, #\regs + 64]
.endm

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

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
/*
 * x16: the slot.  The frame: the trampoline's frame record (x29, the body),
 * the argument registers x0..x8 and x9, the callsite's frame record (x29,
 * the caller): 128 bytes.
 */
.macro FHOOK_DIRECT_ENTER
	sub	sp, sp, #128
	stp	x29, x9, [sp, #96]
	add	x29, sp, #96
	stp	x29, x30, [sp]
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	stp	x2, x3, [sp, #32]
	stp	x4, x5, [sp, #48]
	stp	x6, x7, [sp, #64]
	stp	x8, x9, [sp, #80]
.endm

/* back into the body (its address in x10), x30 its caller's again */
.macro FHOOK_DIRECT_LEAVE
	ldp	x0, x1, [sp, #16]
	ldp	x2, x3, [sp, #32]
	ldp	x4, x5, [sp, #48]
	ldp	x6, x7, [sp, #64]
	ldp	x8, x9, [sp, #80]
	ldr	x10, [sp, #8]
	ldr	x29, [sp, #96]
	add	sp, sp, #128
	mov	x30, x9
	ret	x10
.endm

SYM_CODE_START(fhook_direct_count_common)
	FHOOK_DIRECT_ENTER
	mov	x0, x16
	bl	fhook_direct_count
	FHOOK_DIRECT_LEAVE
SYM_CODE_END(fhook_direct_count_common)

SYM_CODE_START(fhook_direct_record_common)
	FHOOK_DIRECT_ENTER
	mov	x0, x16
	ldr	x1, [sp, #8]
	mov	x2, x9
	bl	fhook_direct_record
	FHOOK_DIRECT_LEAVE
SYM_CODE_END(fhook_direct_record_common)

/*
 * The latency trampoline (x16: the probe's struct fhook_lat), a direct
 * one that runs the body: the callsite's frame record (x29, x9) and its
 * own (x29, the body's address) as ftrace_caller makes them, the struct
 * fhook_lat_frame below them.  fhook_lat_enter(frame) takes the entry
 * time and copies the caller's stack arguments into the frame; they go
 * below it, where the body finds them; the body is reached with a return
 * (x30 set to where it comes back), as the around trampoline reaches it;
 * fhook_lat_exit(frame) takes the duration; the trampoline returns to
 * the caller with x0, x1 as the body left them.  A body's frame record
 * holds the trampoline's frame pointer: stacks and the exit walk
 * (stack.c) go from the body through the function into its caller.
 */
SYM_CODE_START(fhook_lat_common)
	stp	x29, x9, [sp, #-16]!
	mov	x29, sp
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	sub	sp, sp, #FHOOK_LF_SIZE
	FHOOK_SAVE_ARGS 0
	str	x9, [sp, #72]
	str	x16, [sp, #FHOOK_LF_LAT]
	mov	x0, sp
	bl	fhook_lat_enter
	FHOOK_BODY_ARGS FHOOK_LF_STACK, 0
	ldr	x16, [x29, #8]
	adr	x30, .Lfhook_lat_body_ret
	ret	x16
.Lfhook_lat_body_ret:
	sub	sp, x29, #FHOOK_LF_SIZE
	stp	x0, x1, [sp]
	mov	x0, sp
	bl	fhook_lat_exit
	ldp	x0, x1, [sp]
	add	sp, x29, #16
	ldp	x29, x30, [sp], #16
	ret
SYM_CODE_END(fhook_lat_common)

/* direct slot N of a kind: x16 = N (BTI landing pad from SYM_FUNC_START) */
.macro FHOOK_DIRECT_SLOT kind, n
SYM_FUNC_START(fhook_\kind\()_\n)
	mov	x16, #\n
	b	fhook_\kind\()_common
SYM_FUNC_END(fhook_\kind\()_\n)
.endm

/* the counting fast path of slot N: no call, no register saved */
.macro FHOOK_FAST_SLOT n
SYM_FUNC_START(fhook_direct_fast_\n)
	adr_l	x16, fhook_direct_fast_ctrs
	ldr	x16, [x16, #8 * \n]
	get_this_cpu_offset x17
	add	x16, x16, x17
1:	ldxr	x10, [x16]
	add	x10, x10, #1
	stxr	w11, x10, [x16]
	cbnz	w11, 1b
	mov	x10, x30
	mov	x30, x9
	ret	x10
SYM_FUNC_END(fhook_direct_fast_\n)
.endm

/* latency slot N: x16 = its probe's struct fhook_lat */
.macro FHOOK_LAT_SLOT n
SYM_FUNC_START(fhook_lat_\n)
	adr_l	x16, fhook_lat_ctxs
	ldr	x16, [x16, #8 * \n]
	b	fhook_lat_common
SYM_FUNC_END(fhook_lat_\n)
.endm

	.irp n, FHOOK_SLOT_LIST
	FHOOK_DIRECT_SLOT direct_count, \n
	FHOOK_DIRECT_SLOT direct_record, \n
	FHOOK_FAST_SLOT \n
	FHOOK_LAT_SLOT \n
	.endr
#endif /* CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS */

/* FHOOK_HOOK_RETURN: the hook set x0; return it to the caller (x30) */
SYM_FUNC_START(fhook_hook_return)
	ret
SYM_FUNC_END(fhook_hook_return)

/*
 * x16: the slot.  The frame: a frame record (x29, x30: the caller's),
 * then FHOOK_AF_SPACE bytes of struct fhook_around_frame at sp, then, for
 * the target, the FHOOK_HOOK_MAX_STACK_ARGS words C copied from above
 * the frame record (the caller's stack arguments).
 */
SYM_CODE_START(fhook_around_common)
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	sub	sp, sp, #FHOOK_AF_SPACE
	FHOOK_SAVE_ARGS FHOOK_AF_X0
	str	x16, [sp, #FHOOK_AF_SLOT]
	mov	x0, sp
	bl	fhook_around_enter
	FHOOK_BODY_ARGS FHOOK_AF_STACK, FHOOK_AF_X0
	ldr	x16, [x9, #FHOOK_AF_TARGET]
	adr	x30, .Lfhook_around_body_ret
	ret	x16
.Lfhook_around_body_ret:
	sub	sp, x29, #FHOOK_AF_SPACE
	stp	x0, x1, [sp, #FHOOK_AF_X0]
	mov	x0, sp
	bl	fhook_around_exit
	ldp	x0, x1, [sp, #FHOOK_AF_X0]
	mov	sp, x29
	ldp	x29, x30, [sp], #16
	ret
SYM_CODE_END(fhook_around_common)

/* around slot N: x16 = N */
.macro FHOOK_AROUND_SLOT n
SYM_CODE_START(fhook_around_\n)
	mov	x16, #\n
	b	fhook_around_common
SYM_CODE_END(fhook_around_\n)
.endm

/*
 * "The original" of around slot N, for a replacement to call (khook.c):
 * the function's body after its patch site, reached with a return, with
 * the replacement's return address in x30 and its stack arguments where
 * the body expects them.  The patch site is skipped: the hook does not
 * see the call again.
 */
.macro FHOOK_ORIG_SLOT n
SYM_FUNC_START(fhook_orig_\n)
	adr_l	x16, fhook_around_bodies
	ldr	x16, [x16, #8 * \n]
	ret	x16
SYM_FUNC_END(fhook_orig_\n)
.endm

	.irp n, FHOOK_SLOT_LIST
	FHOOK_AROUND_SLOT \n
	FHOOK_ORIG_SLOT \n
	.endr

/* the slots' entry addresses, by kind: \name = fhook_\kind\()_0 .. _63 */
.macro FHOOK_SLOT_TABLE name, kind
SYM_DATA_START(\name)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_\kind\()_\n
	.endr
SYM_DATA_END(\name)
.endm

/* a kind this kernel has no trampoline for: its probes are refused */
.macro FHOOK_NO_SLOT_TABLE name
SYM_DATA_START(\name)
	.fill	FHOOK_NR_SLOTS, 8, 0
SYM_DATA_END(\name)
.endm

	.section .rodata
	.balign 8
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
	FHOOK_SLOT_TABLE fhook_direct_count_tramps, direct_count
	FHOOK_SLOT_TABLE fhook_direct_fast_tramps, direct_fast
	FHOOK_SLOT_TABLE fhook_direct_record_tramps, direct_record
	FHOOK_SLOT_TABLE fhook_lat_tramps, lat
#else
	FHOOK_NO_SLOT_TABLE fhook_direct_count_tramps
	FHOOK_NO_SLOT_TABLE fhook_direct_fast_tramps
	FHOOK_NO_SLOT_TABLE fhook_direct_record_tramps
	FHOOK_NO_SLOT_TABLE fhook_lat_tramps
#endif
	FHOOK_SLOT_TABLE fhook_around_tramps, around
	FHOOK_SLOT_TABLE fhook_orig_tramps, orig
/*
 * Where the bodies the around and latency trampolines run return to
 * (fhook_arch_body_frames()), by enum fhook_frame_kind_id
 */
SYM_DATA_START(fhook_body_rets)
	.quad	.Lfhook_around_body_ret
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
	.quad	.Lfhook_lat_body_ret
#else
	.quad	0
#endif
SYM_DATA_END(fhook_body_rets)
