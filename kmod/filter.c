// SPDX-License-Identifier: GPL-2.0
/*
 * Predicate programs (filters, enum fhook_pred_op): verified when a probe
 * is added, evaluated by the handler on the fields the fetch program just
 * stored, before a record is reserved.  Postfix over a bit stack of at most
 * FHOOK_PRED_STACK booleans; no jumps, no loops, no memory access outside
 * the record being built.
 */
#include "fhook.h"

#include <linux/err.h>
#include <linux/glob.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define FHOOK_PRED_CMP_MASK	0xff

/* Instructions holding a string constant of @len bytes plus its NUL. */
static u32 fhook_pred_str_insns(u64 len)
{
	return DIV_ROUND_UP(len + 1, sizeof(struct fhook_insn));
}

static bool fhook_pred_cmp_ok(u32 arg, bool string)
{
	u32 cmp = arg & FHOOK_PRED_CMP_MASK;

	if (string)
		return arg == FHOOK_CMP_EQ || arg == FHOOK_CMP_NE || arg == FHOOK_CMP_GLOB;
	if (arg & ~(FHOOK_PRED_CMP_MASK | FHOOK_PRED_SIGNED))
		return false;
	return cmp >= FHOOK_CMP_EQ && cmp <= FHOOK_CMP_BITS;
}

/* Returns the index of the first bad instruction, or -1. */
static int fhook_pred_check(const struct fhook_insn *in, u32 len, u32 data_size)
{
	u32 i, depth = 0;

	for (i = 0; i < len; i++) {
		const struct fhook_insn *p = &in[i];
		const char *str;
		u32 n;

		switch (p->op) {
		case FHOOK_PRED_FIELD:
			if (!fhook_pred_cmp_ok(p->arg, false) ||
			    !(p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8) ||
			    p->dst + p->size > data_size)
				return i;
			break;
		case FHOOK_PRED_PID:
		case FHOOK_PRED_TGID:
		case FHOOK_PRED_CPU:
			if (!fhook_pred_cmp_ok(p->arg, false) || (p->arg & FHOOK_PRED_SIGNED) ||
			    p->size || p->dst)
				return i;
			break;
		case FHOOK_PRED_STR:
		case FHOOK_PRED_COMM:
			if (!fhook_pred_cmp_ok(p->arg, true) || p->size ||
			    p->imm < 0 || p->imm > FHOOK_MAX_PRED_STRING)
				return i;
			if (p->op == FHOOK_PRED_STR ? p->dst + sizeof(u32) > data_size : p->dst)
				return i;
			n = fhook_pred_str_insns(p->imm);
			if (n > len - i - 1)
				return i;
			/* exactly imm bytes, then the NUL */
			str = (const char *)(p + 1);
			if (strnlen(str, p->imm + 1) != p->imm)
				return i;
			i += n;
			break;
		case FHOOK_PRED_AND:
		case FHOOK_PRED_OR:
			if (depth < 2 || p->size || p->dst || p->arg || p->imm)
				return i;
			depth -= 2;
			break;
		case FHOOK_PRED_NOT:
			if (depth < 1 || p->size || p->dst || p->arg || p->imm)
				return i;
			depth--;
			break;
		default:
			return i;
		}
		if (++depth > FHOOK_PRED_STACK)
			return i;
	}
	return depth == 1 ? -1 : (int)len;
}

/*
 * Copy and verify a predicate of @len instructions at user address @uptr
 * for a probe whose data area is @data_size bytes.  NULL when @len is 0.
 * A bad instruction: -EINVAL and *@err_index its index.
 */
struct fhook_pred *fhook_pred_copy(u64 uptr, u32 len, u32 data_size, s32 *err_index)
{
	struct fhook_pred *pred;
	int bad;

	if (len > FHOOK_MAX_PRED || (!len && uptr))
		return ERR_PTR(-EINVAL);
	if (!len)
		return NULL;
	pred = kzalloc(struct_size(pred, insns, len), GFP_KERNEL_ACCOUNT);
	if (!pred)
		return ERR_PTR(-ENOMEM);
	pred->len = len;
	if (copy_from_user(pred->insns, u64_to_user_ptr(uptr),
			   array_size(len, sizeof(struct fhook_insn)))) {
		kfree(pred);
		return ERR_PTR(-EFAULT);
	}
	bad = fhook_pred_check(pred->insns, pred->len, data_size);
	if (bad >= 0) {
		*err_index = bad;
		kfree(pred);
		return ERR_PTR(-EINVAL);
	}
	return pred;
}

