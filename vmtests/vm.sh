#!/usr/bin/env bash
# The runner behind `fhook vm` (docs/vm.md): boot one kernel in QEMU with
# busybox, fhook.ko loaded and the fhook CLI, run one command (or a shell)
# on a second serial port wired to this terminal, and exit with its status.
# The kernel's console goes to a log, scanned afterwards: an oops, panic,
# BUG, WARNING or KASAN report is exit status 125 with its lines on
# stderr, no result within the timeout 124.  The fhook CLI checks the
# arguments and runs this with them normalised:
#
#   vm.sh --cli EXE --kernel NAME|BZIMAGE [--modules DIR] [--add HOST[:GUEST]]...
#         [--smp N] [--mem MB] [--timeout SEC] [--module-args ARGS] [--no-load]
#         [--keep-log FILE] [-- COMMAND...]
#
# It shares the initramfs, target and QEMU code of the guest suite
# (vmtests/lib).  Nothing is ever loaded on the host.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
targets_file=${FHOOK_VM_TARGETS:-$top/build/kernels/targets}
kmod_dir=$top/build/kmod
cli="" kernel="" moddir="" smp=2 mem=1024 vm_timeout=0 modargs="" load=1 keep_log=""
adds=() command=()

die() { printf 'fhook vm: error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--cli) cli=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--modules) moddir=$2; shift 2 ;;
	--add) adds+=("$2"); shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) vm_timeout=$2; shift 2 ;;
	--module-args) modargs=$2; shift 2 ;;
	--no-load) load=0; shift ;;
	--keep-log) keep_log=$2; shift 2 ;;
	--) shift; command=("$@"); break ;;
	*) die "unknown argument '$1' (run it as fhook vm)" ;;
	esac
done

# shellcheck source=vmtests/lib/targets.sh
. "$here/lib/targets.sh"
# shellcheck source=vmtests/lib/artifacts.sh
. "$here/lib/artifacts.sh"
# shellcheck source=vmtests/lib/initramfs.sh
. "$here/lib/initramfs.sh"
# shellcheck source=vmtests/lib/qemu.sh
. "$here/lib/qemu.sh"
# shellcheck source=vmtests/lib/results.sh
. "$here/lib/results.sh"

command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 not found: run scripts/setup.sh (or apt-get install qemu-system-x86)"
busybox=$(command -v busybox || echo /bin/busybox)
is_static "$busybox" || busybox=/bin/busybox
is_static "$busybox" || die "no static busybox: apt-get install busybox-static"
is_static "$cli" || die "$cli is not statically linked: the guest has no shared libraries"

# the kernel: a bzImage of the user's, or a target of scripts/setup.sh
if [ -f "$kernel" ]; then
	vmlinuz=$kernel
	rel=custom
	[ -n "$moddir" ] || [ $load = 0 ] ||
		die "--kernel $kernel needs --modules DIR with fhook.ko built for it (make kmod KDIR=...), or --no-load"
	[ -z "$moddir" ] || [ $load = 0 ] || [ -f "$moddir/fhook.ko" ] || die "no fhook.ko in $moddir"
else
	[ -f "$targets_file" ] ||
		die "no target kernels ($targets_file): run 'sudo make setup' (scripts/setup.sh) first, or give --kernel BZIMAGE"
	read_targets
	rel=$(target_named "$kernel" || true)
	[ -n "$rel" ] || die "no kernel '$kernel' (have: ${all_rels[*]}, 6.1, 6.12, debug, or a bzImage path)"
	vmlinuz=${t_vmlinuz[$rel]}
	[ -f "$vmlinuz" ] || die "$vmlinuz missing: run 'sudo make setup' (scripts/setup.sh)"
	if [ -z "$moddir" ]; then
		moddir=$kmod_dir/$rel
		if [ $load = 1 ] && [ ! -f "$moddir/fhook.ko" ]; then
			[ -d "${t_hdr[$rel]}" ] || die "no fhook.ko for $rel and no headers to build it: run 'make kmod'"
			echo "fhook vm: building fhook.ko for $rel" >&2
			make -s -C "$top" kmod KDIR="${t_hdr[$rel]}" >&2 || die "building fhook.ko for $rel failed"
		fi
	fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fhook-vm.XXXXXX")
