// SPDX-License-Identifier: GPL-2.0
/*
 * kprobes and kretprobes.  The probe is registered disabled when it is
 * added, so a bad symbol, offset or blacklisted address fails
 * FHOOK_IOC_PROBE_ADD, and enabled/disabled by START/STOP.  Handlers run
 * with preemption off, int3 ones inside nmi_enter(): no locks, no wakeups
 * (the ring defers those to irq_work).
 *
 * A kretprobe's fetch program has an entry part (the arguments, kept in
 * the instance's data until the function returns) and a return part.
 */
#include "fhook.h"
#include "tramp.h"

#include <linux/err.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* What a kretprobe instance carries from entry to return. */
struct fhook_kret_entry {
	u64 faults;
	u32 dyn;	/* bytes of data[] used: fixed area + strings */
	u32 __pad;
	u8 data[];
};

/*
 * A kprobe or kretprobe: the common part and the kernel's probe.  A
 * kprobe the kernel would put on a function's ftrace location
 * (kprobe-on-ftrace) runs from fhook's own ftrace_ops instead (@fentry,
 * as fprobe does): the same handler, without kprobe_ftrace_handler()'s
 * lookup and bookkeeping, and without saving every register when the
 * program reads only those ftrace_caller saves.  Its kprobe is registered
 * only to check and place the address (past an ENDBR), then removed; as
 * the ops' filter would keep a module's address after the module is
 * gone, such a probe is watched (modwatch.c) like hooks.  Asked to
 * (FHOOK_PROBE_F_DIRECT), where the assembly recorder can write its hits
 * (fhook_fnk_ok(): registers stored whole, nothing decided per hit), it
 * goes through a direct slot instead while armed (@dops, fhook_fnk_N in
 * tramp.S: FHOOK_REC_FN_KPROBE records), and through @ops when no slot is
 * free or the function takes no direct trampoline (another one is there).
 */
struct fhook_kprobe_probe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	union {
		struct kprobe kp;	/* FHOOK_PROBE_KPROBE */
		struct {		/* FHOOK_PROBE_KRETPROBE */
			struct kretprobe rp;
			u64 rp_pages;	/* fhook_mem_reserve()d for its instances */
		};
	};
	bool fentry;
	bool want_direct;		/* FHOOK_PROBE_F_DIRECT */
	bool direct;			/* @fentry, armed on @dops */
	int slot;			/* @dops' direct slot while armed, or -1 */
	struct ftrace_ops ops;		/* @fentry: filter = kp.addr */
	struct ftrace_ops dops;		/* @fentry, the same filter: direct */
};

static_assert(offsetof(struct fhook_kprobe_probe, p) == 0);

static inline struct fhook_kprobe_probe *to_kprobe(struct fhook_probe *p)
{
	return container_of(p, struct fhook_kprobe_probe, p);
}

/*
 * The fields of a hit fetched into @ctx (its data inside @rec's): triggers,
 * predicate, one record.  Preemption must be off.
 */
static notrace void fhook_probe_record(struct fhook_probe *p, u16 type, struct pt_regs *regs,
				       unsigned long ip, unsigned long ret_ip,
				       struct fhook_fetch_ctx *ctx, unsigned int pc, bool irqs_off)
{
	struct fhook_session *s = p->session;
	int cpu = smp_processor_id();
	struct fhook_probe_counters *c = fhook_counters(s, cpu, p->id);
	struct fhook_ring *rb = s->rings[cpu];
	unsigned int size, triggered;
	struct fhook_rec_probe *r;
	bool stack;

