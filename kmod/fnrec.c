// SPDX-License-Identifier: GPL-2.0
/*
 * The function recorder of the common case: a function entry (an
 * ftrace_ops probe's or a direct probe's) whose probe has nothing to
 * decide per call, no predicate, trigger, histogram or stack (decided
 * once, when it is armed: fhook_fnrec_ok()), recorded as one
 * FHOOK_REC_FN record (FHOOK_REC_FUNC where its addresses do not fit or
 * the ring overwrites: fhook_func_write()),
 * with no recursion lock and the commit inline.
 * Another writer inside this CPU's ring, a call graph entry held back,
 * a paused probe or the session's filters saying no go untouched to
 * fhook_func_hit_full(), which decides them all again.
 *
 * No recursion lock: until the ring's ->nest is raised nothing here
 * calls traceable code, and from then on a hit on this CPU (an
 * interrupt, or a traceable clocksource read below us) sees ->nest set
 * and takes the full path, which counts a hit of our own context as
 * missed (->fast_ctx) as ftrace's recursion lock would have.  The
 * reservation's slow path (a drop to report, a task the ring does not
 * name yet, an overwriting ring) runs here too, in that same window.
 */
#include "fhook.h"
#include "tramp.h"

/*
 * May @p's hits go to fhook_fnrec()?  Its predicate, triggers, histogram
 * and stack are set before the session is armed and stay.
 */
bool fhook_fnrec_ok(const struct fhook_probe *p)
{
	return !p->pred && !p->nr_triggers && !p->hist && !p->stack;
}

/*
 * The assembly recorder (arch/x86/tramp.S, fhook_fnrec_common: the same
 * record written by a direct probe's own trampoline, no C frame), module
 * parameter fnrec_asm.  It takes what fhook_fnrec() takes but a probe of
 * any task's hits, a filter by CPU, an overwriting ring and the C clock;
 * those, and every other case fhook_fnrec() gives to the full path, it
 * leaves to fhook_fnrec() before it changes anything.
 */
static bool fhook_fnrec_asm = true;
module_param_named(fnrec_asm, fhook_fnrec_asm, bool, 0444);
MODULE_PARM_DESC(fnrec_asm, "record function entries of direct probes in assembly (x86-64)");

bool fhook_fnrec_asm_ok(const struct fhook_probe *p)
{
	return FHOOK_ARCH_FNREC_ASM && fhook_arch_fnrec_asm() && fhook_fnrec_asm && p->fnrec;
}

/*
 * The assembly recorder's calls into C run with rb->fast_ctx set as
 * fhook_fnrec() has it around its writing: a hit of the writer's own
 * context below (the clock read of a traced clocksource, the wakeup's
 * irq_work_queue()) counts as missed.  @ctx is the FHOOK_REC_FN context
 * the assembly took at entry (the preempt count's low bits, irqs off).
 */
static __always_inline unsigned int fhook_fnrec_asm_ctx(struct fhook_ring *rb, u32 ctx)
{
	unsigned int outer = READ_ONCE(rb->fast_ctx);

	WRITE_ONCE(rb->fast_ctx, fhook_ring_ctx(ctx & FHOOK_FN_CTX_PC_MASK,
						ctx & FHOOK_FN_CTX_IRQS_OFF));
	return outer;
}

/*
 * Its rare endings, once it entered @rb (->nest 1, the outermost writer)
 * and took the record's number @nr: a writer that took a number since or
 * a drop waiting (FHOOK_FNREC_FUNC: the record is FHOOK_REC_FUNC), no
 * room (FHOOK_FNREC_DROP), the clock to anchor again (@ts 0).  The rest
 * of fhook_ring_reserve_fn() from there, with what the assembly found.
 */
