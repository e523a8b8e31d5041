#!/usr/bin/env bash
# The whole fhook test suite on a fresh Debian bookworm machine (as root):
# setup (packages + target kernels), build, style gates, host unit tests,
# the Debian packages (lintian, DKMS builds), then the guest suite on every
# target kernel, and its arm64 part on Debian's arm64 kernels.  Exit
# status 0 = all green.
#
#   scripts/test.sh          CI's suite: each guest test where it must run
#                            (vmtests/guest/tests.list: module code on every
#                            kernel, userspace-only behaviour once)
#   scripts/test.sh --full   every guest test on every kernel (make test-full)
#
# It ends with a table of its phases and the 15 slowest guest tests, pass
# or fail, so that the next person sees where the time goes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
case ${1:-} in
--full) export FHOOK_VM_FULL=1 ;;
"") ;;
*) echo "usage: scripts/test.sh [--full]" >&2; exit 2 ;;
esac
start=$(date +%s)
phases=()

# phase NAME COMMAND...: run it, note its seconds
phase() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	"$@" || rc=$?
	phases+=("$name $(( $(date +%s) - t0 )) $rc")
	return $rc
}

summary() {
	local p name secs rc
	echo
	echo "fhook: where the time went"
	printf '  %-14s %6s  %s\n' phase seconds status
	for p in "${phases[@]}"; do
		read -r name secs rc <<< "$p"
		printf '  %-14s %6d  %s\n' "$name" "$secs" "$([ "$rc" = 0 ] && echo ok || echo "FAILED ($rc)")"
	done
	printf '  %-14s %6d\n' total $(( $(date +%s) - start ))
	# guest-side seconds of each test of this run (build/vm/REL/GROUP/results)
	local results
	results=$(find build/vm -mindepth 3 -maxdepth 3 -name results -newermt "@$start" 2> /dev/null || true)
	[ -n "$results" ] || return 0
	echo "fhook: the 15 slowest guest tests (seconds in the guest)"
	for r in $results; do
		awk -v rel="$(basename "$(dirname "$(dirname "$r")")")" \
			'$1 == "result" { printf "  %6d  %-22s %s\n", $4, rel, $2 }' "$r"
	done | sort -rn | head -n 15
}
trap summary EXIT

phase setup bash scripts/setup.sh
# the machine's compile cache (a warm one: make warm)
. scripts/lib/ccache-env.sh
# (-j: the modules' Kbuild runs for six kernels one after the other; its
# files compile in parallel, 81 -> 51 s a kernel on 2 CPUs)
phase build make -j"$(nproc)" all
# fhook vm's own tests (one QEMU, one core) beside the mostly
# single-threaded phases that follow (checkpatch, ctest, lintian, dkms,
# the packages' guest boots): 2 of CI's minutes back.  Its output comes
# out, whole, once it is waited for.
vmc_log=build/vm-command.log
vmc_t0=$(date +%s)
bash vmtests/vm_test.sh > "$vmc_log" 2>&1 &
vmc_pid=$!
# vm_command_wait: its output, its phase row, its status
vm_command_wait() {
	local rc=0
	wait "$vmc_pid" || rc=$?
	cat "$vmc_log"
	phases+=("vm-command $(( $(date +%s) - vmc_t0 )) $rc")
	return $rc
}
phase lint make lint || { vm_command_wait || true; exit 1; }
phase host-tests make test-host || { vm_command_wait || true; exit 1; }
phase packages make test-package || { vm_command_wait || true; exit 1; }
vm_command_wait
phase guest-tests bash vmtests/run.sh
# arm64 (docs/arm64.md): the tests marked ",arm64" on both arm64 kernels
# (6.1's ftrace gives full registers, 6.12's the arguments and direct
# calls: each runs code of kmod/arch/arm64 the other does not); --full:
# every test on both
[ ! -f build/kernels/targets-arm64 ] || phase guest-arm64 bash vmtests/run.sh --arch arm64
echo "fhook: test suite passed in $(( $(date +%s) - start )) s"