	triggered = p->nr_triggers ? fhook_triggers_run(p, rb, ctx->data, ctx->dyn) : 0;
	if ((p->pred && !fhook_pred_run(p->pred, ctx->data, ctx->dyn)) || READ_ONCE(p->paused)) {
		fhook_count(&c->filtered);
		return;
	}
	fhook_count(&c->hits);
	if (p->hist) {
		/* the fields fetched, no byte beyond (HIST_SET bounds the keys too) */
		fhook_hist_add(p->hist, ctx->data, ctx->dyn, ctx->faults, ip, ret_ip, regs);
		return;
	}
	stack = p->stack || (triggered & FHOOK_TRIGGERED_STACK);
	if (stack) {
		u32 at = ALIGN(ctx->dyn, 8);
		u64 *ips = (u64 *)(ctx->data + at);
		unsigned int n;

		memset(ctx->data + ctx->dyn, 0, at - ctx->dyn);
		n = ctx->user ? fhook_stack_user(regs, ips, FHOOK_MAX_STACK)
			      : fhook_stack_kernel(regs, ips, FHOOK_MAX_STACK);
		ctx->dyn = at + fhook_stack_trailer(ips, n);
	}
	size = sizeof(*r) + ctx->dyn;

	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init(&r->hdr, type, size, p->id, pc, irqs_off);
		if (stack)
			r->hdr.flags |= FHOOK_CTX_STACK;
		r->ip = ip;
		r->ret_ip = ret_ip;
		r->faults = ctx->faults;
		memcpy(r->data, ctx->data, ctx->dyn);
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/* The session's filters, counted as such; preemption off. */
static notrace bool fhook_probe_wanted(struct fhook_probe *p)
{
	if (fhook_session_wants(p->session))
		return true;
	fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->filtered);
	return false;
}

/* Bytes of data a histogram's hit fetches on the stack (no record) */
#define FHOOK_HIST_HIT_DATA	64

/*
 * A hit of a kprobe whose fields go to its histogram in the module only
 * (no triggers, all of the fields fit in FHOOK_HIST_HIT_DATA): fetched on
 * the stack, the predicate, the histogram.  Preemption must be off.
 */
static notrace void fhook_probe_hist_hit(struct fhook_probe *p, struct pt_regs *regs,
					 unsigned long ip, unsigned long ret_ip)
{
	struct fhook_probe_counters *c = fhook_counters(p->session, smp_processor_id(), p->id);
	const struct fhook_prog *prog = p->prog;
	/* zeroed: the bytes between the fields are read as keys too */
	u64 data[FHOOK_HIST_HIT_DATA / 8] = {};
	struct fhook_fetch_ctx ctx __uninitialized;
	u32 len = prog->data_size;

	if (!fhook_session_wants(p->session)) {
		fhook_count(&c->filtered);
		return;
	}
	ctx.faults = 0;
	if (prog->nr_reg_fields) {
		fhook_prog_run_regs(prog, regs, (u8 *)data);
	} else {
		fhook_fetch_ctx_init(&ctx, regs, (u8 *)data, sizeof(data), false);
		ctx.dyn = len;
		fhook_prog_run(prog, 0, prog->len, &ctx);
		len = ctx.dyn;
	}
	if ((p->pred && !fhook_pred_run(p->pred, (u8 *)data, len)) || READ_ONCE(p->paused)) {
		fhook_count(&c->filtered);
		return;
	}
	fhook_count(&c->hits);
	fhook_hist_add(p->hist, data, len, ctx.faults, ip, ret_ip, regs);
}

/*
 * A kprobe hit whose program stores registers only (or nothing) and that
 * nothing looks at before it is written (no trigger, predicate,
 * histogram or stack): the fields go straight into the ring, without the
 * scratch record and its copy.  Preemption must be off.
 */
static noinline notrace void fhook_probe_record_regs(struct fhook_probe *p, u16 type,
						     struct pt_regs *regs, unsigned long ip,
						     unsigned int pc)
{
	const struct fhook_prog *prog = p->prog;
	bool irqs_off = irqs_disabled();
	struct fhook_session *s = p->session;
	int cpu = smp_processor_id();
	struct fhook_probe_counters *c = fhook_counters(s, cpu, p->id);
	struct fhook_ring *rb = s->rings[cpu];
	unsigned int size = sizeof(struct fhook_rec_probe) + prog->data_size;
	struct fhook_rec_probe *r;
	u32 i;

	if (!fhook_session_wants(s) || READ_ONCE(p->paused)) {
		fhook_count(&c->filtered);
		return;
	}
	fhook_count(&c->hits);
	r = fhook_ring_reserve(rb, size, p->id);
	if (!IS_ERR_OR_NULL(r)) {
		fhook_rec_init(&r->hdr, type, size, p->id, pc, irqs_off);
		r->ip = ip;
		r->ret_ip = 0;
		r->faults = 0;
		/* no stale bytes between the fields (the record is 8-aligned) */
		for (i = 0; i < prog->data_size; i += 8)
			*(u64 *)(r->data + i) = 0;
		fhook_prog_run_regs(prog, regs, r->data);
		fhook_count(&c->written);
	}
	fhook_ring_commit(rb);
}

