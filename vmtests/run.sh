#!/usr/bin/env bash
# fhook guest test runner: boots each target kernel in QEMU (TCG) with a
# busybox initramfs holding fhook.ko, the fhook CLI, the helper programs and
# the guest tests, and reports one line per test.  See vmtests/README.md.
#
#   vmtests/run.sh [--arch x86_64|arm64] [--kernel REL]... [--filter TEST]... [--quick] [--demo]
#                  [--bench [--icount]] [--verbose] [--jobs N] [--timeout SEC]
#                  [--list]
#
# The tests come in groups (guest/tests.list); each group is one boot of the
# guest, with its own number of vCPUs.  Every kernel message a test causes
# is checked here for badness (KASAN, lockdep, WARN, BUG, stalls, ...).
#
# Nothing is ever loaded on the host: every insmod happens inside a guest.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/vmtests
vm=${FHOOK_VM_DIR:-$top/build/vm}
targets_file=$top/build/kernels/targets
tests_list=$here/guest/tests.list
cli=${FHOOK_VM_CLI:-}
kmod_dir=${FHOOK_VM_KMOD:-$top/build/kmod}
testmod_dir=${FHOOK_VM_TESTMOD:-$top/build/testmod}

kernels=()
filters=()
demo=0
mode=suite
icount=0
verbose=0
quick=0
vm_timeout=""
njobs=${FHOOK_VM_JOBS:-}

die() { printf 'vmtests: error: %s\n' "$*" >&2; exit 1; }

usage() {
	cat <<'EOF'
usage: vmtests/run.sh [options]
  --arch A        x86_64 (default) or arm64: the kernels of
                  build/kernels/targets-arm64 under qemu-system-aarch64, the
                  tests marked ",arm64" in tests.list (FHOOK_VM_FULL=1: all)
  --kernel REL    test this kernel release (repeatable; default: all of
                  build/kernels/targets)
  --filter TEST   run only this test (repeatable, shell globs allowed,
                  e.g. --filter 'vfs_*'); see --list
  --quick         skip the stress groups (developers; CI runs everything)
  --demo          boot the first kernel and show fhook tracing for real
  --bench         run the transport benchmark (vmtests/bench) in one boot of
                  each Debian kernel (3 vCPUs) and print its table
  --icount        with --bench: qemu -icount shift=0,sleep=off, so that one
                  guest nanosecond is one guest instruction (deterministic)
  --verbose       print every test's guest log, not only failing ones
  --jobs N        boot up to N guests at once (default: 2 on a machine with
                  2 or more CPUs, else 1; each guest uses one host CPU)
  --timeout SEC   hard limit per guest boot (default: from the group's test
                  timeouts)
  --list          list the groups and tests and exit
Logs: build/vm/<release>/<group>/{console.log,dmesg.log,logs/<test>.{log,kmsg}}
(FHOOK_VM_DIR=DIR instead of build/vm: two runs at once, e.g. the benchmark)
Slow kernels (release *-kdebug, or FHOOK_VM_SLOW=N): timeouts times N; the
tests marked "debian" in tests.list are left out there, the tests marked
"once" (userspace-only behaviour) run on the first Debian kernel selected
only; FHOOK_VM_FULL=1 (make test-full) runs every test on every kernel.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--arch) [ $# -ge 2 ] || die "--arch needs x86_64 or arm64"; arch=$2; shift 2 ;;
	--kernel) [ $# -ge 2 ] || die "--kernel needs a release"; kernels+=("$2"); shift 2 ;;
	--kernel=*) kernels+=("${1#*=}"); shift ;;
	--filter) [ $# -ge 2 ] || die "--filter needs a test name"; filters+=("$2"); shift 2 ;;
	--filter=*) filters+=("${1#*=}"); shift ;;
	--quick) quick=1; shift ;;
	--demo) demo=1; mode=demo; shift ;;
	--bench) demo=1; mode=bench; shift ;;
	--icount) icount=1; shift ;;
	--verbose|-v) verbose=1; shift ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; vm_timeout=$2; shift 2 ;;
	--jobs|-j) [ $# -ge 2 ] || die "--jobs needs a number"; njobs=$2; shift 2 ;;
	--jobs=*) njobs=${1#*=}; shift ;;
	--list)
		awk '/^@group/ { g = $2; a = ""; for (i = 3; i <= NF; i++) a = a " " $i
				 printf "%s:%s\n", g, a; next }
		     !/^#/ && NF { split($4, k, ","); m = substr($4, length(k[1]) + 1)
				   printf "  %-20s %4ss %s%s%s\n", $1, $2, $3 == "fhook" ? "" : "(no fhook needed)",
				   (k[1] == "debian" ? "(not on slow kernels)" : k[1] == "once" ? "(one kernel)" : \
				    k[1] == "lines" ? "(once per kernel line)" : ""), (m == "" ? "" : " +" substr(m, 2)) }
		     END { print "per group: kmemleak_<group> (kernels with kmemleak), dmesg_<group> (host side)" }' "$tests_list"
		exit 0 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

# arm64 guests (--arch arm64): the arm64 targets, the cross-built CLI and
# programs (scripts/setup.sh, make user-arm64)
case ${arch:=x86_64} in
x86_64) cli=${cli:-$top/build/user/fhook} ;;
arm64)
	targets_file=$top/build/kernels/targets-arm64
	cli=${cli:-$top/build/user-arm64/fhook} ;;
