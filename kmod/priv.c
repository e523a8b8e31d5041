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
 * Sessions a user (a uid) may hold open at once, CAP_SYS_ADMIN exempt,
 * as RLIMIT_NPROC exempts it: each costs memory out of fhook's budget
 * (its counters, a pid filter's bitmap, up to FHOOK_MAX_PROBES probes).
 */
unsigned int fhook_max_user_sessions = 16;
module_param_named(max_user_sessions, fhook_max_user_sessions, uint, 0644);
MODULE_PARM_DESC(max_user_sessions,
		 "Sessions a user without CAP_SYS_ADMIN may hold open at once (0: no limit)");

/* uid -> sessions it holds (an xa_mk_value() count) */
static DEFINE_XARRAY(fhook_user_sessions);
static DEFINE_MUTEX(fhook_user_sessions_lock);

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
 * *@counted: to give back with fhook_user_session_put().
 */
int fhook_user_session_get(kuid_t *uid, bool *counted)
{
	unsigned int max = READ_ONCE(fhook_max_user_sessions);
	unsigned long n;
	int ret = 0;

	*uid = current_uid();
	*counted = !ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	if (!*counted)
		return 0;
	mutex_lock(&fhook_user_sessions_lock);
	n = xa_to_value(xa_load(&fhook_user_sessions, __kuid_val(*uid)) ?: xa_mk_value(0));
	if (max && n >= max)
		ret = -EUSERS;
	else
		ret = xa_err(xa_store(&fhook_user_sessions, __kuid_val(*uid), xa_mk_value(n + 1),
				      GFP_KERNEL));
	mutex_unlock(&fhook_user_sessions_lock);
	if (ret)
		*counted = false;
	return ret;
}

void fhook_user_session_put(kuid_t uid, bool counted)
{
	unsigned long n;

	if (!counted)
		return;
	mutex_lock(&fhook_user_sessions_lock);
	n = xa_to_value(xa_load(&fhook_user_sessions, __kuid_val(uid)));
	if (n > 1)
		xa_store(&fhook_user_sessions, __kuid_val(uid), xa_mk_value(n - 1), GFP_KERNEL);
	else
		xa_erase(&fhook_user_sessions, __kuid_val(uid));
	mutex_unlock(&fhook_user_sessions_lock);
}
