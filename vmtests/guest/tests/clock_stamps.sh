# clock_stamps: every record's time lies between the two CLOCK_MONOTONIC
# reads (clock_gettime, the vDSO) that the workload made around the call,
# with the module's default clock (x86: the TSC scaled against the
# kernel's clock per CPU, kmod/clock.h), with the kernel's clocksource
# switched to the HPET under it, and with clock=mono.  The reads migrate
# between the two vCPUs and sleep 5 ms after every 10th, over more than a
# second: many anchors, a measured slope.
. /fhook/lib.sh

N=2000
# how far (ns) a stamp may lie outside its bracket: the anchor's half
# bracket and the slope's error over one span (10 ms); a slope off by
# 1/1000 alone would be 10 us off at the end of a span
TOL=2000
CS=/sys/devices/system/clocksource/clocksource0

# stamps_within TAG: trace N reads, check each read's stamp against its bracket
stamps_within() {
	run_fhook $D/$1 trace -f json vfs_read -- fhook-workload stamps $N $D/$1.pairs
	expect_eq "$RC" 0 "$1: fhook trace exit code"
	awk -v tol=$TOL -v n=$N '
		NR == FNR { lo[NR] = $1; hi[NR] = $2; next }
		/"type":"func"/ {
			s = $0
			sub(/.*"ts":/, "", s)
			sub(/,.*/, "", s)
			i++
			d = 0
			if (s + 0 < lo[i] + 0) d = lo[i] - s
			if (s + 0 > hi[i] + 0) d = s - hi[i]
			if (d > 0) out++
			if (d > max) max = d
		}
		END {
			printf "%d events, %d outside their bracket, by %.0f ns at most\n", i, out + 0, max
			exit !(i == n && max <= tol)
		}' $D/$1.pairs $D/$1.out > $D/$1.check
	_ok=$?
	log "$1 (clock $(cat /sys/module/fhook/parameters/clock), clocksource $(cat $CS/current_clocksource)): $(cat $D/$1.check)"
	[ $_ok = 0 ] || fail "$1: $(cat $D/$1.check) (want $N events, none more than $TOL ns outside)"
}

load_fhook
clock=$(cat /sys/module/fhook/parameters/clock)
if [ "$(uname -m)" = x86_64 ] && ! dmesg | grep -q "Marking TSC unstable"; then
	expect_same "$clock" tsc "x86's default clock (the kernel trusts the TSC)"
else
	# (6.1 in a 2-vCPU TCG guest: "Marking TSC unstable due to TSCs unsynchronized")
	expect_same "$clock" mono "the clock without a counter the kernel trusts"
fi
stamps_within default

was=$(cat $CS/current_clocksource)
if grep -qw hpet $CS/available_clocksource; then
	echo hpet > $CS/current_clocksource
	stamps_within hpet
	echo "$was" > $CS/current_clocksource
	expect_same "$(cat $CS/current_clocksource)" "$was" "the clocksource back"
fi

unload_fhook
insmod "$KO" clock=mono || fail "insmod clock=mono"
wait_for 5 test -c /dev/fhook || fail "/dev/fhook did not appear"
expect_same "$(cat /sys/module/fhook/parameters/clock)" mono "clock=mono reads back"
stamps_within mono
unload_fhook
insmod "$KO" clock=bogus 2> $D/bogus.err && fail "insmod clock=bogus succeeded"
load_fhook
pass "$clock, hpet and mono: $(cat $D/default.check)"
