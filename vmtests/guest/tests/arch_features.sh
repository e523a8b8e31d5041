# arch_features: what fhook's port to this CPU lacks is said, not hidden.
# fhook doctor's cpu line names it (x86-64: nothing); on arm64 each command
# that needs a missing trampoline (count --via direct, latency, hook, the
# hook API of a module) is refused with exit 1 and one line naming the
# port, nothing is armed, and the kernel stays quiet.  The rest of a
# session works beside it: a function count in the same guest is exact.
. /fhook/lib.sh

load_fhook
run_fhook $D/doc doctor
if [ "$(uname -m)" != aarch64 ]; then
	grep -q '^ok   cpu  *x86_64: every fhook feature$' $D/doc.out ||
		fail "doctor's cpu line: $(grep ' cpu ' $D/doc.out)"
	pass "doctor: x86_64 has every feature"
fi
grep -q '^warn cpu  *arm64: direct calls, latency probes, .* (missing here: direct hook latency khook)$' $D/doc.out ||
	fail "doctor's cpu line: $(grep ' cpu ' $D/doc.out)"

# refused before anything is armed, with the port named
refused() {
	local name=$1
	shift
	run_fhook $D/$name "$@"
	expect_eq "$RC" 1 "fhook $* exit status"
	grep -q "are not in fhook's arm64 port yet: direct calls, latency probes" $D/$name.err ||
		fail "fhook $*: $(cat $D/$name.err)"
	expect_eq "$(wc -l < $D/$name.err)" 1 "lines of fhook $*'s error"
}
refused direct count --via direct vfs_read -- true
refused latency latency vfs_read -- true
refused hook hook --return -12 vfs_read -- true
[ -z "$(cat $T/enabled_functions)" ] || fail "functions left patched: $(head -n 3 $T/enabled_functions)"

# a module of the hook API: its install fails, and says why
dmesg -c > /dev/null
! insmod /fhook/fhook_deny_open.ko 2> $D/ins.err || fail "the hook API installed a hook on arm64"
dmesg | grep -q "no trampolines for hooks yet" || fail "no reason in dmesg: $(dmesg | tail -n 3)"

# the session's other probes work beside the refusals
run_fhook $D/c count vfs_read -- fhook-workload read 7
expect_eq "$RC" 0 "fhook count exit status"
n=$(awk 'NR > 1 && $2 == "vfs_read" { print $1 }' $D/c.out)
expect_eq "$n" 7 "vfs_read calls counted"
pass "doctor names the missing trampolines; direct, latency, hooks and the hook API refused with the reason"