/* The predicate of @pa; its err_index counts after the fetch program's. */
struct fhook_pred *fhook_pred_load(struct fhook_probe *p, const struct fhook_probe_add *pa,
				   u32 data_size, s32 *err_index)
{
	struct fhook_pred *pred;
	s32 bad = -1;

	if (pa->__pad2)
		return ERR_PTR(fhook_refuse(p->session, FHOOK_R_RESERVED, -1, -EINVAL));
	pred = fhook_pred_copy(pa->pred, pa->pred_len, data_size, &bad);
	if (bad >= 0) {
		*err_index = pa->prog_len + bad;
		fhook_refuse(p->session, FHOOK_R_PRED, *err_index, 0);
	}
	return pred;
}

static notrace bool fhook_cmp_u64(u32 arg, u64 v, s64 imm)
{
	if (arg & FHOOK_PRED_SIGNED) {
		s64 s = (s64)v;

		switch (arg & FHOOK_PRED_CMP_MASK) {
		case FHOOK_CMP_LT:
			return s < imm;
		case FHOOK_CMP_LE:
			return s <= imm;
		case FHOOK_CMP_GT:
			return s > imm;
		case FHOOK_CMP_GE:
			return s >= imm;
		}
	}
	switch (arg & FHOOK_PRED_CMP_MASK) {
	case FHOOK_CMP_EQ:
		return v == (u64)imm;
	case FHOOK_CMP_NE:
		return v != (u64)imm;
	case FHOOK_CMP_LT:
		return v < (u64)imm;
	case FHOOK_CMP_LE:
		return v <= (u64)imm;
	case FHOOK_CMP_GT:
		return v > (u64)imm;
	case FHOOK_CMP_GE:
		return v >= (u64)imm;
	default:	/* BITS */
		return v & (u64)imm;
	}
}

static notrace bool fhook_cmp_str(u32 cmp, const char *s, const char *constant)
{
	if (!s)		/* the fetch faulted: equal to nothing */
		return cmp == FHOOK_CMP_NE;
	switch (cmp) {
	case FHOOK_CMP_EQ:
		return !strcmp(s, constant);
	case FHOOK_CMP_NE:
		return strcmp(s, constant);
	default:	/* GLOB */
		return glob_match(constant, s);
	}
}

/*
 * Evaluate @pred on the record being built: @data holds @len bytes
 * (fixed area and strings), every string NUL-terminated inside.
 */
notrace bool fhook_pred_run(const struct fhook_pred *pred, const u8 *data, u32 len)
{
	const struct fhook_insn *p = pred->insns, *end = pred->insns + pred->len;
	unsigned long stack = 0;	/* bit 0 is the top */
	char comm[TASK_COMM_LEN];
	const char *s;
	u64 v;
	bool r;

	for (; p < end; p++) {
		switch (p->op) {
		case FHOOK_PRED_FIELD:
			v = 0;
			memcpy(&v, data + p->dst, p->size);
			if ((p->arg & FHOOK_PRED_SIGNED) && p->size < 8)
				v = (u64)((s64)(v << (64 - 8 * p->size)) >> (64 - 8 * p->size));
			r = fhook_cmp_u64(p->arg, v, p->imm);
			break;
		case FHOOK_PRED_PID:
			r = fhook_cmp_u64(p->arg, current->pid, p->imm);
			break;
		case FHOOK_PRED_TGID:
			r = fhook_cmp_u64(p->arg, current->tgid, p->imm);
			break;
		case FHOOK_PRED_CPU:
			r = fhook_cmp_u64(p->arg, raw_smp_processor_id(), p->imm);
			break;
		case FHOOK_PRED_STR: {
			u32 loc, l, off;

			memcpy(&loc, data + p->dst, sizeof(loc));
			l = FHOOK_LOC_LEN(loc);
			off = FHOOK_LOC_OFF(loc);
			/* a cut string is not known whole: equal to nothing, as a fault */
			s = l && !(loc & FHOOK_LOC_CUT) && off + l <= len && !data[off + l - 1] ?
			    (const char *)data + off : NULL;
			r = fhook_cmp_str(p->arg, s, (const char *)(p + 1));
			p += fhook_pred_str_insns(p->imm);
			break;
		}
		case FHOOK_PRED_COMM:
			memcpy(comm, current->comm, sizeof(comm));
			comm[sizeof(comm) - 1] = 0;
			r = fhook_cmp_str(p->arg, comm, (const char *)(p + 1));
			p += fhook_pred_str_insns(p->imm);
			break;
		case FHOOK_PRED_AND:
			r = (stack & 1) && (stack & 2);
			stack >>= 2;
			break;
		case FHOOK_PRED_OR:
			r = (stack & 1) || (stack & 2);
			stack >>= 2;
			break;
		default:	/* NOT */
			r = !(stack & 1);
			stack >>= 1;
			break;
		}
		stack = stack << 1 | r;
	}
	return stack & 1;
}
