# event_select: -e takes trace events as trace-cmd and perf do (globs,
# SUBSYS, EVENT), `fhook list events` lists exactly tracefs'
# available_events, `list functions -v` gives a module's functions their
# prototypes from the module's BTF, and `status` names every feature.
. /fhook/lib.sh

load_fhook
run_fhook $D/l list events 'sched:*'
expect_eq "$RC" 0 "list events 'sched:*' exit code"
grep '^sched:' $T/available_events > $D/sched.ref
cmp -s $D/l.out $D/sched.ref || fail "list events 'sched:*' differs from available_events: $(diff $D/sched.ref $D/l.out | head -n 4 | tr '\n' '|')"
run_fhook $D/one list events sched_switch
expect_same "$(cat $D/one.out)" "sched:sched_switch" "list events sched_switch"
run_fhook $D/all list tracepoints
expect_eq "$(wc -l < $D/all.out)" "$(wc -l < $T/available_events)" "list tracepoints lines"
run_fhook $D/v list events -v sched:sched_process_exec
grep -q '^    __data_loc char\[\] filename$' $D/v.out || fail "no filename field: $(cat $D/v.out)"

# -e with a glob: every matching event is a probe, and the exec and the
# exit of the command are there
n=$(grep -c '^sched:sched_process_e' $T/available_events)
run_fhook $D/e trace -e 'sched:sched_process_e*' -- fhook-workload read 1
expect_eq "$RC" 0 "trace -e 'sched:sched_process_e*' exit code"
probes_exact $D/e.err "$n"
grep -q ': sched_process_exec: filename=/fhook/bin/fhook-workload ' $D/e.out || fail "no exec: $(cat $D/e.out)"
grep -q ': sched_process_exit: comm=fhook-workload ' $D/e.out || fail "no exit: $(cat $D/e.out)"
run_fhook $D/bad trace -e 'sched:nothing_like_this*' -- true
expect_eq "$RC" 1 "a pattern matching nothing: exit code"
grep -q "no trace event matches 'sched:nothing_like_this\*'" $D/bad.err || fail "unclear error: $(cat $D/bad.err)"

# a module's prototype from its own BTF
load_workmod
run_fhook $D/f list functions -v 'fhook_testmod_target:mod:fhook_testmod'
expect_eq "$RC" 0 "list functions -v exit code"
if [ -e /sys/kernel/btf/fhook_testmod ]; then
	grep -q '^fhook_testmod_target \[fhook_testmod\].void fhook_testmod_target(long unsigned int i)$' $D/f.out ||
		fail "no prototype from the module's BTF: $(cat $D/f.out)"
	proto=BTF
else
	grep -q '(no BTF)$' $D/f.out || fail "no '(no BTF)': $(cat $D/f.out)"
	proto="no module BTF"
fi

run_fhook $D/st status
grep '^features: ' $D/st.out | grep -q 'bit[0-9]' && fail "unnamed feature bits: $(grep features $D/st.out)"
grep -q '^features: .* tracepoint .*count-ips' $D/st.out || fail "features: $(grep features $D/st.out)"
pass "list events = available_events; -e glob = $n events; module prototype: $proto; features named"
