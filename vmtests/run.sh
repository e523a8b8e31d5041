#!/usr/bin/env bash
# fhook guest test runner: boots each target kernel in QEMU (TCG) with a
# busybox initramfs holding fhook.ko, the fhook CLI, the helper programs and
# the guest tests, and reports one line per test.  See vmtests/README.md.
#
#   vmtests/run.sh [--kernel REL]... [--filter TEST]... [--demo] [--verbose]
#                  [--timeout SEC] [--list]
#
# Nothing is ever loaded on the host: every insmod happens inside a guest.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/vmtests
vm=$top/build/vm
targets_file=$top/build/kernels/targets
tests_list=$here/guest/tests.list
cli=${FHOOK_VM_CLI:-$top/build/user/fhook}

kernels=()
filters=()
demo=0
verbose=0
vm_timeout=900

die() { printf 'vmtests: error: %s\n' "$*" >&2; exit 1; }

usage() {
	cat <<'EOF'
usage: vmtests/run.sh [options]
  --kernel REL    test this kernel release (repeatable; default: all of
                  build/kernels/targets)
  --filter TEST   run only this test (repeatable, shell globs allowed,
                  e.g. --filter 'vfs_*'); see --list
  --demo          boot the first kernel and show fhook tracing for real
  --verbose       print every test's guest log, not only failing ones
  --timeout SEC   hard limit per guest boot (default 900)
  --list          list the tests and exit
Logs: build/vm/<release>/{console.log,dmesg.log,logs/<test>.log}
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || die "--kernel needs a release"; kernels+=("$2"); shift 2 ;;
	--kernel=*) kernels+=("${1#*=}"); shift ;;
	--filter) [ $# -ge 2 ] || die "--filter needs a test name"; filters+=("$2"); shift 2 ;;
	--filter=*) filters+=("${1#*=}"); shift ;;
	--demo) demo=1; shift ;;
	--verbose|-v) verbose=1; shift ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; vm_timeout=$2; shift 2 ;;
	--list) awk '!/^#/ && NF { printf "%-20s %s\n", $1, $3 == "host" ? "(host side)" : ($3 == "fhook" ? "" : "(no fhook needed)") }' "$tests_list"; exit 0 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

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
	[ $demo = 1 ] && kernels=("${all_rels[0]}")
fi
for rel in "${kernels[@]}"; do
	[ -n "${t_vmlinuz[$rel]:-}" ] || die "kernel '$rel' is not in $targets_file (have: ${all_rels[*]})"
	[ -f "${t_vmlinuz[$rel]}" ] || die "${t_vmlinuz[$rel]} missing: run scripts/setup.sh"
done

# ------------------------------------------------------------------ tests
all_tests=() needs_fhook=0
declare -A t_needs
while read -r name _tmo needs; do
	all_tests+=("$name")
	t_needs[$name]=$needs
done < <(awk '!/^#/ && NF' "$tests_list")
tests=()
for t in "${all_tests[@]}"; do
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
guest_tests=()
for t in "${tests[@]}"; do
	[ "${t_needs[$t]}" = fhook ] && needs_fhook=1
	[ "${t_needs[$t]}" = host ] || guest_tests+=("$t")
done
[ $demo = 1 ] && needs_fhook=1

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
		ko=$top/build/kmod/$rel/fhook.ko
		[ -f "$ko" ] || die "${ko#"$top"/} missing: build the module first (make)"
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
# the longest guest-side test timeout plus boot slack
stall_secs=${FHOOK_VM_STALL:-}
[ -n "$stall_secs" ] || stall_secs=$(awk '!/^#/ && NF && $2 > m { m = $2 } END { print m + 90 }' "$tests_list")

mkdir -p "$vm"
exec 9> "$vm/.lock"
flock -n 9 || die "another vmtests/run.sh is using $vm"