asmlinkage notrace void fhook_fnrec_finish(struct fhook_probe *p, struct fhook_ring *rb, u64 nr,
					   unsigned long ip, unsigned long parent_ip, u32 ctx, u64 ts)
{
	unsigned int pc = ctx & FHOOK_FN_CTX_PC_MASK;
	bool irqs_off = ctx & FHOOK_FN_CTX_IRQS_OFF;
	unsigned int outer = fhook_fnrec_asm_ctx(rb, ctx);

	if (ctx & FHOOK_FNREC_DROP) {
		fhook_ring_drop(rb, p->id, nr);
	} else {
		struct fhook_rec *r;

		r = fhook_ring_reserve_loop(rb, sizeof(struct fhook_rec_func), p->id, nr,
					    sizeof(struct fhook_rec_fn), !(ctx & FHOOK_FNREC_FUNC),
					    ts ?: fhook_clock());
		fhook_fn_fill(p, fhook_counters(p->session, rb->cpu, p->id), r, ip, parent_ip, pc,
			      irqs_off);
	}
	fhook_ring_publish(rb);
	WRITE_ONCE(rb->fast_ctx, outer);
}

/* ... a session frozen after it entered @rb: no number taken */
asmlinkage notrace void fhook_fnrec_frozen(struct fhook_probe *p, struct fhook_ring *rb, u32 ctx)
{
	unsigned int outer = fhook_fnrec_asm_ctx(rb, ctx);

	fhook_ring_count_frozen(rb, p->id);
	fhook_ring_publish(rb);
	WRITE_ONCE(rb->fast_ctx, outer);
}

/* ... and its publish's wakeup of the reader */
asmlinkage notrace void fhook_fnrec_wake(struct fhook_ring *rb, u64 tail, u32 ctx)
{
	unsigned int outer = fhook_fnrec_asm_ctx(rb, ctx);

	fhook_ring_wake(rb, tail);
	WRITE_ONCE(rb->fast_ctx, outer);
}

/*
 * Record a function entry at @ip called from @parent_ip; what this path
 * does not handle goes to fhook_func_hit_full() (a tail call: no frame of
 * ours below it).
 */
notrace void fhook_fnrec(struct fhook_probe *p, unsigned long ip, unsigned long parent_ip)
{
	struct fhook_session *s = p->session;
	struct task_struct *t = current;
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_probe_counters *c;
	struct fhook_ring *rb;
	unsigned int outer;
	int cpu;

	preempt_disable_notrace();
	cpu = raw_smp_processor_id();
	rb = s->rings[cpu];
	/* (a call graph entry held back goes out under the recursion lock) */
	if (unlikely(local_read(&rb->nest) || this_cpu_read(fhook_fgraph_pending) ||
		     READ_ONCE(p->paused) ||
		     (!p->any_task && !fhook_session_wants_task(s, t, cpu)))) {
		preempt_enable_notrace();
		fhook_func_hit_full(p, ip, parent_ip);
		return;
	}
	/* an NMI's hit between the test of nest and here restores ours */
	outer = READ_ONCE(rb->fast_ctx);
	WRITE_ONCE(rb->fast_ctx, fhook_ring_ctx(pc, irqs_off));
	c = fhook_counters(s, cpu, p->id);
	fhook_count(&c->hits);
	/* nest was 0 above: the outermost writer, whatever the reservation does */
	fhook_func_write(p, rb, c, ip, parent_ip, pc, irqs_off, true);
	WRITE_ONCE(rb->fast_ctx, outer);
	preempt_enable_notrace();
}

/*
 * May the assembly recorder write @p's hits (FHOOK_REC_FN_KPROBE records,
 * tramp.S's fhook_fnk_common)?  A kprobe on a function's ftrace location
 * (the caller's to know) that records, with nothing to decide per hit
 * (fhook_fnrec_ok()) and a program of registers the recorder saves, each
 * stored whole at 8 times its index, or no program.  Fills p->fnk.
 */
