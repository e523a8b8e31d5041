#!/usr/bin/env bash
# Build the debug guest kernel (KASAN, lockdep, kmemleak, DEBUG_LIST,
# DEBUG_OBJECTS, lockup/hung-task/RCU-stall detectors + everything fhook
# needs) from Debian's linux-source-6.1 package, once per machine.
#
# Cached under build/debug-kernel/<source version>-<config hash>/; a second
# run with the same source and fragment does nothing.  Prints the target
# line for build/kernels/targets on stdout:
#   <release> <build tree> <bzImage> <modules dir>
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
frag="$top/scripts/debug-kernel.config"
say() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { printf 'debug-kernel: error: %s\n' "$*" >&2; exit 1; }

tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) ||
	die "linux-source-6.1 is not installed (scripts/setup.sh installs it)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
hash=$(cat "$frag" "$0" | sha256sum | cut -c1-12)
dir="$top/build/debug-kernel/$srcver-$hash"
src="$dir/linux-source-6.1"

if [ ! -f "$dir/done" ]; then
	rm -rf "$top/build/debug-kernel" && mkdir -p "$dir"
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
	say "building (about 10 minutes on 2 cores)"
	start=$(date +%s)
	make -j"$(nproc)" -s bzImage modules_prepare modules >"$dir/build.log" 2>&1 ||
		{ tail -30 "$dir/build.log" >&2; die "kernel build failed (log: $dir/build.log)"; }
	make -s modules_install INSTALL_MOD_PATH="$dir/install" INSTALL_MOD_STRIP=1 >/dev/null
	say "built in $(( $(date +%s) - start )) s"
	touch "$dir/done"
fi

rel=$(cat "$src/include/config/kernel.release")
echo "$rel $src $src/arch/x86/boot/bzImage $dir/install/lib/modules/$rel"
