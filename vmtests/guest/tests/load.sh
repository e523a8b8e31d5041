# load: insmod creates /dev/fhook (char device, crw-------); fhook status
# reports the module (its trampoline slots as many as kallsyms lists);
# fhook --version reads the module's version and ABI from sysfs, as the
# handshake gives them; rmmod removes it again.
. /fhook/lib.sh

! fhook_loaded || fail "fhook already loaded before the test"
run_fhook $D/v0 --version
expect_eq "$RC" 0 "fhook --version without the module"
grep -qx 'module: not loaded' $D/v0.out || fail "fhook --version without the module: $(cat $D/v0.out)"
# the ABI in sysfs cannot be set, not even at load time
! insmod $KO abi_version=9 2>/dev/null || fail "insmod with abi_version=9 succeeded"
insmod $KO || fail "insmod $KO failed"
grep -q '^fhook ' /proc/modules || fail "fhook not in /proc/modules after insmod"
wait_for 5 test -e /dev/fhook || fail "/dev/fhook missing after insmod"
[ -c /dev/fhook ] || fail "/dev/fhook is not a character device"
mode=$(ls -l /dev/fhook | cut -c1-10)
log "$(ls -l /dev/fhook)"
[ "$mode" = "crw-------" ] || fail "/dev/fhook mode $mode, expected crw-------"

run_fhook $D/st status
cat $D/st.out
expect_eq "$RC" 0 "fhook status exit code"
grep -qx 'module: loaded' $D/st.out || fail "fhook status lacks 'module: loaded'"
grep -qx 'abi: 5' $D/st.out || fail "fhook status lacks 'abi: 5'"
grep -qx 'device: /dev/fhook' $D/st.out || fail "fhook status lacks 'device: /dev/fhook'"
grep -qx 'sessions: 0' $D/st.out || fail "fhook status does not say 'sessions: 0'"
grep -qx "cpus: $(nproc)" $D/st.out || log "note: cpus line differs from nproc $(nproc)"
# the handshake's slot count is the number of fast counting trampolines in
# the module's text (arm64: none where the kernel has no direct calls)
slots=$(grep -c ' fhook_direct_fast_[0-9]*[[:space:]]*\[fhook\]' /proc/kallsyms)
if [ "$(uname -m)" = aarch64 ] && ! grep -q ' ftrace_stub_direct_tramp$' /proc/kallsyms; then
	expect_eq "$slots" 0 "direct trampolines in an arm64 fhook.ko without direct calls"
	slots=64
fi
[ "$slots" -gt 0 ] || fail "no fhook_direct_fast_N in /proc/kallsyms"
grep -qx "around slots: 0 of $slots in use (16 kept for modules' hooks)" $D/st.out ||
	fail "fhook status: '$(grep slots $D/st.out)', kallsyms has $slots fast trampolines"
grep -qx "direct slots: 0 of $slots in use" $D/st.out || fail "fhook status: '$(grep slots $D/st.out)'"
P=/sys/module/fhook/parameters
grep -qx "per user (root: no limit): sessions $(cat $P/max_user_sessions), slots of each kind $(cat $P/max_user_slots), memory $(cat $P/max_user_mem_pct)% of fhook's budget" $D/st.out ||
	fail "fhook status: '$(grep 'per user' $D/st.out)'"

run_fhook $D/v --version
cat $D/v.out
expect_eq "$RC" 0 "fhook --version exit code"
ver=$(sed -n 's/^version: //p' $D/st.out)
[ -n "$ver" ] || fail "fhook status shows no version"
grep -qx "fhook $ver (ABI 5)" $D/v.out || fail "fhook --version: CLI line is not 'fhook $ver (ABI 5)'"
grep -qx "module: fhook.ko $ver (ABI 5), loaded" $D/v.out ||
	fail "fhook --version: module line is not 'module: fhook.ko $ver (ABI 5), loaded'"

rmmod fhook || fail "rmmod fhook failed"
! fhook_loaded || fail "fhook still in /proc/modules after rmmod"
wait_for 5 test ! -e /dev/fhook || fail "/dev/fhook still present after rmmod"
pass "$(grep '^version:' $D/st.out)"
