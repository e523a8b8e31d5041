# hist_report: the kernel's own hist triggers are the oracle for fhook's
# histograms.  One kprobe on vfs_read is armed in kprobe_events with two
# hist triggers and recorded by fhook at the same time over one workload
# (busybox dd with four block sizes: reads of known sizes by known
# processes); `fhook report --hist` with each trigger must print the
# kernel's hist file: the same header, the same entries (as a set: the
# kernel orders equal sort values its own way) and the same totals.
# Then `fhook hist` live beside the kernel's on a second event, compared
# the same way (one trigger kept in the module, two aggregated by fhook, a
# full table's drops); then folded stacks (and a flame graph) of a workload's known reads.
. /fhook/lib.sh

load_fhook
tracefs_reset
# H and E: hits and events of the one probe of a run's summary (a table
# kept in the module: hits, no events)
hits_events() {
	_he=$1.err
	# shellcheck disable=SC2046
	set -- $(sed -n 's/^fhook: probe [0-9]* hits \([0-9]*\) events \([0-9]*\) lost.*/\1 \2/p' "$_he")
	H=$1 E=$2
	[ -n "$E" ] || fail "no probe summary line in $_he"
}
DEF="p:fhkhist/vr vfs_read count=$R3:u64"
# (the filter's comm: the dd processes, not the shell that starts them)
set -- \
	'hist:keys=common_pid.execname,count.log2:vals=hitcount,count if comm == "dd"' \
	'hist:keys=count.buckets=1000:vals=hitcount:sort=count.descending:size=128 if comm == "dd"'
echo "$DEF" >> $T/kprobe_events || fail "kprobe_events refused: $DEF"
# a kernel without CONFIG_HIST_TRIGGERS (the debug kernel): fhook's side
# alone, checked against what the workload is known to do
HAVE_HIST=0
[ -e $T/events/fhkhist/vr/hist ] && HAVE_HIST=1
[ $HAVE_HIST = 1 ] || log "no hist triggers in this kernel: fhook's histograms against the known workload only"
if [ $HAVE_HIST = 1 ]; then
	for trig in "$@"; do
		echo "$trig" >> $T/events/fhkhist/vr/trigger || fail "the kernel refused the trigger: $trig"
	done
fi
echo 1 > $T/events/fhkhist/vr/enable
run_fhook $D/r record -o $D/r.fhk "$DEF" -- sh -c '
	for bs in 1 100 4096 65536; do dd if=/dev/zero of=/dev/null bs=$bs count=7 2> /dev/null; done
	dd if=/dev/zero of=/dev/null bs=3000 count=33 2> /dev/null'
echo 0 > $T/events/fhkhist/vr/enable
[ $HAVE_HIST = 1 ] && cp $T/events/fhkhist/vr/hist $D/ref.hist
expect_eq "$RC" 0 "fhook record exit code"
summary $D/r
expect_eq "$L" 0 "events lost"

# one histogram of the kernel's file (they are separated by two blank lines)
n=0
[ $HAVE_HIST = 1 ] || set --	# (no comparison; the triggers again below)
for trig in "$@"; do
	n=$((n + 1))
	awk -v want=$n '/^# event histogram$/ { h++ } h == want' $D/ref.hist > $D/ref.$n
	run_fhook $D/h$n report -q --hist "$trig" $D/r.fhk
	expect_eq "$RC" 0 "report --hist exit code ($trig)"
	# the header and totals line for line, the entries as a set
	for part in head entries totals; do
		for side in ref h; do
			f=$D/$side.$n
			[ $side = h ] && f=$D/h$n.out
			case $part in
			head) sed -n '1,5p' $f ;;
			entries) grep '^{' $f | sort ;;
			totals) sed -n '/^Totals:$/,/^    Dropped:/p' $f ;;
			esac > $D/$side.$n.$part
		done
		cmp -s $D/ref.$n.$part $D/h.$n.$part || {
			log "kernel:"; sed 's/^/#   /' $D/ref.$n
			log "fhook:"; sed 's/^/#   /' $D/h$n.out
			fail "trigger $n ($trig): the $part differ"
		}
	done
	log "trigger $n: $(grep -c '^{' $D/h$n.out) entries, $(grep 'Hits:' $D/h$n.out | tr -d ' ') as the kernel's"
done
[ $HAVE_HIST = 1 ] || set -- \
	'hist:keys=common_pid.execname,count.log2:vals=hitcount,count if comm == "dd"' \
	'hist:keys=count.buckets=1000:vals=hitcount:sort=count.descending:size=128 if comm == "dd"'
