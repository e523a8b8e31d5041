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
#include <asm/ftrace.h>
#include <asm/processor-flags.h>

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

#if FHOOK_ARCH_FNREC_ASM
#include "fhook-offsets.h"

/* this CPU's task, preempt count and number, as the kernel keeps them */
#ifdef FHOOK_HAVE_PCPU_HOT
#define FHOOK_GS_CURRENT	%gs:pcpu_hot + FHOOK_HOT_current_task(%rip)
#define FHOOK_GS_PREEMPT	%gs:pcpu_hot + FHOOK_HOT_preempt_count(%rip)
#define FHOOK_GS_CPU		%gs:pcpu_hot + FHOOK_HOT_cpu_number(%rip)
#else
#define FHOOK_GS_CURRENT	%gs:current_task(%rip)
#define FHOOK_GS_PREEMPT	%gs:__preempt_count(%rip)
#define FHOOK_GS_CPU		%gs:cpu_number(%rip)
#endif

/* what fhook_fnrec_common saves: the stack then holds these */
#define FNR_RET		FHOOK_FF_ret	/* the return address into the function */
#define FNR_PARENT	FHOOK_FF_parent	/* ... and the one into its caller */

.macro FHOOK_FNREC_PUSH
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%rbx
	pushq	%r12
.endm

.macro FHOOK_FNREC_POP
	popq	%r12
	popq	%rbx
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
.endm

/*
 * The assembly recorder (%r11: the direct probe, fhook_direct_slots[N]):
 * fnrec.c's fhook_fnrec() for the common case, one FHOOK_REC_FN record
 * with no C frame.  Every test fhook_fnrec() and the inline reservation
 * make comes first (this CPU's ring idle, no call graph entry held back,
 * the probe not paused and of the session's tasks, the ring streaming
 * with no drop waiting, the session not frozen, the task's name in the
 * ring, the clock the counter; the addresses always fit FN's 32 bits:
 * x86-64's kernel code model puts all kernel text in the top 2 GiB); any
 * that fails sends the call to fhook_fnrec() before anything changed
 * (.Lfnrec_c).  Then, as fhook_ring_enter() and
 * fhook_ring_reserve_loop(): ->nest (the outermost writer), ->frozen
 * again (the freezer's IPI pairs with it), the number, the clock (the
 * anchor's latch as fhook_clock() reads it), the FN choice and the room,
 * the cmpxchg of ->head; four stores; fhook_ring_publish().  Its rare
 * endings are C (fhook_fnrec_finish(), fhook_fnrec_frozen(),
 * fhook_fnrec_wake()).  Nothing here is traceable and no C runs before
 * ->nest is raised, so no recursion guard is needed, as in fnrec.c; local
 * ops (xadd, cmpxchg without lock) as local_t's, this CPU's only.
 */
.macro FHOOK_FNREC name, fnk
SYM_FUNC_START(\name)
	CALL_DEPTH_ACCOUNT
	FHOOK_FNREC_PUSH
	movl	FHOOK_GS_PREEMPT, %r8d		/* the preempt count at entry */
	incl	FHOOK_GS_PREEMPT		/* preempt_disable_notrace() */
	pushfq
	popq	%r9				/* the irq state at entry */
	movq	FHOOK_P_session(%r11), %rbx
	movslq	FHOOK_GS_CPU, %rsi
	movq	FHOOK_S_rings(%rbx), %rdx
	movq	(%rdx,%rsi,8), %r10		/* this CPU's ring */
	cmpq	$0, FHOOK_R_nest(%r10)
	jne	.Lfnrec_c_\name
	cmpq	$0, %gs:fhook_fgraph_pending(%rip)
	jne	.Lfnrec_c_\name
	cmpw	$0, FHOOK_P_any_task(%r11)	/* (and paused, the next byte) */
	jne	.Lfnrec_c_\name
	cmpb	$0, FHOOK_R_overwrite(%r10)
	jne	.Lfnrec_c_\name
	cmpq	$0, FHOOK_R_lost_mask(%r10)
	jne	.Lfnrec_c_\name
	/* (a frozen session: the test after ->nest below, as in the C) */
	cmpb	$0, FHOOK_S_cpu_filter(%rbx)
	jne	.Lfnrec_c_\name
	cmpl	$0, fhook_clock_counter(%rip)	/* static_key_enabled() */
	jle	.Lfnrec_c_\name
	/* fhook_session_wants_task(): the controller's tgid, the pid set */
	movq	FHOOK_GS_CURRENT, %rdi
	movq	FHOOK_T_pid(%rdi), %rcx		/* pid, and tgid above it */
	movq	%rcx, %rax
	shrq	$32, %rax
	cmpl	FHOOK_S_ignore_tgid(%rbx), %eax
	jne	1f
	testl	%eax, %eax
	jnz	.Lfnrec_c_\name
