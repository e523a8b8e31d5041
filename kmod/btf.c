// SPDX-License-Identifier: GPL-2.0
/*
 * Function prototypes from BTF, for the trampolines that run a function's
 * body themselves (trace-around, latency).  The body gets the argument
 * registers and a copy of the caller's first stack words; how many of
 * those are arguments is the module's to know, not the caller's to say.
 * As the kernel's BPF trampolines do (btf_distill_func_proto()), a body
 * is run only when its prototype is known and simple: no variadic
 * argument, no floating point, structs by value of at most 16 bytes.
 * The stack words it takes are counted here by the CPU's calling
 * convention (FHOOK_REG_ARGS registers, arch.h).
 *
 * The kernel's parsed BTF is not exported to modules, so the raw BTF is
 * read from /sys/kernel/btf/ (vmlinux, and a module's split on it) at
 * PROBE_ADD and parsed just enough: the types are indexed once, the FUNCs
 * named like the probed functions are found, and their FUNC_PROTOs read.
 * Functions of one name (static functions of different files) must all
 * be acceptable; the most stack words among them is used.  Without BTF
 * (out-of-tree modules built against headers have none), only
 * CAP_SYS_ADMIN may vouch for a prototype.
 */
#include "fhook.h"

#include <linux/bsearch.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/magic.h>
#include <linux/path.h>
#include <linux/sched/task.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#define FHOOK_BTF_MAX_SIZE	(64U << 20)	/* bytes of one BTF file */
#define FHOOK_BTF_MAX_CHAIN	32		/* typedefs and qualifiers in a row */
#define FHOOK_BTF_MAX_DEPTH	8		/* structs within structs */

struct fhook_btf {
	void *data;			/* the whole file */
	const u8 *types;		/* its type section */
	const char *strs;		/* its string section */
	u32 str_len;
	u32 start_id;			/* id of its first type */
	u32 nr;				/* its types */
	u32 *off;			/* id - start_id -> offset in types */
	const struct fhook_btf *base;	/* a module's: vmlinux */
};

/* One probed function: what PROBE_ADD asked for and what BTF says. */
struct fhook_btf_want {
	const char *name;
	const char *mod;		/* "" for vmlinux */
	u32 index;			/* in the caller's array */
	int words;			/* most stack words so far, or -errno */
	bool found;
};

/*
 * The sysfs file at @path as init's root sees it: never one the caller's
 * own root or mounts put there (a chroot would otherwise hand the module
 * a BTF of its choosing).  (kernel_read_file_from_path_initns() does the
 * same, but LSMs such as 6.12's IPE warn about its READING_UNKNOWN.)
 */
static void *fhook_btf_read(const char *path, size_t *size)
{
	struct path root;
	struct file *f;
	loff_t len, pos = 0;
	void *buf;
	ssize_t n;

	task_lock(&init_task);
	get_fs_root(init_task.fs, &root);
	task_unlock(&init_task);
	f = file_open_root(&root, path, O_RDONLY, 0);
	path_put(&root);
	if (IS_ERR(f))
		return ERR_CAST(f);
	len = i_size_read(file_inode(f));
	if (file_inode(f)->i_sb->s_magic != SYSFS_MAGIC ||
	    len <= (loff_t)sizeof(struct btf_header) || len > FHOOK_BTF_MAX_SIZE) {
		buf = ERR_PTR(-ENODATA);
		goto out_close;
	}
	buf = __vmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!buf) {
		buf = ERR_PTR(-ENOMEM);
		goto out_close;
	}
	/* sysfs hands out a page per read */
	while (pos < len) {
		n = kernel_read(f, buf + pos, len - pos, &pos);
		if (n <= 0) {
			vfree(buf);
			buf = ERR_PTR(n ? n : -ENODATA);
			goto out_close;
		}
	}
	*size = len;
out_close:
	filp_close(f, NULL);
	return buf;
}

/* Bytes that follow struct btf_type for its kind; U32_MAX: unknown kind. */
static u32 fhook_btf_extra(const struct btf_type *t)
{
	u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return sizeof(u32);
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	default:
		return U32_MAX;
	}
}

