#!/usr/bin/env bash
# vmtests/bench/run.sh: the hook benchmark, `fhook bench` in one boot of each
# Debian kernel with one vCPU (docs/benchmarks.md).
#
#   vmtests/bench/run.sh [--arch arm64] [--wall] [--kernel REL]...
#
# Each kernel boots one vCPU under qemu -icount shift=0,sleep=off: a guest
# nanosecond is then one guest instruction, so the figures are
# deterministic (QEMU 7.2's -icount hangs 6.1's SMP bring-up, not a
# one-vCPU boot); --wall measures by the wall clock instead.  bpftrace,
# libbpf-tools' funclatency and runqlat and trace-cmd are copied into the guest with
# their libraries (installed here with apt-get when missing, as root).
# --arch arm64: Debian's arm64 kernels under qemu-system-aarch64, the same
# peers' :arm64 packages and their dependencies fetched with apt-get
# download (~70 MB, once) and unpacked in build/kernels/arm64-peers.
#
# Writes build/bench/<release>-<workload>.json (one per kernel and
# workload) and build/bench/hooks[-arm64]-<workload>.svg (fhook bench --plot).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench
# (the host's CLI, which plots)
cli=$top/build/user/fhook
wall=0
arch=x86_64
kernels=()
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=$2; shift 2 ;;
	--wall) wall=1; shift ;;
	--kernel) kernels+=(--kernel "$2"); shift 2 ;;
	-h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "vmtests/bench/run.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
# the eBPF peers and trace-cmd (not needed by the tests, so not in scripts/setup.sh)
peers_arm64() {
	local dest=$top/build/kernels/arm64-peers pkgs
	[ -x "$dest/root/usr/bin/bpftrace" ] && [ -x "$dest/root/usr/bin/trace-cmd" ] &&
		[ -x "$dest/root/usr/sbin/funclatency" ] && return 0
	echo "vmtests/bench/run.sh: fetching bpftrace, libbpf-tools and trace-cmd :arm64 with their libraries"
	# (the :arm64 packages the three need, by name: apt-get download takes no dependencies)
	pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances bpftrace:arm64 libbpf-tools:arm64 trace-cmd:arm64 |
		grep -E '^[a-z0-9][^ ]*:arm64$' | sort -u) || return 1
	rm -rf "$dest" && mkdir -p "$dest/debs" &&
		# shellcheck disable=SC2086
		(cd "$dest/debs" && apt-get download -qq $pkgs) || return 1
	for deb in "$dest"/debs/*.deb; do
		dpkg-deb -x "$deb" "$dest/root" || return 1
	done
}
if [ "$arch" = arm64 ]; then
	peers_arm64 || echo "vmtests/bench/run.sh: could not fetch the arm64 peers: their rows will be skipped"
elif ! command -v bpftrace > /dev/null || ! PATH=$PATH:/usr/sbin command -v funclatency > /dev/null ||
	! command -v trace-cmd > /dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
		echo "vmtests/bench/run.sh: apt-get install bpftrace libbpf-tools trace-cmd (fhook bench's peers)"
		apt-get install -y -qq --no-install-recommends bpftrace libbpf-tools trace-cmd > /dev/null ||
			echo "vmtests/bench/run.sh: could not install them: their rows will be skipped"
	else
		echo "vmtests/bench/run.sh: no bpftrace/funclatency/trace-cmd: their rows will be skipped (apt-get install bpftrace libbpf-tools trace-cmd)"
	fi
fi
export FHOOK_TEST_BENCH=hooks
# its own guest directory: a test run may go on beside it
export FHOOK_VM_DIR=${FHOOK_VM_DIR:-$top/build/vm-bench}
# (and a log of its own: two benches at once, each in its FHOOK_VM_DIR,
# must not cut each other's results short)
log=$out/hooks-$(basename "$FHOOK_VM_DIR").log
: > "$log"
if [ $wall = 0 ]; then
	bash "$top/vmtests/run.sh" --arch "$arch" --bench --icount --timeout 7200 "${kernels[@]}" | tee -a "$log"
else
	bash "$top/vmtests/run.sh" --arch "$arch" --bench --timeout 7200 "${kernels[@]}" | tee -a "$log"
fi
# the guests' JSON, one console line each
n=0
while read -r name json; do
	printf '%s\n' "$json" > "$out/$name.json"
	n=$((n + 1))
done < <(sed -n 's/^ *FHOOK-BENCH-JSON \([^ ]*\) /\1 /p' "$log")
[ $n -gt 0 ] || { echo "vmtests/bench/run.sh: no results from the guests (see $log)" >&2; exit 1; }
# (one plot per CPU: its kernels' figures side by side)
plot=hooks
[ "$arch" = arm64 ] && plot=hooks-arm64
for w in kloop read switch timer; do
	files=()
	for f in "$out"/*-"$w".json; do
		[ -e "$f" ] || continue
		case $f in *-arm64-"$w".json) [ "$arch" = arm64 ] ;; *) [ "$arch" != arm64 ] ;; esac &&
			files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || continue
	"$cli" bench --plot -o "$out/$plot-$w.svg" "${files[@]}"
	echo "plot: ${out#"$top"/}/$plot-$w.svg (${#files[@]} kernel(s))"
done
