#!/usr/bin/env bash
# fhook setup for a Debian bookworm machine (run as root; idempotent).
#
# Installs the toolchain, QEMU, busybox and the headers of the Debian target
# kernels, then fetches the matching kernel images with `apt-get download`
# and unpacks them under build/kernels/ (nothing is installed into /boot).
# The newest available Debian 6.1, 6.12 and 6.12 PREEMPT_RT (rt-amd64)
# kernels are picked at run time, and the arm64 builds of the same 6.1 and
# 6.12 (build/kernels/targets-arm64; FHOOK_NO_ARM64=1 skips them).
#
# A fourth target, a KASAN + lockdep + kmemleak debug kernel, is built from
# Debian's linux-source-6.1 (scripts/build-debug-kernel.sh, ~10 minutes once
# per machine, cached in /var/cache/fhook or $FHOOK_CACHE); FHOOK_NO_DEBUG_KERNEL=1
# skips it.
#
# `setup.sh --demo` (scripts/demo.sh) installs only what building the
# module and the CLI and booting one guest take: the 6.1 kernel, no test
# tools, no debug kernel.  It writes build/kernels/targets only where no
# full setup has written one.
#
# Output: build/kernels/targets, one line per target kernel:
#   <release> <headers or build tree> <kernel image> <modules dir>
set -euo pipefail

profile=full
case "${1:-}" in
--demo) profile=demo ;;
"") ;;
*) echo "usage: setup.sh [--demo]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
cache="$top/build/kernels"
say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get install); try: sudo $0"
command -v apt-get >/dev/null || die "apt-get not found: fhook setup needs Debian bookworm"

export DEBIAN_FRONTEND=noninteractive
lists_age=$(( $(date +%s) - $(stat -c %Y /var/lib/apt/lists/partial 2>/dev/null || echo 0) ))
# (no package list at all, as on a fresh image, whatever the age says)
if [ "${FHOOK_SKIP_APT_UPDATE:-0}" != 1 ] &&
	{ [ "$lists_age" -gt 21600 ] || ! compgen -G '/var/lib/apt/lists/*_Packages*' > /dev/null; }; then
	say "apt-get update"
	apt-get update -qq
fi

# Newest Debian 6.12 release of a flavour (amd64, rt-amd64) that has both
# headers and an unsigned image.
newest_612() {
	local flavour=$1 v
	for v in $(apt-cache search --names-only "^linux-headers-6\\.12\\.[0-9]+\\+deb[0-9]+-$flavour\$" |
		   awk '{print $1}' | sed "s/^linux-headers-//; s/-$flavour\$//" | sort -Vr); do
		if apt-cache show "linux-image-$v-$flavour-unsigned" >/dev/null 2>&1; then
			echo "$v-$flavour"
			return 0
		fi
	done
	return 1
}

rel61=$(apt-cache depends linux-headers-amd64 | awk '/Depends: linux-headers-6\.1\./{print $2; exit}' |
	sed 's/^linux-headers-//')
[ -n "$rel61" ] || die "cannot resolve the Debian 6.1 kernel behind linux-headers-amd64"
if [ $profile = demo ]; then
	kernels=("$rel61")
	# the CLI's build dependencies, QEMU, the guest's initramfs, one kernel
	pkgs=(build-essential cmake ninja-build pkg-config libboost-program-options-dev
	      nlohmann-json3-dev libtomlplusplus-dev libbpf-dev libelf-dev libcapstone-dev zlib1g-dev libzstd-dev
	      libdw-dev liblzma-dev libbz2-dev libtraceevent-dev
	      qemu-system-x86 busybox-static cpio kmod zstd "linux-headers-$rel61")