/* fhook_probe_emit() for a hit to record: a frame of its own (below) */
static noinline notrace void fhook_probe_emit_record(struct fhook_probe *p, u16 type,
						     struct pt_regs *regs, unsigned long ip,
						     unsigned long ret_ip,
						     const struct fhook_kret_entry *entry,
						     unsigned int pc)
{
	const struct fhook_prog *prog = p->prog;
	bool irqs_off = irqs_disabled();
	struct fhook_rec_probe *scratch;
	struct fhook_fetch_ctx ctx;

	if (!fhook_probe_wanted(p))
		return;
	scratch = fhook_scratch_get();
	if (unlikely(!scratch)) {
		fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->missed);
		return;
	}
	fhook_fetch_ctx_init(&ctx, regs, scratch->data, FHOOK_MAX_PROBE_DATA, false);
	if (entry) {
		memcpy(ctx.data, entry->data, entry->dyn);
		ctx.dyn = entry->dyn;
		ctx.faults = entry->faults;
		ctx.field = prog->entry_fields;
	} else {
		memset(ctx.data, 0, prog->data_size);
		ctx.dyn = prog->data_size;
	}
	/* a kprobe's entry_len is 0: the whole program */
	fhook_prog_run(prog, entry ? prog->entry_len : 0, prog->len, &ctx);
	fhook_probe_record(p, type, regs, ip, ret_ip, &ctx, pc, irqs_off);
	fhook_scratch_put();
}

/*
 * Record a hit of a kprobe or kretprobe: filters, fetch program (no page
 * faults), predicate, one record; or its histogram.  Preemption must be
 * off; @pc is the preempt count of the probed code (as the kernel's own
 * kprobe events show it: without the preemption the probe's machinery
 * disabled).  Each path has its own frame: the kernel may zero every
 * local variable at a function's entry (CONFIG_INIT_STACK_ALL_ZERO).
 */
notrace void fhook_probe_emit(struct fhook_probe *p, u16 type, struct pt_regs *regs,
			      unsigned long ip, unsigned long ret_ip,
			      const struct fhook_kret_entry *entry, unsigned int pc)
{
	const struct fhook_prog *prog = p->prog;

	if (p->hist && !entry && !p->nr_triggers &&
	    prog->data_size + prog->max_dyn <= FHOOK_HIST_HIT_DATA)
		fhook_probe_hist_hit(p, regs, ip, ret_ip);
	else if (type == FHOOK_REC_KPROBE && (prog->nr_reg_fields || !prog->len) &&
		 !p->nr_triggers && !p->pred && !p->hist && !p->stack)
		fhook_probe_record_regs(p, type, regs, ip, pc);
	else
		fhook_probe_emit_record(p, type, regs, ip, ret_ip, entry, pc);
}

/*
 * A hit of a kprobe the assembly recorder leaves to C (fnrec.c,
 * fhook_fnk_c()): @regs holds only the registers its fields read
 * (fhook_fnk_ok(), checked when it was armed), so only the record of
 * registers runs, never what reads the rest (a stack, a histogram).
 */
notrace void fhook_probe_emit_regs(struct fhook_probe *p, struct pt_regs *regs,
				   unsigned long ip, unsigned int pc)
{
	fhook_probe_record_regs(p, FHOOK_REC_KPROBE, regs, ip, pc);
}

