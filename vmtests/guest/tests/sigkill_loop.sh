# sigkill_loop: 30 times (FHOOK_TEST_KILLS), start "fhook trace 'vfs_*'" (four times in ten
# "fhook record -o FILE 'vfs_*'" instead, a consumer writing a file; once
# in ten each record and trace with --overwrite rings) under a light load on
# both CPUs and SIGKILL it at a random moment: 0-1.5 s after it opened
# /dev/fhook (four kills in ten within the first 0.3 s: ring allocation,
# filter parsing, arming), or, one kill in ten, 0-2 s after it started
# (often before the device is touched: the CLI reads /proc/kallsyms first).  After every kill: nothing in
# enabled_functions, no vmalloc area of fhook.  At the end: no session, no
# kprobe, the kernel's memory back to where it was after a warm-up trace,
# and rmmod works.  FHOOK_TEST_SEED replays the delays.
. /fhook/lib.sh

N=${FHOOK_TEST_KILLS:-$(pick 30 4)}
SEED=${FHOOK_TEST_SEED:-$(date +%s)}
load_fhook
fhook-workload load 100000 0 &
fhook-workload load 100000 1 &
sleep 0.5
run_fhook $D/warm trace 'vfs_*' --duration 1 -o /dev/null
expect_eq "$RC" 0 "warm-up trace exit code"
before=$(mem_snapshot)

# has pid $1 opened /dev/fhook?
dev_open() { ls -l /proc/$1/fd 2> /dev/null | grep -q '/dev/fhook'; }

log "seed $SEED"
# "from delay": from = open (after the device is open) or start
awk -v s="$SEED" -v n="$N" 'BEGIN { srand(s)
	for (i = 0; i < n; i++)
		if (i % 10 == 9) printf "start %.3f\n", 2.0 * rand()
		else printf "open %.3f\n", (i % 10 < 4 ? 0.3 : 1.5) * rand() }' > $D/delays
t0=$(uptime_cs)
i=0 armed=0 early=0
while read -r from d; do
	i=$((i + 1))
	ts=$(uptime_cs)
	case $((i % 10)) in
	1 | 3 | 7) fhook record -o $D/k.fhk 'vfs_*' > /dev/null 2> $D/err & ;;
	5) fhook record --overwrite -o $D/k.fhk 'vfs_*' > /dev/null 2> $D/err & ;;
	0) fhook trace --overwrite 'vfs_*' > /dev/null 2> $D/err & ;;
	*) fhook trace 'vfs_*' > /dev/null 2> $D/err & ;;
	esac
	F=$!
	if [ "$from" = open ]; then
		wait_for 60 dev_open $F || fail "kill $i: fhook never opened /dev/fhook: $(head -n 2 $D/err)"
	fi
	to=$(uptime_cs)
	sleep "$d"
	if attached; then
		armed=$((armed + 1))
	elif ! dev_open $F; then
		early=$((early + 1))
	fi
	kill -9 $F 2> /dev/null
	{ wait $F; } 2> /dev/null
	rc=$?
	[ $rc = 137 ] || fail "kill $i ($from+${d}s): fhook had exited $rc before the SIGKILL: $(head -n 2 $D/err)"
	wait_for 10 detached ||
		fail "kill $i ($from+${d}s): enabled_functions not empty 10 s after SIGKILL: $(head -n 2 $T/enabled_functions | tr '\n' ' ')"
	n=$(fhook_vmalloc)
	[ "$n" = 0 ] || fail "kill $i ($from+${d}s): $n vmalloc areas of fhook left: $(grep '\[fhook\]' /proc/vmallocinfo | head -n 2)"
	[ -n "${FHOOK_TEST_TIMING:-}" ] && log "kill $i: open after $((to - ts))0 ms, killed at +${d}s, clean $(($(uptime_cs) - to))0 ms after the open"
	[ $((i % 25)) = 0 ] && log "kill $i: so far $armed armed, $early before the open, $(elapsed_s $t0) s"
done < $D/delays
secs=$(elapsed_s $t0)

run_fhook $D/st status
grep -qx 'sessions: 0' $D/st.out || fail "a session survived: $(grep sessions $D/st.out)"
no_kprobes || fail "kprobes registered: $(head -n 3 /sys/kernel/debug/kprobes/list)"
after=$(mem_snapshot)
mem_check "$before" "$after"
rmmod fhook || fail "rmmod fhook failed after the kills"
pass "kills=$N armed=$armed in_setup=$((N - armed - early)) before_open=$early secs=$secs seed=$SEED $MEMDELTA"
