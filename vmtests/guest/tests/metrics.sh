# metrics: `fhook count --listen` and `fhook latency --listen` serve the
# module's tables as Prometheus metrics while they run, read at each
# scrape (docs/fleet.md): fhook_testmod_target called a known number of
# times (writes to its proc file) is fhook_calls_total exactly, before and
# after more calls, and what the command prints at its end; the latency
# histogram's buckets are those `fhook latency --format json` prints, bound
# for bound (le = the bucket's highest ns); a CAP_PERFMON-only user serves
# the same; bad addresses and a port taken are refused with one line.
. /fhook/lib.sh

load_fhook
load_workmod
TM=/proc/fhook_testmod
ip link set lo up 2> /dev/null || ifconfig lo 127.0.0.1 up
CALLS='fhook_calls_total{function="fhook_testmod_target",module=""}'

fhook count --listen 127.0.0.1:9110 -d 120 fhook_testmod_target > $D/c.out 2> $D/c.err &
pid=$!
scrape_metrics 9110 $D/s0 $D/c.err
expect_eq "$(metric $D/s0 "$CALLS")" 0 "calls before the workload"
echo call 3000 > $TM
scrape_metrics 9110 $D/s1
expect_eq "$(metric $D/s1 "$CALLS")" 3000 "calls after 3000"
echo call 500 > $TM
scrape_metrics 9110 $D/s2
expect_eq "$(metric $D/s2 "$CALLS")" 3500 "calls after 500 more"
grep -q '^# TYPE fhook_calls_total counter$' $D/s2 || fail "no counter TYPE line: $(head -n 3 $D/s2)"
grep -q '^fhook_probes 1$' $D/s2 || fail "no fhook_probes 1: $(grep probes $D/s2)"
grep -q '^fhook_lost_events_total{cpu="0",reason="ring_full"} 0$' $D/s2 || fail "no lost events of CPU 0: $(grep lost $D/s2)"
grep -q "^fhook: metrics on http://127.0.0.1:9110/metrics$" $D/c.err || fail "the endpoint is not named: $(cat $D/c.err)"
# (a second fhook cannot have the port)
run_fhook $D/taken count --listen 127.0.0.1:9110 -d 1 fhook_testmod_target
[ "$RC" != 0 ] && grep -q "^fhook: error: cannot listen on 127.0.0.1:9110: Address already in use" $D/taken.err ||
	fail "a taken port: exit $RC, $(cat $D/taken.err)"
kill -INT $pid
wait $pid
expect_eq "$?" 0 "count --listen exit code"
grep -q '^ *3500  fhook_testmod_target$' $D/c.out || fail "the table at the end is not the scrape's 3500: $(cat $D/c.out)"
wget -q -O $D/gone http://127.0.0.1:9110/metrics 2> /dev/null && fail "still serving after the end"

# bad addresses: one line, non-zero
for bad in 9110 :99999 localhost:9110 ""; do
	run_fhook $D/bad count --listen "$bad" -d 1 fhook_testmod_target
	[ "$RC" != 0 ] && [ "$(wc -l < $D/bad.err)" = 1 ] && grep -q '^fhook: error: ' $D/bad.err ||
		fail "--listen '$bad': exit $RC, $(cat $D/bad.err)"
done
run_fhook $D/push count --push https://gateway:9091 -d 1 fhook_testmod_target
[ "$RC" != 0 ] && grep -q "^fhook: error: --push takes a Pushgateway's http:// URL" $D/push.err ||
	fail "--push https://: exit $RC, $(cat $D/push.err)"
# (nothing listens on the loopback's 9099: said in one line, after the table)
run_fhook $D/nogw count --push http://127.0.0.1:9099 -d 0.5 fhook_testmod_target
[ "$RC" != 0 ] && grep -q "^fhook: error: cannot reach 127.0.0.1:9099: Connection refused" $D/nogw.err &&
	grep -q 'fhook_testmod_target$' $D/nogw.out || fail "--push to nothing: exit $RC, $(cat $D/nogw.err)"
run_fhook $D/otlp count --otlp http://127.0.0.1:9099 -d 0.5 fhook_testmod_target
[ "$RC" != 0 ] && grep -q "^fhook: error: cannot reach 127.0.0.1:9099: Connection refused" $D/otlp.err ||
	fail "--otlp to nothing: exit $RC, $(cat $D/otlp.err)"
run_fhook $D/lim count --series-limit 5 -d 1 fhook_testmod_target
[ "$RC" != 0 ] && grep -q -- "--series-limit needs --listen" $D/lim.err || fail "--series-limit alone: $(cat $D/lim.err)"

# a CAP_PERFMON-only user serves the same (observing)
chmod 0666 /dev/fhook
fhook-capexec 1000 1000 - perfmon -- fhook count --listen 127.0.0.1:9112 -d 120 fhook_testmod_target \
	> $D/p.out 2> $D/p.err &
pid=$!
scrape_metrics 9112 $D/p0 $D/p.err
echo call 700 > $TM
scrape_metrics 9112 $D/p1
expect_eq "$(metric $D/p1 "$CALLS")" 700 "a CAP_PERFMON user's calls after 700"
kill -INT $pid
wait $pid
chmod 0600 /dev/fhook

# hist: a series per key (the task's name; its pid only with
# --pid-labels), the table's hits as the hist file's at the end
fhook hist --listen 127.0.0.1:9113 -d 120 fhook_testmod_target 'keys=common_pid.execname' \
	> $D/h.out 2> $D/h.err &
