# empty_outputs: every command, in every --format, when what it watches is
# never called (fhook_testmod_nop: only `echo nop N` calls it): tables say
# so the way latency does ("(no calls)", the hist file's "Hits: 0", "0
# failing calls"), JSON documents are whole with zeros and empty lists,
# event streams print nothing (Chrome: an empty traceEvents array; graph:
# the function_graph header), and every run exits 0 without an error.
# (A sample of the streams' formats: each is one formatter for every
# command, its empty end tested here once.)
# (count's empty glob: count_functions.)
. /fhook/lib.sh

load_fhook
load_workmod
F=fhook_testmod_nop
# run CMD...: stdout in $D/o, exit 0 and no error line asked
run() {
	log "\$ fhook $*"
	fhook "$@" > $D/o 2> $D/e
	RC=$?
	sed 's/^/#   | /' $D/o | head -n 6
	[ "$RC" = 0 ] && ! grep -q '^fhook: error' $D/e || fail "fhook $*: exit $RC: $(cat $D/e)"
}
# same WHAT WANT: stdout is WANT exactly
same() { [ "$(cat $D/o)" = "$2" ] || fail "$1: $(head -c 400 $D/o)"; }
# has WHAT LINE: stdout has LINE
has() { grep -qxF -- "$2" $D/o || fail "$1 lacks '$2': $(head -c 400 $D/o)"; }

# (latency needs direct calls: not on arm64's 6.1, whose refusal is
# arch_features')
lat=
if has_feature latency; then
	run latency -d 0.2 $F
	has "latency" "     (no calls)"
	run latency -d 0.2 -f json $F
	same "latency json" '{"name":"fhook_testmod_nop","count":0,"sum_ns":0,"avg_ns":0,"inflight":0,"min_ns":0,"max_ns":0,"buckets":[]}'
	lat="latency, "
fi
run hist -q -d 0.2 $F 'keys=common_pid'
has "hist" "    Hits: 0"
has "hist" "    Entries: 0"
run hist -q -d 0.2 -f json $F 'keys=common_pid'
same "hist json" '{"totals":{"hits":0,"entries":0,"dropped":0}}'
# (errors and graph below F: the test module's functions, not every one,
# whose arming takes 10-20 s a run under TCG; nothing calls F either way)
run errors -d 0.2 --watch 'fhook_testmod_*' $F
same "errors" "# 0 failing calls, 0 distinct chains"
run errors -d 0.2 -f json --watch 'fhook_testmod_*' $F
same "errors json" '{"failures":0,"distinct":0,"lost":0,"stat":[]}'
run errors -d 0.2 --stat --watch 'fhook_testmod_*' $F
has "errors --stat" "(no failures)"
run stat -d 0.2 $F
has "stat" "    1            0            0          0            0          0  $F"
empty_chrome='{"displayTimeUnit":"ns","traceEvents":[
]}'
for f in text otlp; do
	run trace -d 0.2 -f $f $F
	same "trace -f $f" ""
done
run trace -d 0.2 -f chrome $F
same "trace -f chrome" "$empty_chrome"
run graph -d 0.2 --watch 'fhook_testmod_*' $F
has "graph" "# CPU  DURATION                  FUNCTION CALLS"
[ "$(grep -vc '^#' $D/o)" = 0 ] || fail "graph printed more than its header: $(cat $D/o)"
run record -o $D/r.fhk -d 0.2 $F
run report -f json $D/r.fhk
same "report -f json" ""
run report -f chrome $D/r.fhk
same "report -f chrome" "$empty_chrome"
run report --hist 'keys=common_pid' $D/r.fhk
has "report --hist" "    Hits: 0"
pass "${lat}hist, errors (text, json, --stat), stat, trace (text, chrome, otlp), graph (text) and report (json, chrome, --hist) with no call: each says so or prints an empty document, exit 0"
