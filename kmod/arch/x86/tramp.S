/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook's own trampolines (x86-64).
 *
 * Direct-call trampolines, attached with the ftrace direct-call API: the
 * traced function's fentry site calls them (or ftrace_regs_caller returns
 * into them when other ftrace users share the function), so on entry the
 * stack holds the return address into the function (fentry site + 5),
 * then the one into its caller, and every argument register is live.
 * They save the argument registers, call a C handler and return into the
 * function.  Standard frames (push %rbp; mov %rsp, %rbp; leave), so ORC
 * unwinds through them; ENDBR and return thunks come from the kernel's
 * own macros.
 *
 * The latency trampoline is a direct-call trampoline that runs the
 * function's body itself: from its fentry site on, with the arguments
 * restored, and returns to the function's caller, skipping the return
 * address into the function (as BPF fexit trampolines do).  Its frame
 * sits between the body and that return address, which ORC reads as the
 * function at its fentry site: unwinding passes through it.
 *
 * The around trampoline is where an IPMODIFY hook sends a call (a traced
 * one, or one another module replaces): it stands in for the function
 * (the stack holds the return address into the caller), runs its slot's
 * target (the function's body from after its fentry call, so the hook
 * does not see the call again, or a replacement) and reports the entry
 * and the return to C (around.c).
 */
#include <linux/linkage.h>
#include <asm/ptrace-abi.h>
#include <asm/unwind_hints.h>
#include <asm/nospec-branch.h>
#include <asm/percpu.h>
#include <linux/objtool.h>

#include "tramp.h"

/* 0 .. FHOOK_NR_SLOTS - 1 */
#define FHOOK_SLOT_LIST	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,		\
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,		\
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,		\
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63

/* 6.2+: call depth tracking (retbleed=stuff), an assembler macro there */
#ifndef FHOOK_HAVE_CALL_DEPTH_ACCOUNT
.macro CALL_DEPTH_ACCOUNT
.endm
#endif

/* 6.4+ renamed the hint for code with no unwinding information */
#ifdef FHOOK_HAVE_UNWIND_HINT_UNDEFINED
#define FHOOK_UNWIND_HINT_NONE	UNWIND_HINT_UNDEFINED
#else
#define FHOOK_UNWIND_HINT_NONE	UNWIND_HINT_EMPTY
#endif

/* the argument registers (and %rax, %r10) around a call into C */
.macro FHOOK_SAVE_ARGS
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
	pushq	%r8
	pushq	%r9
	pushq	%rax
	pushq	%r10
.endm

.macro FHOOK_RESTORE_ARGS
	popq	%r10
	popq	%rax
	popq	%r9
	popq	%r8
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
.endm

/*
 * The same registers into and out of the frame of a trampoline that runs
 * the body itself, at \bias plus their offsets from \base: trace-around's
 * frame holds a struct pt_regs, the latency frame 8 words.
 */
#define FHOOK_AF_REGS	RDI, RSI, RDX, RCX, R8, R9, RAX, R10
#define FHOOK_LF_REGS	0, 8, 16, 24, 32, 40, 48, 56

.macro FHOOK_STORE_ARGS base, bias, di, si, dx, cx, r8, r9, ax, r10
	movq	%rdi, \bias+\di(\base)
	movq	%rsi, \bias+\si(\base)
	movq	%rdx, \bias+\dx(\base)
	movq	%rcx, \bias+\cx(\base)
	movq	%r8, \bias+\r8(\base)
	movq	%r9, \bias+\r9(\base)
	movq	%rax, \bias+\ax(\base)
	movq	%r10, \bias+\r10(\base)
.endm

.macro FHOOK_LOAD_ARGS base, bias, di, si, dx, cx, r8, r9, ax, r10
	movq	\bias+\di(\base), %rdi
	movq	\bias+\si(\base), %rsi
	movq	\bias+\dx(\base), %rdx
	movq	\bias+\cx(\base), %rcx
	movq	\bias+\r8(\base), %r8
	movq	\bias+\r9(\base), %r9
	movq	\bias+\ax(\base), %rax
	movq	\bias+\r10(\base), %r10