/* Check the header and index the types of @b (read from @size bytes). */
static int fhook_btf_index(struct fhook_btf *b, size_t size)
{
	const struct btf_header *hdr = b->data;
	u32 pos = 0, max_nr;

	if (hdr->magic != BTF_MAGIC || hdr->version != BTF_VERSION ||
	    hdr->hdr_len < sizeof(*hdr) || hdr->hdr_len > size ||
	    hdr->type_off % 4 || hdr->type_off > size - hdr->hdr_len ||
	    hdr->type_len > size - hdr->hdr_len - hdr->type_off ||
	    hdr->str_off > size - hdr->hdr_len ||
	    hdr->str_len > size - hdr->hdr_len - hdr->str_off || !hdr->str_len)
		return -ENODATA;
	b->types = b->data + hdr->hdr_len + hdr->type_off;
	b->strs = b->data + hdr->hdr_len + hdr->str_off;
	b->str_len = hdr->str_len;
	if (b->strs[b->str_len - 1])
		return -ENODATA;
	b->start_id = b->base ? b->base->start_id + b->base->nr : 1;
	max_nr = hdr->type_len / sizeof(struct btf_type);
	b->off = kvmalloc_array(max_nr ?: 1, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!b->off)
		return -ENOMEM;
	while (pos < hdr->type_len) {
		const struct btf_type *t = (const void *)(b->types + pos);
		u32 extra;

		if (hdr->type_len - pos < sizeof(*t))
			return -ENODATA;
		extra = fhook_btf_extra(t);
		if (extra == U32_MAX || extra > hdr->type_len - pos - sizeof(*t))
			return -ENODATA;
		b->off[b->nr++] = pos;
		pos += sizeof(*t) + extra;
	}
	return 0;
}

static void fhook_btf_free(struct fhook_btf *b)
{
	kvfree(b->off);
	vfree(b->data);
}

static int fhook_btf_load(struct fhook_btf *b, const char *path, const struct fhook_btf *base)
{
	size_t size;
	int ret;

	memset(b, 0, sizeof(*b));
	b->base = base;
	b->data = fhook_btf_read(path, &size);
	if (IS_ERR(b->data)) {
		ret = PTR_ERR(b->data);
		b->data = NULL;
		/* no BTF at all (CONFIG_DEBUG_INFO_BTF=n, a module without) */
		return ret == -ENOENT ? -ENODATA : ret;
	}
	ret = fhook_btf_index(b, size);
	if (ret)
		fhook_btf_free(b);
	return ret;
}

static const struct btf_type *fhook_btf_type(const struct fhook_btf *b, u32 id)
{
	if (id < b->start_id)
		return b->base ? fhook_btf_type(b->base, id) : NULL;
	id -= b->start_id;
	return id < b->nr ? (const void *)(b->types + b->off[id]) : NULL;
}

/* A split BTF's string offsets start with its base's strings. */
static const char *fhook_btf_str(const struct fhook_btf *b, u32 off)
{
	if (b->base) {
		if (off < b->base->str_len)
			return b->base->strs + off;
		off -= b->base->str_len;
	}
	return off < b->str_len ? b->strs + off : NULL;
}

/* @id without typedefs and qualifiers; NULL for void or a broken chain. */
static const struct btf_type *fhook_btf_resolve(const struct fhook_btf *b, u32 id)
{
	const struct btf_type *t;
	int i;

	for (i = 0; i < FHOOK_BTF_MAX_CHAIN; i++) {
		t = fhook_btf_type(b, id);
		if (!t)
			return NULL;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			return t;
		}
	}
	return NULL;
}

/*
 * Does the struct or union @t (at most 16 bytes) hold floating point (SSE
 * registers) or a member over 8 bytes (__int128)?  Bounded: a struct that
 * small has at most 128 members, nested at most FHOOK_BTF_MAX_DEPTH deep.
 */
