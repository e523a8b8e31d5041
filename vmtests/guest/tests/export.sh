# export: `fhook export --config FILE` as its systemd unit runs it (a
# CAP_PERFMON + CAP_SYSLOG user, docs/fleet.md): the jobs of a TOML file
# served together, each series labelled with its job; fhook_testmod's
# known calls counted exactly; SIGHUP re-reads the file: an unchanged job
# keeps its counts, a new one starts from 0, a file that does not parse
# leaves the jobs as they were (one error line); SIGTERM ends it cleanly.
. /fhook/lib.sh

load_fhook
load_workmod
TM=/proc/fhook_testmod
ip link set lo up 2> /dev/null || ifconfig lo 127.0.0.1 up
calls() { echo "fhook_calls_total{fhook_job=\"$1\",function=\"fhook_testmod_target\",module=\"\"}"; }

cat > $D/e.toml << 'END'
listen = "127.0.0.1:9120"
[[count]]
name = "t"
functions = ["fhook_testmod_target"]
[[hist]]
name = "h"
probe = "fhook_testmod_target"
triggers = ["keys=common_pid.execname"]
END
chmod 0644 $D/e.toml
chmod 0666 /dev/fhook
fhook-capexec 1000 1000 - perfmon,syslog -- fhook export --config $D/e.toml > $D/e.out 2> $D/e.err &
pid=$!
scrape_metrics 9120 $D/s0
echo call 400 > $TM
scrape_metrics 9120 $D/s1
expect_eq "$(metric $D/s1 "$(calls t)")" 400 "job t's calls after 400"
expect_eq "$(metric $D/s1 'fhook_hist_hits_total{fhook_job="h",table="0",comm="sh"}')" 400 "job h's hits of sh"
grep -q "^fhook: 2 job(s) (t, h); metrics on http://127.0.0.1:9120/metrics$" $D/e.err ||
	fail "the start is not named: $(cat $D/e.err)"

# a second job: t kept with its 400, u from 0
cat >> $D/e.toml << 'END'
[[count]]
name = "u"
functions = ["fhook_testmod_target"]
END
kill -HUP $pid
for _i in $(seq 50); do
	scrape_metrics 9120 $D/s2
	[ -n "$(metric $D/s2 "$(calls u)")" ] && break
	sleep 0.1
done
expect_eq "$(metric $D/s2 "$(calls t)")" 400 "job t's calls after the reload (kept)"
expect_eq "$(metric $D/s2 "$(calls u)")" 0 "job u's calls when armed"
grep -q "^fhook: reloaded $D/e.toml: kept t, h; armed u; dropped -$" $D/e.err ||
	fail "the reload is not named: $(cat $D/e.err)"
echo call 100 > $TM
scrape_metrics 9120 $D/s3
expect_eq "$(metric $D/s3 "$(calls t)")" 500 "job t's calls after 100 more"
expect_eq "$(metric $D/s3 "$(calls u)")" 100 "job u's calls after 100 more"
[ "$(grep -c '^# TYPE fhook_calls_total counter$' $D/s3)" = 1 ] || fail "a family twice: $(grep TYPE $D/s3)"

# a file that does not parse: one line, the jobs as they were
echo '[[count]' >> $D/e.toml
kill -HUP $pid
for _i in $(seq 50); do
	grep -q '^fhook: error: ' $D/e.err && break
	sleep 0.1
done
grep -q "^fhook: error: $D/e.toml:[0-9]*:[0-9]*: .*(the running jobs stay as they were)$" $D/e.err ||
	fail "no error line for the broken file: $(cat $D/e.err)"
echo call 10 > $TM
scrape_metrics 9120 $D/s4
expect_eq "$(metric $D/s4 "$(calls t)")" 510 "job t's calls after a broken reload"
kill -TERM $pid
wait $pid
expect_eq "$?" 0 "fhook export's exit on SIGTERM"
chmod 0600 /dev/fhook
no_sessions || fail "a session left after the exporter ended"
pass "a count and a hist job served together (400 calls, 400 hits of sh), a third added (500 and 100), kept across a reload, a broken file refused, SIGTERM clean, as a CAP_PERFMON + CAP_SYSLOG user"