/*
 * Record a hit of a uprobe or uretprobe, in the probed task and
 * preemptible: the fetch program reads user memory, with page faults
 * where the probe's adder had CAP_SYS_ADMIN (strings and stack pages not
 * touched yet are read, as trace_uprobe reads them; p->user_faults), then
 * the record is written with preemption off, if the filters still admit
 * it on the CPU the task is on then.
 */
notrace void fhook_probe_emit_user(struct fhook_probe *p, u16 type, struct pt_regs *regs,
				   unsigned long ip, unsigned long ret_ip)
{
	const struct fhook_prog *prog = p->prog;
	unsigned int pc = preempt_count();
	bool irqs_off = irqs_disabled();
	struct fhook_fetch_ctx ctx;
	struct fhook_rec_probe *rec;
	struct fhook_ubuf *u;
	bool wanted;

	preempt_disable_notrace();
	wanted = fhook_probe_wanted(p);
	preempt_enable_notrace();
	if (!wanted)
		return;
	u = fhook_ubuf_get(&rec);
	if (unlikely(!rec)) {
		preempt_disable_notrace();
		fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->missed);
		preempt_enable_notrace();
		return;
	}
	fhook_fetch_ctx_init(&ctx, regs, rec->data, FHOOK_MAX_PROBE_DATA, true);
	ctx.may_fault = p->user_faults;
	memset(ctx.data, 0, prog->data_size);
	ctx.dyn = prog->data_size;
	fhook_prog_run(prog, 0, prog->len, &ctx);
	/*
	 * The fetch may have slept and the task moved (migration is not
	 * disabled: a fetch stuck on a FUSE page would pin the CPU): the
	 * filters again, on the CPU whose ring gets the record
	 */
	preempt_disable_notrace();
	if (fhook_probe_wanted(p))
		fhook_probe_record(p, type, regs, ip, ret_ip, &ctx, pc, irqs_off);
	preempt_enable_notrace();
	fhook_ubuf_put(u, rec);
}

/*
 * Pages of @n kretprobe instances of @size bytes, for fhook's budget: the
 * larger of one kmalloc() each (6.1) and rethook's objpool (6.7+): a
 * vmalloc'd area per possible CPU with a power-of-two slot array and the
 * CPU's share of the objects.
 */
static u64 fhook_kret_pages(u32 n, size_t size)
{
	u64 cpus = num_possible_cpus();
	u64 kmalloced = DIV_ROUND_UP((u64)n * kmalloc_size_roundup(size), PAGE_SIZE);
	u64 per_cpu = PAGE_ALIGN(64 + roundup_pow_of_two(n) * sizeof(void *) +
				 DIV_ROUND_UP(n, cpus) * ALIGN(size, 8));

	return max(kmalloced, cpus * (per_cpu >> PAGE_SHIFT));
}

/*
 * Register @k's kretprobe with its instances counted in fhook's budget:
 * the kernel allocates them, not charged to the caller's memory cgroup.
 * Debug allocators (KASAN redzones, kmemleak, slub_debug) make them cost
 * more than fhook_kret_pages() says, so what MemAvailable lost meanwhile
 * is charged when it is more, and the probe refused when that does not
 * fit (release unregisters it and gives the pages back).  Others'
 * allocations meanwhile count too, so never more than FHOOK_KRET_SLACK
 * times the estimate: a busy machine does not fill a user's share.
 */
#define FHOOK_KRET_SLACK	4
static int fhook_kret_register(struct fhook_kprobe_probe *k)
{
	long before, used;
	int ret;

	k->rp_pages = fhook_kret_pages(k->rp.maxactive,
				       sizeof(struct kretprobe_instance) + k->rp.data_size);
	ret = fhook_mem_reserve(k->p.session->user, k->rp_pages);
	if (ret) {
		k->rp_pages = 0;
		return ret;
	}
	before = si_mem_available();
	ret = register_kretprobe(&k->rp);
	if (ret)
		return ret;
	k->p.registered = true;
	used = min_t(long, before - si_mem_available(), FHOOK_KRET_SLACK * k->rp_pages);
	if (used > 0 && (u64)used > k->rp_pages) {
		ret = fhook_mem_reserve(k->p.session->user, used - k->rp_pages);
		if (ret)
			return ret;
		k->rp_pages = used;
	}
	return 0;
}

