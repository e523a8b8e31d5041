#!/usr/bin/env bash
# vmtests/bench/run.sh: the hook benchmark, `fhook bench` in one boot of each
# Debian kernel with one vCPU (docs/benchmarks.md).
#
#   vmtests/bench/run.sh [--wall] [--kernel REL]...
#
# Each kernel boots one vCPU under qemu -icount shift=0,sleep=off: a guest
# nanosecond is then one guest instruction, so the figures are
# deterministic (QEMU 7.2's -icount hangs 6.1's SMP bring-up, not a
# one-vCPU boot); --wall measures by the wall clock instead.  bpftrace,
# libbpf-tools' funclatency and runqlat and trace-cmd are copied into the guest with
# their libraries (installed here with apt-get when missing, as root).
#
# Writes build/bench/<release>-<workload>.json (one per kernel and
# workload) and build/bench/hooks-<workload>.svg (fhook bench --plot).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench
cli=${FHOOK_VM_CLI:-$top/build/user/fhook}
wall=0
kernels=()
while [ $# -gt 0 ]; do
	case $1 in
	--wall) wall=1; shift ;;
	--kernel) kernels+=(--kernel "$2"); shift 2 ;;
	-h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vmtests/bench/run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
# the eBPF peers and trace-cmd (not needed by the tests, so not in scripts/setup.sh)
if ! command -v bpftrace > /dev/null || ! PATH=$PATH:/usr/sbin command -v funclatency > /dev/null ||
	! command -v trace-cmd > /dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
		echo "vmtests/bench/run.sh: apt-get install bpftrace libbpf-tools trace-cmd (fhook bench's peers)"
		apt-get install -y -qq --no-install-recommends bpftrace libbpf-tools trace-cmd > /dev/null ||
			echo "vmtests/bench/run.sh: could not install them: their rows will be skipped"
	else
		echo "vmtests/bench/run.sh: no bpftrace/funclatency/trace-cmd: their rows will be skipped (apt-get install bpftrace libbpf-tools trace-cmd)"
	fi
fi
log=$out/hooks.log
: > "$log"
export FHOOK_TEST_BENCH=hooks
# its own guest directory: a test run may go on beside it
export FHOOK_VM_DIR=${FHOOK_VM_DIR:-$top/build/vm-bench}
if [ $wall = 0 ]; then
	bash "$top/vmtests/run.sh" --bench --icount --timeout 7200 "${kernels[@]}" | tee -a "$log"
else
	bash "$top/vmtests/run.sh" --bench --timeout 7200 "${kernels[@]}" | tee -a "$log"
fi
# the guests' JSON, one console line each
n=0
while read -r name json; do
	printf '%s\n' "$json" > "$out/$name.json"
	n=$((n + 1))
done < <(sed -n 's/^ *FHOOK-BENCH-JSON \([^ ]*\) /\1 /p' "$log")
[ $n -gt 0 ] || { echo "vmtests/bench/run.sh: no results from the guests (see $log)" >&2; exit 1; }
for w in kloop read switch timer; do
	set -- "$out"/*-"$w".json
	[ -e "$1" ] || continue
	"$cli" bench --plot -o "$out/hooks-$w.svg" "$@"
	echo "plot: ${out#"$top"/}/hooks-$w.svg ($# kernel(s))"
done