*) die "--arch takes x86_64 or arm64, not '$arch'" ;;
esac

if [ -z "$njobs" ]; then
	njobs=1
	[ "$(nproc)" -ge 2 ] && njobs=2
fi
[[ $njobs =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive number"

# the runner's parts, by role (vmtests/README.md)
# shellcheck source=vmtests/lib/targets.sh
. "$here/lib/targets.sh"
# shellcheck source=vmtests/lib/tests.sh
. "$here/lib/tests.sh"
# shellcheck source=vmtests/lib/artifacts.sh
. "$here/lib/artifacts.sh"
# shellcheck source=vmtests/lib/initramfs.sh
. "$here/lib/initramfs.sh"
# shellcheck source=vmtests/lib/results.sh
. "$here/lib/results.sh"
# shellcheck source=vmtests/lib/console.sh
. "$here/lib/console.sh"
# shellcheck source=vmtests/lib/qemu.sh
. "$here/lib/qemu.sh"
# shellcheck source=vmtests/lib/jobs.sh
. "$here/lib/jobs.sh"

load_targets
load_tests
# the kernel of the "once" tests: the first selected Debian (fast) one
once_rel=${kernels[0]}
for rel in "${kernels[@]}"; do
	if [ "$(slow_factor "$rel")" = 1 ]; then
		once_rel=$rel
		break
	fi
done
# the lines of the slow (debug) kernels selected: a "lines" test runs on
# such a kernel instead of on the Debian kernel of the same line
declare -A checked_lines=()
for rel in "${kernels[@]}"; do
	[ "$(slow_factor "$rel")" = 1 ] || checked_lines[$(kernel_line "$rel")]=1
done
check_artifacts
mkdir -p "$vm"
exec 9> "$vm/.lock"
flock -n 9 || die "another vmtests/run.sh is using $vm"
progs=$vm/progs
build_progs
[ $mode = bench ] && build_bench
trap 'cleanup_qemu; exit 130' INT TERM
trap cleanup_qemu EXIT

# ------------------------------------------------------------------- main

t_start=$(date +%s)
boots=()
for rel in "${kernels[@]}"; do
	mkdir -p "$vm/$rel"
	# an older layout (one boot per kernel) left these
	rm -rf "$vm/$rel/logs" "$vm/$rel/console.log" "$vm/$rel/dmesg.log" "$vm/$rel/results" "$vm/$rel/initrd.img"
	build_initramfs "$rel"
	if [ $mode = demo ]; then
		g_tests[demo]=""
		run_group "$rel" demo || exit 1
		exit 0
	fi
	if [ $mode = bench ]; then
		# QEMU 7.2's -icount hangs Debian's 6.1 at "Booting SMP
		# configuration" (seen with sleep=on/off, shift=0/auto, tsc=reliable; 6.12
		# boots): no deterministic transport figures for 6.1; the hook
		# benchmark boots one vCPU, which works (docs/benchmarks.md)
		smp_boots=1
		[ $icount = 1 ] && [[ $rel == 6.1.* ]] && smp_boots=0
		# icount boots and runs slower: the stall watchdog must wait
		# (arm64 under TCG: a workload of the hook benchmark prints after ~30 min)
		export FHOOK_VM_STALL=${FHOOK_VM_STALL:-$([ "$arch" = arm64 ] && echo 3600 || echo 1200)}
		# (the eBPF peers' libraries make the initramfs ~250 MiB)
		g_tests[bench]="" g_smp[bench]=3 g_mem[bench]=2048
		if [ "${FHOOK_TEST_BENCH:-all}" != hooks ] && [ $smp_boots = 0 ]; then
			echo "== $rel: transport benchmark skipped: -icount hangs this kernel's SMP bring-up under QEMU 7.2"
		elif [ "${FHOOK_TEST_BENCH:-all}" != hooks ]; then
			echo "== $rel: transport benchmark, 3 vCPUs$([ $icount = 1 ] && echo ", -icount shift=0 (guest ns = instructions)")"
			run_group "$rel" bench || exit 1
		fi
		# the hook benchmark on one vCPU: every instruction executed
		# during a loop (the consumer's too) is the loop's
		g_tests[bench1]="" g_smp[bench1]=1 g_mem[bench1]=2048
		if [ "${FHOOK_TEST_BENCH:-all}" != transport ]; then
			echo "== $rel: hook benchmark, 1 vCPU$([ $icount = 1 ] && echo ", -icount shift=0 (guest ns = instructions)")"
			run_group "$rel" bench1 || exit 1
		fi
		continue
	fi
	for g in "${run_groups[@]}"; do
		[ -n "$(group_tests "$rel" "$g")" ] || continue
		boots+=("$(($(slow_factor "$rel") * ${g_est[$g]})) $rel $g")
	done
done
[ $mode = bench ] && exit 0
# longest first, so that the parallel jobs end at about the same time
mapfile -t boots < <(printf '%s\n' "${boots[@]}" | sort -s -k1,1nr | cut -d' ' -f2-)
status=0
run_boots "${boots[@]}" || status=1
report "${boots[@]}" && [ $status = 0 ]