static notrace int fhook_kprobe_handler(struct kprobe *kp, struct pt_regs *regs)
{
	struct fhook_probe *p = &container_of(kp, struct fhook_kprobe_probe, kp)->p;

	if (unlikely(!READ_ONCE(p->enabled)))
		return 0;
	if (p->count_only)
		fhook_probe_count(p);
	else
		fhook_probe_emit(p, FHOOK_REC_KPROBE, regs, (unsigned long)kp->addr, 0, NULL,
				 preempt_count());
	return 0;
}
NOKPROBE_SYMBOL(fhook_kprobe_handler);

/*
 * An @fentry kprobe's hit: the registers ftrace_caller saved (all of them
 * with FTRACE_OPS_FL_SAVE_REGS), ip as kprobe_ftrace_handler() shows it
 * to a kprobe's handler (the probed address + 1), then put back:
 * ftrace_caller returns to regs->ip.
 */
static notrace void fhook_kprobe_fentry_callback(unsigned long ip, unsigned long parent_ip,
						 struct ftrace_ops *op,
						 struct ftrace_regs *fregs)
{
	struct fhook_probe *p = &container_of(op, struct fhook_kprobe_probe, ops)->p;
	struct pt_regs regs_copy __fhook_fregs_buf;
	struct pt_regs *regs = fhook_fregs_partial(fregs, &regs_copy);
	unsigned long orig_ip = instruction_pointer(regs);
	unsigned int pc = preempt_count();
	int bit;

	/* also disables preemption */
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		preempt_disable_notrace();
		fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->missed);
		preempt_enable_notrace();
		return;
	}
	instruction_pointer_set(regs, ip + sizeof(kprobe_opcode_t));
	fhook_probe_emit(p, FHOOK_REC_KPROBE, regs, ip, 0, NULL, pc);
	instruction_pointer_set(regs, orig_ip);
	ftrace_test_recursion_unlock(bit);
}

/*
 * @k's kprobe is registered (disabled) at a function's ftrace location:
 * remove it and make the ftrace_ops that replaces it.  @gen: modwatch.c's
 * generation, taken before the address was looked up.
 */
static int fhook_kprobe_fentry_init(struct fhook_kprobe_probe *k, u64 gen)
{
	struct fhook_probe *p = &k->p;
	int ret;

	unregister_kprobe(&k->kp);
	p->registered = false;
	k->fentry = true;
	/* unregistering is what disarm does (session.c: stuck probes) */
	p->disarm_unregisters = true;
	k->ops.func = fhook_kprobe_fentry_callback;
	/* no FTRACE_OPS_FL_RECURSION: the callback takes the lock itself */
	k->ops.flags = fhook_prog_needs_all_regs(p->prog) ? FTRACE_OPS_FL_SAVE_REGS : 0;
	ret = ftrace_set_filter_ip(&k->ops, (unsigned long)k->kp.addr, 0, 0);
	if (ret)
		return ret;
	if (FHOOK_ARCH_FNREC_ASM && k->want_direct) {
		ret = ftrace_set_filter_ip(&k->dops, (unsigned long)k->kp.addr, 0, 0);
		if (ret)
			return ret;
	}
	return fhook_modwatch_add(p, gen);
}

/* @k's direct trampoline (none where the assembly recorder is not built) */
static unsigned long fhook_kprobe_fnk_tramp(struct fhook_kprobe_probe *k)
{
	return FHOOK_ARCH_FNREC_ASM ? fhook_direct_fnk_tramps[k->slot] : 0;
}

/*
 * Through a direct slot if the probe asks, may (decided at each arm: the
 * histogram and the triggers may change while the session is stopped)
 * and gets one the function takes; else the ftrace_ops.
 */
