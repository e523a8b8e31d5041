# otlp: what fhook sends an OpenTelemetry collector and the latency
# tracers' metrics (docs/fleet.md), received by a loopback collector
# (busybox httpd, a CGI keeping each request's body):
#   trace --otlp      fhook_testmod_target called 300 times (writes to the
#                     test module's proc file) is 300 LogRecords naming it,
#                     in two requests (256 + 44)
#   errors --otlp     the test module's failing chain (outer -> middle ->
#                     alloc, -ENOMEM: its source) is one trace of three
#                     nested spans, status ERROR, the first failure marked
#   timerlat --listen the measures served while it runs grow; --otlp at the
#                     end holds exactly the counts of the table it prints
#                     at the end
#   osnoise, hwlat    served the same way (osnoise: runtime, interference)
# and a collector that refuses is one error line.
. /fhook/lib.sh

load_fhook
load_workmod
TM=/proc/fhook_testmod
ip link set lo up 2> /dev/null || ifconfig lo 127.0.0.1 up
mkdir -p $D/www/cgi-bin $D/got
{
	echo '#!/bin/sh'
	echo "n=\$(ls $D/got | wc -l)"
	echo "echo \"\$REQUEST_METHOD \$CONTENT_TYPE\" > $D/got/head.\$n"
	echo "head -c \"\$CONTENT_LENGTH\" > $D/got/req.\$n"
	echo "printf 'Content-Type: application/json\\r\\n\\r\\n{}'"
} > $D/www/cgi-bin/v1
{
	echo '#!/bin/sh'
	echo "printf 'Status: 503 Service Unavailable\\r\\nContent-Type: text/plain\\r\\n\\r\\nbusy'"
} > $D/www/cgi-bin/refuse
chmod +x $D/www/cgi-bin/v1 $D/www/cgi-bin/refuse
busybox httpd -f -p 127.0.0.1:4318 -h $D/www &
URL=http://127.0.0.1:4318/cgi-bin/v1
# the bodies received, in order
bodies() { ls $D/got | grep '^req\.' | sort -t. -k2 -n | sed "s|^|$D/got/|"; }
fresh() { rm -f $D/got/*; }
# served PREFIX PORT PAUSE FHOOK-ARGS...: fhook FHOOK-ARGS in the background,
# its endpoint on PORT scraped into PREFIX.0, again PAUSE s later into
# PREFIX.1; then its end, exit 0
served() {
	_p=$1 _port=$2 _pause=$3
	shift 3
	fhook "$@" > $_p.out 2> $_p.err &
	_pid=$!
	scrape_metrics $_port $_p.0 $_p.err
	sleep $_pause
	scrape_metrics $_port $_p.1 $_p.err
	wait $_pid
	expect_eq "$?" 0 "fhook $1 --listen exit code"
}
# otlp_count BODY METRIC [LABEL-VALUE]: the sum of the histogram METRIC's
# data points' counts in the OTLP request BODY (those with LABEL-VALUE)
otlp_count() {
	sed 's/{"name":"/\n&/g' "$1" | grep "^{\"name\":\"$2\"" | sed 's/{"attributes"/\n&/g' |
		grep "\"stringValue\":\"${3:-}" | grep -o '"count":"[0-9]*"' | grep -o '[0-9]*' |
		awk '{ n += $1 } END { print n + 0 }'
}

# events as logs
run_fhook $D/t trace --otlp $URL fhook_testmod_target -- sh -c "echo call 300 > $TM"
expect_eq "$RC" 0 "trace --otlp exit code"
[ -s $D/t.out ] && fail "trace --otlp printed events: $(head -n 3 $D/t.out)"
records=$(cat $(bodies) | grep -o '"body":{"stringValue":"[^"]*fhook_testmod_target' | wc -l)
expect_eq "$records" 300 "LogRecords of fhook_testmod_target"
expect_eq "$(bodies | wc -l)" 2 "requests of up to 256 records"
grep -q '^POST application/json$' $D/got/head.0 || fail "not a JSON POST: $(cat $D/got/head.*)"
grep -q '^{"resourceLogs":\[{"resource":{"attributes":\[{"key":"service.name","value":{"stringValue":"fhook"}}\]}' $D/got/req.0 ||
	fail "not an ExportLogsServiceRequest: $(head -c 300 $D/got/req.0)"
expect_eq "$(cat $(bodies) | grep -o '"key":"fhook.func","value":{"stringValue":"fhook_testmod_target"}' | wc -l)" 300 "fhook.func attributes"

# a failing chain as a trace
fresh
run_fhook $D/e errors --otlp $URL fhook_testmod_fail_outer -- sh -c "echo fail 1 > $TM; exit 0"
expect_eq "$RC" 0 "errors --otlp exit code"
expect_eq "$(bodies | wc -l)" 1 "requests: one chain"
b=$(bodies)
grep -q '^{"resourceSpans":\[' $b || fail "not an ExportTraceServiceRequest: $(head -c 300 $b)"
spans=$(grep -o '"spanId":"[0-9a-f]*"\(,"parentSpanId":"[0-9a-f]*"\)\{0,1\},"name":"[a-z_]*"' $b)
log "spans: $(echo $spans)"
names=$(echo "$spans" | sed 's/.*"name":"\([a-z_]*\)"/\1/' | tr '\n' ' ')
expect_same "$names" "fhook_testmod_fail_outer fhook_testmod_fail_middle fhook_testmod_fail_alloc " "the spans"
# each the child of the one before
echo "$spans" | awk -F'"' '{ id = $4; parent = ($6 == "parentSpanId") ? $8 : "" }
	NR == 1 && parent != "" { bad = 1 } NR > 1 && parent != prev { bad = 1 } { prev = id }
	END { exit bad }' || fail "spans not nested: $spans"
# (where the test module has BTF, 6.12 and the debug kernel, the two that
# return pointers say so: ERR_PTR(-ENOMEM); without it, 6.1, every value
# reads as an errno)
expect_eq "$(grep -oE '"status":\{"code":2,"message":"(-ENOMEM|ERR_PTR\(-ENOMEM\))"\}' $b | wc -l)" 3 \
	"spans with status ERROR -ENOMEM or ERR_PTR(-ENOMEM)"
grep -o '"name":"fhook_testmod_fail_alloc".*' $b | grep -q '"key":"fhook.first","value":{"boolValue":true}' ||
	fail "the first failure is not marked on fhook_testmod_fail_alloc: $(head -c 1500 $b)"

# a collector that refuses: one line, non-zero
run_fhook $D/r trace --otlp http://127.0.0.1:4318/cgi-bin/refuse fhook_testmod_target -- sh -c "echo call 3 > $TM"
[ "$RC" != 0 ] && grep -q "^fhook: error: the OTLP endpoint at http://127.0.0.1:4318/cgi-bin/refuse answered 503: busy$" $D/r.err ||
	fail "a refusing collector: exit $RC, $(cat $D/r.err)"
run_fhook $D/f trace --otlp $URL --format json -d 1 fhook_testmod_target
[ "$RC" != 0 ] && grep -q "^fhook: error: --otlp sends OTLP JSON to the endpoint: it takes neither --format nor -o$" $D/f.err ||
	fail "--otlp with --format: exit $RC, $(cat $D/f.err)"

# timerlat: served while it runs, sent exactly at the end
fresh
served $D/l 9117 1 timerlat --listen 127.0.0.1:9117 --otlp $URL --format json -d 4
# scraped: a count per CPU and context; the second scrape's larger
sum_count() {
	awk -v c="context=\"$2\"" '/^fhook_timerlat_latency_seconds_count\{/ && index($0, c) { n += $2 } END { print n + 0 }' "$1"
}
s0=$(sum_count $D/l.0 thread)
s1=$(sum_count $D/l.1 thread)
[ "$s1" -gt "$s0" ] || fail "thread measures scraped: $s0 then $s1: $(grep timerlat_latency_seconds_count $D/l.1)"
grep -q '^# TYPE fhook_timerlat_latency_max_seconds gauge$' $D/l.1 || fail "no maxima: $(grep max $D/l.1)"
# the end: the table's counts are the OTLP request's
final=$(tail -n 1 $D/l.out)
b=$(bodies | tail -n 1)
for ctx in irq thread; do
	want=$(echo "$final" | sed 's/.*"all":{//' | grep -o "\"$ctx\":{\"count\":[0-9]*" | grep -o '[0-9]*$')
	got=$(otlp_count $b fhook_timerlat_latency_seconds $ctx)
	[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ] ||
		fail "timerlat $ctx measures: the table's $want, OTLP's $got: $(echo "$final" | head -c 400)"
	eval "n_$ctx=$want"
done
# osnoise and hwlat serve theirs the same way
served $D/o 9118 1.5 osnoise hist --listen 127.0.0.1:9118 -d 3
runtime=$(awk '/^fhook_osnoise_runtime_seconds_total\{cpu="0"\}/ { print $2 }' $D/o.1)
awk -v r="${runtime:-0}" 'BEGIN { exit !(r > 0) }' || fail "no osnoise runtime on CPU 0: $(grep osnoise $D/o.1 | head -n 5)"
grep -q '^fhook_osnoise_interference_total{cpu="0",source="irq"} [0-9]*$' $D/o.1 ||
	fail "no interference counts: $(grep interference $D/o.1 | head -n 3)"
fresh
fhook hwlat --listen 127.0.0.1:9119 --otlp $URL --format json -d 3 > $D/h.out 2> $D/h.err &
pid=$!
scrape_metrics 9119 $D/h0 $D/h.err
wait $pid
expect_eq "$?" 0 "hwlat --listen exit code"
grep -q '^fhook_probes 1$' $D/h0 || fail "hwlat's endpoint: $(head -n 5 $D/h0)"
# (each sample printed is one measure in the OTLP histogram at the end)
samples=$(grep -c '"inner_ns"' $D/h.out)
b=$(bodies | tail -n 1)
got=$(otlp_count $b fhook_hwlat_gap_seconds)
expect_eq "$got" "$samples" "hwlat samples in OTLP vs printed"
pass "300 calls as 300 LogRecords in 2 requests, the test module's chain as 3 nested spans, a refusing collector in one line; timerlat scraped $s0 then $s1 thread measures, its table's $n_irq IRQ and $n_thread thread measures in OTLP at the end; osnoise's runtime ${runtime} s on CPU 0, hwlat's $samples samples"