1:	cmpb	$0, FHOOK_S_pid_filter(%rbx)
	je	2f
	movq	FHOOK_S_pids(%rbx), %rdx
	btq	%rax, (%rdx)			/* the tgid */
	jc	2f
	movl	%ecx, %eax
	btq	%rax, (%rdx)
	jnc	.Lfnrec_c_\name
2:	/* fhook_comm_known(): the task's name is in the ring */
	movl	%ecx, %edx
	andl	$FHOOK_CS_MASK, %edx
	shll	$FHOOK_CS_SHIFT, %edx
	leaq	FHOOK_R_comms(%r10,%rdx), %rdx
	cmpq	FHOOK_CS_pid(%rdx), %rcx	/* and tgid */
	jne	.Lfnrec_c_\name
	movq	FHOOK_T_comm(%rdi), %rax
	cmpq	FHOOK_CS_name(%rdx), %rax
	jne	.Lfnrec_c_\name
	movq	FHOOK_T_comm+8(%rdi), %rax
	cmpq	FHOOK_CS_name+8(%rdx), %rax
	jne	.Lfnrec_c_\name
	/*
	 * fhook_fn_ctx() of the entry: the preempt count's low 24 bits, irqs
	 * off (IF clear); the two resched bits are read with the record
	 */
	andl	$FHOOK_FN_CTX_PC_MASK, %r8d
	notl	%r9d
	andl	$X86_EFLAGS_IF, %r9d
	shll	$(24 - X86_EFLAGS_IF_BIT), %r9d
	orl	%r8d, %r9d			/* the record's context */
	/* the hit: fhook_counters(s, cpu, id)->hits */
	movl	FHOOK_P_id(%r11), %eax
	shll	$FHOOK_MAX_PROBES_SHIFT, %esi
	leal	-1(%rsi,%rax), %eax
	shlq	$FHOOK_PC_SHIFT, %rax
	addq	FHOOK_S_counters(%rbx), %rax
	movq	%rax, %r8			/* the probe's counters on this CPU */
	incq	FHOOK_PC_hits(%r8)
	/* fhook_ring_enter(): ->nest, then ->frozen, then the number */
	movl	$1, %eax
	xaddq	%rax, FHOOK_R_nest(%r10)
	cmpw	$0, FHOOK_S_frozen(%rbx)	/* (and traced_off, the next byte) */
	jne	.Lfnrec_frozen_\name
	movq	FHOOK_R_meta(%r10), %rbx
	movl	$1, %r12d
	xaddq	%r12, FHOOK_M_seq_next(%rbx)	/* the record's number */
	xorl	%edi, %edi			/* (no time read yet) */
	cmpq	$0, FHOOK_R_lost_mask(%r10)	/* fhook_ring_fn_may() */
	jne	.Lfnrec_finish_func_\name
	/* fhook_clock() */
	leaq	fhook_clock_cpu(%rip), %rsi	/* this_cpu_ptr() */
	addq	%gs:this_cpu_off(%rip), %rsi