trap 'cleanup_qemu; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
stage=$work/root
stage_base "$stage" "${moddir:-/nonexistent}/fhook.ko"
for m in "${moddir:-/nonexistent}"/*.ko; do	# the other modules of DIR
	[ -f "$m" ] && cp "$m" "$stage/fhook/"
done
install -m 755 "$here/guest/vm-init" "$stage/init"
for spec in "${adds[@]}"; do
	src=${spec%%:*}
	dst=/root/$(basename "$src")
	[[ $spec == *:* ]] && dst=${spec#*:}
	mkdir -p "$stage$(dirname "$dst")"
	cp -a "$src" "$stage$dst"
done
{
	printf "LOAD='%s'\n" "$load"
	printf "MODARGS='%s'\n" "${modargs//\'/}"
} > "$stage/fhook/vm.conf"
[ ${#command[@]} -gt 0 ] && printf '%s\n' "${command[*]}" > "$stage/fhook/vm.cmd"
pack_initramfs "$stage" "$work/initrd.img"

# boot ACCEL: run the guest under ACCEL ("kvm", or the suite's TCG),
# console on the first serial port (a log), the command's terminal on the
# second; qrc is QEMU's status.  Under KVM a watcher stops QEMU when it
# reports an internal error (nested virtualisation that cannot emulate an
# instruction makes QEMU pause the guest, not exit), or when the guest's
# init has not started after 30 s (a KVM that spins): kvm_failed.
boot() {
	local a=$1 text=${1%%,*} watcher=""
	echo "fhook vm: booting $rel (${text^^}, $smp vCPUs, $mem MiB)" >&2
	accel=$a qemu_base "$rel" "$vmlinuz" "$work/initrd.img" "$smp" "$mem"
	: > "$work/console.log"
	: > "$work/qemu.err"
	rm -f "$work/qemu.pid" "$work/kvm_failed"
	# shellcheck disable=SC2054 # (commas inside -chardev options)
	qargs=("${qemu_cmd[@]}" -display none -monitor none -pidfile "$work/qemu.pid"
		-serial "file:$work/console.log" -chardev stdio,id=cmd,signal=off -serial chardev:cmd
		-append "$qemu_append loglevel=5 ${FHOOK_VM_APPEND:-}")
	if [ "$text" = kvm ]; then
		(
			ticks=0
			while sleep 0.5; do
				[ -f "$work/qemu.pid" ] || continue
				kill -0 "$(cat "$work/qemu.pid")" 2> /dev/null || break
				ticks=$((ticks + 1))
				if grep -q 'KVM internal error\|emulation failure' "$work/qemu.err"; then
					: > "$work/kvm_failed"
				elif [ $ticks -ge 60 ] && ! grep -q FHOOK-VM-INIT "$work/console.log"; then
					echo "KVM internal error: the guest did not start within 30 s" >> "$work/qemu.err"
					: > "$work/kvm_failed"
				fi
				if [ -e "$work/kvm_failed" ]; then
					kill "$(cat "$work/qemu.pid")"
					break
				fi
			done
		) &
		watcher=$!
	fi
	set +e
	if [ "$vm_timeout" != 0 ]; then
		timeout --foreground --kill-after=10 "$vm_timeout" "${qargs[@]}" 2> "$work/qemu.err"
	else
		"${qargs[@]}" 2> "$work/qemu.err"
	fi
	qrc=$?
	set -e
	if [ -n "$watcher" ]; then
		kill "$watcher" 2> /dev/null || true
		wait "$watcher" 2> /dev/null || true
	fi
	return 0
}

# KVM when /dev/kvm is there and works (FHOOK_VM_ACCEL chooses), else TCG
if [ -z "${FHOOK_VM_ACCEL:-}" ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	boot kvm
	if [ -e "$work/kvm_failed" ] || grep -q 'failed to initialize kvm\|Could not access KVM' "$work/qemu.err"; then
		echo "fhook vm: KVM does not work here ($(grep -m1 -o 'KVM internal error[^.]*\|failed to initialize kvm[^.]*\|Could not access KVM[^.]*' "$work/qemu.err")): TCG" >&2
		boot "$accel"
	fi
else
	boot "$accel"
fi
[ -s "$work/qemu.err" ] && [ "$qrc" != 0 ] && head -n 5 "$work/qemu.err" >&2
[ -n "$keep_log" ] && cp "$work/console.log" "$keep_log"

log=$work/console.log
bad=$(badness "$log" || true)
rc=$(sed -n 's/.*FHOOK-VM-EXIT \([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -n "$bad" ]; then
	echo "fhook vm: the guest kernel reported a problem ($bad):" >&2
	grep -E -m1 -B3 -A30 "$bad_re" "$log" >&2 || true
	exit 125
fi
if grep -q FHOOK-VM-LOADFAIL "$log"; then
	echo "fhook vm: insmod fhook.ko $modargs failed in the guest:" >&2
	grep -v 'FHOOK-VM' "$log" | tail -n 5 >&2
	exit 1
fi
if [ -z "$rc" ]; then
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "fhook vm: no result within ${vm_timeout}s; last console lines:" >&2
		tail -n 20 "$log" >&2
		exit 124
	fi
	echo "fhook vm: the guest stopped without a result (qemu exit $qrc); last console lines:" >&2
	tail -n 20 "$log" >&2
	exit 125
fi
exit "$rc"
