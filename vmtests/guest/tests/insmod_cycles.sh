# insmod_cycles: 60 cycles (FHOOK_TEST_CYCLES) of insmod, one real session through the raw ABI
# (fhook-cycle: ring, vfs_read probe, START, 50 ms of reads by a child,
# STOP, every record checked, events > 0, stats consistent, close), rmmod.
# After each session: nothing in enabled_functions, no vmalloc area of
# fhook left.  At the end memory is back to where it was after a warm-up
# cycle (mem_check tolerances, see docs/reliability.md).
. /fhook/lib.sh

N=${FHOOK_TEST_CYCLES:-$(pick 60 12)}
! fhook_loaded || rmmod fhook || fail "cannot unload fhook before the test"

cycle() {
	insmod $KO 2> $D/insmod.err || fail "cycle $1: insmod failed: $(cat $D/insmod.err)"
	wait_for 5 test -c /dev/fhook || fail "cycle $1: /dev/fhook did not appear"
	fhook-cycle > $D/cycle.out 2>&1 || fail "cycle $1: $(tail -n 1 $D/cycle.out)"
	attached && fail "cycle $1: enabled_functions not empty after the session: $(head -n 2 $T/enabled_functions | tr '\n' ' ')"
	_n=$(fhook_vmalloc)
	[ "$_n" = 0 ] || fail "cycle $1: $_n vmalloc areas of fhook left after the session closed"
	rmmod fhook 2> $D/rmmod.err || fail "cycle $1: rmmod failed: $(cat $D/rmmod.err)"
	fhook_loaded && fail "cycle $1: fhook still loaded after rmmod"
}

# warm-up: first-time allocations (ftrace's records for the module, caches)
cycle 0
log "warm-up: $(cat $D/cycle.out)"
before=$(mem_snapshot)
t0=$(uptime_cs)
i=0 emin=999999999 emax=0 etot=0
while [ $i -lt "$N" ]; do
	i=$((i + 1))
	cycle $i
	# "events E lost L (in band X) hits H"
	set -- $(cat $D/cycle.out)
	[ "$1" = events ] || fail "cycle $i: unexpected fhook-cycle output: $(cat $D/cycle.out)"
	[ "$2" -lt $emin ] && emin=$2
	[ "$2" -gt $emax ] && emax=$2
	etot=$((etot + $2))
	[ $((i % 50)) = 0 ] && log "cycle $i: $(cat $D/cycle.out), $(elapsed_s $t0) s"
done
secs=$(elapsed_s $t0)
after=$(mem_snapshot)
mem_check "$before" "$after"
pass "cycles=$N secs=$secs events/cycle=$emin..$emax $MEMDELTA"