bool fhook_fnk_ok(struct fhook_probe *p)
{
	const struct fhook_prog *prog = p->prog;
	u32 n = prog ? prog->nr_reg_fields : 0;
	unsigned long seen = 0;
	u32 i;

	BUILD_BUG_ON(FHOOK_FN_KPROBE_MAX_FIELDS > FHOOK_MAX_REG_FIELDS);
	if (!FHOOK_ARCH_FNREC_ASM || !fhook_arch_fnrec_asm() || !fhook_fnrec_asm ||
	    p->count_only || !fhook_fnrec_ok(p))
		return false;
	/* registers only, or nothing */
	if ((prog && prog->len && !n) || n > FHOOK_FN_KPROBE_MAX_FIELDS ||
	    (prog ? prog->data_size : 0) != 8 * n)
		return false;
	for (i = 0; i < n; i++) {
		const struct fhook_reg_field *f = &prog->reg_fields[i];
		int slot = fhook_arch_fnk_slot(f->reg);

		if (f->size != 8 || f->dst % 8 || f->dst / 8 >= n || slot < 0 ||
		    __test_and_set_bit(f->dst / 8, &seen))
			return false;
		p->fnk.regs[f->dst / 8] = slot;
	}
	p->fnk.nr = n;
	p->fnk.word0 = (sizeof(struct fhook_rec_fn) + 8 * n) | FHOOK_REC_FN_KPROBE << 16;
	return true;
}

#if FHOOK_ARCH_FNREC_ASM
/*
 * fhook_fnrec_finish() of a kprobe's hit (fhook_fnk_common): its
 * registers, return address and parent in the frame @f the assembly
 * saved.  The record is FHOOK_REC_FN_KPROBE while FN's rule allows it,
 * else the FHOOK_REC_KPROBE record fhook_probe_emit() would write.
 */
asmlinkage notrace void fhook_fnk_finish(struct fhook_probe *p, struct fhook_ring *rb, u64 nr,
					 u32 ctx, u64 ts, const struct fhook_fnrec_frame *f)
{
	unsigned int pc = ctx & FHOOK_FN_CTX_PC_MASK;
	bool irqs_off = ctx & FHOOK_FN_CTX_IRQS_OFF;
	unsigned int outer = fhook_fnrec_asm_ctx(rb, ctx);
	unsigned long ip = f->ret - MCOUNT_INSN_SIZE;
	u32 i, n = p->fnk.nr, size = sizeof(struct fhook_rec_probe) + 8 * n;
	struct fhook_rec *r;
	u64 *data;

	if (ctx & FHOOK_FNREC_DROP) {
		fhook_ring_drop(rb, p->id, nr);
		goto publish;
	}
	r = fhook_ring_reserve_loop(rb, size, p->id, nr, sizeof(struct fhook_rec_fn) + 8 * n,
				    !(ctx & FHOOK_FNREC_FUNC), ts ?: fhook_clock());
	if (!r)
		goto publish;
	if (r->size == size) {
		struct fhook_rec_probe *k = (void *)r;

		fhook_rec_init_ts(r, FHOOK_REC_KPROBE, size, p->id, pc, irqs_off, r->ts);
		k->ip = ip;
		k->ret_ip = 0;
		k->faults = 0;
		data = (u64 *)k->data;
	} else {
		struct fhook_rec_fn *fn = (void *)r;

		fhook_fn_init(fn, p->id, ip, f->parent, pc, irqs_off, r->ts);
		fn->size = sizeof(*fn) + 8 * n;
		fn->type = FHOOK_REC_FN_KPROBE;
		data = (u64 *)(fn + 1);
	}
	for (i = 0; i < n; i++)
		data[i] = *(const unsigned long *)((const u8 *)f + p->fnk.regs[i]);
	fhook_count(&fhook_counters(p->session, rb->cpu, p->id)->written);
publish:
	fhook_ring_publish(rb);
	WRITE_ONCE(rb->fast_ctx, outer);
}

/*
 * A kprobe's hit the assembly left to C before it changed anything
 * (fhook_fnk_c_common): as the kprobe's ftrace_ops callback records it,
 * from @regs, which hold the registers its program reads; @ret is the
 * return address into the function.  A hit of the context of a writer
 * below us (the assembly's C endings: the clock, the wakeup) counts as
 * missed, as fhook_func_hit_full() counts it.
 */
asmlinkage notrace void fhook_fnk_c(struct fhook_probe *p, struct pt_regs *regs,
				    unsigned long ret, unsigned long parent)
{
	unsigned long ip = ret - MCOUNT_INSN_SIZE;
	unsigned int pc = preempt_count();
	int bit = fhook_hit_trylock(p, ip, parent, pc, irqs_disabled());

	if (bit < 0)
		return;
	fhook_probe_emit_regs(p, regs, ip, pc);
	ftrace_test_recursion_unlock(bit);
}
#endif
