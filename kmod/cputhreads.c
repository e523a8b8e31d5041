// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel thread per CPU of a session, kept across CPU hotplug: the
 * timerlat and osnoise tracers' threads (the kernel's
 * start_per_cpu_kthreads(), osnoise_cpu_init() and osnoise_cpu_die() in
 * kernel/trace/trace_osnoise.c).
 *
 * fhook_cpu_threads_start() copies the CPUs to run on (the session's at
 * START) and makes a thread bound to each of them that is online; a CPU
 * that comes online while they run gets its thread (or, if it cannot be
 * made, none: the CPU still comes up), a CPU going offline has its thread
 * stopped.  The scheduler moves a CPU's threads off it before that (at
 * CPUHP_AP_ACTIVE): they must check where they run.  One multi-instance
 * hotplug state serves every set.
 */
#include "fhook.h"

#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

/* the dynamic CPU hotplug state of every started set; <0: none */
static int fhook_cpu_threads_hp = -1;

int fhook_cpu_threads_alloc(struct fhook_cpu_threads *ct)
{
	ct->threads = kcalloc(nr_cpu_ids, sizeof(*ct->threads), GFP_KERNEL_ACCOUNT);
	if (!ct->threads || !zalloc_cpumask_var(&ct->mask, GFP_KERNEL_ACCOUNT))
		return -ENOMEM;
	return 0;
}

void fhook_cpu_threads_free(struct fhook_cpu_threads *ct)
{
	kfree(ct->threads);
	free_cpumask_var(ct->mask);
}

/* @cpu's thread, made and woken; with the hotplug lock held. */
static int fhook_cpu_thread_start(struct fhook_cpu_threads *ct, unsigned int cpu)
{
	struct task_struct *t;

	if (ct->threads[cpu] || !cpumask_test_cpu(cpu, ct->mask))
		return 0;
	t = kthread_create_on_cpu(ct->fn, ct->arg(ct, cpu), cpu, ct->name);
	if (IS_ERR(t))
		return PTR_ERR(t);
	ct->threads[cpu] = get_task_struct(t);
	wake_up_process(t);
	return 0;
}

static void fhook_cpu_thread_stop(struct fhook_cpu_threads *ct, unsigned int cpu)
{
	if (!ct->threads[cpu])
		return;
	kthread_stop(ct->threads[cpu]);
	put_task_struct(ct->threads[cpu]);
	ct->threads[cpu] = NULL;
}

static int fhook_cpu_threads_online(unsigned int cpu, struct hlist_node *node)
{
	int ret = fhook_cpu_thread_start(hlist_entry(node, struct fhook_cpu_threads, hp_node),
					 cpu);

	if (ret)
		pr_warn_ratelimited("no thread on CPU %u, back online: %d\n", cpu, ret);
	return 0;
}

static int fhook_cpu_threads_offline(unsigned int cpu, struct hlist_node *node)
{
	fhook_cpu_thread_stop(hlist_entry(node, struct fhook_cpu_threads, hp_node), cpu);
	return 0;
}

void fhook_cpu_threads_stop(struct fhook_cpu_threads *ct)
{
	int cpu;

	/* no hotplug callback from here on: the threads are the set's own */
	if (ct->started)
		cpuhp_state_remove_instance_nocalls(fhook_cpu_threads_hp, &ct->hp_node);
	ct->started = false;
	for_each_possible_cpu(cpu)
		fhook_cpu_thread_stop(ct, cpu);
}

int fhook_cpu_threads_start(struct fhook_cpu_threads *ct, const struct cpumask *cpus)
{
	int ret, cpu;

	if (fhook_cpu_threads_hp < 0)
		return -ENODEV;
	cpumask_copy(ct->mask, cpus);
	/* CPUs coming and going from here on; those online now below */
	ret = cpuhp_state_add_instance_nocalls(fhook_cpu_threads_hp, &ct->hp_node);
	if (ret)
		return ret;
	ct->started = true;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		ret = fhook_cpu_thread_start(ct, cpu);
		if (ret)
			break;
	}
	cpus_read_unlock();
	if (ret)
		fhook_cpu_threads_stop(ct);
	return ret;
}

void fhook_cpu_threads_setup(void)
{
	fhook_cpu_threads_hp = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "fhook/threads:online",
						       fhook_cpu_threads_online,
						       fhook_cpu_threads_offline);
	if (fhook_cpu_threads_hp < 0)
		pr_warn("no CPU hotplug state (%d): no timerlat or osnoise tracer\n",
			fhook_cpu_threads_hp);
}

void fhook_cpu_threads_exit(void)
{
	if (fhook_cpu_threads_hp >= 0)
		cpuhp_remove_multi_state(fhook_cpu_threads_hp);
}