.Lfnrec_clock_\name:
	movl	FHOOK_CL_seq(%rsi), %edi
	movl	%edi, %ecx
	andl	$1, %ecx
	imull	$FHOOK_A_SIZE, %ecx, %ecx
	leaq	FHOOK_CL_anchor(%rsi,%rcx), %rcx	/* the anchor: anchor[seq & 1] */
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	subq	FHOOK_A_cyc(%rcx), %rax
	cmpq	fhook_clock_span(%rip), %rax
	jae	.Lfnrec_finish_clock_\name		/* expired: a new anchor, in C */
	movl	FHOOK_A_mult(%rcx), %edx
	imulq	%rdx, %rax
	movq	FHOOK_A_ns(%rcx), %rdx
	movl	FHOOK_A_shift(%rcx), %ecx
	shrq	%cl, %rax
	addq	%rdx, %rax
	cmpl	FHOOK_CL_seq(%rsi), %edi
	jne	.Lfnrec_clock_\name
	/* fhook_clock_keep(): never before this CPU's latest stamp */
	movq	%rax, %rdi			/* the record's time */
	cmpq	FHOOK_CL_last(%rsi), %rdi	/* (the sign of time - last) */
	js	.Lfnrec_clock_back_\name
	movq	%rdi, FHOOK_CL_last(%rsi)
.Lfnrec_clock_kept_\name:
	/* fhook_ring_reserve_loop(): 32 bytes while the number is FN's */
	.if \fnk
	movzwl	FHOOK_P_fnk_word0(%r11), %esi	/* ... FN_KPROBE's: 32 + data */
	.endif
	movq	FHOOK_R_head(%r10), %rax
.Lfnrec_reserve_\name:
	leaq	1(%r12), %rcx
	cmpq	%rcx, FHOOK_M_seq_next(%rbx)	/* fhook_ring_fn_choose() */
	jne	.Lfnrec_finish_\name
	movq	FHOOK_R_cons(%r10), %rdx
	movq	%rax, %rcx
	subq	FHOOK_C_data_tail(%rdx), %rcx	/* fhook_ring_room(): used, (A) */
	movq	FHOOK_R_size(%r10), %rdx
	cmpq	%rdx, %rcx
	ja	.Lfnrec_finish_drop_\name
	subq	%rcx, %rdx
	.if \fnk
	cmpq	%rsi, %rdx
	jb	.Lfnrec_finish_drop_\name
	leaq	(%rax,%rsi), %rcx
	.else
	cmpq	$FHOOK_REC_FN_SIZE, %rdx
	jb	.Lfnrec_finish_drop_\name
	leaq	FHOOK_REC_FN_SIZE(%rax), %rcx
	.endif
	cmpxchgq %rcx, FHOOK_R_head(%r10)	/* local_cmpxchg() */
	jne	.Lfnrec_reserve_\name
	andq	FHOOK_R_mask(%r10), %rax
	addq	FHOOK_R_data(%r10), %rax	/* the record */
	/* fhook_fn_init(): size, type, ip; ts; pid, ctx; cpu, flags, probe, parent */
	movq	FNR_RET(%rsp), %rdx
	subq	$MCOUNT_INSN_SIZE, %rdx
	shlq	$32, %rdx
	.if \fnk
	movl	FHOOK_P_fnk_word0(%r11), %ecx
	orq	%rcx, %rdx
	.else
	orq	$FHOOK_REC_FN_WORD0, %rdx
	.endif
	movq	%rdx, 0(%rax)
	movq	%rdi, 8(%rax)
	/*
	 * ... and the context's TIF_NEED_RESCHED and PREEMPT_NEED_RESCHED
	 * (which x86 keeps inverted in the count's top bit), now
	 */
	movq	FHOOK_GS_CURRENT, %rcx
	movl	FHOOK_T_pid(%rcx), %edx
	movl	%edx, 16(%rax)
	movq	FHOOK_T_ti_flags(%rcx), %rdx
	shrq	$FHOOK_TIF_NEED_RESCHED, %rdx
	andl	$1, %edx
	shll	$25, %edx
	orl	%r9d, %edx
	movl	FHOOK_GS_PREEMPT, %ecx
	notl	%ecx
	shrl	$FHOOK_PREEMPT_NEED_RESCHED_BIT, %ecx	/* (bit 31: nothing above) */
	shll	$26, %ecx
	orl	%ecx, %edx
	movl	%edx, 20(%rax)
	movq	FNR_PARENT(%rsp), %rdx
	shlq	$32, %rdx
	movzbl	FHOOK_P_id(%r11), %ecx
	shll	$24, %ecx
	orq	%rcx, %rdx
	movzwl	FHOOK_GS_CPU, %ecx
	orq	%rcx, %rdx
	movq	%rdx, 24(%rax)
	.if \fnk
	/* the fields: each the register saved at its frame offset */
	movl	FHOOK_P_fnk_nr(%r11), %ecx
	testl	%ecx, %ecx
	jz	4f
	xorl	%edx, %edx
