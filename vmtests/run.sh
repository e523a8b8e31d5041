#!/usr/bin/env bash
# fhook guest test runner: boots each target kernel in QEMU (TCG) with a
# busybox initramfs holding fhook.ko, the fhook CLI, the helper programs and
# the guest tests, and reports one line per test.  See vmtests/README.md.
#
#   vmtests/run.sh [--kernel REL]... [--filter TEST]... [--quick] [--demo]
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
cli=${FHOOK_VM_CLI:-$top/build/user/fhook}
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
tests marked "debian" in tests.list are left out there (FHOOK_VM_DEBUG_ALL=1
runs them too).
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
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
		     !/^#/ && NF { printf "  %-20s %4ss %s%s\n", $1, $2, $3 == "fhook" ? "" : "(no fhook needed)",
				   $4 == "debian" ? "(not on slow kernels)" : "" }
		     END { print "per group: kmemleak_<group> (kernels with kmemleak), dmesg_<group> (host side)" }' "$tests_list"
		exit 0 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

if [ -z "$njobs" ]; then
	njobs=1
	[ "$(nproc)" -ge 2 ] && njobs=2
fi
[[ $njobs =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive number"

# ---------------------------------------------------------------- targets
[ -f "$targets_file" ] || die "$targets_file missing: run scripts/setup.sh first"
declare -A t_vmlinuz t_moddir
all_rels=()
while read -r rel _hdr vmlinuz moddir; do
	[ -n "$rel" ] || continue
	all_rels+=("$rel")
	t_vmlinuz[$rel]=$vmlinuz
	t_moddir[$rel]=$moddir
done < "$targets_file"
[ ${#all_rels[@]} -gt 0 ] || die "no kernel in $targets_file"
if [ ${#kernels[@]} -eq 0 ]; then
	kernels=("${all_rels[@]}")
	[ $mode = demo ] && kernels=("${all_rels[0]}")
	if [ $mode = bench ]; then	# figures of the kernels users run
		kernels=()
		for rel in "${all_rels[@]}"; do
			[[ $rel == *-kdebug ]] || kernels+=("$rel")
		done
	fi
fi
for rel in "${kernels[@]}"; do
	[ -n "${t_vmlinuz[$rel]:-}" ] || die "kernel '$rel' is not in $targets_file (have: ${all_rels[*]})"
	[ -f "${t_vmlinuz[$rel]}" ] || die "${t_vmlinuz[$rel]} missing: run scripts/setup.sh"
done

# ------------------------------------------------------------------ tests
# tests.list: "@group NAME [smp=N] [mem=MB] [stress]" lines start a group
# (one boot); "name timeout needs [kernels]" lines are its tests, in run
# order.
all_tests=() groups=() needs_fhook=0
declare -A t_needs t_tmo t_group t_kernels g_smp g_mem g_stress g_tests g_est g_slow_append
group=""
while read -r -a f; do
	if [ "${f[0]}" = @group ]; then
		group=${f[1]}
		groups+=("$group")
		g_smp[$group]=2 g_mem[$group]=1024 g_stress[$group]=0 g_tests[$group]="" g_est[$group]=60
		g_slow_append[$group]=""
		for kv in "${f[@]:2}"; do
			case $kv in
			smp=*) g_smp[$group]=${kv#smp=} ;;
			mem=*) g_mem[$group]=${kv#mem=} ;;
			est=*) g_est[$group]=${kv#est=} ;;
			stress) g_stress[$group]=1 ;;
			slow_append=*) g_slow_append[$group]=${kv#slow_append=} ;;
			*) die "tests.list: unknown group attribute '$kv'" ;;
			esac
		done
		continue
	fi
	[ -n "$group" ] || die "tests.list: test '${f[0]}' before the first @group"
	all_tests+=("${f[0]}")
	t_tmo[${f[0]}]=${f[1]}
	t_needs[${f[0]}]=${f[2]}
	t_kernels[${f[0]}]=${f[3]:-all}
	case ${t_kernels[${f[0]}]} in
	all | debian) ;;
	*) die "tests.list: ${f[0]}: kernels must be 'all' or 'debian'" ;;
	esac
	t_group[${f[0]}]=$group
done < <(awk '!/^#/ && NF' "$tests_list")
tests=()
for t in "${all_tests[@]}"; do
	[ $quick = 1 ] && [ "${g_stress[${t_group[$t]}]}" = 1 ] && continue
	if [ ${#filters[@]} -eq 0 ]; then
		tests+=("$t")
		continue
	fi
	for f in "${filters[@]}"; do
		# shellcheck disable=SC2053
		if [[ $t == $f ]]; then
			tests+=("$t")
			break
		fi
	done
done
for f in "${filters[@]}"; do
	found=0
	for t in "${all_tests[@]}"; do
		# shellcheck disable=SC2053
		[[ $t == $f ]] && found=1
	done
	[ $found = 1 ] || die "no test matches '$f' (see vmtests/run.sh --list)"
done
[ $demo = 1 ] && tests=()
[ $demo = 1 ] || [ ${#tests[@]} -gt 0 ] || die "no test selected (--quick skips the stress groups)"
for t in "${tests[@]}"; do
	[ "${t_needs[$t]}" = fhook ] && needs_fhook=1
	g_tests[${t_group[$t]}]+="$t "
done
[ $demo = 1 ] && needs_fhook=1
run_groups=()
for g in "${groups[@]}"; do
	[ -n "${g_tests[$g]}" ] && run_groups+=("$g")
done

# ------------------------------------------------------------- artifacts
for tool in qemu-system-x86_64 cpio gzip xz gcc readelf modinfo timeout flock; do
	command -v "$tool" > /dev/null || die "$tool not found: run scripts/setup.sh"
done

# is_static FILE: an executable ELF with no program interpreter
is_static() {
	[ -x "$1" ] && readelf -h "$1" > /dev/null 2>&1 &&
		! readelf -l "$1" 2> /dev/null | grep -q 'program interpreter'
}

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
busybox=$(command -v busybox || echo /bin/busybox)
is_static "$busybox" || busybox=/bin/busybox
is_static "$busybox" || die "no static busybox (install busybox-static)"

# Multi-threaded TCG (QEMU 7.2) runs stale translated code after the guest
# patches kernel text (text_poke_bp: static keys, static calls, ftrace),
# which oopses 6.12 ("Oops: int3") and livelocks 6.1 within a few dozen
# tracepoint toggles.  Round-robin TCG on one host thread does not.
accel=${FHOOK_VM_ACCEL:-tcg,thread=single}

# slow_factor REL: how much slower than a Debian kernel this one runs under
# TCG (debug kernels: KASAN, lockdep, kmemleak); scales every timeout
slow_factor() {
	if [ -n "${FHOOK_VM_SLOW:-}" ]; then
		echo "$FHOOK_VM_SLOW"
	else
		case $1 in
		*-kdebug) echo 3 ;;
		*) echo 1 ;;
		esac
	fi
}

mkdir -p "$vm"
exec 9> "$vm/.lock"
flock -n 9 || die "another vmtests/run.sh is using $vm"

# -------------------------------------------------------- guest programs
progs=$vm/progs
mkdir -p "$progs"
for bin in "$progs"/*; do	# programs whose source is gone
	[ -e "$bin" ] && [ ! -f "$here/progs/$(basename "$bin" .tmp).c" ] && rm -f "$bin"
done
for src in "$here"/progs/*.c; do
	bin=$progs/$(basename "$src" .c)
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$top/shared/fhook_abi.h" -nt "$bin" ] ||
	   [ "$here/progs/progs.h" -nt "$bin" ]; then
		gcc -static -O2 -Wall -Werror -I"$top/shared" -o "$bin.tmp" "$src" ||
			die "building $(basename "$src") failed"
		mv "$bin.tmp" "$bin"
	fi
done

# the transport benchmark: a static consumer (libbpf) and a BPF object
if [ $mode = bench ]; then
	for tool in clang; do
		command -v "$tool" > /dev/null || die "$tool not found: run scripts/setup.sh"
	done
	mkdir -p "$vm/bench"
	clang -O2 -g -target bpf -I/usr/include/"$(gcc -print-multiarch)" \
		-c "$here/bench/ringbuf.bpf.c" -o "$vm/bench/ringbuf.bpf.o" ||
		die "building ringbuf.bpf.c failed (clang, libbpf-dev)"
	gcc -static -O2 -Wall -Werror -I"$top/shared" -I"$here/progs" \
		-o "$vm/bench/fhook-bench-transport" "$here/bench/fhook-bench-transport.c" \
		-lbpf -lelf -lz -lzstd ||
		die "building fhook-bench-transport failed (libbpf-dev, libelf-dev, zlib1g-dev, libzstd-dev)"
fi

# ------------------------------------------------------------- initramfs
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

# build_initramfs REL: the kernel's base initramfs, $vm/REL/base.cpio.gz
# (everything but /fhook/config, which each boot appends: group_initrd)
build_initramfs() {
	local rel=$1 stage moddir modtest="" kind="" m
	stage=$vm/$rel/root
	moddir=${t_moddir[$rel]}
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc} \
		"$stage"/fhook/{bin,tests,mods}
	cp "$busybox" "$stage/bin/busybox"
	install -m 755 "$here/guest/init" "$stage/init"
	cp "$here/guest/lib.sh" "$here/guest/runner.sh" "$here/guest/demo.sh" "$here/guest/bench.sh" "$here/guest/bench-hooks.sh" \
		"$here/guest/tests.list" "$stage/fhook/"
	cp "$here"/guest/tests/*.sh "$stage/fhook/tests/"
	cp "$progs"/* "$stage/fhook/bin/"
	[ -f "$kmod_dir/$rel/fhook.ko" ] && cp "$kmod_dir/$rel/fhook.ko" "$stage/fhook/"
	[ -f "$testmod_dir/$rel/fhook_testmod.ko" ] &&
		cp "$testmod_dir/$rel"/fhook_*.ko "$stage/fhook/"
	if [ $mode = bench ]; then
		mkdir -p "$stage/fhook/bench"
		cp "$vm/bench/fhook-bench-transport" "$vm/bench/ringbuf.bpf.o" "$stage/fhook/bench/"
		# fhook bench's eBPF peers and trace-cmd, with their shared libraries
		local peer
		for peer in bpftrace funclatency trace-cmd; do
			peer=$(PATH=$PATH:/usr/sbin:/sbin command -v "$peer") && stage_peer "$stage" "$peer"
		done
	fi
	[ -x "$cli" ] && cp "$cli" "$stage/bin/fhook"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		> "$stage/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$stage/etc/group"

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

	[ "$(id -u)" = 0 ] && mknod -m 600 "$stage/dev/console" c 5 1
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$vm/$rel/base.cpio.gz.tmp"
	mv "$vm/$rel/base.cpio.gz.tmp" "$vm/$rel/base.cpio.gz"
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

# ------------------------------------------------------------------ report
# Boots run in parallel (--jobs); each one appends its verdicts to its
# $tally file ("PASS name" per result) and prints each report block in one
# piece, under a lock, so that blocks of different boots never interleave.
tally=/dev/null

line() {	# line REL NAME STATUS [DETAIL]
	local rel=$1 name=$2 st=$3 detail=${4:-} dots word
	dots=$(printf '%*s' $((26 - ${#name} > 3 ? 26 - ${#name} : 3)) '' | tr ' ' '.')
	case $st in
	PASS) word=ok ;;
	SKIP) word=SKIP ;;
	*) word=FAIL st=FAIL ;;
	esac
	echo "$st $name${detail:+ $detail}" >> "$tally"
	printf '%-22s %s %s %s%s\n' "$rel" "$name" "$dots" "$word" "${detail:+ $detail}"
}

indent() { sed 's/^/      | /'; }

# say: print stdin in one piece (the other boots wait)
say() {
	local block
	block=$(cat)
	[ -n "$block" ] || return 0
	flock "$vm/.out.lock" printf '%s\n' "$block"
}

# Kernel messages that fail the test during which they appear (and the
# boot, for dmesg_<group>).  KASAN/UBSAN/kmemleak reports, lockdep splats,
# WARN/BUG/oops, RCU stalls, lockups, hung tasks, OOM kills, ftrace bugs.
bad_re='KASAN|UBSAN|BUG:|kernel BUG|WARNING:|Oops|general protection|Call Trace|[Kk]ernel panic'
bad_re+='|possible circular locking|possible recursive locking|inconsistent lock state|INFO: lockdep'
bad_re+='|suspicious RCU usage|self-detected stall|detected stalls|rcu_sched .*stall|soft lockup|hard LOCKUP'
bad_re+='|blocked for more than|kmemleak: .*suspected memory leak|ODEBUG:|oom-killer|Out of memory'
bad_re+='|ftrace bug|ftrace faulted|ftrace failed|list_add corruption|list_del corruption|refcount_t: '

# badness FILE: the first bad kernel line of FILE (empty if none)
badness() { grep -E -m1 "$bad_re" "$1" 2> /dev/null | cut -c1-160; }

# parse_console REL DIR: read the guest's serial console on stdin, keep it
# in DIR/console.log, print each result as it arrives.  A test whose kernel
# messages (the FHOOK-KMSG section the guest prints before its result) have
# anything bad in them fails, whatever the test itself said.
parse_console() {
	local rel=$1 dir=$2 l name st secs detail logname="" kmsgname="" demo_on=0 in_dmesg=0 bad
	: > "$dir/console.log"
	: > "$dir/results"
	: > "$dir/dmesg.log"
	mkdir -p "$dir/logs"
	while IFS= read -r l; do
		l=${l//$'\r'/}
		printf '%s\n' "$l" >> "$dir/console.log"
		if [ $in_dmesg = 1 ]; then
			if [[ $l == *FHOOK-DMESG-END* ]]; then
				in_dmesg=0
			else
				printf '%s\n' "$l" >> "$dir/dmesg.log"
			fi
			continue
		fi
		if [ $demo_on = 1 ]; then
			if [[ $l == *FHOOK-DEMO-END* ]]; then
				demo_on=0
			else
				printf '  %s\n' "$l"
			fi
			continue
		fi
		if [ -n "$logname" ]; then
			if [[ $l == *"FHOOK-LOG-END $logname"* ]]; then
				logname=""
			else
				printf '%s\n' "$l" >> "$dir/logs/$logname.log"
			fi
			continue
		fi
		if [ -n "$kmsgname" ]; then
			if [[ $l == *"FHOOK-KMSG-END $kmsgname"* ]]; then
				kmsgname=""
			else
				printf '%s\n' "$l" >> "$dir/logs/$kmsgname.kmsg"
			fi
			continue
		fi
		# a kernel that reports a lockup or a stall on the console may
		# never get out of it: the watchdog gives it less time
		if [[ ! -e $dir/distress ]] && [[ $l =~ soft\ lockup|hard\ LOCKUP|detected\ stalls|self-detected\ stall|blocked\ for\ more\ than|Kernel\ panic ]]; then
			date +%s > "$dir/distress"
		fi
		case $l in
		*FHOOK-BOOT*)
			echo "boot ${l#*FHOOK-BOOT }" >> "$dir/results"
			;;
		*FHOOK-BEGIN\ *)
			echo "begin ${l#*FHOOK-BEGIN }" >> "$dir/results"
			;;
		*FHOOK-LOG-BEGIN\ *)
			logname=${l#*FHOOK-LOG-BEGIN }
			logname=${logname%% *}
			: > "$dir/logs/$logname.log"
			;;
		*FHOOK-KMSG-BEGIN\ *)
			kmsgname=${l#*FHOOK-KMSG-BEGIN }
			kmsgname=${kmsgname%% *}
			: > "$dir/logs/$kmsgname.kmsg"
			echo "kmsg $kmsgname" >> "$dir/results"
			;;
		*FHOOK-RESULT\ *)
			read -r name st secs detail <<< "${l#*FHOOK-RESULT }"
			bad=$(badness "$dir/logs/$name.kmsg")
			if [ -n "$bad" ]; then
				if [ "$st" = PASS ]; then
					st=FAIL
					detail="kernel: $bad"
				else
					detail+=" (and kernel: $bad)"
				fi
			fi
			echo "result $name $st $secs $detail" >> "$dir/results"
			{
				line "$rel" "$name" "$st" "$([ "$st" = PASS ] && echo "$secs" || echo "$secs $detail")"
				if [ "$st" != PASS ] && [ -s "$dir/logs/$name.log" ]; then
					tail -n 40 "$dir/logs/$name.log" | indent
				elif [ $verbose = 1 ] && [ -s "$dir/logs/$name.log" ]; then
					indent < "$dir/logs/$name.log"
				fi
				if [ -n "$bad" ]; then
					echo "      kernel messages (${dir#"$top"/}/logs/$name.kmsg):"
					grep -E -m1 -B3 -A30 "$bad_re" "$dir/logs/$name.kmsg" | indent
				fi
			} | say
			;;
		*FHOOK-DEMO-BEGIN*) demo_on=1 ;;
		*FHOOK-DMESG-BEGIN*) in_dmesg=1 ;;
		*FHOOK-DONE*) echo "done ${l#*FHOOK-DONE }" >> "$dir/results" ;;
		*FHOOK-WARN*) echo "  $rel: ${l#*FHOOK-WARN }" | say ;;
		esac
	done
}

# watchdog QEMU_PID DIR STALL DISTRESS: kill the guest if DIR/results (a
# line per test start and end) has not changed for STALL seconds: its
# kernel is hung.  Once the kernel reported a lockup, a stall or a hung task
# on the console (DIR/distress), DISTRESS seconds without progress are
# enough.
watchdog() {
	local pid=$1 dir=$2 stall=$3 distress=$4 last now limit
	while kill -0 "$pid" 2> /dev/null; do
		sleep 5
		last=$(stat -c %Y "$dir/results" 2> /dev/null || date +%s)
		now=$(date +%s)
		limit=$stall
		if [ -e "$dir/distress" ] && [ "$(cat "$dir/distress")" -ge "$last" ]; then
			limit=$distress
			last=$(cat "$dir/distress")
		fi
		if [ $((now - last)) -gt "$limit" ]; then
			echo "$((now - last))" > "$dir/stalled"
			[ "$limit" = "$distress" ] && echo "after the kernel reported a lockup or stall" > "$dir/stalled.why"
			kill "$pid" 2> /dev/null
			return
		fi
	done
}

qemu_pid=""
cleanup_qemu() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2> /dev/null
	qemu_pid=""
}
trap 'cleanup_qemu; exit 130' INT TERM
trap cleanup_qemu EXIT

# group_tests REL GROUP: the selected tests of GROUP that run on REL (tests
# marked "debian" do not run on slow kernels unless FHOOK_VM_DEBUG_ALL=1)
group_tests() {
	local t out=""
	for t in ${g_tests[$2]:-}; do
		if [ "${t_kernels[$t]}" = debian ] && [ "$(slow_factor "$1")" != 1 ] &&
			[ "${FHOOK_VM_DEBUG_ALL:-0}" != 1 ]; then
			continue
		fi
		out+="$t "
	done
	echo "$out"
}

# run_group REL GROUP: boot REL with GROUP's tests, report them
run_group() {
	local rel=$1 g=$2
	local dir=$vm/$rel/$g qrc t0 t1 why="" done_line slow stall hard t smp mem
	local -a gt
	read -r -a gt <<< "$(group_tests "$rel" "$g")"
	slow=$(slow_factor "$rel")
	smp=${g_smp[$g]:-2} mem=${g_mem[$g]:-1024}
	# kernel parameters for this group on slow kernels ("a,b" -> "a b")
	local append=""
	[ "$slow" != 1 ] && append=${g_slow_append[$g]//,/ }
	rm -rf "$dir/logs"
	mkdir -p "$dir"
	tally=$dir/tally
	: > "$tally"
	group_initrd "$rel" "$g" "$dir/initrd.img"
	# hung guest: no progress for the longest test timeout, plus boot and
	# cleanup slack; hard limit: every test's timeout, plus slack
	stall=${FHOOK_VM_STALL:-}
	hard=$vm_timeout
	if [ -z "$stall" ] || [ -z "$hard" ]; then
		local max=0 sum=0
		for t in "${gt[@]}"; do
			[ "${t_tmo[$t]}" -gt $max ] && max=${t_tmo[$t]}
			sum=$((sum + ${t_tmo[$t]}))
		done
		[ -n "$stall" ] || stall=$(((max + 90) * slow))
		[ -n "$hard" ] || hard=$(((sum + 300) * slow))
	fi
	if [ $demo = 0 ]; then
		printf '== %s %s: %d test(s), %d vCPUs%s, console in %s\n' "$rel" "$g" "${#gt[@]}" \
			"$smp" "$([ "$slow" != 1 ] && echo ", timeouts x$slow")" "${dir#"$top"/}/console.log" | say
	fi
	t0=$(date +%s)
	# qemu writes into a fifo that parse_console reads in this shell (so
	# that it can count results); a watchdog kills a guest that makes no
	# progress (hung kernel) long before the hard timeout.
	rm -f "$dir/console.fifo" "$dir/stalled" "$dir/stalled.why" "$dir/distress"
	: > "$dir/results"
	mkfifo "$dir/console.fifo"
	# warnings reach the console (and the log of a hung guest); the demo
	# shows errors only, its dmesg is dumped anyway
	local loglevel=5
	[ $demo = 1 ] && loglevel=4
	# The debug (KASAN) 6.1 kernel gets no LA57: identify_cpu() clears
	# boot_cpu_data's feature words while pgtable_l5_enabled() still reads
	# them (alternatives are not patched yet), so an interrupt in that
	# window makes KASAN report a "wild-memory-access" on the irq
	# descriptor of a 5-level direct map, at ~0.007 s, long before any
	# fhook code exists.  Seen once in about 15 boots.
	local cpu=${FHOOK_VM_CPU:-max}
	[ -z "${FHOOK_VM_CPU:-}" ] && [[ $rel == *-kdebug ]] && cpu=max,la57=off
	local extra=() bench_append=""
	[ $mode = bench ] && [ $icount = 1 ] && extra=(-icount shift=0,sleep=off)
	# TCG's vCPU TSCs look unsynchronised, so 6.1 falls back to the HPET, an
	# emulated MMIO read per timestamp; real machines stamp with the TSC
	[ $mode = bench ] && bench_append="tsc=reliable"
	timeout --foreground --kill-after=10 "$hard" qemu-system-x86_64 \
		-accel "$accel" -cpu "$cpu" -smp "$smp" -m "$mem" -nographic -no-reboot -net none \
		"${extra[@]}" \
		-kernel "${t_vmlinuz[$rel]}" -initrd "$dir/initrd.img" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=$loglevel $append $bench_append ${FHOOK_VM_APPEND:-}" \
		< /dev/null > "$dir/console.fifo" 2> "$dir/qemu.err" 9>&- &
	qemu_pid=$!
	watchdog "$qemu_pid" "$dir" "$stall" $((120 * slow)) 9>&- &
	watchdog_pid=$!
	parse_console "$rel" "$dir" < "$dir/console.fifo"
	set +e
	wait "$qemu_pid"
	qrc=$?
	set -e
	qemu_pid=""
	kill "$watchdog_pid" 2> /dev/null || true
	wait "$watchdog_pid" 2> /dev/null || true
	rm -f "$dir/console.fifo"
	t1=$(date +%s)

	if [ $demo = 1 ]; then
		grep -q '^done' "$dir/results" || {
			echo "vmtests: demo guest did not finish (qemu exit $qrc); last console lines:"
			tail -n 30 "$dir/console.log" | indent
			return 1
		}
		return 0
	fi

	# tests that never reported
	local started="" bad
	{
	if ! grep -q '^done' "$dir/results"; then
		if [ -f "$dir/stalled" ]; then
			why="guest hung: no progress for $(cat "$dir/stalled")s"
			[ -e "$dir/stalled.why" ] && why+=" $(cat "$dir/stalled.why")"
		elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			why="guest timed out after ${hard}s"
		elif grep -qi 'kernel panic' "$dir/console.log"; then
			why="kernel panic"
		else
			why="guest stopped early (qemu exit $qrc)"
		fi
		started=$(awk '$1 == "begin" { b = $2 } $1 == "result" && $2 == b { b = "" } END { print b }' "$dir/results")
		line "$rel" "guest:$g" FAIL "$why; last console lines (${dir#"$top"/}/console.log):"
		tail -n 30 "$dir/console.log" | indent
		[ -s "$dir/qemu.err" ] && indent < "$dir/qemu.err"
	fi
	for t in "${gt[@]}"; do
		grep -q "^result $t " "$dir/results" && continue
		if [ "$t" = "$started" ]; then
			line "$rel" "$t" FAIL "did not finish: $why"
		else
			line "$rel" "$t" FAIL "not run: ${why:-no result from the guest}"
		fi
	done
	# host side: the boot's kernel messages and the final dmesg
	if ! grep -q '^done' "$dir/results" || [ ! -s "$dir/dmesg.log" ]; then
		line "$rel" "dmesg_$g" FAIL "no dmesg dump from the guest"
	else
		bad=$(badness "$dir/logs/boot.kmsg")
		[ -n "$bad" ] || bad=$(badness "$dir/dmesg.log")
		if [ -n "$bad" ]; then
			line "$rel" "dmesg_$g" FAIL "kernel: $bad"
			cat "$dir/logs/boot.kmsg" "$dir/dmesg.log" 2> /dev/null |
				grep -E -m1 -B3 -A30 "$bad_re" | indent
		else
			line "$rel" "dmesg_$g" PASS "($(wc -l < "$dir/dmesg.log") lines)"
		fi
	fi
	done_line=$(sed -n 's/^done //p' "$dir/results")
	printf -- '-- %s %s: %ds wall%s\n' "$rel" "$g" $((t1 - t0)) "${done_line:+, guest $done_line}"
	} | say
}

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
		# boots): no deterministic figures for 6.1 (docs/benchmarks.md)
		if [ $icount = 1 ] && [[ $rel == 6.1.* ]]; then
			echo "== $rel: skipped: -icount hangs this kernel's SMP bring-up under QEMU 7.2"
			continue
		fi
		# icount boots and runs slower: the stall watchdog must wait
		export FHOOK_VM_STALL=${FHOOK_VM_STALL:-1200}
		# (the eBPF peers' libraries make the initramfs ~250 MiB)
		g_tests[bench]="" g_smp[bench]=3 g_mem[bench]=2048
		if [ "${FHOOK_TEST_BENCH:-all}" != hooks ]; then
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

# Each boot is one single-threaded QEMU (thread=single): up to $njobs at once.
job_pids=()
running() {
	local p n=0
	for p in "${job_pids[@]}"; do
		kill -0 "$p" 2> /dev/null && n=$((n + 1))
	done
	echo $n
}
kill_jobs() {
	local p
	for p in "${job_pids[@]}"; do
		kill -TERM "$p" 2> /dev/null
	done
}
trap 'kill_jobs; wait; exit 130' INT TERM
status=0
for b in "${boots[@]}"; do
	while [ "$(running)" -ge "$njobs" ]; do
		wait -n || true
	done
	read -r rel g <<< "$b"
	(
		trap 'cleanup_qemu; exit 130' TERM INT
		trap cleanup_qemu EXIT
		# (in a || list, as before: errexit stays off inside)
		run_group "$rel" "$g" || exit 1
	) &
	job_pids+=($!)
done
for p in "${job_pids[@]}"; do
	wait "$p" || status=1
done
trap - INT TERM

# The failures again, last, with the end of their logs: CI often shows
# only the tail of the output.
n_pass=0 n_fail=0 n_skip=0
for b in "${boots[@]}"; do
	read -r rel g <<< "$b"
	while read -r st name detail; do
		case $st in
		PASS) n_pass=$((n_pass + 1)) ;;
		SKIP) n_skip=$((n_skip + 1)) ;;
		*)
			n_fail=$((n_fail + 1))
			echo "FAILED: $rel $g $name${detail:+: $detail}"
			if [ -s "$vm/$rel/$g/logs/$name.log" ]; then
				tail -n 12 "$vm/$rel/$g/logs/$name.log" | indent
			fi
			;;
		esac
	done < "$vm/$rel/$g/tally"
done
echo "$n_pass passed, $n_fail failed, $n_skip skipped ($(($(date +%s) - t_start))s wall, ${#boots[@]} boot(s), up to $njobs at a time)"
[ $n_fail = 0 ] && [ $status = 0 ]
