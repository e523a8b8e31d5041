# khook_deny: examples/fhook_deny_open.ko refuses exactly the path it is
# given, as often as it is opened; other paths open; its counter and
# fhook status's ledger agree; fhook cannot be unloaded while it is
# loaded; after rmmod the path opens again.
. /fhook/lib.sh

load_fhook
has_feature hook || skip "this kernel's ftrace cannot change a call's registers: no hooks (docs/arm64.md)"
echo secret > $D/secret
echo other > $D/other
insmod /fhook/fhook_deny_open.ko path=$D/secret || fail "insmod fhook_deny_open.ko failed"
P=/sys/module/fhook_deny_open/parameters/denied
expect_eq "$(cat $P)" 0 "denied before any open"
n=0
for i in 1 2 3 4 5 6 7; do
	if cat $D/secret > $D/out 2> $D/err; then
		fail "open $i of the denied path succeeded"
	fi
	grep -q 'Permission denied' $D/err || fail "open $i: not EACCES: $(cat $D/err)"
	cat $D/other > /dev/null || fail "another path failed to open"
	n=$((n + 1))
done
log "denied: $(cat $D/err)"
expect_eq "$(cat $P)" "$n" "the denied counter"
# a relative spelling is another path: only the exact string is refused
(cd $D && cat ./secret > /dev/null) || fail "./secret was refused (only $D/secret is)"
expect_eq "$(cat $P)" "$n" "the denied counter after a relative open"

# the ledger
fhook status > $D/status 2>&1 || fail "fhook status failed: $(cat $D/status)"
sed 's/^/#   /' $D/status
grep -q 'do_sys_openat2.*fhook_deny_open.*replace' $D/status ||
	fail "fhook status does not list the hook on do_sys_openat2"
hits=$(awk '/do_sys_openat2/ && /fhook_deny_open/ { for (i = 1; i <= NF; i++) if ($i ~ /^hits=/) { sub("hits=", "", $i); print $i } }' $D/status)
[ "${hits:-0}" -gt "$n" ] || fail "hits in fhook status ($hits) not above the $n denied opens"
grep -q 'do_sys_openat2.*I' $T/enabled_functions || fail "do_sys_openat2 not IPMODIFY in enabled_functions"

# fhook is in use by the module
if rmmod fhook 2> $D/rmmod.err; then
	fail "rmmod fhook succeeded while fhook_deny_open uses it"
fi
log "rmmod fhook refused: $(cat $D/rmmod.err)"
grep -q '^fhook .* fhook_deny_open' /proc/modules || fail "/proc/modules does not show fhook used by fhook_deny_open"

rmmod fhook_deny_open || fail "rmmod fhook_deny_open failed"
cat $D/secret > /dev/null || fail "the path is still refused after rmmod"
! grep -q 'do_sys_openat2' $T/enabled_functions || fail "do_sys_openat2 still hooked after rmmod"
rmmod fhook || fail "rmmod fhook failed after the user module went"
pass "$n opens refused, counter $n, ledger hits $hits"