3:	movzbl	FHOOK_P_fnk_regs(%r11,%rdx), %esi
	movq	(%rsp,%rsi), %rsi
	movq	%rsi, FHOOK_REC_FN_SIZE(%rax,%rdx,8)
	incl	%edx
	cmpl	%ecx, %edx
	jb	3b
4:
	.endif
	incq	FHOOK_PC_written(%r8)
	/* fhook_ring_publish(): (B) is program order on x86 */
.Lfnrec_publish_\name:
	movq	FHOOK_R_head(%r10), %rax
	movq	%rax, FHOOK_M_data_head(%rbx)
	movq	$0, FHOOK_R_nest(%r10)
	cmpq	FHOOK_R_head(%r10), %rax
	je	5f
	movq	$1, FHOOK_R_nest(%r10)		/* a nested writer reserved meanwhile */
	jmp	.Lfnrec_publish_\name
5:	movq	FHOOK_R_cons(%r10), %rdx
	movq	FHOOK_C_data_tail(%rdx), %rsi
	cmpq	FHOOK_R_wake_tail(%r10), %rsi
	je	.Lfnrec_done_\name
	subq	%rsi, %rax
	movl	FHOOK_R_watermark(%r10), %ecx
	cmpq	%rcx, %rax
	jae	.Lfnrec_wake_\name
	movl	FHOOK_R_wakeup_events(%r10), %ecx
	testl	%ecx, %ecx
	jz	.Lfnrec_done_\name
	movl	FHOOK_M_seq_next(%rbx), %eax
	subl	FHOOK_C_seq_read(%rdx), %eax
	cmpl	%ecx, %eax
	jb	.Lfnrec_done_\name
.Lfnrec_wake_\name:
	movq	%r10, %rdi
	movl	%r9d, %edx
	call	fhook_fnrec_wake		/* (rb, tail, ctx) */
.Lfnrec_done_\name:
	decl	FHOOK_GS_PREEMPT		/* preempt_enable_notrace() */
	jnz	6f
	call	__SCT__preempt_schedule_notrace
6:	FHOOK_FNREC_POP
	RET

.Lfnrec_clock_back_\name:
	movq	FHOOK_CL_last(%rsi), %rdi
	jmp	.Lfnrec_clock_kept_\name

.Lfnrec_frozen_\name:
	movq	%r11, %rdi
	movq	%r10, %rsi
	movl	%r9d, %edx
	call	fhook_fnrec_frozen
	jmp	.Lfnrec_done_\name
	/*
	 * fhook_fnrec_finish(p, rb, nr, ip, parent, ctx, ts): its reservation
	 * where this one left off, at the time read here (0: none yet);
	 * in ctx, FHOOK_FNREC_FUNC: an FN record was ruled out before it,
	 * FHOOK_FNREC_DROP: no room.  fhook_fnk_finish(p, rb, nr, ctx, ts,
	 * frame): the same for a kprobe, which reads the registers, the
	 * return address and the parent in the frame (struct
	 * fhook_fnrec_frame)
	 */
.Lfnrec_finish_drop_\name:
	orl	$FHOOK_FNREC_DROP, %r9d
	jmp	.Lfnrec_finish_\name
.Lfnrec_finish_clock_\name:
	xorl	%edi, %edi
	jmp	.Lfnrec_finish_\name
.Lfnrec_finish_func_\name:
	orl	$FHOOK_FNREC_FUNC, %r9d
