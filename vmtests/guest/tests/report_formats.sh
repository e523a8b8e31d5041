# report_formats: a record file keeps the format files of its trace events,
# so "fhook report" decodes tracepoint fields as the traced kernel laid
# them out, on a machine whose tracefs has other formats or none: here the
# guest's tracefs is hidden under an empty tmpfs while reporting, and the
# report is identical to what "fhook trace" printed (before, the fields were
# read from the local tracefs, and without it the events had none).
. /fhook/lib.sh

load_fhook
run_fhook $D/t record -o $D/rec.fhk 't:syscalls:sys_enter_read' -- fhook-workload read 50
expect_eq "$RC" 0 "fhook record exit code"
run_fhook $D/live report $D/rec.fhk
expect_eq "$RC" 0 "fhook report (tracefs there) exit code"
n=$(grep -c ': sys_read(.* count: 1)$' $D/live.out)
[ "$n" -ge 50 ] || fail "only $n sys_enter_read events with their fields (50 reads)"
mount -t tmpfs none $T || fail "cannot hide tracefs"
run_fhook $D/away report $D/rec.fhk
umount $T
expect_eq "$RC" 0 "fhook report (no tracefs) exit code"
cmp -s $D/live.out $D/away.out || {
	diff $D/live.out $D/away.out | head -n 6 | sed 's/^/#   /'
	fail "the report without tracefs differs"
}
grep -q 'decoded with this machine' $D/away.err && fail "report fell back to the local format"
pass "$n events with fields; identical without tracefs"
