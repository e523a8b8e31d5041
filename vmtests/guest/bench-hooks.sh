# shellcheck shell=sh
# vmtests/run.sh --bench: the hook benchmark (docs/benchmarks.md), one
# vCPU.  `fhook bench` attaches each mechanism in turn -- fhook's, the
# kernel's function tracer and kprobe_events, bpftrace and libbpf-tools
# funclatency (copied into the guest by run.sh when the host has them) --
# and times two workloads under it: fhook_testmod's in-kernel loop over the
# empty noinline fhook_testmod_nop() (the pure cost of the hook) and
# read(2) of /dev/zero with vfs_read hooked (a whole syscall).  The JSON of
# each run goes to the host on one console line (FHOOK-BENCH-JSON).
. /fhook/config
PATH=/fhook/bin:/fhook/peers/bin:/fhook/bench:$PATH
export PATH
# bpftrace wants a writable HOME
export HOME=/root
export LD_LIBRARY_PATH=/lib/$(uname -m)-linux-gnu:/usr/lib/$(uname -m)-linux-gnu
# (the scraped row fetches fhook's endpoint on the loopback)
ip link set lo up 2> /dev/null || ifconfig lo 127.0.0.1 up
# what bpftrace can attach here (kfunc needs BTF and BPF trampolines)
command -v bpftrace > /dev/null &&
	echo "bpftrace: $(bpftrace --info 2>&1 | grep -i -E 'version|btf:|kfunc:' | tr -s ' \n' ' ')"
clock="CLOCK_MONOTONIC ns"
[ "${ICOUNT:-0}" = 1 ] && clock="guest ns = instructions (-icount shift=0)"
for w in ${FHOOK_TEST_BENCH_WORKLOADS:-kloop read switch timer}; do
	# shellcheck disable=SC2086
	fhook bench --workload "$w" --repeats "${FHOOK_TEST_BENCH_REPEATS:-3}" --settle 3 \
		--clock "$clock" --json "/tmp/bench-$w.json" ${FHOOK_TEST_BENCH_ARGS:-} 2> /tmp/bench.err ||
		{ echo "fhook bench --workload $w failed:"; cat /tmp/bench.err; continue; }
	echo "FHOOK-BENCH-JSON $REL-$w $(tr -d '\n' < "/tmp/bench-$w.json")"
done
