// SPDX-License-Identifier: GPL-2.0
/*
 * Pid filter: a bitmap of (global) pids checked by every probe, and
 * optionally following forks through the sched_process_fork/exit/exec
 * tracepoints (what tracefs's function-fork option does, and a thread's
 * pid change at exec).  The caller's
 * pids are translated from its pid namespace.  The tracepoints are not exported,
 * so they are looked up by name.
 */
#include "fhook.h"

#include <linux/bitmap.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/threads.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

static struct tracepoint *fhook_tp_fork;
static struct tracepoint *fhook_tp_exit;
static struct tracepoint *fhook_tp_exec;

int fhook_pidfilter_init(void)
{
	fhook_tp_fork = fhook_tracepoint("sched_process_fork");
	fhook_tp_exit = fhook_tracepoint("sched_process_exit");
	fhook_tp_exec = fhook_tracepoint("sched_process_exec");
	if (!fhook_tp_fork || !fhook_tp_exit || !fhook_tp_exec)
		pr_warn("sched_process_fork/exit/exec tracepoints not found: no fork following\n");
	return 0;
}

/* TP_PROTO(struct task_struct *parent, struct task_struct *child) */
static notrace void fhook_on_fork(void *data, struct task_struct *parent,
				  struct task_struct *child)
{
	struct fhook_session *s = data;

	if (test_bit(parent->pid, s->pids) || test_bit(parent->tgid, s->pids))
		set_bit(child->pid, s->pids);
}

/*
 * TP_PROTO(struct task_struct *p).  A thread's own bit goes with it; the
 * process's (its tgid, which is also its leader's pid) only when its last
 * thread exits: a leader that calls pthread_exit() leaves the others
 * traced.  do_exit() counts signal->live down before this tracepoint.
 */
/* below TRACEPOINT_DEFAULT_PRIO: called last */
#define FHOOK_EXIT_TP_PRIO	(TRACEPOINT_DEFAULT_PRIO - 1)

static notrace void fhook_on_exit(void *data, struct task_struct *p)
{
	struct fhook_session *s = data;
	bool group_dead = !atomic_read(&p->signal->live);

	if (p->pid != p->tgid || group_dead)
		clear_bit(p->pid, s->pids);
	if (group_dead)
		clear_bit(p->tgid, s->pids);
}

/*
 * TP_PROTO(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm).
 * A thread that execs in a multi-threaded process takes its leader's pid
 * (de_thread()) without an exit event for its own: its bit moves with it,
 * or a process that later gets the old number would be traced.
 */
static notrace void fhook_on_exec(void *data, struct task_struct *p, pid_t old_pid,
				  struct linux_binprm *bprm)
{
	struct fhook_session *s = data;

	if (old_pid != p->pid && test_and_clear_bit(old_pid, s->pids))
		set_bit(p->pid, s->pids);
}

/*
 * The caller's pids are numbers of its pid namespace; the probes compare
 * the kernel's global ones.  A pid that does not exist in a child
 * namespace cannot be translated: -ESRCH.  (In the initial namespace the
 * numbers are taken as they are, as tracefs's set_ftrace_pid does.)
 */
static int fhook_pids_global(u32 *pids, u32 n)
{
	struct pid *pid;
	u32 i;

	if (task_active_pid_ns(current) == &init_pid_ns)
		return 0;
	for (i = 0; i < n; i++) {
		pid = find_get_pid(pids[i]);
		if (!pid)
			return -ESRCH;
		pids[i] = pid_nr(pid);
		put_pid(pid);
	}
	return 0;
}

static int fhook_follow_fork(struct fhook_session *s, bool on)
{
	int ret;

	if (on == s->fork_tp_registered)
		return 0;
	if (!on) {
		tracepoint_probe_unregister(fhook_tp_exec, (void *)fhook_on_exec, s);
		tracepoint_probe_unregister(fhook_tp_fork, (void *)fhook_on_fork, s);
		tracepoint_probe_unregister(fhook_tp_exit, (void *)fhook_on_exit, s);
		tracepoint_synchronize_unregister();
		s->fork_tp_registered = false;
		return 0;
	}
	if (!fhook_tp_fork || !fhook_tp_exit || !fhook_tp_exec)
		return -EOPNOTSUPP;
	ret = tracepoint_probe_register(fhook_tp_fork, (void *)fhook_on_fork, s);
	if (ret)
		return ret;
	/*
	 * After every other probe of sched_process_exit (the default priority
	 * is higher): a t:sched:sched_process_exit probe of this session sees
	 * the exiting task still traced
	 */
	ret = tracepoint_probe_register_prio(fhook_tp_exit, (void *)fhook_on_exit, s,
					     FHOOK_EXIT_TP_PRIO);
	if (ret)
		goto err_unregister_fork;
	ret = tracepoint_probe_register(fhook_tp_exec, (void *)fhook_on_exec, s);
	if (ret)
		goto err_unregister_exit;
	s->fork_tp_registered = true;
	return 0;

err_unregister_exit:
	tracepoint_probe_unregister(fhook_tp_exit, (void *)fhook_on_exit, s);
err_unregister_fork:
	tracepoint_probe_unregister(fhook_tp_fork, (void *)fhook_on_fork, s);
	tracepoint_synchronize_unregister();
	return ret;
}

int fhook_pidfilter_set(struct fhook_session *s, const struct fhook_pid_filter *arg)
{
	u32 *pids;
	u32 i;
	int ret;

	if (arg->flags & ~FHOOK_PIDF_ALL || arg->__pad)
		return -EINVAL;
	if (arg->nr_pids > FHOOK_MAX_FILTER_PIDS)
		return -EINVAL;

	pids = fhook_copy_array(arg->pids, arg->nr_pids, sizeof(u32));
	if (IS_ERR(pids))
		return PTR_ERR(pids);
	for (i = 0; i < arg->nr_pids; i++) {
		if (!pids[i] || pids[i] >= PID_MAX_LIMIT) {
			ret = -EINVAL;
			goto out;
		}
	}
	ret = fhook_pids_global(pids, arg->nr_pids);
	if (ret)
		goto out;
	if (!s->pids && (arg->nr_pids || arg->flags & FHOOK_PIDF_FOLLOW_FORK)) {
		/* charged to the caller, as everything a session holds */
		s->pids = __vmalloc(BITS_TO_LONGS(PID_MAX_LIMIT) * sizeof(long),
				   GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!s->pids) {
			ret = -ENOMEM;
			goto out;
		}
	}

	ret = fhook_follow_fork(s, arg->flags & FHOOK_PIDF_FOLLOW_FORK);
	if (ret)
		goto out;
	s->follow_fork = arg->flags & FHOOK_PIDF_FOLLOW_FORK;
	WRITE_ONCE(s->ignore_tgid,
		   arg->flags & FHOOK_PIDF_IGNORE_SELF ? current->tgid : 0);
	if (arg->flags & FHOOK_PIDF_RESET && s->pids)
		bitmap_zero(s->pids, PID_MAX_LIMIT);
	for (i = 0; i < arg->nr_pids; i++)
		set_bit(pids[i], s->pids);
	if (arg->nr_pids)	/* bitmap complete before probes look at it */
		smp_store_release(&s->pid_filter, true);
	else if (arg->flags & FHOOK_PIDF_RESET)	/* empty set: filter off */
		WRITE_ONCE(s->pid_filter, false);
out:
	kvfree(pids);
	return ret;
}

/* After the probes are disarmed. */
void fhook_pidfilter_release(struct fhook_session *s)
{
	fhook_follow_fork(s, false);
	vfree(s->pids);
	s->pids = NULL;
}
