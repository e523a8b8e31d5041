# uprobe_fault: a uprobe's string argument on a page the probed process
# mapped but never touched: fhook's handler reads it with page faults
# allowed for root (CAP_SYS_ADMIN), as trace_uprobe does; a CAP_PERFMON
# user's uprobe reads it as a fault (before, it read with faults disabled and
# every such string came out as a fault), and gets exactly what the program
# passed, as uprobe_events does on the same offset.  Long strings: one of
# 3,000 bytes comes out whole, equal to uprobe_events'; one of 8,192 bytes
# is cut where the record ends and says so ("(cut)"; before, cut silently
# at 1,024 bytes).
. /fhook/lib.sh

N=8
BIN=/fhook/bin/fhook-utarget
# (the first argument's register, lib.sh's $R1: uprobe_events has no $argN)
ARGS="lbl=+0(+0(+16($R1))):string"
load_fhook
tracefs_reset
i=0
while [ $i -lt $N ]; do
	printf 'page-%03d' $i | dd of=$D/pages bs=4096 seek=$i conv=notrunc 2> /dev/null
	i=$((i + 1))
done
# the last page whole, so that every label ends inside the file
dd if=/dev/zero of=$D/pages bs=4096 seek=$N count=1 2> /dev/null

run_fhook $D/u trace "p:fhkup/pf $BIN:fhk_target $ARGS" -- $BIN -m $D/pages $N
expect_eq "$RC" 0 "fhook trace exit code"
sed -n 's/.*: pf: (0x[0-9a-f]*) lbl=\(.*\)$/\1/p' $D/u.out > $D/got
expect_eq "$(wc -l < $D/got)" "$N" "events"
i=0
while read -r got; do
	want=$(printf '"page-%03d"' $i)
	[ "$got" = "$want" ] || fail "call $i: lbl=$got, the program passed $want (a fault: the page was not read)"
	i=$((i + 1))
done < $D/got

# a user with CAP_PERFMON only: read with no page faults (as non-sleepable
# BPF reads), so every label on an untouched page is a fault.  Before
# 2026-12-05 it faulted pages in too: a page that never arrives (a FUSE
# daemon that does not answer) held the uprobe's locks for good, every
# uprobe unregister of the system behind them on 6.12.
as_perfmon $D/pm trace "p:fhkup/pf $BIN:fhk_target $ARGS" -- $BIN -m $D/pages $N
expect_eq "$RC" 0 "fhook trace as a CAP_PERFMON user: exit code"
expect_eq "$(grep -c ': pf: (0x[0-9a-f]*) lbl=(fault)$' $D/pm.out)" "$N" \
	"labels on untouched pages read as faults by a CAP_PERFMON user's uprobe ($(head -n 2 $D/pm.out | tr '\n' ' '))"

# the kernel's uprobe_events on the same place reads the same
V=$(sed -n 's/.*: pf: (0x\([0-9a-f]*\)) .*/\1/p' $D/u.out | head -n 1)
OFF=$(printf '0x%x' $((0x$V - 0x400000)))
echo "p:fhkup/pf $BIN:$OFF $ARGS" >> $T/uprobe_events || fail "uprobe_events refused p $BIN:$OFF"
echo 1 > $T/events/fhkup/pf/enable
echo > $T/trace
echo 1 > $T/tracing_on
$BIN -m $D/pages $N
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkup/pf/enable
sed -n 's/.*: pf: (0x[0-9a-f]*) lbl=\(.*\)$/\1/p' $T/trace > $D/ref
echo > $T/uprobe_events
cmp -s $D/got $D/ref || fail "uprobe_events read other labels: $(head -n 3 $D/ref | tr '\n' ' ')"

# long strings: FILE's page 0 holds LEN bytes of one letter, then zeros
long_file() {
	head -c "$2" /dev/zero | tr '\0' "$3" > "$1"
	dd if=/dev/zero of="$1" bs=4096 seek=$(( ($2 + 4095) / 4096 )) count=1 2> /dev/null
}
long_file $D/y 3000 y
long_file $D/x 8192 x
echo "p:fhkup/pf $BIN:$OFF $ARGS" >> $T/uprobe_events || fail "uprobe_events refused p $BIN:$OFF"
echo 1 > $T/events/fhkup/pf/enable
echo > $T/trace
echo 1 > $T/tracing_on
run_fhook $D/ly trace "p:fhkup/pf $BIN:fhk_target $ARGS" -- $BIN -m $D/y 1
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkup/pf/enable
sed -n 's/.*: pf: (0x[0-9a-f]*) lbl=\(.*\)$/\1/p' $T/trace > $D/lref
echo > $T/uprobe_events
sed -n 's/.*: pf: (0x[0-9a-f]*) lbl=\(.*\)$/\1/p' $D/ly.out > $D/lgot
expect_eq "$(wc -c < $D/lgot)" 3003 "bytes of the 3,000-byte label with its quotes and newline"
cmp -s $D/lgot $D/lref || fail "the 3,000-byte label differs from uprobe_events' ($(wc -c < $D/lref) bytes there)"
run_fhook $D/lx trace "p:fhkup/pf $BIN:fhk_target $ARGS" -- $BIN -m $D/x 1
sed -n 's/.*: pf: (0x[0-9a-f]*) lbl="\(x*\)"(cut)$/\1/p' $D/lx.out > $D/cut
[ -s $D/cut ] || fail "the 8,192-byte label is not marked (cut): $(cut -c1-120 $D/lx.out)"
kept=$(( $(wc -c < $D/cut) - 1 ))
[ "$kept" -ge 4000 ] || fail "only $kept bytes of the 8,192-byte label kept"
pass "$N labels on untouched pages, equal to uprobe_events (faults for a CAP_PERFMON user); 3,000 bytes whole; 8,192 cut at $kept and marked"
