// SPDX-License-Identifier: GPL-2.0
/*
 * A session is one open file of /dev/fhook: its rings, probes and filters
 * (configured by the ioctls of ioctl.c), armed and disarmed together.
 * Everything a session created is torn down in fhook_session_destroy(),
 * which runs when the last fd and the last mapping are gone, including
 * when the owning process is killed.
 */
#include "fhook.h"

#include <linux/module.h>

#include <linux/delay.h>
#include <linux/poll.h>
#include <linux/slab.h>

/*
 * The flush timer runs every flush_ms while the session is armed and wakes
 * readers if data sits below the watermarks, which the producers never
 * wake for (poll() then reports the session readable once: flush_due), or
 * if a snapshot trigger's wakeup could not be queued.
 */
static void fhook_flush_timer(struct timer_list *t)
{
	struct fhook_session *s = from_timer(s, t, flush_timer);
	bool flush;

	if (!READ_ONCE(s->flush_on))
		return;
	/* (overwrite rings are read on demand: nothing to flush) */
	flush = !(s->ring_flags & FHOOK_RING_OVERWRITE) && fhook_rings_readable(s, true);
	/*
	 * and a snapshot trigger's turn, whose own wakeup was not queued (it
	 * ran inside another wakeup on its CPU: fhook_ring_kick())
	 */
	if ((flush || READ_ONCE(s->snapshot_due)) && wq_has_sleeper(&s->waitq)) {
		if (flush)
			WRITE_ONCE(s->flush_due, true);
		wake_up_all(&s->waitq);
	}
	mod_timer(t, jiffies + s->flush_jiffies);
}

static void fhook_flush_start(struct fhook_session *s)
{
	WRITE_ONCE(s->flush_on, true);
	mod_timer(&s->flush_timer, jiffies + s->flush_jiffies);
}

static void fhook_flush_stop(struct fhook_session *s)
{
	WRITE_ONCE(s->flush_on, false);
	/* also waits for a running callback, which then cannot re-arm */
	del_timer_sync(&s->flush_timer);
}

/* A session of @user (NULL: exempt from the per-user shares, priv.c) */
struct fhook_session *fhook_session_create(struct fhook_user *user)
{
	struct fhook_session *s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);

	if (!s)
		return NULL;
	s->user = user;
	if (!zalloc_cpumask_var(&s->cpus, GFP_KERNEL_ACCOUNT))
		goto err_free;
	if (fhook_stats_alloc(s))
		goto err_cpumask;
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->probes);
	init_waitqueue_head(&s->waitq);
	s->wakeup_cpu = -1;
	timer_setup(&s->flush_timer, fhook_flush_timer, 0);
	s->next_probe_id = 1;
	return s;

err_cpumask:
	free_cpumask_var(s->cpus);
err_free:
	kfree(s);
	return NULL;
}

static void fhook_session_disarm(struct fhook_session *s)
{
	bool sync = false;
	struct fhook_probe *p;

	fhook_flush_stop(s);
	list_for_each_entry(p, &s->probes, node) {
		if (p->kind->disarm) {
			p->kind->disarm(p);
			sync |= p->kind->sync_rcu;
		}
	}
	/* handlers that run with preemption off: wait for those in flight */
	if (sync)
		synchronize_rcu();
	s->armed = false;
}

/*
 * Did unregistering fail for a probe of @s (ftrace gave up, e.g. after
 * ftrace_kill(): patched sites and trampolines may still call in)?
 */
static bool fhook_session_stuck(struct fhook_session *s)
{
	struct fhook_probe *p;

	list_for_each_entry(p, &s->probes, node) {
		if (p->registered && p->disarm_unregisters) {
			pr_err("probe %u is still registered after its session closed\n", p->id);
			return true;
		}
	}
	return false;
}

void fhook_probe_free(struct fhook_probe *p)
{
	if (p->kind->release)
		p->kind->release(p);
	fhook_triggers_free(p);
	fhook_hist_free(p->hist);
	fhook_mem_unreserve(p->session->user, p->filter_pages);
	kfree(p);
}