static bool fhook_btf_agg_odd(const struct fhook_btf *b, const struct btf_type *t, int depth)
{
	const struct btf_member *m = (const void *)(t + 1);
	const struct btf_type *mt;
	u32 i, vlen = BTF_INFO_VLEN(t->info);
	int j;

	if (depth > FHOOK_BTF_MAX_DEPTH || vlen > 128)
		return true;	/* unknown: as if */
	for (i = 0; i < vlen; i++) {
		mt = fhook_btf_resolve(b, m[i].type);
		for (j = 0; mt && BTF_INFO_KIND(mt->info) == BTF_KIND_ARRAY; j++) {
			if (j == FHOOK_BTF_MAX_CHAIN)
				return true;
			mt = fhook_btf_resolve(b, ((const struct btf_array *)(mt + 1))->type);
		}
		if (!mt)
			return true;
		switch (BTF_INFO_KIND(mt->info)) {
		case BTF_KIND_FLOAT:
			return true;
		case BTF_KIND_INT:
			if (mt->size > 8)
				return true;
			break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			if (fhook_btf_agg_odd(b, mt, depth + 1))
				return true;
		}
	}
	return false;
}

/*
 * Argument registers (or stack words) one argument of type @id takes;
 * -EOPNOTSUPP if fhook's trampolines must not pass it on.
 */
static int fhook_btf_arg_words(const struct fhook_btf *b, u32 id)
{
	const struct btf_type *t = fhook_btf_resolve(b, id);

	if (!t)
		return -EOPNOTSUPP;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_PTR:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return 1;
	case BTF_KIND_INT:
		return t->size && t->size <= 8 ? 1 : -EOPNOTSUPP;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		/* larger ones are copied onto the stack: refused, as BPF does */
		if (!t->size || t->size > 16 || fhook_btf_agg_odd(b, t, 0))
			return -EOPNOTSUPP;
		return DIV_ROUND_UP(t->size, 8);
	default:	/* float, void, an incomplete type */
		return -EOPNOTSUPP;
	}
}

/* Stack words of arguments of the FUNC @func, or -EOPNOTSUPP. */
static int fhook_btf_func_words(const struct fhook_btf *b, const struct btf_type *func)
{
	const struct btf_type *proto = fhook_btf_type(b, func->type), *ret;
	const struct btf_param *args;
	int regs = 0, words = 0, n;
	u32 i, vlen;

	if (!proto || BTF_INFO_KIND(proto->info) != BTF_KIND_FUNC_PROTO)
		return -EOPNOTSUPP;
	/* a struct returned in memory: x86 takes %rdi for its address (arm64: x8) */
	ret = fhook_btf_resolve(b, proto->type);
	if (ret && (BTF_INFO_KIND(ret->info) == BTF_KIND_STRUCT ||
		    BTF_INFO_KIND(ret->info) == BTF_KIND_UNION) && ret->size > 16)
		regs = FHOOK_ARCH_SRET_ARG_REGS;
	else if (ret && BTF_INFO_KIND(ret->info) == BTF_KIND_FLOAT)
		return -EOPNOTSUPP;
	args = (const void *)(proto + 1);
	vlen = BTF_INFO_VLEN(proto->info);
	for (i = 0; i < vlen; i++) {
		/* "...": va_start() walks the caller's stack, unbounded */
		if (!args[i].type)
			return -EOPNOTSUPP;
		n = fhook_btf_arg_words(b, args[i].type);
		if (n < 0)
			return n;
		/*
		 * one that does not fit in the registers left goes whole on
		 * the stack (arm64, AAPCS64 C.13: and every one after it)
		 */
		if (regs + n <= FHOOK_REG_ARGS) {
			regs += n;
		} else {
			words += n;
			if (FHOOK_ARCH_STACK_AFTER_SPILL)
				regs = FHOOK_REG_ARGS;
		}
	}
	return words;
}

static int fhook_btf_want_cmp(const void *a, const void *b)
{
	const struct fhook_btf_want *x = a, *y = b;
	int c = strcmp(x->mod, y->mod);

	return c ? c : strcmp(x->name, y->name);
}

/* bsearch() key: a name within one module's slice of wants */
static int fhook_btf_name_cmp(const void *key, const void *elt)
{
	const struct fhook_btf_want *w = elt;

	return strcmp(key, w->name);
}

