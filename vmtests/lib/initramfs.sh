# shellcheck shell=bash
# The guests' initramfs: one base archive per kernel (busybox, fhook.ko,
# the CLI, test modules, programs, tests) and a small /fhook/config archive
# per boot appended to it; `fhook vm`'s (vmtests/vm.sh) from the same base.
# Sourced by vmtests/run.sh and vm.sh, which set the variables named here.

# unpack_module SRC DEST: copy a .ko, decompressing .xz/.zst/.gz
unpack_module() {
	case $1 in
	*.ko.xz) xz -dc "$1" > "$2" ;;
	*.ko.zst) zstd -qdc "$1" > "$2" ;;
	*.ko.gz) gzip -dc "$1" > "$2" ;;
	*.ko) cp "$1" "$2" ;;
	*) return 1 ;;
	esac
}

# find_module MODDIR NAME: path of NAME.ko* (- and _ are the same)
find_module() {
	local pat=${2//[-_]/[-_]}
	find "$1/kernel" -name "$pat.ko" -o -name "$pat.ko.*" 2>/dev/null | head -n 1
}

# add_module MODDIR NAME STAGE: NAME and its dependencies into STAGE/fhook/mods,
# dependencies first, appended to STAGE/fhook/mods/order
add_module() {
	local moddir=$1 name=$2 stage=$3 path dep ko
	ko=${name//-/_}.ko
	grep -q "^$ko" "$stage/fhook/mods/order" 2>/dev/null && return 0
	if grep -Eq "/${name//[-_]/[-_]}\.ko(\.[a-z]+)?$" "$moddir/modules.builtin" 2>/dev/null; then
		return 0	# built in
	fi
	path=$(find_module "$moddir" "$name")
	[ -n "$path" ] || return 1
	unpack_module "$path" "$stage/fhook/mods/$ko" || return 1
	for dep in $(modinfo -F depends "$stage/fhook/mods/$ko" | tr ',' ' '); do
		add_module "$moddir" "$dep" "$stage" || return 1
	done
	echo "$ko ${4:-}" >> "$stage/fhook/mods/order"
}

is_builtin() { grep -Eq "/${2//[-_]/[-_]}\.ko(\.[a-z]+)?$" "$1/modules.builtin" 2>/dev/null; }

# stage_peer STAGE EXE: a host program for fhook bench (bpftrace,
# funclatency) in STAGE/fhook/peers/bin, and the shared libraries it loads
# at their host paths (the loader's default directories)
stage_peer() {
	local stage=$1 exe=$2 lib
	mkdir -p "$stage/fhook/peers/bin"
	cp "$exe" "$stage/fhook/peers/bin/"
	for lib in $(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[ -e "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}

# stage_peer_root STAGE ROOT EXE: the same for a program of another CPU
# unpacked under ROOT (build/kernels/arm64-peers): its libraries, found by
# their DT_NEEDED names in ROOT's multiarch directories, and its loader
stage_peer_root() {
	local stage=$1 root=$2 exe=$3 todo lib dir found ma=aarch64-linux-gnu
	mkdir -p "$stage/fhook/peers/bin" "$stage/usr/lib/$ma" "$stage/lib"
	cp "$root$exe" "$stage/fhook/peers/bin/"
	cp -L "$root/lib/ld-linux-aarch64.so.1" "$stage/lib/"
	todo=("$root$exe")
	while [ ${#todo[@]} -gt 0 ]; do
		for lib in $(readelf -d "${todo[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[ -e "$stage/usr/lib/$ma/$lib" ] && continue
			found=""
			for dir in "$root/lib/$ma" "$root/usr/lib/$ma"; do
				[ -e "$dir/$lib" ] && found=$dir/$lib && break
			done
			[ -n "$found" ] || { echo "stage_peer_root: $lib of ${todo[0]#"$root"} not in $root" >&2; return 1; }
			cp -L "$found" "$stage/usr/lib/$ma/$lib"
			todo+=("$stage/usr/lib/$ma/$lib")
		done
		todo=("${todo[@]:1}")
	done
}

# guest_copy SRC DST: SRC without its DWARF, which no guest reads (kernel
# and user stacks are named from kallsyms and symbol tables; errors
# --lines reads fhook_testmod.ko's, copied whole): the CLI's 124 MB are
# 14 MB, fhook.ko's 10 MB under 1 MB, and the kernel unpacks the
# initramfs in 1-3 s instead of 4-13 s a boot (the debug kernel the
# latter).  A signed module, or a file this machine's strip cannot read,
# is copied as it is.
guest_copy() {
	local strip=strip
	[ "${arch:-x86_64}" = arm64 ] && strip=aarch64-linux-gnu-strip
	if [[ $1 == *.ko ]] && tail -c 28 "$1" | grep -q 'Module signature appended'; then
		cp "$1" "$2"
	elif ! "$strip" --strip-debug -o "$2" "$1" 2> /dev/null; then
		cp "$1" "$2"
	fi
}

# stage_base STAGE KO: what every guest has: busybox, /etc/passwd, group
# and hostname, the fhook.ko at KO (if there) in /fhook, the CLI as /bin/fhook
stage_base() {
	local stage=$1 ko=$2
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc} \
		"$stage"/fhook/{bin,mods}
	cp "$busybox" "$stage/bin/busybox"
	[ -f "$ko" ] && guest_copy "$ko" "$stage/fhook/fhook.ko"
	[ -x "$cli" ] && guest_copy "$cli" "$stage/bin/fhook"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		> "$stage/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$stage/etc/group"
	echo fhook-vm > "$stage/etc/hostname"
	[ "$(id -u)" = 0 ] && mknod -m 600 "$stage/dev/console" c 5 1
	return 0
}

# pack_initramfs STAGE OUT: STAGE as a gzipped newc archive
pack_initramfs() {
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$2.tmp"
	mv "$2.tmp" "$2"
}

# build_initramfs REL: the kernel's base initramfs, $vm/REL/base.cpio.gz
# (everything but /fhook/config, which each boot appends: group_initrd)
build_initramfs() {
	local rel=$1 stage moddir modtest="" kind="" m
	stage=$vm/$rel/root
	moddir=${t_moddir[$rel]}
	stage_base "$stage" "$kmod_dir/$rel/fhook.ko"
	mkdir -p "$stage/fhook/tests"
	install -m 755 "$here/guest/init" "$stage/init"
	cp "$here/guest/lib.sh" "$here/guest/runner.sh" "$here/guest/demo.sh" "$here/guest/bench.sh" "$here/guest/bench-hooks.sh" \
		"$here/guest/learn.sh" "$here/guest/tests.list" "$top/packaging/udev/60-fhook.rules" "$stage/fhook/"
	# the lessons, for the learn_* tests
	mkdir -p "$stage/fhook/learn"
	cp "$top"/docs/learn/*.md "$stage/fhook/learn/"
	cp "$here"/guest/tests/*.sh "$stage/fhook/tests/"
	cp "$progs"/* "$stage/fhook/bin/"
	# the kernel's config, which a Debian install has as /boot/config-REL
	# (the guest has no /boot: test doctor puts it there)
	[ -f "${t_hdr[$rel]}/.config" ] && cp "${t_hdr[$rel]}/.config" "$stage/fhook/kconfig"
	[ -f "$testmod_dir/$rel/fhook_testmod.ko" ] &&
		cp "$testmod_dir/$rel"/fhook_*.ko "$stage/fhook/"
	# its source, the witness of errors --lines
	cp "$here/testmod/fhook_testmod.c" "$stage/fhook/"
	# modules of the hook API: the examples and the API's tests
	for m in "$top"/build/examples/"$rel"/*.ko "$top"/build/khooktest/"$rel"/*.ko; do
		[ -f "$m" ] && cp "$m" "$stage/fhook/"
	done
	if [ $mode = bench ]; then
		mkdir -p "$stage/fhook/bench"
		cp "$bench/fhook-bench-transport" "$bench/ringbuf.bpf.o" \
			"$bench/fhook-bench-stream" "$bench/stream.bpf.o" "$stage/fhook/bench/"
		# fhook bench's eBPF peers and trace-cmd, with their shared libraries
		local peer p peers=$top/build/kernels/arm64-peers/root
		for peer in bpftrace funclatency runqlat trace-cmd; do
			if [ "$arch" = arm64 ]; then
				for p in /usr/bin/$peer /usr/sbin/$peer; do
					[ -x "$peers$p" ] && stage_peer_root "$stage" "$peers" "$p"
				done
			else
				peer=$(PATH=$PATH:/usr/sbin:/sbin command -v "$peer") && stage_peer "$stage" "$peer"
			fi
		done
	fi

	# the module for the :mod: test: loop, else brd
	: > "$stage/fhook/mods/order"
	if [ -n "${FHOOK_VM_MODTEST:-}" ]; then
		set -- "$FHOOK_VM_MODTEST"
	else
		set -- loop brd
	fi
	for m in "$@"; do
		is_builtin "$moddir" "$m" && continue
		: > "$stage/fhook/mods/order"
		rm -f "$stage"/fhook/mods/*.ko
		case $m in
		brd) add_module "$moddir" brd "$stage" "rd_nr=1 rd_size=4096" || continue ;;
		*) add_module "$moddir" "$m" "$stage" || continue ;;
		esac
		modtest=$m kind=$m
		break
	done
	[ -n "$modtest" ] || : > "$stage/fhook/mods/order"
	printf "MODTEST_MOD='%s'\nMODTEST_KIND='%s'\n" "$modtest" "$kind" > "$stage/fhook/modtest"

	pack_initramfs "$stage" "$vm/$rel/base.cpio.gz"
}

# group_initrd REL GROUP OUT: the base initramfs plus this boot's
# /fhook/config (the kernel unpacks concatenated archives in order)
group_initrd() {
	local rel=$1 g=$2 out=$3 cstage
	cstage=$vm/$rel/$g/cfgroot
	rm -rf "$cstage"
	mkdir -p "$cstage/fhook"
	{
		cat "$vm/$rel/root/fhook/modtest"
		cat <<EOC
REL='$rel'
MODE='$mode'
VERBOSE='$verbose'
GROUP='$g'
TESTS='$(group_tests "$rel" "$g")'
SLOW='$(slow_factor "$rel")'
ICOUNT='$icount'
EOC
		# knobs for the tests, e.g. FHOOK_TEST_FUZZ_SEED=123
		local v
		for v in $(compgen -e | grep '^FHOOK_TEST_[A-Z0-9_]*$' || true); do
			printf "%s='%s'\n" "$v" "${!v//\'/}"
		done
	} > "$cstage/fhook/config"
	cat "$vm/$rel/base.cpio.gz" > "$out.tmp"
	(cd "$cstage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >> "$out.tmp"
	mv "$out.tmp" "$out"
}
