// SPDX-License-Identifier: GPL-2.0
/*
 * uprobes and uretprobes on (binary path, file offset); userspace resolves
 * symbols from the ELF file.  The path is looked up when the probe is
 * added (a missing file, a directory or an offset past the end fail
 * there) and kept referenced; the uprobe is registered at START and
 * unregistered at STOP (the 6.1/6.12 difference is in compat.h).
 * Handlers run in the probed task, preemptible and sleepable: the fetch
 * program reads user memory with page faults allowed, then the record is
 * written with preemption off, like every other probe's
 * (fhook_probe_emit_user()).
 */
#include "fhook.h"

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/* A uprobe or uretprobe: the common part, the file and the consumer. */
struct fhook_uprobe {
	struct fhook_probe p;		/* first: freed as a struct fhook_probe */
	struct uprobe_consumer uc;
	struct path path;		/* held from init to release */
	struct fhook_uprobe_handle uh;	/* inode and offset (compat.h) */
};

static_assert(offsetof(struct fhook_uprobe, p) == 0);

static inline struct fhook_uprobe *to_uprobe(struct fhook_probe *p)
{
	return container_of(p, struct fhook_uprobe, p);
}

static notrace int fhook_uprobe_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct fhook_probe *p = &container_of(uc, struct fhook_uprobe, uc)->p;

	if (likely(READ_ONCE(p->enabled)))
		fhook_probe_emit_user(p, FHOOK_REC_UPROBE, regs, instruction_pointer(regs), 0);
	return 0;
}

static notrace int fhook_uretprobe_handler(struct uprobe_consumer *uc, unsigned long func,
					   struct pt_regs *regs)
{
	struct fhook_probe *p = &container_of(uc, struct fhook_uprobe, uc)->p;

	if (likely(READ_ONCE(p->enabled)))
		fhook_probe_emit_user(p, FHOOK_REC_URETPROBE, regs, func,
				      instruction_pointer(regs));
	return 0;
}

static int fhook_uprobe_init(struct fhook_probe *p, const struct fhook_probe_add *arg, s32 *err_index)
{
	bool ret_probe = arg->type == FHOOK_PROBE_URETPROBE;
	struct fhook_uprobe *u = to_uprobe(p);
	struct inode *inode;
	char *path;
	int ret;

	p->stack = arg->flags & FHOOK_PROBE_F_STACK;
	p->user_faults = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	if (!arg->symbol_len || arg->symbol_len > FHOOK_MAX_SYMBOL_LEN)
		return fhook_refuse(p->session, FHOOK_R_NAME, -1, -EINVAL);
	/* a uretprobe has nowhere to keep entry values */
	if (ret_probe && arg->entry_len)
		return fhook_refuse(p->session, FHOOK_R_UPROBE_ENTRY, -1, -EINVAL);

	p->prog = fhook_prog_load(p, arg, ret_probe, true, err_index);
	if (IS_ERR(p->prog)) {
		ret = PTR_ERR(p->prog);
		p->prog = NULL;
		return ret;
	}
	p->pred = fhook_pred_load(p, arg, p->prog->data_size, err_index);
	if (IS_ERR(p->pred)) {
		ret = PTR_ERR(p->pred);
		p->pred = NULL;
		return ret;
	}

	path = memdup_user_nul(u64_to_user_ptr(arg->symbol), arg->symbol_len);
	if (IS_ERR(path))
		return PTR_ERR(path);
	if (strlen(path) != arg->symbol_len || path[0] != '/') {
		kfree(path);
		return fhook_refuse(p->session, FHOOK_R_PATH, -1, -EINVAL);
	}
	ret = kern_path(path, LOOKUP_FOLLOW, &u->path);
	kfree(path);
	if (ret)
		return ret;
	p->registered = true;	/* the path reference: release drops it */
	if (!d_is_reg(u->path.dentry))
		return fhook_refuse(p->session, FHOOK_R_PATH, -1, -EISDIR);
	inode = d_real_inode(u->path.dentry);
	if (arg->offset >= i_size_read(inode))
		return fhook_refuse(p->session, FHOOK_R_PATH, -1, -ERANGE);
	u->uh.inode = inode;
	u->uh.offset = arg->offset;
	if (ret_probe)
		u->uc.ret_handler = fhook_uretprobe_handler;
	else
		u->uc.handler = fhook_uprobe_handler;
	return 0;
}

static int fhook_uprobe_arm(struct fhook_probe *p)
{
	int ret;

	WRITE_ONCE(p->enabled, true);
	ret = fhook_uprobe_register(&to_uprobe(p)->uh, &to_uprobe(p)->uc);
	if (ret)
		WRITE_ONCE(p->enabled, false);
	/* the kernel-internal ENOTSUPP (an instruction uprobes cannot step) */
	return ret == -ENOTSUPP ? -EOPNOTSUPP : ret;
}

/* Returns once no handler runs any more. */
static void fhook_uprobe_disarm(struct fhook_probe *p)
{
	if (!READ_ONCE(p->enabled))
		return;
	WRITE_ONCE(p->enabled, false);
	fhook_uprobe_unregister(&to_uprobe(p)->uh, &to_uprobe(p)->uc);
}

static void fhook_uprobe_release(struct fhook_probe *p)
{
	fhook_uprobe_disarm(p);
	if (p->registered)
		path_put(&to_uprobe(p)->path);
	p->registered = false;
	kfree(p->pred);
	kfree(p->prog);
}

const struct fhook_probe_kind fhook_uprobe_kind = {
	.size		= sizeof(struct fhook_uprobe),
	.fields		= FHOOK_ADD_SYMBOL | FHOOK_ADD_PROG | FHOOK_ADD_DATA_SIZE | FHOOK_ADD_PRED,
	.flags		= FHOOK_PROBE_F_STACK,
	.init		= fhook_uprobe_init,
	.arm		= fhook_uprobe_arm,
	.disarm		= fhook_uprobe_disarm,
	.release	= fhook_uprobe_release,
	.sync_rcu	= false,
};
