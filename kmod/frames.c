// SPDX-License-Identifier: GPL-2.0
/*
 * Trampoline frames a task dies inside.  The around (around.c) and latency
 * (latency.c) trampolines run a function's body from a frame of their own
 * and count the calls inside it (inflight): what a call comes back to is
 * kept until the count says it has left.  A call the task exits inside
 * (do_exit() somewhere below the body: an exit syscall, a fatal signal, a
 * kthread's end) never comes back, and its count would keep the probe,
 * the hook's slot and the module for good.
 *
 * So when a task exits (sched_process_exit, from do_exit() on the task's
 * own stack) the unwinder walks its stack (fhook_arch_body_frames()):
 * above do_exit()'s frame, every place a body would return into one of
 * the trampolines is a call that never will, and the frame's kind counts
 * it out as its return would have (without the exit handlers: the
 * function did not return).  Below it (the tracepoint's own functions,
 * which a probe may time too) calls return as usual.  The
 * frames are found from the return addresses the unwinder follows, never
 * from what is written on the stack, so no value a user can put there
 * passes for one.
 *
 * Frames entered after the tracepoint that never return either are those
 * of do_task_dead(), refused by name with the other functions no call
 * returns from (FHOOK_NORETURN_FUNCS, btf.c).  A task that dies in an oops
 * has its stack rewound before do_exit(): what it was inside stays
 * counted (the kernel is tainted; reboot), as do calls above a frame the
 * unwinder is unsure of (code without ORC data: BPF programs; a return
 * trampoline other than a call graph's: a kretprobe's, the kernel's
 * function_graph's).  A call graph's return trampoline is looked through
 * to what its frame saved (fgraph.c; never another trampoline's entry);
 * its own frames are in shadow stacks, released at the task's last
 * switch.
 */
#include "fhook.h"

#include <linux/kallsyms.h>
#include <linux/tracepoint.h>

/* frames from this probe's to do_exit()'s: the tracepoint's, a few hooks' */
#define FHOOK_FRAMES_TO_EXIT	16

static const struct fhook_frame_kind *const fhook_frame_kinds[] = {
	[FHOOK_FRAME_AROUND]	= &fhook_around_frame_kind,
	[FHOOK_FRAME_LAT]	= &fhook_lat_frame_kind,
};

static struct tracepoint *fhook_frames_tp;	/* sched_process_exit */
static atomic_t fhook_frames_owners = ATOMIC_INIT(0);

struct fhook_frames_walk {
	enum fhook_frame_kind_id kind;
	void (*fn)(void *frame, void *arg);
	void *arg;
};

static notrace bool fhook_frames_one(int kind, unsigned long ip, void *frame, void *arg)
{
	struct fhook_frames_walk *w = arg;

	if (kind == w->kind)
		w->fn(frame, w->arg);
	return true;
}

/*
 * Call @fn(frame, @arg) for each frame of @kind on current's stack, above
 * the caller's: calls in progress.  Whether those were all (the unwinder
 * went to the stack's end).
 */
notrace bool fhook_frames_walk(enum fhook_frame_kind_id kind, void (*fn)(void *frame, void *arg),
			       void *arg)
{
	struct fhook_frames_walk w = { .kind = kind, .fn = fn, .arg = arg };

	return fhook_arch_body_frames(fhook_frames_one, &w);
}

/* An exit's walk: the calls above do_exit()'s frame, once it is found */
struct fhook_frames_exit {
	unsigned int frames;	/* looked at before do_exit() */
	bool above;		/* do_exit()'s frame passed */
	unsigned int n;		/* counted out */
};

/*
 * Calls below do_exit() (the tracepoint's, a probe's on it: a body may run
 * there too) return; those above it never do.  do_exit() is found by name
 * among the first few frames (it is not exported).
 */
static notrace bool fhook_frames_abandon(int kind, unsigned long ip, void *frame, void *arg)
{
	struct fhook_frames_exit *e = arg;
	char sym[KSYM_SYMBOL_LEN];

	if (e->above) {
		if (kind != FHOOK_FRAME_NONE) {
			fhook_frame_kinds[kind]->abandon(frame);
			e->n++;
		}
		return true;
	}
	sprint_symbol_no_offset(sym, ip);
	e->above = !strcmp(sym, "do_exit");
	/* (not found: nothing is counted out, the safe way to fail) */
	return e->above || ++e->frames < FHOOK_FRAMES_TO_EXIT;
}

/* TP_PROTO(struct task_struct *p): current, in do_exit() */
static notrace void fhook_frames_on_exit(void *data, struct task_struct *p)
{
	struct fhook_frames_exit e = {};

	if (!atomic_read(&fhook_frames_owners))
		return;
	fhook_arch_body_frames(fhook_frames_abandon, &e);
	if (e.n)
		pr_info_ratelimited("%s[%d] exits inside %u call(s) through fhook's trampolines: counted out\n",
				    p->comm, task_pid_nr(p), e.n);
}

/*
 * A probe or hook whose trampoline runs bodies exists (_get) or is gone
 * (_put): exits are looked at only while one does.
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
