// SPDX-License-Identifier: GPL-2.0
/*
 * Fetch programs (struct fhook_insn, see fhook_abi.h): copied and verified
 * once when a probe is added, then run by the probe handlers, which may be
 * in NMI context (int3 kprobes).  The interpreter has no loops over the
 * program other than the single forward pass, reads memory only with the
 * *_nofault helpers and writes only inside the buffer it is given.
 *
 * Handlers fetch into a per-CPU scratch buffer (one per nesting level:
 * task, softirq, irq, NMI) and copy the record into the ring once its size
 * is known, as the strings make it variable.
 */
#include "fhook.h"

#include <linux/err.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#define FHOOK_SCRATCH_LEVELS	4
/* a record, its data, and a stack trailer (FHOOK_CTX_STACK) */
#define FHOOK_SCRATCH_SIZE	(sizeof(struct fhook_rec_probe) + FHOOK_MAX_PROBE_DATA + \
				 8 * (FHOOK_MAX_STACK + 1))

struct fhook_scratch {
	int nest;
	u8 buf[FHOOK_SCRATCH_LEVELS][FHOOK_SCRATCH_SIZE] __aligned(8);
};

static struct fhook_scratch __percpu *fhook_scratch;

/*
 * uprobe handlers may sleep: they fetch with page faults allowed (as
 * trace_uprobe does) into a buffer of the CPU they started on, held by
 * its mutex across a migration (or their own when it is taken), and write
 * the record with preemption off.
 */
struct fhook_ubuf {
	struct mutex lock;
	u8 buf[FHOOK_SCRATCH_SIZE] __aligned(8);
};

static struct fhook_ubuf __percpu *fhook_ubufs;