static bool fhook_kprobe_fentry_arm_direct(struct fhook_kprobe_probe *k)
{
	struct fhook_probe *p = &k->p;

	if (!k->want_direct || !fhook_fnk_ok(p))
		return false;
	k->slot = fhook_direct_slot_take(p);
	if (k->slot < 0) {
		k->slot = -1;
		return false;
	}
	if (fhook_direct_register(&k->dops, fhook_kprobe_fnk_tramp(k))) {
		fhook_direct_slot_give(p, k->slot);
		k->slot = -1;
		return false;
	}
	return true;
}

/* Under the modwatch lock: no unload runs meanwhile. */
static int fhook_kprobe_fentry_arm(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);
	int ret;

	k->direct = fhook_kprobe_fentry_arm_direct(k);
	if (k->direct) {
		p->registered = true;
		return 0;
	}
	ret = register_ftrace_function(&k->ops);
	p->registered = !ret;
	return ret;
}

/* Under the modwatch lock: from the session or a module unload. */
static void fhook_kprobe_fentry_unhook(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);
	int ret;

	if (!k->direct) {
		fhook_ops_unregister(p, &k->ops);
		return;
	}
	if (!p->registered)
		return;
	/* waits until no task is on the trampoline (RCU tasks) */
	ret = fhook_direct_unregister(&k->dops, fhook_kprobe_fnk_tramp(k));
	if (ret) {
		/* still attached: the probe must not be freed (session.c) */
		pr_err("probe %u: unregister direct: %d\n", p->id, ret);
		return;
	}
	p->registered = false;
	/* no task is on the trampoline any more */
	fhook_direct_slot_give(p, k->slot);
	k->slot = -1;
}

/* modwatch.c: is the probed function in @mod? */
static bool fhook_kprobe_in_module(struct fhook_probe *p, struct module *mod, bool globs)
{
	return within_module((unsigned long)to_kprobe(p)->kp.addr, mod);
}

static notrace int fhook_kret_entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct fhook_probe *p = &container_of(get_kretprobe(ri), struct fhook_kprobe_probe, rp)->p;
	const struct fhook_prog *prog = p->prog;
	struct fhook_kret_entry *e = (struct fhook_kret_entry *)ri->data;
	struct fhook_fetch_ctx ctx;

	/* non-zero: no return instance, the handler below is not called */
	if (unlikely(!READ_ONCE(p->enabled)))
		return 1;
	if (!fhook_session_wants(p->session)) {
		fhook_count(&fhook_counters(p->session, smp_processor_id(), p->id)->filtered);
		return 1;
	}
	memset(e->data, 0, prog->data_size);
	fhook_fetch_ctx_init(&ctx, regs, e->data, to_kprobe(p)->rp.data_size - sizeof(*e), false);
	ctx.dyn = prog->data_size;
	fhook_prog_run(prog, 0, prog->entry_len, &ctx);
	e->faults = ctx.faults;
	e->dyn = ctx.dyn;
	return 0;
}
NOKPROBE_SYMBOL(fhook_kret_entry_handler);

static notrace int fhook_kret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct fhook_probe *p;

	if (unlikely(!rp))
		return 0;
	p = &container_of(rp, struct fhook_kprobe_probe, rp)->p;
	if (likely(READ_ONCE(p->enabled)))
		fhook_probe_emit(p, FHOOK_REC_KRETPROBE, regs, (unsigned long)rp->kp.addr,
				  get_kretprobe_retaddr(ri),
				  p->prog->entry_len ? (struct fhook_kret_entry *)ri->data : NULL,
				  preempt_count());
	return 0;
}
NOKPROBE_SYMBOL(fhook_kret_handler);

