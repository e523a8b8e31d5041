# shellcheck shell=bash
# Booting one group of tests in QEMU: the accelerator, timeouts scaled for
# slow kernels, the hang watchdog, and the verdicts of a boot.
# Sourced by vmtests/run.sh, which sets the variables named here.

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

# qemu_cpu REL: the -cpu of a guest of REL
qemu_cpu() {
	# The debug (KASAN) 6.1 kernel gets no LA57: identify_cpu() clears
	# boot_cpu_data's feature words while pgtable_l5_enabled() still reads
	# them (alternatives are not patched yet), so an interrupt in that
	# window makes KASAN report a "wild-memory-access" on the irq
	# descriptor of a 5-level direct map, at ~0.007 s, long before any
	# fhook code exists.  Seen once in about 15 boots.
	if [ -n "${FHOOK_VM_CPU:-}" ]; then
		echo "$FHOOK_VM_CPU"
	elif [[ $1 == *-kdebug ]]; then
		echo max,la57=off
	else
		echo max
	fi
}

# The guests' CPU: $arch (x86_64, or arm64 with --arch arm64), the QEMU
# that emulates it
arch=${arch:-x86_64}
qemu_binary() {
	case $arch in
	arm64) echo qemu-system-aarch64 ;;
	*) echo qemu-system-x86_64 ;;
	esac
}

# qemu_base REL VMLINUZ INITRD SMP MEM: every guest's QEMU command line
# (no network, no reboot: a panic ends QEMU) into qemu_cmd; the kernel
# parameters every guest starts with in qemu_append.  arm64: QEMU's virt
# board with a GICv3, its one PL011 serial port the console; pointer
# authentication with QEMU's own cipher (-cpu max's QARMA costs TCG
# several times more per signed return)
qemu_base() {
	# FHOOK_VM_QEMU_ARGS: more QEMU arguments, split at blanks
	# (vmtests/profile.sh: -icount and its plugin)
	local more=()
	read -r -a more <<< "${FHOOK_VM_QEMU_ARGS:-}"
	if [ "$arch" = arm64 ]; then
		qemu_cmd=(qemu-system-aarch64 -M virt,gic-version=3 -accel "$accel"
			-cpu "${FHOOK_VM_CPU:-max,pauth-impdef=on}" -smp "$4" -m "$5"
			-no-reboot -net none -kernel "$2" -initrd "$3" "${more[@]}")
		qemu_append="console=ttyAMA0 panic=-1 oops=panic"
	else
		qemu_cmd=(qemu-system-x86_64 -accel "$accel" -cpu "$(qemu_cpu "$1")" -smp "$4" -m "$5"
			-no-reboot -net none -kernel "$2" -initrd "$3" "${more[@]}")
		qemu_append="console=ttyS0 panic=-1 oops=panic"
	fi
}

qemu_pid=""
cleanup_qemu() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2> /dev/null
	qemu_pid=""
}

# group_tests REL GROUP: the selected tests of GROUP that run on REL.
# Where a test runs (tests.list's kernels column): "all" on every kernel;
# "debian" not on slow kernels; "once" (userspace-only behaviour) on
# $once_rel only; on the PREEMPT_RT kernel only those marked ",rt", on
# arm64 kernels only those marked ",arm64".
# FHOOK_VM_FULL=1 (make test-full) runs every test on every kernel.
group_tests() {
	local t out=""
	for t in ${g_tests[$2]:-}; do
		if [ "${FHOOK_VM_FULL:-0}" != 1 ]; then
			case ${t_kernels[$t]} in
			debian) [ "$(slow_factor "$1")" = 1 ] || continue ;;
			once) [ "$1" = "$once_rel" ] || continue ;;
			lines) [ "$(slow_factor "$1")" != 1 ] || [ -z "${checked_lines[$(kernel_line "$1")]:-}" ] || continue ;;
			esac
			[[ $1 != *-rt-* || ${t_rt[$t]} = 1 ]] || continue
			[[ $arch != arm64 || ${t_arm64[$t]} = 1 ]] || continue
		fi
		out+="$t "
	done
	echo "$out"
}

# kernel_line REL: its kernel line, 6.1 or 6.12
kernel_line() {
	local v=${1%%-*}
	echo "${v%.*}"
}

# run_group REL GROUP: boot REL with GROUP's tests, report them
run_group() {
	local rel=$1 g=$2
	local dir=$vm/$rel/$g qrc t0 t1 why="" done_line slow stall hard t smp mem
	local -a gt
	read -r -a gt <<< "$(group_tests "$rel" "$g")"
	slow=$(slow_factor "$rel")
	smp=${g_smp[$g]:-2} mem=${g_mem[$g]:-1024}
	# kernel parameters for this group, and more on slow kernels ("a,b" -> "a b")
	local append=${g_append[$g]:-}
	append=${append//,/ }
	[ "$slow" != 1 ] && append+=" ${g_slow_append[$g]:-}" && append=${append//,/ }
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
	local extra=() bench_append=""
	[ $mode = bench ] && [ $icount = 1 ] && extra=(-icount shift=0,sleep=off)
	# TCG's vCPU TSCs look unsynchronised, so 6.1 falls back to the HPET, an
	# emulated MMIO read per timestamp; real machines stamp with the TSC
	[ $mode = bench ] && bench_append="tsc=reliable"
	qemu_base "$rel" "${t_vmlinuz[$rel]}" "$dir/initrd.img" "$smp" "$mem"
	timeout --foreground --kill-after=10 "$hard" "${qemu_cmd[@]}" -nographic "${extra[@]}" \
		-append "$qemu_append loglevel=$loglevel $append $bench_append ${FHOOK_VM_APPEND:-}" \
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
