// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what with /dev/fhook (docs/reliability.md, "Threat model").
 *
 * Observing the kernel (function, direct, kprobe, uprobe and tracepoint
 * events, counts, latency histograms, trace-around, whose trampolines run
 * a body only on a prototype checked in BTF: btf.c) needs CAP_PERFMON, as
 * perf and BPF tracing do.  Changing what the kernel does (a hook that
 * overrides a return value or redirects a call) needs CAP_SYS_ADMIN, as
 * bpf_override_return() does, and lab mode; so does running threads of
 * its own at a real-time priority on every CPU (timerlat.c).  Both follow kernel lockdown
 * with the kernel's own reasons: kprobes and reads of kernel memory are
 * refused under confidentiality (as __register_trace_kprobe() and
 * bpf_probe_read_kernel() are), behaviour changes under integrity.
 *
 * The checks run where the action is asked for (PROBE_ADD) and again when
 * it takes effect (START), so lockdown raised at run time is obeyed.  A
 * session that holds a behaviour-changing probe needs CAP_SYS_ADMIN on
 * every later ioctl and mmap: a CAP_PERFMON process handed its fd can
 * neither arm nor read it.
 */
#include "fhook.h"

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/security.h>
#include <linux/xarray.h>

/*
 * What a user (a uid) without CAP_SYS_ADMIN may hold at once through its
 * sessions, CAP_SYS_ADMIN exempt as RLIMIT_NPROC exempts it: each
 * session costs memory (its counters, a pid filter's bitmap, up to
 * FHOOK_MAX_PROBES probes), and what fhook shares between everyone (its
 * memory budget: ring pages, kretprobe instances, filter hashes, hist
 * tables; the trampoline slots) is shared between users too, so that one
 * tracing user cannot take all of it from the others.
 */
unsigned int fhook_max_user_sessions = 16;
module_param_named(max_user_sessions, fhook_max_user_sessions, uint, 0644);
MODULE_PARM_DESC(max_user_sessions,
		 "Sessions a user without CAP_SYS_ADMIN may hold open at once (0: no limit)");

unsigned int fhook_max_user_mem_pct = 25;
module_param_named(max_user_mem_pct, fhook_max_user_mem_pct, uint, 0644);
MODULE_PARM_DESC(max_user_mem_pct,
		 "Percent of fhook's memory budget (half of RAM) the sessions of a user without CAP_SYS_ADMIN may hold (0: no limit)");

unsigned int fhook_max_user_slots = 16;
module_param_named(max_user_slots, fhook_max_user_slots, uint, 0644);
MODULE_PARM_DESC(max_user_slots,
		 "Direct and around trampoline slots (each kind) the sessions of a user without CAP_SYS_ADMIN may hold (0: no limit)");

struct fhook_user {
	unsigned long uid;
	unsigned int sessions;		/* under fhook_users_lock */
	atomic_long_t pages;		/* of fhook's memory budget */
	atomic_t slots[FHOOK_USER_SLOT_KINDS];
};

/* uid -> struct fhook_user, while it has sessions or holds anything */
static DEFINE_XARRAY(fhook_users);
static DEFINE_MUTEX(fhook_users_lock);

/*
 * @u holds nothing any more: gone.  Under the lock.  (A session kept with
 * its probes after a failed unregister keeps its pages, and its user with
 * them, for good; a trace-around hook draining after its session keeps
 * its slot until it is freed.)
 */
static void fhook_user_put_locked(struct fhook_user *u)
{
	int i;

	if (u->sessions || atomic_long_read(&u->pages))
		return;
	for (i = 0; i < FHOOK_USER_SLOT_KINDS; i++)
		if (atomic_read(&u->slots[i]))
			return;
	xa_erase(&fhook_users, u->uid);
	kfree(u);
}

int fhook_priv_check(u32 needs)
{
	int ret;

	if (needs & FHOOK_PRIV_CHANGE) {
		if (!capable(CAP_SYS_ADMIN) || !fhook_lab)
			return -EPERM;
		ret = security_locked_down(LOCKDOWN_DBG_WRITE_KERNEL);
		if (ret)
			return ret;
	}
	if ((needs & FHOOK_PRIV_ADMIN) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (needs & FHOOK_PRIV_KPROBE) {
		ret = security_locked_down(LOCKDOWN_KPROBES);
		if (ret)
			return ret;
	}
	if (needs & FHOOK_PRIV_READ_KERNEL) {
		ret = security_locked_down(LOCKDOWN_BPF_READ_KERNEL);
		if (ret)
			return ret;
	}
	return 0;
}

/* @p needs @needs from now on (START checks them again). */
int fhook_priv_require(struct fhook_probe *p, u32 needs)
{
	p->priv |= needs;
	return fhook_priv_check(needs);
}

/*
 * mmap of session @s: may the caller map it?  A mapping outlives the
 * checks, so a session a caller without CAP_SYS_ADMIN has mapped never
 * takes a probe that changes the kernel (fhook_priv_may_change()): its
 * events would reach that caller's mapping.
 */
int fhook_session_may_map(struct fhook_session *s)
{
	if (s && !ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN)) {
		WRITE_ONCE(s->observer_mapped, true);
		/* pairs with the smp_mb() in fhook_priv_may_change() */
		smp_mb();
	}
	return fhook_session_may(s);
}