else
rel612=$(newest_612 amd64) || die "no Debian 6.12 kernel with headers and an unsigned image in apt"
# Debian's PREEMPT_RT kernel: a target, and the reference for the latency
# tracers (it is built with the kernel's own wakeup/timerlat/osnoise/hwlat)
rel612rt=$(newest_612 rt-amd64) || die "no Debian 6.12 PREEMPT_RT kernel with headers and an unsigned image in apt"
kernels=("$rel61" "$rel612" "$rel612rt")
pkgs=(build-essential cmake ninja-build pkg-config ccache
      libboost-program-options-dev libgtest-dev googletest libbenchmark-dev
      qemu-system-x86 busybox-static cpio kmod xz-utils zstd
      clang-format perl linux-source-6.1
      clang libbpf-dev libelf-dev libcapstone-dev zlib1g-dev libzstd-dev nlohmann-json3-dev libtraceevent-dev
      libtomlplusplus-dev
      libdw-dev liblzma-dev libbz2-dev libtracecmd-dev libtracefs-dev trace-cmd libxml2-utils
      help2man go-md2man debhelper dh-dkms dkms lintian rtla
      "linux-headers-$rel61" "linux-headers-$rel612" "linux-headers-$rel612rt")
# the debug kernel (KASAN/lockdep/kmemleak) is built from Debian's source
if [ "${FHOOK_NO_DEBUG_KERNEL:-0}" != 1 ]; then
	pkgs+=(flex bison bc libelf-dev libssl-dev openssl dwarves)
fi
fi
# install_missing PKG...: apt-get install those not installed yet
install_missing() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	say "apt-get install ${missing[*]}"
	# (-q: no progress bars; a line every 25 packages instead)
	apt-get install -y -q --no-install-recommends "${missing[@]}" |
		grep --line-buffered -E '^(Need to get|Unpacking|Setting up) ' |
		awk '/^Need/ { print "setup:   downloading: " $0; fflush() }
		     /^Unpacking/ { if (++n % 25 == 0) { print "setup:   " n " packages unpacked"; fflush() } }
		     /^Setting up/ { if (++u % 25 == 0) { print "setup:   " u " packages set up"; fflush() } }
		     END { print "setup:   " u + 0 " packages installed" }'
}

say "target kernels: ${kernels[*]}"
install_missing "${pkgs[@]}"
# the metrics tests' real Prometheus (and promtool) and Pushgateway
# (docs/fleet.md), installed without starting their services
# (policy-rc.d: no daemon on :9090/:9091 behind the tests' backs)
if [ $profile = full ]; then
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
		install_missing prometheus prometheus-pushgateway
		rm -f /usr/sbin/policy-rc.d
		trap - EXIT
	else
		install_missing prometheus prometheus-pushgateway
	fi
fi

mkdir -p "$cache/debs"
: > "$cache/targets.new"
for rel in "${kernels[@]}"; do
	dest="$cache/$rel"
	if [ ! -f "$dest/boot/vmlinuz-$rel" ]; then
		say "fetching kernel image $rel"
		(cd "$cache/debs" && rm -f "linux-image-$rel-unsigned_"*.deb &&
		 apt-get download -qq "linux-image-$rel-unsigned")
		rm -rf "$dest.tmp"
		dpkg-deb -x "$cache/debs/linux-image-$rel-unsigned_"*.deb "$dest.tmp"
		rm -rf "$dest" && mv "$dest.tmp" "$dest"
	fi
	hdr="/usr/src/linux-headers-$rel"
	[ -f "$hdr/Makefile" ] || die "headers for $rel missing in $hdr"
	echo "$rel $hdr $dest/boot/vmlinuz-$rel $dest/lib/modules/$rel" >> "$cache/targets.new"
done