.Lfnrec_finish_\name:
	.if \fnk
	movl	%r9d, %ecx
	movq	%rdi, %r8
	movq	%rsp, %r9
	movq	%r11, %rdi
	movq	%r10, %rsi
	movq	%r12, %rdx
	call	fhook_fnk_finish
	.else
	pushq	%rdi
	movq	%r11, %rdi
	movq	%r10, %rsi
	movq	%r12, %rdx
	movq	FNR_RET+8(%rsp), %rcx
	subq	$MCOUNT_INSN_SIZE, %rcx
	movq	FNR_PARENT+8(%rsp), %r8
	/* (%r9: the context) */
	call	fhook_fnrec_finish
	addq	$8, %rsp
	.endif
	jmp	.Lfnrec_done_\name

	/* nothing changed: fhook_fnrec(), whose preempt_enable() reschedules */
.Lfnrec_c_\name:
	decl	FHOOK_GS_PREEMPT
	FHOOK_FNREC_POP
	.if \fnk
	jmp	fhook_fnk_c_common
	.else
	jmp	fhook_fnrec_c_common
	.endif
SYM_FUNC_END(\name)
.endm

FHOOK_FNREC fhook_fnrec_common, 0
FHOOK_FNREC fhook_fnk_common, 1

/* fhook_fnrec(%r11, return address into the function - 5, parent) */
SYM_FUNC_START(fhook_fnrec_c_common)
	pushq	%rbp
	movq	%rsp, %rbp
	FHOOK_SAVE_ARGS
	movq	%r11, %rdi
	movq	8(%rbp), %rsi
	subq	$MCOUNT_INSN_SIZE, %rsi
	movq	16(%rbp), %rdx
	call	fhook_fnrec
	FHOOK_RESTORE_ARGS
	leave
	RET
SYM_FUNC_END(fhook_fnrec_c_common)

/*
 * fhook_fnk_c(%r11, regs, return address into the function, parent): a
 * kprobe's hit the assembly leaves to C, with a struct pt_regs of the
 * registers saved here (the ones its program may read: fhook_fnk_ok())
 */
SYM_FUNC_START(fhook_fnk_c_common)
	pushq	%rbp
	movq	%rsp, %rbp
	subq	$FRAME_SIZE, %rsp
	FHOOK_STORE_ARGS %rsp, 0, FHOOK_AF_REGS
	movq	%r11, %rdi
	movq	%rsp, %rsi
	movq	8(%rbp), %rdx
	movq	16(%rbp), %rcx
	call	fhook_fnk_c
	FHOOK_LOAD_ARGS %rsp, 0, FHOOK_AF_REGS
	leave
	RET
SYM_FUNC_END(fhook_fnk_c_common)
#endif /* FHOOK_ARCH_FNREC_ASM */

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

/* recorder slot N: %r11 = its probe; a kprobe's (fhook_fnk_N) the same */
.macro FHOOK_FNREC_SLOT n, kind=fnrec
SYM_FUNC_START(fhook_\kind\()_\n)
	movq	fhook_direct_slots + 8 * \n(%rip), %r11
	jmp	fhook_\kind\()_common
SYM_FUNC_END(fhook_\kind\()_\n)
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
#if FHOOK_ARCH_FNREC_ASM
	FHOOK_FNREC_SLOT \n
	FHOOK_FNREC_SLOT \n, fnk
#endif
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
SYM_DATA_START(fhook_direct_fnrec_tramps)
#if FHOOK_ARCH_FNREC_ASM
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_fnrec_\n
	.endr
#else
	.fill	FHOOK_NR_SLOTS, 8, 0
#endif
SYM_DATA_END(fhook_direct_fnrec_tramps)
SYM_DATA_START(fhook_direct_fnk_tramps)
#if FHOOK_ARCH_FNREC_ASM
	.irp n, FHOOK_SLOT_LIST
	.quad	fhook_fnk_\n
	.endr
#else
	.fill	FHOOK_NR_SLOTS, 8, 0
#endif
SYM_DATA_END(fhook_direct_fnk_tramps)
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
