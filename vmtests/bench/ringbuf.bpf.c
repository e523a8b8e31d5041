// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF ringbuf side of the transport benchmark: one BPF_PROG_TEST_RUN
 * of `produce` writes nr_events records of `payload` bytes (the u64 words
 * i, i+1, ... as fhook's FHOOK_IOC_BENCH writes them) with
 * bpf_ringbuf_reserve/submit; fhook-bench-transport consumes them with
 * libbpf's ring_buffer__poll().  Built with clang -target bpf.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* set per run with bpf_map__set_max_entries() */
} rb SEC(".maps");

/* set before loading: the verifier sees constants */
const volatile __u32 payload = 64;
/*
 * 1: each record also carries what fhook's header does (time, pid/tgid,
 * cpu, sequence) and the task's name (fhook's COMM records), gathered
 * with the usual helpers
 */
const volatile __u32 with_ctx;

struct ctx_hdr {
	__u64 ts;
	__u32 pid, tgid;
	__u32 cpu, seq;
	char comm[16];
	__u64 pad;
};

__u64 nr_events;
/* per CPU, one cache line each: no atomics in the loop */
__u64 written[64 * 8];
__u64 dropped[64 * 8];

static long one(__u64 i, void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id() & 63;
	void *rec;
	__u64 *p;
	__u32 w;

	rec = bpf_ringbuf_reserve(&rb, payload + (with_ctx ? sizeof(struct ctx_hdr) : 0), 0);
	if (!rec) {
		dropped[cpu * 8]++;
		return 0;
	}
	p = rec;
	if (with_ctx) {
		struct ctx_hdr *h = rec;
		__u64 id = bpf_get_current_pid_tgid();

		h->ts = bpf_ktime_get_ns();
		h->pid = id;
		h->tgid = id >> 32;
		h->cpu = cpu;
		h->seq = written[cpu * 8];
		bpf_get_current_comm(h->comm, sizeof(h->comm));
		p = (void *)(h + 1);
	}
	for (w = 0; w < payload / 8 && w < 512; w++)
		p[w] = i + w;
	/* the verifier wants the pointer reserve returned */
	bpf_ringbuf_submit(rec, 0);
	written[cpu * 8]++;
	return 0;
}

SEC("raw_tp")
int produce(void *ctx)
{
	bpf_loop(nr_events, one, NULL, 0);
	return 0;
}