void fhook_session_destroy(struct fhook_session *s)
{
	struct fhook_probe *p, *tmp;

	/* no ioctl can run any more: this is ->release */
	fhook_session_disarm(s);
	/*
	 * A probe that is still registered reaches its session's rings,
	 * counters, filters and the session itself on every hit: keep all
	 * of it, and the module, rather than free what its callbacks use.
	 */
	if (fhook_session_stuck(s)) {
		pr_err("session kept with its probes, rings and the module: reboot to reclaim\n");
		__module_get(THIS_MODULE);
		return;
	}
	fhook_pidfilter_release(s);
	list_for_each_entry_safe(p, tmp, &s->probes, node) {
		list_del(&p->node);
		fhook_probe_free(p);
	}
	fhook_rings_free(s);
	fhook_stats_free(s);
	free_cpumask_var(s->cpus);
	mutex_destroy(&s->lock);
	kfree(s);
}

/*
 * The largest record @p's program can make (its fields, strings up to
 * the fetch's limit, a stack trailer from --stack or a trigger), what a
 * probe without one said (a failing chain's), or 0 for probes whose
 * records are small and fixed.
 */
static u64 fhook_probe_max_record(const struct fhook_probe *p)
{
	u64 data;

	if (!p->prog)
		return p->max_record;
	data = min_t(u64, p->prog->data_size + p->prog->max_dyn, FHOOK_MAX_PROBE_DATA);
	if (p->stack || p->nr_triggers)
		data = ALIGN(data, 8) + 8 * (FHOOK_MAX_STACK + 1);
	return sizeof(struct fhook_rec_hook) + data;
}

/* FHOOK_IOC_START: arm every probe, or none */
int fhook_session_start(struct fhook_session *s)
{
	struct fhook_probe *p;
	int ret;

	if (s->armed)
		return fhook_refuse(s, FHOOK_R_ARMED, -1, -EBUSY);
	if (!s->rings)
		return fhook_refuse(s, FHOOK_R_NO_RINGS, -1, -EINVAL);
	if (list_empty(&s->probes))
		return fhook_refuse(s, FHOOK_R_NO_PROBES, -1, -EINVAL);
	/* triggers start from scratch */
	WRITE_ONCE(s->traced_off, false);
	list_for_each_entry(p, &s->probes, node) {
		WRITE_ONCE(p->paused, false);
		fhook_triggers_reset(p);
	}
	/*
	 * lockdown may have been raised since PROBE_ADD; a record that can
	 * never fit a ring is refused here rather than dropped at every hit
	 * (the producers drop one anyway: fhook_ring_room())
	 */
	list_for_each_entry(p, &s->probes, node) {
		ret = fhook_priv_check(p->priv);
		if (ret)
			return ret;
		if (fhook_probe_max_record(p) > s->buf_size)
			return fhook_refuse(s, FHOOK_R_RECORD_SIZE, p->id, -EMSGSIZE);
	}
	list_for_each_entry(p, &s->probes, node) {
		if (!p->kind->arm)
			continue;
		ret = p->kind->arm(p);
		if (ret) {
			fhook_session_disarm(s);
			return ret;
		}
	}
	s->armed = true;
	fhook_flush_start(s);
	return 0;
}

/* Bench loops notice !armed within a batch of records. */
static void fhook_wait_benches(struct fhook_session *s)
{
	int tries;

	for (tries = 0; atomic_read(&s->benches) && tries < 10000; tries++)
		usleep_range(100, 200);
	if (atomic_read(&s->benches))
		pr_warn_ratelimited("FHOOK_IOC_STOP: a bench loop is still running\n");
}

/* FHOOK_IOC_STOP: disarm; what the rings hold stays to be read */
void fhook_session_stop(struct fhook_session *s)
{
	fhook_session_disarm(s);
	fhook_wait_benches(s);
	/* a frozen, stopped session starts unfrozen again */
	WRITE_ONCE(s->frozen, false);
	WRITE_ONCE(s->snapshot_due, false);
	/* let a sleeping reader drain what is left */
	wake_up_all(&s->waitq);
}

__poll_t fhook_session_poll(struct fhook_session *s, struct file *file, poll_table *wait)
{
	poll_wait(file, &s->waitq, wait);
	/* pairs with the producer's publish + irq_work (Dekker) */
	smp_mb();
	if (fhook_rings_readable(s, !READ_ONCE(s->armed)))
		return EPOLLIN | EPOLLRDNORM;
	/* the flush timer found data below the watermarks: report it once */
	/* a snapshot trigger froze the session: the reader's turn */
	if (READ_ONCE(s->snapshot_due))
		return EPOLLIN | EPOLLRDNORM | EPOLLPRI;
	if (READ_ONCE(s->flush_due) && fhook_rings_readable(s, true)) {
		WRITE_ONCE(s->flush_due, false);
		return EPOLLIN | EPOLLRDNORM;
	}
	return 0;
}
