# shellcheck shell=bash
# The console protocol: what the guest prints on its serial console
# (FHOOK-BOOT, -BEGIN, -LOG-BEGIN/-END, -KMSG-BEGIN/-END, -RESULT, -DEMO,
# -DMESG, -DONE, -WARN; see guest/runner.sh) turned into results and logs,
# and the one request a test makes of the host (FHOOK-STALL, see
# stall_guest).  Sourced by vmtests/run.sh, which sets the variables named
# here.

# stall_guest PID MS...: freeze the emulator under the `timeout` of PID for
# the first MS milliseconds, let it run for the second, freeze it for the
# third, and so on: a stall from outside the guest, as an SMI or a
# hypervisor makes one.  SIGSTOP, not the monitor's `stop`: QEMU stops the
# guest's clocks (TSC, HPET) with the monitor's stop, so the guest would
# see no time go; a stopped process keeps the host's clock running under
# them, so the guest finds the gap.
stall_guest() {
	local pid=$1 ms s sig=STOP
	shift
	for ms in "$@"; do
		s=$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')
		pkill -"$sig" -P "$pid" || return 0
		sleep "$s"
		[ $sig = STOP ] && sig=CONT || sig=STOP
	done
	pkill -CONT -P "$pid" || true
}

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
		*FHOOK-STALL\ *)
			# shellcheck disable=SC2086 # (the durations, split)
			[ -n "${qemu_pid:-}" ] && stall_guest "$qemu_pid" ${l#*FHOOK-STALL } 9>&- &
			;;
		*FHOOK-DONE*) echo "done ${l#*FHOOK-DONE }" >> "$dir/results" ;;
		*FHOOK-WARN*) echo "  $rel: ${l#*FHOOK-WARN }" | say ;;
		esac
	done
}
