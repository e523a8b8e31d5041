# uprobe_fault: a uprobe's string argument on a page the probed process
# mapped but never touched: fhook's handler reads it with page faults
# allowed, as trace_uprobe does (before, it read with faults disabled and
# every such string came out as a fault), and gets exactly what the program
# passed, as uprobe_events does on the same offset.
. /fhook/lib.sh

N=8
BIN=/fhook/bin/fhook-utarget
ARGS='lbl=+0(+0(+16(%di))):string'
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
pass "$N labels on untouched pages, equal to uprobe_events"
