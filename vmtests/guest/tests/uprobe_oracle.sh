# uprobe_oracle: uprobes and uretprobes on a test binary with a known
# struct argument (fhook-utarget), checked against uprobe_events (same
# file offset, same fetch arguments, same workload) and against the values
# the program passes: the users' example +0(+0(+16(%di))):string is the
# label of the inner struct.  The symbol form (libelf) and the file-offset
# form give the same events.
. /fhook/lib.sh

N=30
BIN=/fhook/bin/fhook-utarget
# (the first two argument registers as uprobe_events spells them here: lib.sh)
ARGS="a=+0($R1):s64 b=+8($R1):s64 lbl=+0(+0(+16($R1))):string id=+8(+16($R1)):s32 k=$R2:s32"
load_fhook
tracefs_reset

run_fhook $D/s trace "p:fhkup/ent $BIN:fhk_target $ARGS" "r:fhkup/ret $BIN:fhk_target r=\$retval:s32" \
	-- $BIN $N
expect_eq "$RC" 0 "fhook trace (symbol) exit code"
probes_exact $D/s.err 2
# the values the program passed, call by call
i=0
sed -n 's/.*: ent: (0x[0-9a-f]*) \(.*\)/\1/p' $D/s.out > $D/ent
expect_eq "$(wc -l < $D/ent)" "$N" "ent events"
while read -r line; do
	case $((i % 3)) in 0) l=alpha ;; 1) l=beta ;; *) l=gamma ;; esac
	want="a=$((10 * i)) b=-$i lbl=\"$l\" id=$i k=$((i % 5))"
	[ "$i" = 0 ] && want="a=0 b=0 lbl=\"alpha\" id=0 k=0"
	[ "$line" = "$want" ] || fail "call $i: '$line', the program passed '$want'"
	i=$((i + 1))
done < $D/ent
sed -n 's/.*: ret: (0x[0-9a-f]* <- 0x[0-9a-f]*) r=\([0-9-]*\)$/\1/p' $D/s.out > $D/ret
expect_eq "$(wc -l < $D/ret)" "$N" "ret events"
i=0
while read -r r; do
	expect_eq "$r" "$((i + i % 5))" "return value of call $i"
	i=$((i + 1))
done < $D/ret

# the address hit -> file offset (static non-PIE: text at 0x401000, file 0x1000)
V=$(sed -n 's/.*: ent: (0x\([0-9a-f]*\)) .*/\1/p' $D/s.out | head -n 1)
OFF=$(printf '0x%x' $((0x$V - 0x400000)))
log "fhk_target hit at 0x$V: file offset $OFF"

# the kernel's uprobe_events on the same offset, fhook's 0xOFFSET form
echo "p:fhkup/ent $BIN:$OFF $ARGS" >> $T/uprobe_events || fail "uprobe_events refused p $BIN:$OFF"
echo "r:fhkup/ret $BIN:$OFF r=\$retval:s32" >> $T/uprobe_events || fail "uprobe_events refused r"
echo 1 > $T/events/fhkup/enable
echo > $T/trace
echo 1 > $T/tracing_on
run_fhook $D/o trace "p:fhkup/ent $BIN:$OFF $ARGS" "r:fhkup/ret $BIN:$OFF r=\$retval:s32" \
	-- $BIN -d 200 $N
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkup/enable
cp $T/trace $D/ref.raw
echo > $T/uprobe_events
expect_eq "$RC" 0 "fhook trace (offset) exit code"
strip_ctx() { sed -n 's/^ *[^ ]*-[0-9]* *\[[0-9]*\] [^ ]* *[0-9.]*: //p' "$1"; }
strip_ctx $D/o.out > $D/o.n
strip_ctx $D/ref.raw > $D/ref.n
expect_eq "$(grep -c '^ent: ' $D/o.n)" "$N" "ent events (offset form)"
cmp -s $D/o.n $D/ref.n || {
	diff $D/ref.n $D/o.n | head -n 10 | sed 's/^/#   /'
	fail "fhook's uprobe events differ from uprobe_events'"
}
# symbol and offset forms: the same lines
strip_ctx $D/s.out > $D/s.n
cmp -s $D/s.n $D/o.n || fail "the symbol form and the offset form differ"
pass "$N calls: fields and return values exact, equal to uprobe_events at $OFF"
