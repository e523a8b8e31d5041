# body_check: the module counts the stack arguments of a body that a
# trace-around or latency trampoline runs from BTF and refuses what it
# cannot pass on (variadic functions, glob latency probes), and takes a
# prototype without BTF only from CAP_SYS_ADMIN (fhook-bodycheck, raw
# ABI); the CLI says why in one line.
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
run_fhook $D/cli hook --trace-around seq_printf --duration 1
expect_eq "$RC" 1 "fhook hook --trace-around seq_printf: exit code"
grep -q 'variadic' $D/cli.err || fail "the error does not say variadic: $(cat $D/cli.err)"
pass "$(grep -c '^ok ' $D/bc.out) checks; variadic refused by the CLI with a reason"