.endm

/*
 * The caller's stack arguments, as the body expects them, from the 8
 * words at \at(%rbp) (C copied the ones there are, reading with fault
 * handling: above a function called at the top of an IRQ stack is the
 * guard page)
 */
.macro FHOOK_PUSH_STACK_ARGS at
	.set	.Lfhook_pushed, 0
	.irp off, 56, 48, 40, 32, 24, 16, 8, 0
	pushq	\at+\off(%rbp)
	.set	.Lfhook_pushed, .Lfhook_pushed + 8
	.endr
	/* what fhook_arch_body_frames() and the frames' C layout count on */
	.if .Lfhook_pushed + 8 - FHOOK_BODY_RET_TO_FRAME
	.error "FHOOK_PUSH_STACK_ARGS pushes other than FHOOK_BODY_RET_TO_FRAME - 8 bytes"
	.endif
.endm

	.text

/* fhook_direct_count(slot): count a hit */
SYM_FUNC_START(fhook_direct_count_common)
	CALL_DEPTH_ACCOUNT
	pushq	%rbp
	movq	%rsp, %rbp
	FHOOK_SAVE_ARGS
	movq	%r11, %rdi
	call	fhook_direct_count
	FHOOK_RESTORE_ARGS
	leave
	RET
SYM_FUNC_END(fhook_direct_count_common)

/* fhook_direct_record(slot, return address into the function, parent) */
SYM_FUNC_START(fhook_direct_record_common)
	CALL_DEPTH_ACCOUNT
	pushq	%rbp
	movq	%rsp, %rbp
	FHOOK_SAVE_ARGS
	movq	%r11, %rdi
	movq	8(%rbp), %rsi
	movq	16(%rbp), %rdx
	call	fhook_direct_record
	FHOOK_RESTORE_ARGS
	leave
	RET
SYM_FUNC_END(fhook_direct_record_common)

/*
 * In place of the hooked function: fhook_around_enter(frame) decides
 * where the body starts (FHOOK_AF_TARGET) and takes the entry fields;
 * the body runs with the argument registers and the caller's first
 * FHOOK_HOOK_MAX_STACK_ARGS stack words as it would have seen them;
 * fhook_around_exit(frame) sees its return value in frame->regs.ax.
 */
SYM_FUNC_START(fhook_around_common)
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$FHOOK_AF_SIZE, %rsp
	FHOOK_STORE_ARGS %rsp, 0, FHOOK_AF_REGS
	movq	%r11, FHOOK_AF_SLOT(%rsp)
	movq	%rsp, %rdi
	call	fhook_around_enter
	FHOOK_PUSH_STACK_ARGS -FHOOK_AF_SIZE+FHOOK_AF_STACK
	FHOOK_LOAD_ARGS %rbp, -FHOOK_AF_SIZE, FHOOK_AF_REGS
	movq	-FHOOK_AF_SIZE+FHOOK_AF_TARGET(%rbp), %r11
	call	fhook_around_jump
.Lfhook_around_body_ret:
	ANNOTATE_NOENDBR	/* (its address is compared with, never called) */
	leaq	-FHOOK_AF_SIZE(%rbp), %rsp
	movq	%rax, RAX(%rsp)
	movq	%rdx, RDX(%rsp)
	movq	%rsp, %rdi
	call	fhook_around_exit
	movq	RAX(%rsp), %rax
	movq	RDX(%rsp), %rdx
	leave
	RET
SYM_FUNC_END(fhook_around_common)

/*
 * The latency trampoline (%r11: the probe's struct fhook_lat): the stack
 * holds the return address into the function (its body), then the one
 * into its caller.  fhook_lat_enter(frame) takes the entry time and
 * copies the caller's stack arguments; the body runs as it would have;
 * fhook_lat_exit(frame) takes the duration.  The body is reached with a
 * return (fhook_around_jump): there is no ENDBR after the fentry call.
 */