/*
 * PROBE_ADD of a probe that changes the kernel, under the session lock:
 * from now on every ioctl and mmap of @s needs CAP_SYS_ADMIN, and a
 * session an observer has mapped is refused (-EPERM).  Either this sees
 * observer_mapped or fhook_session_may_map() sees changes_kernel.
 */
int fhook_priv_may_change(struct fhook_session *s)
{
	bool was = s->changes_kernel;

	WRITE_ONCE(s->changes_kernel, true);
	/* pairs with the smp_mb() in fhook_session_may_map() */
	smp_mb();
	if (READ_ONCE(s->observer_mapped)) {
		WRITE_ONCE(s->changes_kernel, was);
		return -EPERM;
	}
	return 0;
}

/* May the caller use session @s at all (open, every ioctl and mmap)? */
int fhook_session_may(struct fhook_session *s)
{
	if (!perfmon_capable())
		return -EPERM;
	/* pairs with the WRITE_ONCE in PROBE_ADD, under the session lock */
	if (s && READ_ONCE(s->changes_kernel) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

/*
 * A new session of the caller: counted against its uid's limit (-EUSERS
 * past it: not EMFILE, which would blame the process's own file limit).
 * *@user: what it holds, NULL for CAP_SYS_ADMIN (no limit); given back
 * with fhook_user_session_put().
 */
int fhook_user_session_get(struct fhook_user **user)
{
	unsigned int max = READ_ONCE(fhook_max_user_sessions);
	unsigned long uid = __kuid_val(current_uid());
	struct fhook_user *u, *fresh = NULL;
	int ret = 0;

	*user = NULL;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	mutex_lock(&fhook_users_lock);
	u = xa_load(&fhook_users, uid);
	if (!u) {
		fresh->uid = uid;
		ret = xa_err(xa_store(&fhook_users, uid, fresh, GFP_KERNEL));
		if (!ret)
			swap(u, fresh);
	}
	if (u && max && u->sessions >= max)
		ret = -EUSERS;
	else if (u)
		u->sessions++;
	mutex_unlock(&fhook_users_lock);
	kfree(fresh);
	if (!ret)
		*user = u;
	return ret;
}

/* After the session was torn down: what it held is given back. */
void fhook_user_session_put(struct fhook_user *u)
{
	if (!u)
		return;
	mutex_lock(&fhook_users_lock);
	u->sessions--;
	fhook_user_put_locked(u);
	mutex_unlock(&fhook_users_lock);
}

/*
 * @pages more of fhook's memory budget for @u's sessions (NULL: exempt):
 * -EDQUOT past its share.
 */
int fhook_user_mem_charge(struct fhook_user *u, u64 pages, u64 budget)
{
	unsigned int pct = min(READ_ONCE(fhook_max_user_mem_pct), 100U);
	long held;

	if (!u)
		return 0;
	held = atomic_long_add_return(pages, &u->pages);
	if (pct && held > (long)div_u64(budget * pct, 100)) {
		atomic_long_sub(pages, &u->pages);
		return -EDQUOT;
	}
	return 0;
}

void fhook_user_mem_uncharge(struct fhook_user *u, u64 pages)
{
	if (!u)
		return;
	/* (the last pages may outlive the user's sessions: a draining graph pool) */
	mutex_lock(&fhook_users_lock);
	atomic_long_sub(pages, &u->pages);
	fhook_user_put_locked(u);
	mutex_unlock(&fhook_users_lock);
}

/* One more trampoline slot of @kind for @u's sessions: -ENOSPC past its share. */
int fhook_user_slot_take(struct fhook_user *u, enum fhook_user_slot kind)
{
	unsigned int max = READ_ONCE(fhook_max_user_slots);
	int held;

	if (!u)
		return 0;
	held = atomic_inc_return(&u->slots[kind]);
	if (max && held > max) {
		atomic_dec(&u->slots[kind]);
		return -ENOSPC;
	}
	return 0;
}

/* Given back when the slot is free, maybe after the session: may free @u. */
void fhook_user_slot_give(struct fhook_user *u, enum fhook_user_slot kind)
{
	if (!u)
		return;
	mutex_lock(&fhook_users_lock);
	atomic_dec(&u->slots[kind]);
	fhook_user_put_locked(u);
	mutex_unlock(&fhook_users_lock);
}
