# command_status: `fhook CMD ... -- COMMAND` exits with COMMAND's status,
# as perf stat and time do: its exit code, 128 + N when signal N killed it,
# 127 when it cannot be executed; the trace itself is complete either way.
. /fhook/lib.sh

load_fhook
run_fhook $D/ok trace vfs_read -- true
expect_eq "$RC" 0 "trace -- true"
# (latency where the kernel has direct calls: not arm64 6.1)
LAT=
has_feature latency && LAT="latency vfs_read"
n=0
for args in "trace vfs_read" "record -o $D/r.fhk vfs_read" "stat vfs_read" \
	"count vfs_read" ${LAT:+"$LAT"} "hook --trace-around vfs_read"; do
	n=$((n + 1))
	run_fhook $D/st $args -- sh -c 'cat /proc/version > /dev/null; exit 3'
	expect_eq "$RC" 3 "fhook $args -- (exit 3)"
done
# the events of the failing command are all there (fhook-workload makes
# 200 read() calls; busybox's cat would sendfile(), without vfs_read)
run_fhook $D/ev trace vfs_read -- sh -c 'fhook-workload read 200; exit 7'
expect_eq "$RC" 7 "trace -- (exit 7)"
summary $D/ev
[ "$E" -ge 200 ] || fail "$E vfs_read events from a command that made 200 reads and exited 7"
run_fhook $D/sig trace vfs_read -- sh -c 'kill -TERM $$'
expect_eq "$RC" 143 "trace -- (killed by SIGTERM)"
run_fhook $D/nx trace vfs_read -- /nonexistent/command
expect_eq "$RC" 127 "trace -- /nonexistent/command"
grep -q "cannot execute '/nonexistent/command'" $D/nx.err ||
	fail "no 'cannot execute' message: $(head -c 300 $D/nx.err)"
pass "exit codes 0, 3 ($n commands), 7 with $E events, 143, 127"