static int fhook_kprobe_init(struct fhook_probe *p, const struct fhook_probe_add *arg, s32 *err_index)
{
	/* before any address is looked up (modwatch.c) */
	u64 gen = fhook_modwatch_gen();
	struct fhook_kprobe_probe *k = to_kprobe(p);
	bool ret_probe = arg->type == FHOOK_PROBE_KRETPROBE;
	struct kprobe *kp = ret_probe ? &k->rp.kp : &k->kp;
	struct fhook_prog *prog;
	int ret;

	k->slot = -1;
	k->want_direct = arg->flags & FHOOK_PROBE_F_DIRECT;
	ret = fhook_priv_require(p, FHOOK_PRIV_KPROBE);
	if (ret)
		return ret;
	p->stack = arg->flags & FHOOK_PROBE_F_STACK;
	/* a symbol or an address, never both (one would be ignored) */
	if (arg->symbol_len > FHOOK_MAX_SYMBOL_LEN || !arg->symbol_len == !arg->addr)
		return fhook_refuse(p->session, FHOOK_R_SYMBOL_OR_ADDR, -1, -EINVAL);
	if (arg->offset > INT_MAX || (ret_probe && arg->offset))
		return fhook_refuse(p->session, FHOOK_R_OFFSET, -1, -EINVAL);
	if (!ret_probe && arg->maxactive)
		return fhook_refuse(p->session, FHOOK_R_MAXACTIVE, -1, -EINVAL);
	if (arg->maxactive > FHOOK_MAX_MAXACTIVE)
		return fhook_refuse(p->session, FHOOK_R_MAXACTIVE, -1, -E2BIG);
	/* counting: no fields to fetch, a filter on the task only */
	p->count_only = arg->flags & FHOOK_PROBE_F_COUNT;
	if (p->count_only && (ret_probe || arg->prog_len || p->stack))
		return fhook_refuse(p->session, FHOOK_R_COUNT_FIELDS, -1, -EINVAL);

	prog = fhook_prog_load(p, arg, ret_probe, false, err_index);
	if (IS_ERR(prog))
		return PTR_ERR(prog);
	p->prog = prog;
	p->pred = fhook_pred_load(p, arg, prog->data_size, err_index);
	if (IS_ERR(p->pred)) {
		ret = PTR_ERR(p->pred);
		p->pred = NULL;
		return ret;
	}

	if (arg->symbol_len) {
		p->symbol = memdup_user_nul(u64_to_user_ptr(arg->symbol), arg->symbol_len);
		if (IS_ERR(p->symbol)) {
			ret = PTR_ERR(p->symbol);
			p->symbol = NULL;
			return ret;
		}
		if (strlen(p->symbol) != arg->symbol_len)
			return fhook_refuse(p->session, FHOOK_R_NAME, -1, -EINVAL);
		kp->symbol_name = p->symbol;
		kp->offset = arg->offset;
	} else {
		/* an address is the place itself: an offset would be ignored */
		if (arg->offset)
			return fhook_refuse(p->session, FHOOK_R_OFFSET, -1, -EINVAL);
		kp->addr = (kprobe_opcode_t *)(unsigned long)arg->addr;
	}
	/* registered disarmed: START enables it */
	kp->flags = KPROBE_FLAG_DISABLED;

	if (ret_probe) {
		u32 entry_data = 0;

		if (prog->entry_len) {
			entry_data = sizeof(struct fhook_kret_entry) + prog->data_size +
				     prog->entry_dyn;
			entry_data = min_t(u32, entry_data, KRETPROBE_MAX_DATA_SIZE);
			k->rp.entry_handler = fhook_kret_entry_handler;
		}
		k->rp.handler = fhook_kret_handler;
		k->rp.data_size = entry_data;
		/* register_kretprobe()'s default, made explicit to be counted */
		k->rp.maxactive = arg->maxactive ?: max_t(unsigned int, 10, 2 * num_possible_cpus());
		ret = fhook_kret_register(k);
	} else {
		kp->pre_handler = fhook_kprobe_handler;
		ret = register_kprobe(kp);
		p->registered = !ret;
	}
	if (ret)
		return ret;
	/* probing fhook's own code would recurse through the handler */
	if (within_module((unsigned long)kp->addr, THIS_MODULE))
		return fhook_refuse(p->session, FHOOK_R_SELF, -1, -ELOOP);	/* release unregisters */
	/* counting keeps the kprobe: fhook count --via kprobe measures kprobes */
	if (!ret_probe && !p->count_only && kprobe_ftrace(kp))
		return fhook_kprobe_fentry_init(k, gen);
	return 0;
}

