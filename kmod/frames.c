// SPDX-License-Identifier: GPL-2.0
/*
 * Trampoline frames a task dies inside.  The around (around.c) and latency
 * (latency.c) trampolines run a function's body from a frame of their own
 * and count the calls inside it (inflight): what a call comes back to is
 * kept until the count says it has left.  A call the task exits inside
 * (do_exit() somewhere below the body: an exit syscall, a fatal signal, a
 * kthread's end, an oops) never comes back, and its count would keep the
 * probe, the hook's slot and the module for good.
 *
 * So each such frame carries a mark while its call is inside: the frame's
 * own address XOR a key drawn at module load, plus its kind
 * (fhook_frame_mark()), set after the call is counted in and cleared
 * before it is counted out.  When a task exits (sched_process_exit, from
 * do_exit() on the task's own stack), every marked frame above the
 * tracepoint's is a call that will never return, and its kind counts it
 * out as its return would have (without the exit handlers: the function
 * did not return).  Data on a stack cannot pass for a frame without the
 * key, which never leaves the kernel; a returned frame has no mark.
 *
 * Frames entered after the tracepoint that never return either are those
 * of do_task_dead(), refused by name with the other functions no call
 * returns from (FHOOK_NORETURN_FUNCS, btf.c).  A task that dies in an oops
 * has its stack rewound before do_exit(): what it was inside stays
 * counted (the kernel is tainted; reboot).  graph's return trampoline
 * keeps its frames in shadow stacks, released at the task's last switch
 * (fgraph.c).
 */
#include "fhook.h"

#include <linux/random.h>
#include <linux/sched/task_stack.h>
#include <linux/tracepoint.h>

unsigned long fhook_frame_key __ro_after_init;

static const struct fhook_frame_kind *const fhook_frame_kinds[] = {
	[FHOOK_FRAME_AROUND]	= &fhook_around_frame_kind,
	[FHOOK_FRAME_LAT]	= &fhook_lat_frame_kind,
};

static struct tracepoint *fhook_frames_tp;	/* sched_process_exit */
static atomic_t fhook_frames_owners = ATOMIC_INIT(0);

/*
 * Call @fn(frame, @arg) for each marked frame of @kind on current's stack,
 * above the caller's; the number of calls.  Other functions' frames are
 * read unchecked, as an unwinder reads them (KASAN).
 */
notrace unsigned int fhook_frames_walk(enum fhook_frame_kind_id kind,
				       void (*fn)(void *frame, void *arg), void *arg)
{
	const struct fhook_frame_kind *k = fhook_frame_kinds[kind];
	unsigned long x = ALIGN(current_stack_pointer, 8);
	unsigned long end = (unsigned long)task_stack_page(current) + THREAD_SIZE;
	unsigned int n = 0;

	if (!object_is_on_stack((void *)x))
		return 0;	/* (an interrupt stack: no task frames) */
	for (; x + k->size <= end; x += 8) {
		if (READ_ONCE_NOCHECK(*(unsigned long *)(x + k->mark)) !=
		    fhook_frame_mark((void *)x, kind))
			continue;
		fn((void *)x, arg);
		n++;
	}
	return n;
}

/* TP_PROTO(struct task_struct *p): current, in do_exit() */
static notrace void fhook_frames_on_exit(void *data, struct task_struct *p)
{
	unsigned int i, n = 0;

	if (!atomic_read(&fhook_frames_owners))
		return;
	for (i = 0; i < ARRAY_SIZE(fhook_frame_kinds); i++)
		n += fhook_frames_walk(i, fhook_frame_kinds[i]->abandon, NULL);
	if (n)
		pr_info_ratelimited("%s[%d] exits inside %u call(s) through fhook's trampolines: counted out\n",
				    p->comm, task_pid_nr(p), n);
}

/*
 * A probe or hook whose trampoline marks frames exists (_get) or is gone
 * (_put): exits are scanned only while one does.
 */
void fhook_frames_get(void)
{
	atomic_inc(&fhook_frames_owners);
}

void fhook_frames_put(void)
{
	atomic_dec(&fhook_frames_owners);
}

int fhook_frames_init(void)
{
	fhook_frame_key = get_random_long();
	fhook_frames_tp = fhook_tracepoint("sched_process_exit");
	if (!fhook_frames_tp)
		return -ENOENT;
	return tracepoint_probe_register(fhook_frames_tp, (void *)fhook_frames_on_exit, NULL);
}

void fhook_frames_exit(void)
{
	tracepoint_probe_unregister(fhook_frames_tp, (void *)fhook_frames_on_exit, NULL);
	tracepoint_synchronize_unregister();
}