pid=$!
scrape_metrics 9113 $D/h0 $D/h.err
sh -c "echo call 300 > $TM"
scrape_metrics 9113 $D/h1 $D/h.err
kill -INT $pid
wait $pid
expect_eq "$?" 0 "hist --listen exit code"
expect_eq "$(metric $D/h1 'fhook_hist_hits_total{table="0",comm="sh"}')" 300 "hist hits of sh"
grep -q 'common_pid' $D/h1 && fail "a pid label without --pid-labels: $(grep common_pid $D/h1 | head -n 2)"
grep -q '^{ common_pid: sh *\[ *[0-9]*\] } hitcount: *300$' $D/h.out ||
	fail "the hist file at the end has no 300 hits of sh: $(cat $D/h.out)"
# 10,000 keys (the loop's i), each a series; the scrape's cost, a figure
fhook hist --listen 127.0.0.1:9116 --series-limit 20000 -d 120 'p fhook_testmod_target i=$arg1:u64' 'keys=i:size=16384' \
	> $D/k.out 2> $D/k.err &
pid=$!
scrape_metrics 9116 $D/k0 $D/k.err
echo call 10000 > $TM
scrape_metrics 9116 $D/k1 $D/k.err
t0=$(cut -d' ' -f1 /proc/uptime)
scrape_metrics 9116 $D/k2 $D/k.err
t1=$(cut -d' ' -f1 /proc/uptime)
kill -INT $pid
wait $pid
expect_eq "$(grep -c '^fhook_hist_hits_total{table="0",i="[0-9]*"} 1$' $D/k2)" 10000 "series of 10,000 keys"
log "figure: a scrape of 10,000 hist series: $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms by wget (1/100 s clock), collection $(metric $D/k2 fhook_scrape_duration_seconds) s, $(wc -c < $D/k2) bytes"

# (triggers with an 'if' each are aggregated by fhook from the records)
run_fhook $D/hs hist --listen 127.0.0.1:9114 -d 1 fhook_testmod_target 'keys=comm if common_pid > 1' 'keys=cpu'
[ "$RC" != 0 ] && grep -q "^fhook: error: --listen, --push and --otlp serve the tables the module keeps" $D/hs.err ||
	fail "hist --listen on tables kept by fhook: exit $RC, $(cat $D/hs.err)"

# wakeup --rt hist: the module's per-CPU histograms; 100 wakeups of a
# FIFO thread counted (a stray RT kernel thread may add a few by the end;
# a wakeup that finds the thread still running is no wait, as the wakeup
# test says: 99 of 100 on a loaded 6.1 guest, 2026-12-06)
fhook wakeup --rt hist --listen 127.0.0.1:9115 -d 120 --format json > $D/w.out 2> $D/w.err &
pid=$!
scrape_metrics 9115 $D/w0 $D/w.err
fhook-wakeprog -f 50 -c 1 -w 0 100 1000 > /dev/null
scrape_metrics 9115 $D/w1 $D/w.err
kill -INT $pid
wait $pid
expect_eq "$?" 0 "wakeup --listen exit code"
scraped=$(awk '/^fhook_wakeup_latency_seconds_count\{tracer="wakeup_rt",cpu="[0-9]*"\}/ { n += $2 } END { print n + 0 }' $D/w1)
final=$(head -n 1 $D/w.out | grep -o '"count":[0-9]*' | head -n 1 | cut -d: -f2)
[ "$scraped" -ge 90 ] && [ "$final" -ge "$scraped" ] && [ $((final - scraped)) -le 5 ] ||
	fail "wakeups scraped $scraped, at the end $final (100 made): $(grep count $D/w1 | head -n 3)"
grep -q '^fhook_wakeup_latency_max_seconds{tracer="wakeup_rt",cpu="1"} [0-9.e-]*$' $D/w1 ||
	fail "no maximum of CPU 1: $(grep max $D/w1)"

# latency: the buckets of the scrape are those of the JSON at the end
if ! has_feature latency; then
	pass "count's endpoint: 0, 3000, 3500 calls as the table, a CAP_PERFMON user's 700, hist's 300 hits of sh, $scraped wakeups, tables fhook keeps and bad addresses refused (no latency trampoline here: no histogram)"
fi
fhook latency --listen 127.0.0.1:9111 -d 120 --format json fhook_testmod_target > $D/l.out 2> $D/l.err &
pid=$!
scrape_metrics 9111 $D/l0 $D/l.err
echo call 2000 > $TM
scrape_metrics 9111 $D/l1
kill -INT $pid
wait $pid
expect_eq "$?" 0 "latency --listen exit code"
H='fhook_function_duration_seconds'
expect_eq "$(metric $D/l1 "${H}_count{function=\"fhook_testmod_target\"}")" 2000 "durations counted"
expect_eq "$(metric $D/l1 "${H}_bucket{function=\"fhook_testmod_target\",le=\"+Inf\"}")" 2000 "the +Inf bucket"
# "hi count" of each non-empty bucket: the scrape's (le in s as ns, from
# the cumulative counts) and the JSON's
awk -F'[{}=", ]+' -v h="${H}_bucket" '$1 == h && $5 != "+Inf" {
	n = $NF - prev; prev = $NF; if (n) printf "%.0f %d\n", $5 * 1e9, n }' $D/l1 > $D/l1.b
tr '{' '\n' < $D/l.out | sed -n 's/.*"hi":\([0-9]*\),"count":\([0-9]*\)}.*/\1 \2/p' > $D/l.b
[ -s $D/l.b ] || fail "no buckets in the JSON: $(cat $D/l.out)"
cmp -s $D/l1.b $D/l.b || fail "scraped buckets differ from the JSON's: $(diff $D/l.b $D/l1.b | tr '\n' '|')"
pass "count's endpoint: 0, 3000, 3500 calls as the table, a CAP_PERFMON user's 700, hist's 300 hits of sh, $scraped wakeups, tables fhook keeps and bad addresses refused; latency's buckets as its JSON: $(tr '\n' '|' < $D/l.b)"