/*
 * Is @addr kernel text a kprobe may go to (not fhook, not blacklisted)?
 * A disabled kprobe is registered and removed at once: no text is
 * patched.  *@probed gets the address the kernel would probe (past an
 * ENDBR).
 */
int fhook_kprobe_check_text(unsigned long addr, unsigned long *probed)
{
	struct kprobe kp = {
		.addr = (kprobe_opcode_t *)addr,
		.flags = KPROBE_FLAG_DISABLED,
	};
	int ret;

	if (within_module(addr, THIS_MODULE))
		return -ELOOP;
	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	*probed = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return 0;
}

/* Address actually probed (the kernel moves sym+0 past an ENDBR). */
u64 fhook_kprobe_addr(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);
	struct kprobe *kp = p->type == FHOOK_PROBE_KRETPROBE ? &k->rp.kp : &k->kp;

	return (unsigned long)kp->addr;
}

static int fhook_kprobe_arm(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);
	int ret;

	if (k->fentry)
		return fhook_modwatch_arm(p, fhook_kprobe_fentry_arm);
	WRITE_ONCE(p->enabled, true);
	if (p->type == FHOOK_PROBE_KRETPROBE)
		ret = enable_kretprobe(&k->rp);
	else
		ret = enable_kprobe(&k->kp);
	if (ret)
		WRITE_ONCE(p->enabled, false);
	return ret;
}

/*
 * Disable; the caller waits for handlers in flight (synchronize_rcu():
 * every handler runs with preemption disabled) before touching the rings.
 */
static void fhook_kprobe_disarm(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);

	if (k->fentry) {
		fhook_modwatch_unhook(p, fhook_kprobe_fentry_unhook);
		return;
	}
	if (!READ_ONCE(p->enabled))
		return;
	WRITE_ONCE(p->enabled, false);
	if (p->type == FHOOK_PROBE_KRETPROBE)
		disable_kretprobe(&k->rp);
	else
		disable_kprobe(&k->kp);
}

static void fhook_kprobe_release(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);

	if (k->fentry) {
		fhook_modwatch_del(p);
		/* disarm unregistered them */
		ftrace_free_filter(&k->ops);
		if (FHOOK_ARCH_FNREC_ASM && k->want_direct)
			ftrace_free_filter(&k->dops);
	} else if (p->registered) {
		/* waits for handlers in flight, frees kretprobe instances */
		if (p->type == FHOOK_PROBE_KRETPROBE)
			unregister_kretprobe(&k->rp);
		else
			unregister_kprobe(&k->kp);
		p->registered = false;
	}
	if (p->type == FHOOK_PROBE_KRETPROBE)
		fhook_mem_unreserve(p->session->user, k->rp_pages);
	kfree(p->symbol);
	kfree(p->pred);
	kfree(p->prog);
}

unsigned long fhook_kprobe_nmissed(struct fhook_probe *p)
{
	struct fhook_kprobe_probe *k = to_kprobe(p);

	if (p->type == FHOOK_PROBE_KRETPROBE)
		return k->rp.nmissed + k->rp.kp.nmissed;
	return k->kp.nmissed;
}

const struct fhook_probe_kind fhook_kprobe_kind = {
	.size		= sizeof(struct fhook_kprobe_probe),
	.fields		= FHOOK_ADD_SYMBOL | FHOOK_ADD_ADDR | FHOOK_ADD_MAXACTIVE | FHOOK_ADD_PROG |
			  FHOOK_ADD_DATA_SIZE | FHOOK_ADD_PRED,
	.flags		= FHOOK_PROBE_F_STACK | FHOOK_PROBE_F_COUNT | FHOOK_PROBE_F_DIRECT,
	.init		= fhook_kprobe_init,
	.arm		= fhook_kprobe_arm,
	.disarm		= fhook_kprobe_disarm,
	.release	= fhook_kprobe_release,
	.sync_rcu	= true,
	/* fentry kprobes only: the others are not watched */
	.in_module	= fhook_kprobe_in_module,
	.unhook		= fhook_kprobe_fentry_unhook,
};