[ $HAVE_HIST = 1 ] || run_fhook $D/h1 report -q --hist "$1" $D/r.fhk
# the known workload: 4 x 7 + 33 reads by dd, at least (dd reads
# nothing else here, but a libc may)
hits=$(sed -n 's/^ *Hits: //p' $D/h1.out)
[ "$hits" -ge 61 ] || fail "Hits: $hits, want at least 61 (the dd reads)"
grep -q '^{ common_pid: dd  *\[ *[0-9]*\], count: ~ 2^16 } hitcount:          7  count:     458752$' $D/h1.out ||
	fail "no entry for dd's 7 reads of 65536 bytes"

# fhook hist live beside the kernel's triggers on a second kprobe event of
# the same definition, armed only meanwhile: (1) one trigger, kept in the
# module (no record reaches fhook: events 0), (2) both triggers, which
# share their "if": two tables of the probe in the module, (3) a table of
# 128 entries that 200 keys overflow: Dropped exactly as the kernel's,
# (4) two triggers with their own "if": aggregated by fhook from the
# records
DEF2="p:fhkhist/vr2 vfs_read count=$R3:u64"
live() {	# PHASE WORKLOAD TRIGGER...
	_ph=$1 _wl=$2
	shift 2
	echo "$DEF2" >> $T/kprobe_events || fail "kprobe_events refused: $DEF2"
	if [ $HAVE_HIST = 1 ]; then
		for trig in "$@"; do
			echo "$trig" >> $T/events/fhkhist/vr2/trigger || fail "the kernel refused: $trig"
		done
	fi
	echo 1 > $T/events/fhkhist/vr2/enable
	run_fhook $D/l$_ph hist "$DEF" "$@" -- sh -c "$_wl"
	echo 0 > $T/events/fhkhist/vr2/enable
	expect_eq "$RC" 0 "fhook hist exit code (phase $_ph)"
	grep -q "^Tracing p:fhkhist/vr vfs_read count=$R3:u64\.\.\. Hit Ctrl-C to end\.\$" $D/l$_ph.err ||
		fail "no 'Tracing ... Hit Ctrl-C to end.' on stderr"
	n=0
	if [ $HAVE_HIST = 1 ]; then
		cp $T/events/fhkhist/vr2/hist $D/ref2.$_ph
	else
		set --	# nothing to compare with
		echo "-:fhkhist/vr2" >> $T/kprobe_events
	fi
	for trig in "$@"; do
		n=$((n + 1))
		awk -v want=$n '/^# event histogram$/ { h++ } h == want' $D/ref2.$_ph > $D/r.$_ph.$n
		awk -v want=$n '/^# event histogram$/ { h++ } h == want' $D/l$_ph.out > $D/f.$_ph.$n
		for side in r f; do
			sed -n '1,5p' $D/$side.$_ph.$n > $D/$side.$_ph.$n.head
			grep '^{' $D/$side.$_ph.$n | sort > $D/$side.$_ph.$n.entries
			sed -n '/^Totals:$/,/^    Dropped:/p' $D/$side.$_ph.$n > $D/$side.$_ph.$n.totals
		done
		for part in head entries totals; do
			cmp -s $D/r.$_ph.$n.$part $D/f.$_ph.$n.$part || {
				log "kernel:"; sed 's/^/#   /' $D/r.$_ph.$n
				log "fhook hist:"; sed 's/^/#   /' $D/f.$_ph.$n
				fail "fhook hist phase $_ph, trigger $n: the $part differ from the kernel's"
			}
		done
		log "phase $_ph trigger $n: $(grep -c '^{' $D/f.$_ph.$n) entries, $(grep -E 'Hits|Dropped' $D/f.$_ph.$n | tr -d ' \n') as the kernel's"
	done
	[ $HAVE_HIST = 1 ] || return 0
	for trig in "$@"; do echo "!$trig" >> $T/events/fhkhist/vr2/trigger; done
	echo "-:fhkhist/vr2" >> $T/kprobe_events
}
DD='for bs in 1 100 4096 65536; do dd if=/dev/zero of=/dev/null bs=$bs count=5 2> /dev/null; done
	dd if=/dev/zero of=/dev/null bs=3000 count=21 2> /dev/null'
live 1 "$DD" "$1"
# kept in the module: hits, but no event through the ring
sed -n 's/^fhook: probe [0-9]* hits \([0-9]*\) events \([0-9]*\) lost.*/\1 \2/p' $D/l1.err > $D/l1.he
read -r h1 e1 < $D/l1.he
[ "${h1:-0}" -gt 0 ] && [ "$e1" = 0 ] || fail "phase 1: hits $h1 events $e1: the table was not kept in the module"
grep -q '^{ common_pid: dd  *\[ *[0-9]*\], count: ~ 2^16 } hitcount:          5  count:     327680$' $D/l1.out ||
	fail "fhook hist: no entry for dd's 5 reads of 65536 bytes"