SYM_FUNC_START(fhook_lat_common)
	CALL_DEPTH_ACCOUNT
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$FHOOK_LF_SIZE, %rsp
	FHOOK_STORE_ARGS %rsp, 0, FHOOK_LF_REGS
	movq	%r11, FHOOK_LF_LAT(%rsp)
	movq	%rsp, %rdi
	call	fhook_lat_enter
	FHOOK_PUSH_STACK_ARGS -FHOOK_LF_SIZE+FHOOK_LF_STACK
	FHOOK_LOAD_ARGS %rbp, -FHOOK_LF_SIZE, FHOOK_LF_REGS
	movq	8(%rbp), %r11
	call	fhook_around_jump
.Lfhook_lat_body_ret:
	ANNOTATE_NOENDBR	/* (its address is compared with, never called) */
	leaq	-FHOOK_LF_SIZE(%rbp), %rsp
	movq	%rax, FHOOK_LF_AX(%rsp)
	movq	%rdx, FHOOK_LF_DX(%rsp)
	movq	%rsp, %rdi
	call	fhook_lat_exit
	movq	FHOOK_LF_AX(%rsp), %rax
	movq	FHOOK_LF_DX(%rsp), %rdx
	leave
	/* to the caller: drop the return address into the function */
	addq	$8, %rsp
	UNWIND_HINT_FUNC
	RET
SYM_FUNC_END(fhook_lat_common)

/*
 * Continue at %r11 with our caller's return address on the stack: a
 * return, not an indirect jump, so the body (which has no ENDBR after
 * its fentry call) is reachable under IBT.  One call, two returns (this
 * one, then the body's): the return stack buffer mispredicts both, but
 * call depth tracking (retbleed=stuff) counts executed calls and returns,
 * as the RSB does: the kernel accounts the call into this function (its
 * call thunk), each RET uncounts one, and the counter stays equal to the
 * RSB's depth.  Accounting the return into the body as a call of its own
 * would leave the counter one deeper than the RSB at every traced call.
 */
SYM_FUNC_START(fhook_around_jump)
	pushq	%r11
	UNWIND_HINT_FUNC
	RET
SYM_FUNC_END(fhook_around_jump)

/*
 * Where a function in a call graph returns to (probe_graph.c put this
 * address in place of its return address): fhook_graph_exit(the stack
 * pointer the function returned with, its return value) gives the real
 * return address, reached with %rax and %rdx as the function left them.
 * The kernel's return_to_handler, line for line: no ENDBR (nothing calls
 * it), a return through a call pushed here (not an indirect jump, which
 * IBT would refuse: a return address has no ENDBR) to keep the RSB
 * balanced.  Unwinders stop here: the caller's address is on the shadow
 * stack, not on this one.
 */
SYM_CODE_START(fhook_graph_return)
	FHOOK_UNWIND_HINT_NONE
	ANNOTATE_NOENDBR
	subq	$16, %rsp
	movq	%rax, (%rsp)
	movq	%rdx, 8(%rsp)
	leaq	16(%rsp), %rdi
	movq	%rax, %rsi
	call	fhook_graph_exit
	movq	%rax, %rdi
	movq	8(%rsp), %rdx
	movq	(%rsp), %rax
	addq	$16, %rsp
	ANNOTATE_INTRA_FUNCTION_CALL
	call	.Lfhook_graph_rop
	int3
.Lfhook_graph_rop:
	movq	%rdi, (%rsp)
	RET
SYM_CODE_END(fhook_graph_return)

/* FHOOK_HOOK_RETURN: the hook set %rax; return it to the caller */
SYM_FUNC_START(fhook_hook_return)
	RET
SYM_FUNC_END(fhook_hook_return)

