// SPDX-License-Identifier: GPL-2.0
/*
 * fhook bench's BPF streaming peer (row bpf-ringbuf-stream): an fentry
 * program on the benchmarked function writes a 32-byte record -- time,
 * pid/tgid, the function's address -- to a BPF ring buffer with
 * bpf_ringbuf_reserve/submit, waking the reader in batches as fhook's
 * rings do: when 64 KiB are pending (fhook's default watermark is a
 * quarter of its ring), else not (BPF_RB_NO_WAKEUP; the reader's poll timeout picks
 * up the rest).  Left to itself the kernel wakes the reader whenever it
 * had caught up: after every record when the workload returns to user
 * space between calls, which costs ~1,200 instructions more a call here.
 * fhook-bench-stream reads them with libbpf's ring_buffer__poll().  An fentry program has no parent
 * address short of a stack walk: its last word stays 0, so this peer does
 * a little less than fhook's function record.  Built with clang -target bpf.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/*
 * Woken at 64 KiB pending, as fhook's 256 KiB rings of these runs are (a
 * quarter); 1 MiB of room, so that nothing is lost while a kernel loop
 * keeps the reader from running.
 */
#define RING_BYTES	(1 << 20)
#define WAKE_BYTES	(64 << 10)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} rb SEC(".maps");

struct event {
	__u64 ts;
	__u64 pid_tgid;
	__u64 ip;
	__u64 parent_ip;
};

/* records the ring had no room for */
__u64 dropped;

/*
 * Wake the reader when the pending data crosses a multiple of WAKE_BYTES
 * with this record (its 8-byte header counted): once per 64 KiB, not on
 * every record while the reader cannot run.
 */
static __always_inline __u64 fhook_wake_flags(void)
{
	__u64 avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);

	return avail >= WAKE_BYTES && avail % WAKE_BYTES < sizeof(struct event) + 8 ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

SEC("fentry")
int on_entry(void *ctx)
{
	struct event *e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->pid_tgid = bpf_get_current_pid_tgid();
	e->ip = bpf_get_func_ip(ctx);
	e->parent_ip = 0;
	bpf_ringbuf_submit(e, fhook_wake_flags());
	return 0;
}
