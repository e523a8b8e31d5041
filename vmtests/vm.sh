#!/usr/bin/env bash
# The runner behind `fhook vm` (docs/vm.md): boot one kernel in QEMU with
# busybox, fhook.ko loaded and the fhook CLI, run one command (or a shell)
# on a second serial port wired to this terminal, and exit with its status.
# The kernel's console goes to a log, scanned afterwards: an oops, panic,
# BUG, WARNING or KASAN report is exit status 125 with its lines on
# stderr, no result within the timeout 124.  The fhook CLI checks the
# arguments and runs this with them normalised:
#
#   vm.sh --cli EXE [--arch x86_64|arm64] --kernel NAME|BZIMAGE [--modules DIR] [--add HOST[:GUEST]]...
#         [--smp N] [--mem MB] [--timeout SEC] [--module-args ARGS] [--no-load]
#         [--keep-log FILE] [--accel auto|kvm|tcg] [--out DIR] [-- COMMAND...]
#
# --accel auto (the default) boots under KVM when /dev/kvm opens, and boots
# again under TCG, with a line saying why, when the KVM guest ended before
# its init reported (QEMU exited or aborted, paused on an internal error,
# or spun for FHOOK_VM_KVM_WAIT seconds, default 15).  The outcome is kept
# for `fhook doctor` in ${XDG_CACHE_HOME:-~/.cache}/fhook/kvm-status.
# --out DIR: the guest's /out is DIR on the host (9p), written through, so
# what a command wrote there is in DIR even after a guest panic.
#
# It shares the initramfs, target and QEMU code of the guest suite
# (vmtests/lib).  Nothing is ever loaded on the host.
#
# --arch arm64: Debian's arm64 kernels (build/kernels/targets-arm64) under
# qemu-system-aarch64, always TCG; EXE must be the arm64 CLI (make
# user-arm64); the terminal is a virtio console (/dev/hvc0).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
targets_file=${FHOOK_VM_TARGETS:-}
kmod_dir=$top/build/kmod
cli="" kernel="" moddir="" smp=2 mem=1024 vm_timeout=0 modargs="" load=1 keep_log=""
want=auto out=""
kvm_dev=${FHOOK_VM_KVM_DEV:-/dev/kvm}
kvm_wait=${FHOOK_VM_KVM_WAIT:-15}
kvm_status=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/fhook/kvm-status
adds=() command=()

die() { printf 'fhook vm: error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case $1 in
	--cli) cli=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--modules) moddir=$2; shift 2 ;;
	--add) adds+=("$2"); shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) vm_timeout=$2; shift 2 ;;
	--module-args) modargs=$2; shift 2 ;;
	--no-load) load=0; shift ;;
	--keep-log) keep_log=$2; shift 2 ;;
	--accel) want=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; command=("$@"); break ;;
	*) die "unknown argument '$1' (run it as fhook vm)" ;;
	esac
done

case $want in
auto | kvm | tcg) ;;
*) die "--accel takes auto, kvm or tcg, not '$want'" ;;
esac
case ${arch:=x86_64} in
x86_64) targets_file=${targets_file:-$top/build/kernels/targets} ;;
arm64)
	targets_file=${targets_file:-$top/build/kernels/targets-arm64}
	[ $want = kvm ] && die "--accel kvm: an arm64 guest on this host is emulated (TCG) only"
	want=tcg ;;
*) die "--arch takes x86_64 or arm64, not '$arch'" ;;
esac

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

qemu=$(qemu_binary)
command -v "$qemu" > /dev/null || die "$qemu not found: run scripts/setup.sh (or apt-get install qemu-system-x86 qemu-system-arm)"
if [ "$arch" = arm64 ]; then
	busybox=$top/build/kernels/arm64-busybox/bin/busybox
	is_static "$busybox" || die "no arm64 static busybox: run scripts/setup.sh"
	readelf -h "$cli" 2> /dev/null | grep -q AArch64 || die "$cli is not an arm64 program: the arm64 CLI is make user-arm64's build/user-arm64/fhook"
else
	busybox=$(command -v busybox || echo /bin/busybox)
	is_static "$busybox" || busybox=/bin/busybox
	is_static "$busybox" || die "no static busybox: apt-get install busybox-static"
fi
is_static "$cli" || die "$cli is not statically linked: the guest has no shared libraries"

# the kernel: a bzImage of the user's, or a target of scripts/setup.sh
if [ -f "$kernel" ]; then
	vmlinuz=$kernel
	rel=custom
	kmods=""
	[ -n "$moddir" ] || [ $load = 0 ] ||
		die "--kernel $kernel needs --modules DIR with fhook.ko built for it (make kmod KDIR=...), or --no-load"