live 2 "$DD" "$@"
hits_events $D/l2
[ "$H" -gt 0 ] && [ "$E" = 0 ] || fail "phase 2: hits $H events $E: the two tables were not kept in the module"
live 3 'i=1; while [ $i -le 200 ]; do dd if=/dev/zero of=/dev/null bs=$i count=1 2> /dev/null; i=$((i + 1)); done' \
	'hist:keys=count:vals=hitcount:size=128 if comm == "dd"'
grep -q '^    Dropped: [1-9]' $D/l3.out || fail "phase 3: nothing dropped from a full table"
# 200 keys of one read each: 128 entries, the other 72 dropped
grep -q '^    Entries: 128$' $D/l3.out || fail "phase 3: $(grep Entries $D/l3.out), want 128"
d3=$(sed -n 's/^    Dropped: //p' $D/l3.out) h3=$(sed -n 's/^    Hits: //p' $D/l3.out)
expect_eq "$((h3 + d3))" 200 "phase 3: hits + dropped, the 200 reads"
live 4 "$DD" "$1" 'hist:keys=count.buckets=1000:vals=hitcount:sort=count.descending:size=128 if comm == "dd" && count > 50'
summary $D/l4
[ "$E" -gt 0 ] && [ "$L" = 0 ] || fail "phase 4: events $E lost $L: fhook should aggregate the records, all of them"

# SIGUSR1 prints the histogram so far, and the run goes on: two tables,
# the second with the reads after the signal too
run_fhook $D/u hist vfs_read 'keys=common_pid.execname' -- sh -c \
	'dd if=/dev/zero of=/dev/null bs=1 count=7 2> /dev/null; kill -USR1 $PPID; sleep 1
	 dd if=/dev/zero of=/dev/null bs=1 count=9 2> /dev/null'
expect_eq "$RC" 0 "fhook hist with a SIGUSR1 exit code"
sed -n 's/^    Hits: //p' $D/u.out > $D/u.hits
expect_eq "$(wc -l < $D/u.hits)" 2 "tables printed (SIGUSR1, end)"
{ read -r u1; read -r u2; } < $D/u.hits
[ "$u1" -ge 7 ] && [ "$u2" -ge $((u1 + 9)) ] || fail "SIGUSR1 table: $u1 hits, final: $u2"
log "SIGUSR1: $u1 hits so far, $u2 at the end"

# folded stacks of a known workload: 40 reads of fhook-workload, each
# ending in its syscall's chain to the probed vfs_read
run_fhook $D/s record -o $D/s.fhk --stack vfs_read -- fhook-workload read 40
expect_eq "$RC" 0 "fhook record --stack exit code"
run_fhook $D/fo report -q --hist keys=stacktrace --comm fhook-workload --folded \
	--flamegraph $D/fg.svg $D/s.fhk
expect_eq "$RC" 0 "report --folded exit code"
sum=$(awk '{ n += $NF } END { print n + 0 }' $D/fo.out)
expect_eq "$sum" 40 "folded counts of fhook-workload's reads"
grep -q '^[^ ]*ksys_read;vfs_read [0-9]*$' $D/fo.out ||
	fail "no folded stack ending in ksys_read;vfs_read: $(head -n 3 $D/fo.out)"
grep -q '^<svg ' $D/fg.svg && grep -q '</svg>$' $D/fg.svg || fail "no SVG document in fg.svg"
log "folded: $(wc -l < $D/fo.out) stacks, $sum reads; first: $(head -n 1 $D/fo.out)"
# the same stacks kept in the module: no record crosses (events 0), the
# same folded lines as the recording's
run_fhook $D/ms hist --folded vfs_read 'keys=stacktrace if comm == "fhook-workload"' -- \
	fhook-workload read 40
expect_eq "$RC" 0 "fhook hist keys=stacktrace exit code"
hits_events $D/ms
[ "$H" -gt 0 ] && [ "$E" = 0 ] || fail "stacks: hits $H events $E: the table was not kept in the module"
sort $D/fo.out > $D/fo.sorted
sort $D/ms.out > $D/ms.sorted
cmp -s $D/fo.sorted $D/ms.sorted || {
	diff $D/fo.sorted $D/ms.sorted | head -n 10 | sed 's/^/#   /'
	fail "the module's stacks differ from the recording's"
}
log "module stacks: $(wc -l < $D/ms.out) as the recording's"
if [ $HAVE_HIST = 1 ]; then
	echo '!'"$2" >> $T/events/fhkhist/vr/trigger
	echo '!'"$1" >> $T/events/fhkhist/vr/trigger
fi
echo "-:fhkhist/vr" >> $T/kprobe_events
unload_fhook
pass "two hist triggers as the kernel's, recorded ($hits hits) and live; folded stacks of $sum reads"
