# shellcheck shell=bash
# Job scheduling: the boots of a suite run longest first, up to $njobs at
# once (each one QEMU on one host thread), and the final report.
# Sourced by vmtests/run.sh, which sets the variables named here.

job_pids=()

# running: how many boots are still running
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

# run_boots "REL GROUP"...: each boot in the background, up to $njobs at
# once; false when one of them could not run
run_boots() {
	local b rel g p status=0
	trap 'kill_jobs; wait; exit 130' INT TERM
	for b in "$@"; do
		while [ "$(running)" -ge "$njobs" ]; do
			wait -n || true
		done
		read -r rel g <<< "$b"
		(
			trap 'cleanup_qemu; exit 130' TERM INT
			trap cleanup_qemu EXIT
			# (in a || list: errexit stays off inside)
			run_group "$rel" "$g" || exit 1
		) &
		job_pids+=($!)
	done
	for p in "${job_pids[@]}"; do
		wait "$p" || status=1
	done
	trap - INT TERM
	return $status
}

# report "REL GROUP"...: the failures again, last, with the end of their
# logs (CI often shows only the tail of the output), then the totals;
# false when a test failed
report() {
	local b rel g st name detail n_pass=0 n_fail=0 n_skip=0
	for b in "$@"; do
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
	echo "$n_pass passed, $n_fail failed, $n_skip skipped ($(($(date +%s) - t_start))s wall, $# boot(s), up to $njobs at a time)"
	[ $n_fail = 0 ]
}