else
	[ -f "$targets_file" ] ||
		die "no target kernels ($targets_file): run 'sudo make setup' (scripts/setup.sh) first, or give --kernel BZIMAGE"
	read_targets
	rel=$(target_named "$kernel" || true)
	[ -n "$rel" ] || die "no kernel '$kernel' (have: ${all_rels[*]}, 6.1, 6.12, debug, or a bzImage path)"
	vmlinuz=${t_vmlinuz[$rel]}
	kmods=${t_moddir[$rel]}
	[ -f "$vmlinuz" ] || die "$vmlinuz missing: run 'sudo make setup' (scripts/setup.sh)"
	if [ -z "$moddir" ]; then	# (build/kmod's, built now if missing)
		moddir=$kmod_dir/$rel
		if [ $load = 1 ] && [ ! -f "$moddir/fhook.ko" ]; then
			[ -d "${t_hdr[$rel]}" ] || die "no fhook.ko for $rel and no headers to build it: run 'make kmod'"
			echo "fhook vm: building fhook.ko for $rel" >&2
			cross=()
			[ "$arch" = arm64 ] && cross=(CROSS_COMPILE=aarch64-linux-gnu-)
			make -s -C "$top" kmod KDIR="${t_hdr[$rel]}" "${cross[@]}" >&2 || die "building fhook.ko for $rel failed"
		fi
	fi
fi
[ $load = 0 ] || [ -f "$moddir/fhook.ko" ] || die "no fhook.ko in $moddir"

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
# the terminal: arm64's virt board has one serial port (the console), so a
# virtio console (hvc0), a module on 6.1; x86's second serial port
: > "$stage/fhook/mods/order"
termdev=/dev/ttyS1 term=(-serial chardev:cmd)
if [ "$arch" = arm64 ]; then
	termdev=/dev/hvc0 term=(-device virtio-serial-pci -device virtconsole,chardev=cmd)
	for m in virtio_pci virtio_console; do
		[ -z "$kmods" ] && break
		add_module "$kmods" "$m" "$stage" || die "the kernel's $m module is not in $kmods"
	done
fi
# --out: 9p over virtio, with the modules it needs where they are modules
if [ -n "$out" ]; then
	mkdir -p "$out" || die "--out $out: cannot create it"
	out=$(cd "$out" && pwd)
	for m in 9p 9pnet_virtio virtio_pci; do
		[ -z "$kmods" ] && break	# a bzImage of the user's: built in, or no /out
		add_module "$kmods" "$m" "$stage" ||
			die "--out needs the kernel's $m module, not found in $kmods"
	done