# -------------------------------------------------------- guest programs
progs=$vm/progs
mkdir -p "$progs"
for src in "$here"/progs/*.c; do
	bin=$progs/$(basename "$src" .c)
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$top/shared/fhook_abi.h" -nt "$bin" ]; then
		gcc -static -O2 -Wall -Werror -I"$top/shared" -o "$bin.tmp" "$src" ||
			die "building $(basename "$src") failed"
		mv "$bin.tmp" "$bin"
	fi
done

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

build_initramfs() {
	local rel=$1 out=$2 stage moddir modtest="" kind="" m
	stage=$vm/$rel/root
	moddir=${t_moddir[$rel]}
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc} \
		"$stage"/fhook/{bin,tests,mods}
	cp "$busybox" "$stage/bin/busybox"
	install -m 755 "$here/guest/init" "$stage/init"
	cp "$here/guest/lib.sh" "$here/guest/runner.sh" "$here/guest/demo.sh" \
		"$here/guest/tests.list" "$stage/fhook/"
	cp "$here"/guest/tests/*.sh "$stage/fhook/tests/"
	cp "$progs"/* "$stage/fhook/bin/"
	[ -f "$top/build/kmod/$rel/fhook.ko" ] && cp "$top/build/kmod/$rel/fhook.ko" "$stage/fhook/"
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

	cat > "$stage/fhook/config" <<EOF
REL='$rel'
MODE='$([ $demo = 1 ] && echo demo || echo suite)'
VERBOSE='$verbose'
TESTS='${guest_tests[*]}'
MODTEST_MOD='$modtest'
MODTEST_KIND='$kind'
EOF
	[ "$(id -u)" = 0 ] && mknod -m 600 "$stage/dev/console" c 5 1
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$out.tmp"
	mv "$out.tmp" "$out"
}

# ------------------------------------------------------------------ report
n_pass=0 n_fail=0 n_skip=0

line() {	# line REL NAME STATUS [DETAIL]
	local rel=$1 name=$2 st=$3 detail=${4:-} dots word
	dots=$(printf '%*s' $((26 - ${#name} > 3 ? 26 - ${#name} : 3)) '' | tr ' ' '.')
	case $st in
	PASS) word=ok; n_pass=$((n_pass + 1)) ;;
	SKIP) word=SKIP; n_skip=$((n_skip + 1)) ;;
	*) word=FAIL; n_fail=$((n_fail + 1)) ;;
	esac
	printf '%-22s %s %s %s%s\n' "$rel" "$name" "$dots" "$word" "${detail:+ $detail}"
}

indent() { sed 's/^/      | /'; }

# parse_console REL DIR: read the guest's serial console on stdin, keep it
# in DIR/console.log, print each result as it arrives.
parse_console() {
	local rel=$1 dir=$2 l name st secs detail logname="" demo_on=0 in_dmesg=0
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
		*FHOOK-RESULT\ *)
			read -r name st secs detail <<< "${l#*FHOOK-RESULT }"
			echo "result $name $st $secs $detail" >> "$dir/results"
			line "$rel" "$name" "$st" "$([ "$st" = PASS ] && echo "$secs" || echo "$secs $detail")"
			if [ "$st" != PASS ] && [ -s "$dir/logs/$name.log" ]; then
				tail -n 40 "$dir/logs/$name.log" | indent
			elif [ $verbose = 1 ] && [ -s "$dir/logs/$name.log" ]; then
				indent < "$dir/logs/$name.log"
			fi
			;;
		*FHOOK-DEMO-BEGIN*) demo_on=1 ;;
		*FHOOK-DMESG-BEGIN*) in_dmesg=1 ;;
		*FHOOK-DONE*) echo "done ${l#*FHOOK-DONE }" >> "$dir/results" ;;
		*FHOOK-WARN*) echo "  $rel: ${l#*FHOOK-WARN }" ;;
		esac
	done
}

# watchdog QEMU_PID DIR: kill the guest if DIR/results (a line per test
# start and end) has not changed for $stall_secs: its kernel is hung.
watchdog() {
	local pid=$1 dir=$2 last now
	while kill -0 "$pid" 2> /dev/null; do
		sleep 5
		last=$(stat -c %Y "$dir/results" 2> /dev/null || date +%s)
		now=$(date +%s)
		if [ $((now - last)) -gt "$stall_secs" ]; then
			echo "$((now - last))" > "$dir/stalled"
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

# badness in the guest's dmesg
bad_re='WARNING:|BUG:|Oops|Call Trace|general protection|[Kk]ernel panic'

run_kernel() {
	local rel=$1
	local dir=$vm/$rel qrc t0 t1 why="" done_line
	mkdir -p "$dir"
	rm -rf "$dir/logs"
	build_initramfs "$rel" "$dir/initrd.img"
	if [ $demo = 0 ]; then
		printf '== %s: %d test(s), console in %s\n' "$rel" "${#tests[@]}" "${dir#"$top"/}/console.log"
	fi
	t0=$(date +%s)
	# qemu writes into a fifo that parse_console reads in this shell (so
	# that it can count results); a watchdog kills a guest that makes no
	# progress (hung kernel) long before the hard timeout.
	rm -f "$dir/console.fifo" "$dir/stalled"
	: > "$dir/results"
	mkfifo "$dir/console.fifo"
	# warnings reach the console (and the log of a hung guest); the demo
	# shows errors only, its dmesg is dumped anyway
	local loglevel=5
	[ $demo = 1 ] && loglevel=4
	timeout --foreground --kill-after=10 "$vm_timeout" qemu-system-x86_64 \
		-accel "$accel" -cpu max -smp 2 -m 1024 -nographic -no-reboot -net none \
		-kernel "${t_vmlinuz[$rel]}" -initrd "$dir/initrd.img" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=$loglevel ${FHOOK_VM_APPEND:-}" \
		< /dev/null > "$dir/console.fifo" 2> "$dir/qemu.err" 9>&- &
	qemu_pid=$!
	watchdog "$qemu_pid" "$dir" 9>&- &
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
	local started="" t
	if ! grep -q '^done' "$dir/results"; then
		if [ -f "$dir/stalled" ]; then
			why="guest hung: no progress for $(cat "$dir/stalled")s"
		elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			why="guest timed out after ${vm_timeout}s"
		elif grep -qi 'kernel panic' "$dir/console.log"; then
			why="kernel panic"
		else
			why="guest stopped early (qemu exit $qrc)"
		fi
		started=$(awk '$1 == "begin" { b = $2 } $1 == "result" && $2 == b { b = "" } END { print b }' "$dir/results")
		line "$rel" guest FAIL "$why; last console lines (${dir#"$top"/}/console.log):"
		tail -n 30 "$dir/console.log" | indent
		[ -s "$dir/qemu.err" ] && indent < "$dir/qemu.err"
	fi
	for t in "${guest_tests[@]}"; do
		grep -q "^result $t " "$dir/results" && continue
		if [ "$t" = "$started" ]; then
			line "$rel" "$t" FAIL "did not finish: $why"
		else
			line "$rel" "$t" FAIL "not run: ${why:-no result from the guest}"
		fi
	done
	# host-side tests
	for t in "${tests[@]}"; do
		[ "${t_needs[$t]}" = host ] || continue
		case $t in
		dmesg_clean)
			if ! grep -q '^done' "$dir/results" || [ ! -s "$dir/dmesg.log" ]; then
				line "$rel" dmesg_clean FAIL "no dmesg dump from the guest"
			elif grep -Eq "$bad_re" "$dir/dmesg.log"; then
				line "$rel" dmesg_clean FAIL "$(grep -Ec "$bad_re" "$dir/dmesg.log") bad line(s) in ${dir#"$top"/}/dmesg.log:"
				grep -E -m1 -B2 -A25 "$bad_re" "$dir/dmesg.log" | indent
			else
				line "$rel" dmesg_clean PASS "($(wc -l < "$dir/dmesg.log") lines)"
			fi
			;;
		esac
	done
	done_line=$(sed -n 's/^done //p' "$dir/results")
	printf -- '-- %s: %ds wall%s\n' "$rel" $((t1 - t0)) "${done_line:+, guest $done_line}"
}

status=0
for rel in "${kernels[@]}"; do
	run_kernel "$rel" || status=1
	[ $demo = 1 ] && break
done
if [ $demo = 1 ]; then
	exit $status
fi
echo "$n_pass passed, $n_fail failed, $n_skip skipped"
[ $n_fail = 0 ] && [ $status = 0 ]