/* Fold every FUNC of @b (its own types, not its base's) into @want[@n]. */
static void fhook_btf_scan(const struct fhook_btf *b, struct fhook_btf_want *want, u32 n)
{
	struct fhook_btf_want *w;
	const char *name;
	u32 i;
	int words;

	for (i = 0; i < b->nr; i++) {
		const struct btf_type *t = (const void *)(b->types + b->off[i]);

		if (!(i % 4096))
			cond_resched();
		if (BTF_INFO_KIND(t->info) != BTF_KIND_FUNC)
			continue;
		name = fhook_btf_str(b, t->name_off);
		if (!name)
			continue;
		w = bsearch(name, want, n, sizeof(*want), fhook_btf_name_cmp);
		if (!w)
			continue;
		/* the first of equal names, then every one of them */
		while (w > want && !strcmp(w[-1].name, name))
			w--;
		words = fhook_btf_func_words(b, t);
		for (; w < want + n && !strcmp(w->name, name); w++) {
			w->found = true;
			if (w->words >= 0)
				w->words = words < 0 ? words : max(w->words, words);
		}
	}
}

/* "name+0x4/0x80 [mod]" -> name, mod ("" for vmlinux), in @buf. */
static int fhook_btf_split_symbol(char *buf, const char **name, const char **mod)
{
	char *plus = strchr(buf, '+'), *open, *close;

	if (!plus || plus == buf)
		return -ENOENT;
	*plus = '\0';
	*name = buf;
	*mod = "";
	open = strchr(plus + 1, '[');
	if (open) {
		close = strchr(open, ']');
		if (!close)
			return -ENOENT;
		*close = '\0';
		*mod = open + 1;
	}
	return 0;
}

/*
 * The names and modules of the functions at @ips into @want, their text
 * in one allocation (returned): kallsyms twice, to size it, then to fill.
 */
static char *fhook_btf_names(const u64 *ips, u32 n, struct fhook_btf_want *want, s32 *bad)
{
	char *sym, *blob = NULL, *at = NULL;
	const char *name, *mod;
	size_t total = 0, len;
	int pass, ret = 0;
	u32 i;

	sym = kmalloc(KSYM_SYMBOL_LEN, GFP_KERNEL);
	if (!sym)
		return ERR_PTR(-ENOMEM);
	for (pass = 0; pass < 2 && !ret; pass++) {
		for (i = 0; i < n && !ret; i++) {
			sprint_symbol(sym, ips[i]);
			ret = fhook_btf_split_symbol(sym, &name, &mod);
			if (ret) {
				*bad = i;
				break;
			}
			len = strlen(name) + 1 + strlen(mod) + 1;
			if (!pass) {
				total += len;
				continue;
			}
			/* a module loaded or gone since the first pass */
			if (len > total - (at - blob)) {
				ret = -EAGAIN;
				break;
			}
			want[i].name = strcpy(at, name);
			want[i].mod = strcpy(at + strlen(name) + 1, mod);
			want[i].index = i;
			at += len;
		}
		if (!pass && !ret) {
			blob = kvmalloc(total, GFP_KERNEL_ACCOUNT);
			at = blob;
			if (!blob)
				ret = -ENOMEM;
		}
	}
	kfree(sym);
	if (ret) {
		kvfree(blob);
		return ERR_PTR(ret);
	}
	return blob;
}

/*
 * The most stack words of arguments any of the @n functions at @ips takes
 * (their BTF prototypes), into *@words.  -ENODATA: no BTF prototype for
 * one of them; -EOPNOTSUPP: one whose body fhook must not run (variadic,
 * floating point, a struct by value over 16 bytes); *@bad is its index.
 */
