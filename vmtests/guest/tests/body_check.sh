# body_check: the module counts the stack arguments of a body that a
# trace-around or latency trampoline runs from BTF and refuses what it
# cannot pass on (variadic functions, glob latency probes), and takes a
# prototype without BTF only from CAP_SYS_ADMIN (fhook-bodycheck, raw
# ABI); the CLI says why in one line.  Where the kernel has no hooks
# (arm64 6.12) trace-around is refused and latency carries the checks.
. /fhook/lib.sh

load_fhook
load_workmod
# a compiler clone: traceable, no BTF prototype under its name
clone=$(grep -m1 -E '^[a-z_0-9]+\.(constprop|isra)\.[0-9]+$' $T/available_filter_functions)
log "clone without BTF: ${clone:-none found}"
run_logged $D/bc.out fhook-bodycheck $clone
rc=$RC
cat $D/bc.out
[ "$rc" = 0 ] || fail "$(grep -m1 'not ok\|Bail' $D/bc.out)"
if has_feature hook; then
	cmd="hook --trace-around"
else
	cmd=latency
fi
# shellcheck disable=SC2086
run_fhook $D/cli $cmd --duration 1 seq_printf
expect_eq "$RC" 1 "fhook $cmd seq_printf: exit code ($(head -n 1 $D/cli.err))"
grep -q 'variadic' $D/cli.err || fail "the error does not say variadic: $(cat $D/cli.err)"
expect_eq "$(wc -l < $D/cli.err)" 1 "lines of the error"
pass "$(grep -c '^ok ' $D/bc.out) checks; variadic refused by fhook $cmd with a reason"