fi
# a command whose output the host captures sees a pipe, not a terminal
# (tested here, before any redirection: fd 1 is the caller's)
tty=""
[ -t 1 ] && tty=1
{
	printf "OUT='%s'\n" "$([ -n "$out" ] && echo 1)"
	printf "TTY='%s'\n" "$tty"
	printf "TERMDEV='%s'\n" "$termdev"
} >> "$stage/fhook/vm.conf"
[ ${#command[@]} -gt 0 ] && printf '%s\n' "${command[*]}" > "$stage/fhook/vm.cmd"
pack_initramfs "$stage" "$work/initrd.img"

# boot ACCEL: run the guest under ACCEL ("kvm", or the suite's TCG),
# console on the first serial port (a log), the command's terminal on the
# second; qrc is QEMU's status.  Under KVM a watcher stops QEMU when it
# reports an internal error (nested virtualisation that cannot emulate an
# instruction makes QEMU pause the guest, not exit), or when the guest's
# init has not started after $kvm_wait s (a KVM that spins).
boot() {
	local a=$1 text=${1%%,*} watcher=""
	echo "fhook vm: booting $rel (${text^^}, $smp vCPUs, $mem MiB)" >&2
	accel=$a qemu_base "$rel" "$vmlinuz" "$work/initrd.img" "$smp" "$mem"
	: > "$work/console.log"
	: > "$work/qemu.err"
	rm -f "$work/qemu.pid" "$work/kvm_why"
	local share=()
	# shellcheck disable=SC2054 # (commas inside -virtfs options)
	[ -n "$out" ] && share=(-virtfs "local,path=$out,mount_tag=fhookout,security_model=none,id=fhookout")
	# shellcheck disable=SC2054 # (commas inside -chardev options)
	qargs=("${qemu_cmd[@]}" -display none -monitor none -pidfile "$work/qemu.pid" "${share[@]}"
		-serial "file:$work/console.log" -chardev stdio,id=cmd,signal=off "${term[@]}"
		-append "$qemu_append loglevel=5 ${FHOOK_VM_APPEND:-}")
	if [ "$text" = kvm ]; then
		(
			ticks=0
			while sleep 0.5; do
				[ -f "$work/qemu.pid" ] || continue
				kill -0 "$(cat "$work/qemu.pid")" 2> /dev/null || break
				ticks=$((ticks + 1))
				if grep -q 'KVM internal error\|emulation failure' "$work/qemu.err"; then
					grep -m1 'KVM internal error\|emulation failure' "$work/qemu.err" > "$work/kvm_why"
				elif [ $ticks -ge $((kvm_wait * 2)) ] && ! grep -q FHOOK-VM-INIT "$work/console.log"; then
					echo "the guest's init did not start within $kvm_wait s" > "$work/kvm_why"
				fi
				if [ -e "$work/kvm_why" ]; then
					kill "$(cat "$work/qemu.pid")"
					break
				fi
			done
		) &
		watcher=$!
	fi
	set +e
	# (the outer 2>: not bash's "Aborted" line when QEMU aborts; its
	# status and its own words in qemu.err say it)
	if [ "$vm_timeout" != 0 ]; then
		{ timeout --foreground --kill-after=10 "$vm_timeout" "${qargs[@]}" 2> "$work/qemu.err"; } 2> /dev/null
	else
		{ "${qargs[@]}" 2> "$work/qemu.err"; } 2> /dev/null
	fi
	qrc=$?
	set -e
	if [ -n "$watcher" ]; then
		kill "$watcher" 2> /dev/null || true
		wait "$watcher" 2> /dev/null || true
	fi
	return 0
}

# kvm_failure: why the KVM boot just made ended before the guest's init
# reported (empty when it did report: the command ran, whatever it did)
kvm_failure() {
	grep -q FHOOK-VM-INIT "$work/console.log" && return 0
	if [ -s "$work/kvm_why" ]; then
		cat "$work/kvm_why"
	elif grep -q -m1 . "$work/qemu.err"; then
		# QEMU's first complaint, e.g. "failed to set MSR 0x10a to 0x69"
		# (an error before any warnings it printed first)
		{ grep -m1 -i 'error\|fail\|assert' "$work/qemu.err" || grep -m1 . "$work/qemu.err"; } |
			sed 's/^qemu-system-[a-z0-9_]*: //; s/^error: //'
	else
		echo "QEMU exited with status $qrc before the guest's init started"
	fi
}

# note_kvm works|fails [WHY]: what fhook doctor reports of KVM on this host
note_kvm() {
	mkdir -p "$(dirname "$kvm_status")" 2> /dev/null &&
		printf '%s %s %s\n' "$1" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${2:-}" > "$kvm_status" 2> /dev/null ||
		true
}

kvm_usable() { [ -r "$kvm_dev" ] && [ -w "$kvm_dev" ]; }

# the accelerator: --accel, or FHOOK_VM_ACCEL (any -accel value, tests);
# auto is KVM when /dev/kvm opens, TCG when it does not or KVM failed
if [ -n "${FHOOK_VM_ACCEL:-}" ] || [ $want = tcg ]; then
	boot "$accel"
elif [ $want = kvm ]; then
	kvm_usable || die "--accel kvm: $kvm_dev is missing or not read-writable for this user"
	boot kvm
	why=$(kvm_failure)
	if [ -n "$why" ]; then
		note_kvm fails "$why"
		die "KVM did not boot the guest: $why (--accel tcg, or leave --accel out to fall back)"
	fi
	note_kvm works
elif kvm_usable; then
	boot kvm
	why=$(kvm_failure)
	if [ -n "$why" ]; then
		note_kvm fails "$why"
		echo "fhook vm: KVM does not work here ($why): booting again under TCG" >&2
		boot "$accel"
	else
		note_kvm works
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
if grep -q FHOOK-VM-OUTFAIL "$log"; then
	echo "fhook vm: mounting /out (9p) failed in the guest:" >&2
	grep -v 'FHOOK-VM' "$log" | tail -n 5 >&2
	exit 1
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
	echo "fhook vm: the guest stopped without a result (qemu exit $qrc$([ -s "$work/kvm_why" ] && echo "; KVM: $(cat "$work/kvm_why")")); last console lines:" >&2
	tail -n 20 "$log" >&2
	exit 125
fi
exit "$rc"
