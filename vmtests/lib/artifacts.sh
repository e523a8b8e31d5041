# shellcheck shell=bash
# What the guests need: host tools, the module and the static CLI, a
# static busybox, the guest programs and the benchmark's programs.
# Sourced by vmtests/run.sh, which sets the variables named here.

# the guests' programs' compiler: the guests' CPU's
progs_cc=gcc
[ "${arch:-x86_64}" = arm64 ] && progs_cc=aarch64-linux-gnu-gcc

# is_static FILE: an executable ELF with no program interpreter
is_static() {
	[ -x "$1" ] && readelf -h "$1" > /dev/null 2>&1 &&
		! readelf -l "$1" 2> /dev/null | grep -q 'program interpreter'
}

# check_artifacts: die unless everything a run needs is there; sets busybox
check_artifacts() {
	for tool in "$(qemu_binary)" cpio gzip xz "$progs_cc" readelf modinfo timeout flock pkill awk; do
		command -v "$tool" > /dev/null || die "$tool not found: run scripts/setup.sh"
	done


	if [ $needs_fhook = 1 ]; then
		for rel in "${kernels[@]}"; do
			ko=$kmod_dir/$rel/fhook.ko
			[ -f "$ko" ] || die "${ko#"$top"/} missing: build the module first (make)"
			[ -f "$testmod_dir/$rel/fhook_testmod.ko" ] ||
				die "build/testmod/$rel/fhook_testmod.ko missing: build the modules first (make)"
		done
		[ -x "$cli" ] || die "${cli#"$top"/} missing: build the CLI first (make)"
		is_static "$cli" || die "${cli#"$top"/} is not statically linked: the guest has no shared libraries"
	fi
	if [ "$arch" = arm64 ]; then
		busybox=$top/build/kernels/arm64-busybox/bin/busybox
		is_static "$busybox" || die "no arm64 static busybox: run scripts/setup.sh"
		return 0
	fi
	busybox=$(command -v busybox || echo /bin/busybox)
	is_static "$busybox" || busybox=/bin/busybox
	is_static "$busybox" || die "no static busybox (install busybox-static)"
}

# build_progs: vmtests/progs/*.c, static, with frame pointers (user stacks), into $progs (rebuilt when a
# source, progs.h or the ABI header is newer)
build_progs() {
	progs=$vm/progs$([ "$arch" != arm64 ] || echo -arm64)
	mkdir -p "$progs"
	for bin in "$progs"/*; do	# programs whose source is gone
		[ -e "$bin" ] && [ ! -f "$here/progs/$(basename "$bin" .tmp).c" ] && rm -f "$bin"
	done
	for src in "$here"/progs/*.c; do
		bin=$progs/$(basename "$src" .c)
		if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$top/shared/fhook_abi.h" -nt "$bin" ] || [ "$top/shared/fhook_reasons.h" -nt "$bin" ] ||
		   [ "$here/progs/progs.h" -nt "$bin" ]; then
			"$progs_cc" -static -O2 -fno-omit-frame-pointer -Wall -Werror -I"$top/shared" -o "$bin.tmp" "$src" ||
				die "building $(basename "$src") failed"
			mv "$bin.tmp" "$bin"
		fi
	done

}

# build_bench: the transport benchmark's static consumer and BPF object, and
# fhook bench's BPF streaming peer (fhook-bench-stream, stream.bpf.o), for
# the guests' CPU, into $bench
build_bench() {
	local prog
	bench=$vm/bench$([ "$arch" != arm64 ] || echo -arm64)
	command -v clang > /dev/null || die "clang not found: run scripts/setup.sh"
	mkdir -p "$bench"
	for prog in ringbuf stream; do
		clang -O2 -g -target bpf -I/usr/include/"$("$progs_cc" -print-multiarch)" \
			-c "$here/bench/$prog.bpf.c" -o "$bench/$prog.bpf.o" ||
			die "building $prog.bpf.c failed (clang, libbpf-dev)"
	done
	for prog in fhook-bench-transport fhook-bench-stream; do
		"$progs_cc" -static -O2 -Wall -Werror -I"$top/shared" -I"$here/progs" \
			-o "$bench/$prog" "$here/bench/$prog.c" -lbpf -lelf -lz -lzstd ||
			die "building $prog failed (libbpf-dev, libelf-dev, zlib1g-dev, libzstd-dev)"
	done
}
