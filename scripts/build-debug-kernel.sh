#!/usr/bin/env bash
# Build the debug guest kernel (KASAN, lockdep, kmemleak, DEBUG_LIST,
# DEBUG_OBJECTS, lockup/hung-task/RCU-stall detectors + everything fhook
# needs) from Debian's linux-source-6.1 package, once per machine.
#
# Cached outside the clone, in $FHOOK_CACHE (default /var/cache/fhook):
#   debug-kernel/<source version>-<key>/
# where <key> hashes what the build depends on: the config fragment, the
# compiler's version and the recipe below (RECIPE: raise it when the steps
# change).  Each entry is sealed by a MANIFEST of its files' sha256
# (scripts/lib/kcache.sh); a partial or corrupt entry is removed and built
# again, never used.  A second run with the same inputs only checks the
# hashes (a few seconds).  Prints the target line for build/kernels/targets:
#   <release> <build tree> <bzImage> <modules dir>
set -euo pipefail

RECIPE=2
top=$(cd "$(dirname "$0")/.." && pwd)
frag="$top/scripts/debug-kernel.config"
cache=${FHOOK_CACHE:-/var/cache/fhook}/debug-kernel
say() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=scripts/lib/kcache.sh
. "$top/scripts/lib/kcache.sh"

tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) ||
	die "linux-source-6.1 is not installed (scripts/setup.sh installs it)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
compiler=$(gcc --version | head -n 1)
key=$( { cat "$frag"; echo "$compiler"; echo "recipe $RECIPE"; } | sha256sum | cut -c1-12)
dir="$cache/$srcver-$key"
src="$dir/linux-source-6.1"

mkdir -p "$cache" || die "cannot create $cache (root, or FHOOK_CACHE=DIR)"
# one build at a time per cache (two CI runs on one machine)
exec 8> "$cache/.lock"
flock 8

state=$(kcache_state "$dir")
case $state in
valid) say "cached: $dir (hashes checked)" ;;
partial | corrupt) say "$state cache entry $dir: building again" ;;
esac
if [ "$state" != valid ]; then
	# other entries are older inputs: one kernel tree is kept (several GiB)
	find "$cache" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
	mkdir -p "$dir"
	say "unpacking linux-source-6.1 $srcver"
	tar -C "$dir" -xf "$tarball"
	cd "$src"
	make -s x86_64_defconfig >/dev/null
	make -s kvm_guest.config >/dev/null
	scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null
	make -s olddefconfig >/dev/null
	# every line of the fragment must have survived olddefconfig
	bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF "$line" .config || { say "not honoured: $line"; bad=1; } ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			! grep -q "^$opt=[ym]" .config || { say "not honoured: $line"; bad=1; } ;;
		esac
	done < "$frag"
	[ "$bad" = 0 ] || die "config fragment not honoured"
	say "building in $dir (about 10 minutes on 2 cores)"
	start=$(date +%s)
	make -j"$(nproc)" -s bzImage modules_prepare modules >"$dir/build.log" 2>&1 ||
		{ tail -30 "$dir/build.log" >&2; die "kernel build failed (log: $dir/build.log)"; }
	make -s modules_install INSTALL_MOD_PATH="$dir/install" INSTALL_MOD_STRIP=1 >/dev/null
	say "built in $(( $(date +%s) - start )) s"
	# what booting it and building modules against it read: the image,
	# vmlinux (module BTF), the config and symbols, the generated headers,
	# the build's host programs and the installed modules
	cd "$dir"
	kcache_seal "$dir" linux-source-6.1/arch/x86/boot/bzImage linux-source-6.1/vmlinux \
		linux-source-6.1/.config linux-source-6.1/Module.symvers \
		linux-source-6.1/include/generated linux-source-6.1/include/config/auto.conf \
		linux-source-6.1/include/config/kernel.release linux-source-6.1/scripts/mod/modpost \
		linux-source-6.1/scripts/basic/fixdep install ||
		die "cannot seal $dir"
fi

rel=$(cat "$src/include/config/kernel.release")
echo "$rel $src $src/arch/x86/boot/bzImage $dir/install/lib/modules/$rel"