# arm64 targets (docs/arm64.md): Debian's arm64 6.1 and 6.12 kernels, booted
# under qemu-system-aarch64; their headers unpacked beside the images (an
# arm64 package cannot be installed here) with the kbuild host tools of the
# amd64 headers installed above, the module cross-built; the CLI
# cross-built against the :arm64 libraries; an arm64 static busybox.
# Output: build/kernels/targets-arm64, in the format of targets.
if [ $profile = full ] && [ "${FHOOK_NO_ARM64:-0}" != 1 ]; then
	dpkg --print-foreign-architectures | grep -qx arm64 || {
		say "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
		apt-get update -qq
	}
	# (the :arm64 libraries of the CLI's build dependencies, same versions)
	xpkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-system-arm)
	for p in libboost-program-options-dev libbpf-dev libelf-dev libcapstone-dev zlib1g-dev libtomlplusplus-dev \
		 libzstd-dev libtraceevent-dev libdw-dev liblzma-dev libbz2-dev libstdc++-12-dev; do
		xpkgs+=("$p:arm64")
	done
	install_missing "${xpkgs[@]}"
	arm61=${rel61%-amd64}-arm64
	arm612=${rel612%-amd64}-arm64
	: > "$cache/targets-arm64.new"
	for rel in "$arm61" "$arm612"; do
		dest="$cache/$rel"
		hdr="$dest/usr/src/linux-headers-$rel"
		if [ ! -f "$dest/boot/vmlinuz-$rel" ] || [ ! -f "$hdr/Makefile" ]; then
			say "fetching arm64 kernel image and headers $rel"
			(cd "$cache/debs" && rm -f "linux-image-$rel-unsigned_"*.deb "linux-headers-${rel}_"*.deb &&
			 apt-get download -qq "linux-image-$rel-unsigned:arm64" "linux-headers-$rel:arm64")
			rm -rf "$dest.tmp"
			dpkg-deb -x "$cache/debs/linux-image-$rel-unsigned_"*.deb "$dest.tmp"
			dpkg-deb -x "$cache/debs/linux-headers-${rel}_"*.deb "$dest.tmp"
			# the host tools: the amd64 kbuild's, of the same kernel
			kb=$(readlink -f "/usr/src/linux-headers-${rel%-arm64}-amd64/scripts")
			[ -n "$kb" ] || die "no amd64 headers of ${rel%-arm64} to take kbuild's host tools from"
			ln -sfn "$kb" "$dest.tmp/usr/src/linux-headers-$rel/scripts"
			ln -sfn "${kb%/scripts}/tools" "$dest.tmp/usr/src/linux-headers-$rel/tools"
			rm -rf "$dest" && mv "$dest.tmp" "$dest"
		fi
		echo "$rel $hdr $dest/boot/vmlinuz-$rel $dest/lib/modules/$rel" >> "$cache/targets-arm64.new"
	done
	if [ ! -x "$cache/arm64-busybox/bin/busybox" ]; then
		say "fetching busybox-static:arm64"
		(cd "$cache/debs" && rm -f busybox-static_*_arm64.deb && apt-get download -qq busybox-static:arm64)
		rm -rf "$cache/arm64-busybox"
		dpkg-deb -x "$cache/debs/"busybox-static_*_arm64.deb "$cache/arm64-busybox"
	fi
	mv "$cache/targets-arm64.new" "$cache/targets-arm64"
fi

# checkpatch.pl for the style gate (make lint), from the kernel source
# package: only three of its files are needed.
if [ $profile = demo ]; then
	[ -f "$cache/targets" ] || mv "$cache/targets.new" "$cache/targets"
	rm -f "$cache/targets.new"
	say "done (demo: $rel61 only)"
	exit 0
fi

tools="$top/build/tools"
if [ ! -f "$tools/checkpatch/checkpatch.pl" ]; then
	say "extracting checkpatch.pl from linux-source-6.1"
	mkdir -p "$tools/checkpatch"
	tmp=$(mktemp -d)
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$tmp" --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	cp "$tmp"/linux-source-6.1/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch} \
		"$tools/checkpatch/"
	rm -rf "$tmp"
fi

if [ "${FHOOK_NO_DEBUG_KERNEL:-0}" != 1 ]; then
	say "debug kernel (built once per machine, cached in ${FHOOK_CACHE:-/var/cache/fhook})"
	bash "$top/scripts/build-debug-kernel.sh" >> "$cache/targets.new"
fi
mv "$cache/targets.new" "$cache/targets"

say "done; targets in $cache/targets:"
cat "$cache/targets" >&2