static int fhook_btf_stack_words(const u64 *ips, u32 n, u32 *words, s32 *bad)
{
	struct fhook_btf vmlinux, mod;
	struct fhook_btf_want *want;
	char path[32 + MODULE_NAME_LEN];
	u32 i, first, end;
	char *names;
	int ret;

	*words = 0;
	if (!n)
		return 0;
	want = kvcalloc(n, sizeof(*want), GFP_KERNEL_ACCOUNT);
	if (!want)
		return -ENOMEM;
	names = fhook_btf_names(ips, n, want, bad);
	if (IS_ERR(names)) {
		ret = PTR_ERR(names);
		goto out_want;
	}
	sort(want, n, sizeof(*want), fhook_btf_want_cmp, NULL);

	ret = fhook_btf_load(&vmlinux, "/sys/kernel/btf/vmlinux", NULL);
	if (ret)
		goto out_names;
	/* one slice of wants per module, vmlinux ("") first */
	for (first = 0; first < n; first = end) {
		for (end = first + 1; end < n && !strcmp(want[end].mod, want[first].mod); end++)
			;
		if (!*want[first].mod) {
			fhook_btf_scan(&vmlinux, want + first, end - first);
			continue;
		}
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", want[first].mod);
		if (fhook_btf_load(&mod, path, &vmlinux))
			continue;	/* not found below: -ENODATA */
		fhook_btf_scan(&mod, want + first, end - first);
		fhook_btf_free(&mod);
		/* a module FUNC equal to one of vmlinux's is deduplicated into it */
		for (i = first; i < end && want[i].found; i++)
			;
		if (i < end)
			fhook_btf_scan(&vmlinux, want + first, end - first);
	}
	fhook_btf_free(&vmlinux);

	/* a prototype to refuse outweighs a missing one */
	for (i = 0; i < n && ret != -EOPNOTSUPP; i++) {
		if (want[i].found && want[i].words >= 0) {
			*words = max_t(u32, *words, want[i].words);
			continue;
		}
		if (!want[i].found && ret)
			continue;	/* the first missing one is named */
		*bad = want[i].index;
		ret = want[i].found ? want[i].words : -ENODATA;
	}
out_names:
	kvfree(names);
out_want:
	kvfree(want);
	return ret;
}

/*
 * May a trampoline run the bodies of the @n functions at @ips, and how
 * many of the caller's stack words does it copy for them?  Their BTF
 * prototypes say no for variadic functions, floating point, aggregates
 * it cannot pass and more than FHOOK_HOOK_MAX_STACK_ARGS stack words
 * (-EOPNOTSUPP).  When they say yes the trampoline copies all
 * FHOOK_HOOK_MAX_STACK_ARGS words anyway, verbatim (read with fault
 * handling: harmless past the caller's frame): BTF built by pahole before
 * 1.25 keeps one FUNC per name, so a static function may be counted from
 * a namesake's prototype.  A function without BTF (a module built
 * without it, a compiler clone) is run only for CAP_SYS_ADMIN, which
 * vouches for it; anyone else gets -ENODATA.  A function whose call may
 * never return: -EDEADLK.  *@bad: the index of the function refused.
 */
/*
 * Is one of the @n functions at @ips one whose call may never return
 * (FHOOK_NORETURN_FUNCS, or a compiler clone of one)?  *@bad: its index.
 * vmlinux's only: a module's namesake ("name+0x0/0x10 [mod]") is another
 * function.
 */
static bool fhook_noreturn(const u64 *ips, u32 n, s32 *bad)
{
	static const char *const names[] = { FHOOK_NORETURN_FUNCS };
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i;
	size_t len;
	u32 k;

	for (k = 0; k < n; k++) {
		sprint_symbol(sym, ips[k]);
		if (strchr(sym, '['))
			continue;
		/* a compiler clone is the function: "do_exit.cold+0x0/0x20" */
		len = strcspn(sym, "+.");
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			if (strlen(names[i]) == len && !strncmp(sym, names[i], len)) {
				*bad = k;
				return true;
			}
		}
	}
	return false;
}

int fhook_body_stack_words(const u64 *ips, u32 n, u32 *words, s32 *bad)
{
	int ret;

	if (fhook_noreturn(ips, n, bad)) {
		*words = FHOOK_HOOK_MAX_STACK_ARGS;
		return -EDEADLK;
	}
	ret = fhook_btf_stack_words(ips, n, words, bad);

	if (ret == -ENODATA && capable(CAP_SYS_ADMIN))
		ret = 0;
	else if (!ret && *words > FHOOK_HOOK_MAX_STACK_ARGS)
		ret = -EOPNOTSUPP;
	*words = FHOOK_HOOK_MAX_STACK_ARGS;
	return ret;
}