/*
 * The counting fast path of slot N: one increment of this CPU's counter of
 * the probe, no call into C and no register saved.  %r11 is free at a
 * fentry site (caller-saved, no argument: the slot stubs below use it
 * too).  The counter is per-CPU memory (alloc_percpu) and the increment
 * one %gs-relative instruction, as this_cpu_inc(): preemption between the
 * two instructions moves the task, not the counter, and irqs and NMIs
 * cannot tear it.  Only for probes nothing filters (probe_direct.c).
 */
.macro FHOOK_FAST_SLOT n
SYM_FUNC_START(fhook_direct_fast_\n)
	CALL_DEPTH_ACCOUNT
	movq	fhook_direct_fast_ctrs + 8 * \n(%rip), %r11
	incq	%gs:(%r11)
	RET
SYM_FUNC_END(fhook_direct_fast_\n)
.endm

/* latency slot N: %r11 = its probe's struct fhook_lat */
.macro FHOOK_LAT_SLOT n
SYM_FUNC_START(fhook_lat_\n)
	movq	fhook_lat_ctxs + 8 * \n(%rip), %r11
	jmp	fhook_lat_common
SYM_FUNC_END(fhook_lat_\n)
.endm

/*
 * "The original" of around slot N, for a replacement to call (khook.c):
 * an indirect call from C lands here (ENDBR), and the function's body
 * after its fentry call (fhook_around_bodies[N], no ENDBR) is reached
 * with a return, as the trampolines reach it; the stack holds the
 * replacement's return address and its stack arguments, as the body
 * expects them.  The fentry call is skipped: the hook does not see the
 * call again.
 */
.macro FHOOK_ORIG_SLOT n
SYM_FUNC_START(fhook_orig_\n)
	movq	fhook_around_bodies + 8 * \n(%rip), %r11
	jmp	fhook_around_jump
SYM_FUNC_END(fhook_orig_\n)
.endm

/* slot N: %r11 = N, then the code of its kind */
.macro FHOOK_SLOT kind, n
SYM_FUNC_START(fhook_\kind\()_\n)
	movl	$\n, %r11d
	jmp	fhook_\kind\()_common
SYM_FUNC_END(fhook_\kind\()_\n)
.endm

	.irp n, FHOOK_SLOT_LIST
	FHOOK_FAST_SLOT \n
	FHOOK_SLOT direct_count, \n
	FHOOK_SLOT direct_record, \n
	FHOOK_SLOT around, \n
	FHOOK_LAT_SLOT \n
	FHOOK_ORIG_SLOT \n
	.endr

/* the slots' entry addresses, by kind */
	.pushsection .rodata, "a"
	.balign 8
SYM_DATA_START(fhook_direct_count_tramps)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_direct_count_\n
	.endr
SYM_DATA_END(fhook_direct_count_tramps)
SYM_DATA_START(fhook_direct_fast_tramps)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_direct_fast_\n
	.endr
SYM_DATA_END(fhook_direct_fast_tramps)
SYM_DATA_START(fhook_direct_record_tramps)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_direct_record_\n
	.endr
SYM_DATA_END(fhook_direct_record_tramps)
SYM_DATA_START(fhook_around_tramps)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_around_\n
	.endr
SYM_DATA_END(fhook_around_tramps)
SYM_DATA_START(fhook_orig_tramps)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_orig_\n
	.endr
SYM_DATA_END(fhook_orig_tramps)
/*
 * Where the bodies the around and latency trampolines run return to
 * (fhook_arch_body_frames()), by enum fhook_frame_kind_id; local labels:
 * stack traces still name the trampoline function
 */
SYM_DATA_START(fhook_body_rets)
	.quad	.Lfhook_around_body_ret
	.quad	.Lfhook_lat_body_ret
SYM_DATA_END(fhook_body_rets)

SYM_DATA_START(fhook_lat_tramps)
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_lat_\n
	.endr
SYM_DATA_END(fhook_lat_tramps)
	.popsection