int fhook_fetch_init(void)
{
	int cpu;

	fhook_scratch = alloc_percpu(struct fhook_scratch);
	if (!fhook_scratch)
		return -ENOMEM;
	fhook_ubufs = alloc_percpu(struct fhook_ubuf);
	if (!fhook_ubufs) {
		free_percpu(fhook_scratch);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		mutex_init(&per_cpu_ptr(fhook_ubufs, cpu)->lock);
	return 0;
}

void fhook_fetch_exit(void)
{
	free_percpu(fhook_ubufs);
	free_percpu(fhook_scratch);
}

/*
 * A sleepable uprobe handler's record buffer, into *@rec: this CPU's when
 * it is free (returned, locked), else one of its own (NULL returned).  A
 * task never waits for another's fetch: that one may sleep in a page fault
 * that only the waiter could serve (a probed FUSE daemon).  *@rec NULL: no
 * memory, the hit counts as missed.
 */
struct fhook_ubuf *fhook_ubuf_get(struct fhook_rec_probe **rec)
{
	struct fhook_ubuf *u = per_cpu_ptr(fhook_ubufs, raw_smp_processor_id());

	if (mutex_trylock(&u->lock)) {
		*rec = (struct fhook_rec_probe *)u->buf;
		return u;
	}
	/*
	 * zeroed, as the per-CPU buffers start: no stale heap in a record
	 * (not charged: the probed task's cgroup is not the tracer's)
	 */
	*rec = kzalloc(FHOOK_SCRATCH_SIZE, GFP_KERNEL | __GFP_NOWARN);
	return NULL;
}

void fhook_ubuf_put(struct fhook_ubuf *u, struct fhook_rec_probe *rec)
{
	if (u)
		mutex_unlock(&u->lock);
	else
		kfree(rec);
}

/*
 * A scratch record for this CPU's current nesting level, NULL when every
 * level is taken.  Preemption must be disabled until fhook_scratch_put().
 */
notrace struct fhook_rec_probe *fhook_scratch_get(void)
{
	int n = this_cpu_inc_return(fhook_scratch->nest) - 1;

	if (unlikely(n >= FHOOK_SCRATCH_LEVELS)) {
		this_cpu_dec(fhook_scratch->nest);
		return NULL;
	}
	return (struct fhook_rec_probe *)this_cpu_ptr(fhook_scratch)->buf[n];
}

notrace void fhook_scratch_put(void)
{
	this_cpu_dec(fhook_scratch->nest);
}

/* ------------------------------------------------------------------ */
/* Verifier                                                            */
/* ------------------------------------------------------------------ */

static bool fhook_op_is_load(u8 op)
{
	return op >= FHOOK_OP_REG && op <= FHOOK_OP_IMM;
}

static bool fhook_size_ok(u8 size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/*
 * Check insns[from, to) as one part of a program.  Returns the index of
 * the first bad instruction, or -1.  Adds the part's fields and the most
 * string bytes it can store to *@fields and *@dyn.
 */
static int fhook_prog_check_part(const struct fhook_prog *prog, u32 from, u32 to,
				 unsigned int allow, u32 *fields, u32 *dyn)
{
	bool have_val = false;
	u32 derefs = 0, i;

	for (i = from; i < to; i++) {
		const struct fhook_insn *in = &prog->insns[i];
		u32 end;

		if (in->op == 0 || in->op >= FHOOK_OP_MAX || !(allow & BIT(in->op)))
			return i;
		if (fhook_op_is_load(in->op)) {
			if (have_val || in->size || in->dst)
				return i;
			switch (in->op) {
			case FHOOK_OP_REG:
				if (in->arg >= FHOOK_REG_MAX || !(FHOOK_ARCH_REGS & BIT_ULL(in->arg)) ||
				    in->imm)
					return i;
				break;
			case FHOOK_OP_ARG:
				if (!in->arg || in->arg > FHOOK_ARCH_MAX_ARGN || in->imm)
					return i;
				break;
			case FHOOK_OP_STACK:
				if (in->arg > FHOOK_MAX_STACKN || in->imm)
					return i;
				break;
			case FHOOK_OP_IMM:
				if (in->arg)
					return i;
				break;
			default:	/* STACKP, RETVAL */
				if (in->arg || in->imm)
					return i;
			}
			have_val = true;
			continue;
		}
		if (in->op == FHOOK_OP_DEREF || in->op == FHOOK_OP_UDEREF) {
			if (!have_val || in->size || in->dst || in->arg || ++derefs > FHOOK_MAX_DEREF)
				return i;
			continue;
		}
		/* a store ends the field */
		if (in->op == FHOOK_OP_ST_COMM) {
			if (have_val || in->size || in->arg || in->imm)
				return i;
		} else if (!have_val) {
			return i;
		}
		switch (in->op) {
		case FHOOK_OP_ST_RAW:
			if (!fhook_size_ok(in->size) || in->arg || in->imm)
				return i;
			end = in->dst + in->size;
			break;
		case FHOOK_OP_ST_MEM:
		case FHOOK_OP_ST_UMEM:
			if (!fhook_size_ok(in->size) || !in->arg || in->arg > FHOOK_MAX_ARRAY)
				return i;
			end = in->dst + in->size * in->arg;
			break;
		case FHOOK_OP_ST_STRING:
		case FHOOK_OP_ST_USTRING:
			if (in->size || !in->arg || in->arg > FHOOK_MAX_STRING)
				return i;
			end = in->dst + sizeof(u32);
			*dyn += in->arg;
			break;
		default:	/* ST_COMM */
			end = in->dst + sizeof(u32);
			*dyn += TASK_COMM_LEN;
		}
		if (end > prog->data_size || ++*fields > FHOOK_MAX_FIELDS)
			return i;
		have_val = false;
		derefs = 0;
	}
	/* a part ends with a store: no dangling load */
	return have_val ? (int)to - 1 : -1;
}

#define FHOOK_OPS_COMMON (BIT(FHOOK_OP_REG) | BIT(FHOOK_OP_STACK) | BIT(FHOOK_OP_STACKP) | \
			  BIT(FHOOK_OP_IMM) | BIT(FHOOK_OP_DEREF) | BIT(FHOOK_OP_UDEREF) | \
			  BIT(FHOOK_OP_ST_RAW) | BIT(FHOOK_OP_ST_MEM) | BIT(FHOOK_OP_ST_UMEM) | \
			  BIT(FHOOK_OP_ST_STRING) | BIT(FHOOK_OP_ST_USTRING) | \
			  BIT(FHOOK_OP_ST_COMM))

/*
 * A verified program of registers ($argN in registers included) each
 * stored raw: its fields in prog->reg_fields, for fhook_prog_run_regs().
 */
static void fhook_prog_find_reg_fields(struct fhook_prog *prog)
{
	u32 i, n = 0;

	if (prog->len % 2 || prog->len / 2 > FHOOK_MAX_REG_FIELDS)
		return;
	for (i = 0; i < prog->len; i += 2) {
		const struct fhook_insn *load = &prog->insns[i], *st = &prog->insns[i + 1];
		struct fhook_reg_field *f = &prog->reg_fields[n++];

		if (st->op != FHOOK_OP_ST_RAW || st->imm)
			return;
		if (load->op == FHOOK_OP_REG)
			f->reg = fhook_arch_reg_offset[load->arg];
		else if (load->op == FHOOK_OP_ARG && load->arg <= FHOOK_REG_ARGS)
			f->reg = fhook_arch_reg_offset[fhook_arch_arg_regs[load->arg - 1]];
		else
			return;
		f->dst = st->dst;
		f->size = st->size;
	}
	prog->nr_reg_fields = n;
}

/*
 * Copy the program of @pa from userspace and verify it.  @ret_probe: a
 * kretprobe, whose first entry_len instructions run at entry (no $retval)
 * and the rest at return (no $argN: the registers are gone).  @user: a
 * uprobe's, where only $arg1..$arg6 (registers) exist.  On a bad
 * instruction *@err_index is its index and the result -EINVAL.
 */
struct fhook_prog *fhook_prog_load(struct fhook_probe *p, const struct fhook_probe_add *pa,
				   bool ret_probe, bool user, s32 *err_index)
{
	struct fhook_prog *prog;
	u32 fields = 0, dyn = 0;
	u32 i;
	int bad;

	if (pa->prog_len > FHOOK_MAX_INSNS || pa->data_size > FHOOK_MAX_DATA_SIZE ||
	    pa->entry_len > pa->prog_len || (!ret_probe && pa->entry_len) ||
	    (pa->data_size && !pa->prog_len) || (pa->prog && !pa->prog_len) || pa->__pad)
		return ERR_PTR(fhook_refuse(p->session, FHOOK_R_PROG, -1, -EINVAL));
	prog = kzalloc(struct_size(prog, insns, pa->prog_len), GFP_KERNEL_ACCOUNT);
	if (!prog)
		return ERR_PTR(-ENOMEM);
	prog->len = pa->prog_len;
	prog->entry_len = pa->entry_len;
	prog->data_size = pa->data_size;
	if (copy_from_user(prog->insns, u64_to_user_ptr(pa->prog),
			   array_size(pa->prog_len, sizeof(struct fhook_insn)))) {
		kfree(prog);
		return ERR_PTR(-EFAULT);
	}

	if (ret_probe) {
		bad = fhook_prog_check_part(prog, 0, prog->entry_len,
					    FHOOK_OPS_COMMON | BIT(FHOOK_OP_ARG), &fields, &dyn);
		prog->entry_dyn = dyn;
		prog->entry_fields = fields;
		if (bad < 0)
			bad = fhook_prog_check_part(prog, prog->entry_len, prog->len,
						    FHOOK_OPS_COMMON | BIT(FHOOK_OP_RETVAL),
						    &fields, &dyn);
	} else {
		bad = fhook_prog_check_part(prog, 0, prog->len,
					    FHOOK_OPS_COMMON | BIT(FHOOK_OP_ARG), &fields, &dyn);
	}
	for (i = 0; bad < 0 && i < prog->len; i++) {
		const struct fhook_insn *in = &prog->insns[i];
		/*
		 * kernel memory: dereferences, and the kernel stack ($stackN,
		 * the arguments past the registers: x86 passes $arg7 on there,
		 * regs_get_kernel_argument() reads the same words as $stackN)
		 */
		bool kstack = !user && (in->op == FHOOK_OP_STACK ||
					(in->op == FHOOK_OP_ARG && in->arg > FHOOK_REG_ARGS));
		/*
		 * and registers that hold no argument, address or position:
		 * what the kernel's code left there (%ax, %r10 and the like in
		 * a hook's frame), as a register dump (perf's under lockdown)
		 */
		bool kreg = !user && in->op == FHOOK_OP_REG &&
			    !(FHOOK_ARCH_ARG_REGS & BIT_ULL(in->arg));
		bool kmem = in->op == FHOOK_OP_DEREF || in->op == FHOOK_OP_ST_MEM ||
			    in->op == FHOOK_OP_ST_STRING || kstack || kreg;

		/*
		 * uprobes: $arg1..6 are registers, later ones on the user
		 * stack; the traced (maybe unprivileged) process must not
		 * choose kernel addresses to read: user memory only
		 */
		if (user && ((in->op == FHOOK_OP_ARG && in->arg > FHOOK_REG_ARGS) || kmem))
			bad = i;
		prog->reads_kernel |= kmem;
	}
	if (bad >= 0) {
		*err_index = bad;
		kfree(prog);
		return ERR_PTR(fhook_refuse(p->session, FHOOK_R_PROG, bad, -EINVAL));
	}
	prog->nr_fields = fields;
	prog->max_dyn = dyn;
	if (!ret_probe && !user)
		fhook_prog_find_reg_fields(prog);
	return prog;
}

/*
 * Does @prog read a register that an ftrace_ops callback without
 * FTRACE_OPS_FL_SAVE_REGS does not get?  ftrace_caller saves the argument
 * registers, %ax, %bp, the stack pointer and ip (fhook_fregs_partial());
 * $argN, $stackN and $stack are made of those.
 */
bool fhook_prog_needs_all_regs(const struct fhook_prog *prog)
{
	u32 i;

	for (i = 0; i < prog->len; i++)
		if (prog->insns[i].op == FHOOK_OP_REG &&
		    !(FHOOK_ARCH_PARTIAL_REGS & BIT_ULL(prog->insns[i].arg)))
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Interpreter                                                         */
/* ------------------------------------------------------------------ */

/*
 * User memory: with page faults (a sleepable uprobe handler), so that
 * pages not yet touched are read as trace_uprobe reads them, or without.
 */
static notrace long fhook_copy_user(void *dst, unsigned long src, size_t len, bool may_fault)
{
	if (may_fault)
		return copy_from_user(dst, (const void __user *)src, len) ? -EFAULT : 0;
	return copy_from_user_nofault(dst, (const void __user *)src, len);
}

/*
 * Copy the string at @src into @dst, at most @max bytes with the NUL, in
 * page-bounded chunks (a chunk never touches a page the string does not
 * reach).  Returns the length with the NUL, 0 on a fault; *@cut: it did
 * not end within @max bytes.
 */
static notrace u32 fhook_fetch_string(char *dst, unsigned long src, u32 max, bool user,
				      bool may_fault, bool *cut)
{
	u32 len = 0;

	while (len < max) {
		unsigned long at = src + len;
		u32 chunk = min3(max - len, 64U, (u32)(PAGE_SIZE - offset_in_page(at)));
		const char *nul;
		long ret;

		if (user)
			ret = fhook_copy_user(dst + len, at, chunk, may_fault);
		else
			ret = copy_from_kernel_nofault(dst + len, (const void *)at, chunk);
		if (ret)
			return 0;
		nul = memchr(dst + len, 0, chunk);
		if (nul)
			return nul - dst + 1;
		len += chunk;
	}
	dst[max - 1] = 0;
	*cut = true;
	return max;
}

static notrace void fhook_store_loc(struct fhook_fetch_ctx *c, u16 dst, u32 len, bool cut)
{
	u32 loc = len ? (len << 16) | (c->dyn - len) : (c->dyn & 0xffff);

	if (cut)
		loc |= FHOOK_LOC_CUT;
	memcpy(c->data + dst, &loc, sizeof(loc));
}

/*
 * Run insns[from, to) of @prog.  The caller zeroed the fixed area once
 * (a kretprobe's return part continues what the entry part stored).
 */
notrace void fhook_prog_run(const struct fhook_prog *prog, u32 from, u32 to,
			    struct fhook_fetch_ctx *c)
{
	const struct fhook_insn *in = prog->insns + from;
	const struct fhook_insn *end = prog->insns + to;
	struct pt_regs *regs = c->regs;
	unsigned long val = 0;
	bool fault = false, cut;
	u32 len, room;

	for (; in < end; in++) {
		switch (in->op) {
		case FHOOK_OP_REG:
			val = fhook_arch_reg(regs, in->arg);
			continue;
		case FHOOK_OP_ARG:
			val = regs_get_kernel_argument(regs, in->arg - 1);
			continue;
		case FHOOK_OP_STACK:
			if (!c->user) {
				val = fhook_arch_kernel_stack_nth(regs, in->arg);
			} else if (!fault &&
				   fhook_copy_user(&val, fhook_arch_user_stack_word(regs, in->arg),
						   sizeof(val), c->may_fault)) {
				fault = true;
			}
			continue;
		case FHOOK_OP_STACKP:
			val = kernel_stack_pointer(regs);
			continue;
		case FHOOK_OP_RETVAL:
			val = regs_return_value(regs);
			continue;
		case FHOOK_OP_IMM:
			val = in->imm;
			continue;
		case FHOOK_OP_DEREF:
			if (!fault && copy_from_kernel_nofault(&val, (void *)(val + in->imm),
							       sizeof(val)))
				fault = true;
			continue;
		case FHOOK_OP_UDEREF:
			if (!fault && fhook_copy_user(&val, val + in->imm, sizeof(val),
						      c->may_fault))
				fault = true;
			continue;
		case FHOOK_OP_ST_RAW:
			if (fault)
				break;
			/* the low bytes of val (little-endian); constant sizes: one store */
			switch (in->size) {
			case 1:
				memcpy(c->data + in->dst, &val, 1);
				break;
			case 2:
				memcpy(c->data + in->dst, &val, 2);
				break;
			case 4:
				memcpy(c->data + in->dst, &val, 4);
				break;
			default:
				memcpy(c->data + in->dst, &val, 8);
			}
			break;
		case FHOOK_OP_ST_MEM:
			len = in->size * in->arg;
			if (!fault && copy_from_kernel_nofault(c->data + in->dst,
							       (void *)(val + in->imm), len)) {
				memset(c->data + in->dst, 0, len);
				fault = true;
			}
			break;
		case FHOOK_OP_ST_UMEM:
			len = in->size * in->arg;
			if (!fault && fhook_copy_user(c->data + in->dst, val + in->imm, len,
						      c->may_fault)) {
				memset(c->data + in->dst, 0, len);
				fault = true;
			}
			break;
		case FHOOK_OP_ST_STRING:
		case FHOOK_OP_ST_USTRING:
			room = min(in->arg, c->limit - c->dyn);
			len = 0;
			cut = !fault && !room;	/* no room left in the record */
			if (!fault && room)
				len = fhook_fetch_string(c->data + c->dyn, val + in->imm, room,
							 in->op == FHOOK_OP_ST_USTRING,
							 c->may_fault, &cut);
			if (!len && !cut)
				fault = true;
			c->dyn += len;
			fhook_store_loc(c, in->dst, len, cut);
			break;
		case FHOOK_OP_ST_COMM:
			room = min_t(u32, TASK_COMM_LEN, c->limit - c->dyn);
			len = 0;
			cut = !room;
			if (room) {
				ssize_t n = strscpy(c->data + c->dyn, current->comm, room);

				cut = n < 0;
				len = cut ? room : n + 1;
			}
			c->dyn += len;
			fhook_store_loc(c, in->dst, len, cut);
			break;
		}
		/* a store: the field is complete */
		if (fault)
			c->faults |= BIT_ULL(c->field);
		c->field++;
		fault = false;
	}
}
