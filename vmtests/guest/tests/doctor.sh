# doctor: fhook doctor on a target kernel.  Without the module: exit 1,
# the module its only red line.  Loaded: exit 0, nothing red.  The kernel
# options it infers without a config (this guest has no /boot) agree with
# the kernel's own config once that is in /boot as on a Debian install,
# where every check is green.  Without tracefs: exit 1 on tracefs.
. /fhook/lib.sh

! fhook_loaded || fail "fhook already loaded before the test"
run_fhook $D/d0 doctor
cat $D/d0.out
expect_eq "$RC" 1 "doctor without the module"
grep -q '^FAIL module  *not loaded' $D/d0.out || fail "no red module line without the module"
expect_eq "$(grep -c '^FAIL' $D/d0.out)" 1 "red lines without the module"

insmod $KO || fail "insmod $KO"
run_fhook $D/d1 doctor
cat $D/d1.out
expect_eq "$RC" 0 "doctor with the module loaded"
! grep -q '^FAIL' $D/d1.out || fail "red lines with the module loaded"
grep -q '^ok   module  *fhook.ko .* loaded, ABI 5$' $D/d1.out || fail "no green module line"
if [ -e /proc/config.gz ]; then
	# (the debug kernel has CONFIG_IKCONFIG_PROC: nothing to infer there)
	grep -q "^kernel $(uname -r), config from /proc/config.gz" $D/d1.out || fail "doctor ignored /proc/config.gz"
else
	grep -qx "kernel $(uname -r): no /boot/config-$(uname -r) or /proc/config.gz: options inferred from kallsyms and BTF" $D/d1.out ||
		fail "doctor found a config in a guest without one"
fi

[ -f /fhook/kconfig ] || fail "no kernel config in the guest image"
mkdir -p /boot && cp /fhook/kconfig /boot/config-$(uname -r)
run_fhook $D/d2 doctor
cat $D/d2.out
expect_eq "$RC" 0 "doctor with /boot/config"
grep -q "^kernel $(uname -r), config from /boot/config-$(uname -r)" $D/d2.out || fail "doctor ignored /boot/config"
# (a kernel without direct calls, arm64 6.1, lacks what they give: said
# on its own line and on the cpu line; nothing else)
nodirect=0
grep -q '^CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y' /fhook/kconfig || nodirect=2
grep '^warn' $D/d2.out | grep -v '^warn CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS \|^warn cpu .*(missing here: direct latency)$' |
	sed 's/^/#   unexpected: /'
expect_eq "$(grep -c '^warn' $D/d2.out)" $nodirect "warnings with the kernel's config in /boot"
# what it inferred is what the config says
opts=$(awk '$2 ~ /^CONFIG_/ { print $2 }' $D/d2.out)
[ -n "$opts" ] || fail "no CONFIG_ lines"
for opt in $opts; do
	want=$(awk -v o=$opt '$2 == o { print $1 }' $D/d2.out)
	got=$(awk -v o=$opt '$2 == o { print $1 }' $D/d1.out)
	val=$(grep "^$opt=" /boot/config-$(uname -r) || echo "$opt not set")
	expect_same "$got" "$want" "$opt inferred as '$got' but the config says $val"
done
run_fhook $D/dj doctor --format json
expect_eq "$RC" 0 "doctor --format json"
grep -q '^{"kernel":".*","ok":true,"checks":\[{"name":"kernel","status":"ok"' $D/dj.out ||
	fail "doctor --format json: $(head -c 200 $D/dj.out)"
rm -r /boot

# without tracefs
mnts=$(awk '$3 == "tracefs" { print $2 }' /proc/mounts)
for m in $mnts; do umount $m || fail "umount $m"; done
run_fhook $D/d3 doctor
for m in $mnts; do mount -t tracefs nodev $m || fail "mount tracefs at $m again"; done
expect_eq "$RC" 1 "doctor without tracefs"
grep -q '^FAIL tracefs  *not mounted' $D/d3.out || fail "no red tracefs line without tracefs"
grep -q -- '-> mount -t tracefs nodev /sys/kernel/tracing' $D/d3.out || fail "no fix for tracefs"
rmmod fhook || fail "rmmod fhook"
pass "unloaded: 1 red line; loaded: 0; $(grep -c '^ok *CONFIG_' $D/d1.out) options inferred as the config says; no tracefs: red"
