# kprobe_oracle: the kernel's own kprobe_events is the oracle.  The same
# probe definitions are armed in tracefs and in fhook over one workload
# (fhook-workload open: known paths, flags and read sizes); every event of
# the workload must print the same probe location and the same fetched
# values in both, event for event.  Covers function-entry kprobes
# (ftrace-based), an int3 kprobe at an offset inside vfs_read, a
# kretprobe, nested dereferences (+0(+0(%si)):string), user strings,
# $comm, $stackN (also one past the end of a kernel stack: 0), @SYM and arrays, %ip and a register ftrace_caller does
# not save (%bx: fhook's ftrace_ops then saves them all; on arm64, which
# has no kprobe-on-ftrace, every kprobe is a BRK one, with its registers
# spelled %x0.. as kprobe_events spells them there).  Then fhook-only forms checked against
# values the workload is known to produce: a kretprobe carrying an entry
# argument ($arg3 of vfs_read) to its return, and faulting fetches.
. /fhook/lib.sh

N=60
load_fhook
tracefs_reset
grep -q ' do_sys_openat2$' /proc/kallsyms || skip "do_sys_openat2 is not in kallsyms (inlined)"

# The registers of the definitions, as kprobe_events spells them on this
# CPU (lib.sh: $R1.., $IP)
# ($stack0 at a function's entry: x86's return address, named; on arm64 a
# word of the caller's frame, whatever it holds: the kernel names one that
# points into its kprobe instruction pages with a size no symbol has)
# (a callee-saved register, lib.sh's others)
if [ "$(uname -m)" = aarch64 ]; then CS=%x19 ST=x64; else CS=%bx ST=symbol; fi
OCW=$(printf '0x%x' $((O_LARGEFILE | 0x41)))	# O_CREAT|O_WRONLY|O_LARGEFILE

# An int3 kprobe: the first offset inside vfs_read, past the fentry call,
# that kprobe_events accepts (an instruction boundary).
OFF=
for o in 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	if echo "p:fhkprobe/off vfs_read+$o" >> $T/kprobe_events 2>/dev/null; then
		OFF=$o
		echo "-:fhkprobe/off" >> $T/kprobe_events
		break
	fi
done
[ -n "$OFF" ] || fail "no kprobe-able offset in vfs_read+5..20"
log "int3 kprobe at vfs_read+$OFF"

# @SYM of data: where kallsyms has data symbols (Debian's arm64 6.1 has
# none: CONFIG_KALLSYMS_ALL is off, kprobe_events refuses them too)
SYMS=
if grep -q ' linux_banner$' /proc/kallsyms; then
	SYMS='cmd=+0(@saved_command_line):string w=@linux_banner:x8[4] '
else
	log "no data symbols in kallsyms: @SYM not compared"
fi

# The definitions, in the kprobe_events syntax (same text for both).
set -- \
	"p:fhkprobe/open do_sys_openat2 dfd=$R1:s32 path=+0($R2):ustring flags=+0($R3):x64 mode=+8($R3):u16 st=\$stack0:$ST" \
	"p:fhkprobe/filp do_filp_open dfd=$R1:s32 name=+0(+0($R2)):string fl=+4($R3):x32" \
	'r:fhkprobe/filpret do_filp_open ret=$retval:x64' \
	"p:fhkprobe/rd vfs_read cnt=$R3:u64 c=\$comm ${SYMS}ip=$IP:x64 bx=$CS:x64 far=\$stack1000:x64" \
	"p:fhkprobe/off vfs_read+$OFF di=$R1:x64 si=$R2:x64 dx=$R3:u64" \
	'r:fhkprobe/rdret vfs_read ret=$retval:s64'
for def in "$@"; do
	echo "$def" >> $T/kprobe_events || fail "kprobe_events refused: $def"
done
echo 1 > $T/events/fhkprobe/enable || fail "cannot enable the tracefs probes"
echo > $T/trace
echo 1 > $T/tracing_on

run_fhook $D/f trace "$@" -- fhook-workload -d 500 open $N
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkprobe/enable
cp $T/trace $D/ref.raw
echo > $T/kprobe_events
expect_eq "$RC" 0 "fhook trace exit code"

# "COMM-PID [CPU] CTX TS: EVENT: REST" -> "EVENT: REST" for the workload
# after its exec.  fhook takes the comm at each event, so the events of
# fhook's child before it became fhook-workload (its exec's own opens)
# carry "fhook"; tracefs prints the pid's latest comm for all of them.
# Those first K events of each probe are left out of the tracefs side.
WPID=$(sed -n 's/^ *fhook-workload-\([0-9]*\) .*/\1/p' $D/f.out | head -n 1)
[ -n "$WPID" ] || fail "no event of fhook-workload in fhook's output"
sed -n "s/^ *fhook-workload-$WPID *\[[0-9]*\] [^ ]* *[0-9.]*: //p" $D/f.out | sort > $D/fhook.n
grep -v "^ *fhook-workload-$WPID " $D/f.out |
	sed -n "s/^ *[^ ]*-$WPID *\[[0-9]*\] [^ ]* *[0-9.]*: \([a-z]*\): .*/\1/p" > $D/preexec
log "events before the exec: $(sort $D/preexec | uniq -c | tr '\n' ' ')"
awk -v pid="$WPID" 'NR == FNR { skip[$1]++; next }
	{ line = $0; sub(/^ */, "", line)
	  if (line !~ "^[^ ]*-" pid " ") next
	  sub(/^[^ ]* *\[[0-9]*\] [^ ]* *[0-9.]*: /, "", line)
	  ev = line; sub(/:.*/, "", ev)
	  if (skip[ev]-- > 0) next
	  print line }' $D/preexec $D/ref.raw | sort > $D/ref.n
# Two kretprobes on one function nest: the one whose entry handler runs
# second sees the first one's trampoline as the return address, which
# tracefs prints as "[unknown/kretprobe'd]".  Return sites are compared
# without it here and checked against the known callers below.
sed -i 's/^\([a-z]*ret\): ([^ ]* <- /\1: (<- /' $D/fhook.n $D/ref.n
for ev in open filp filpret rd off rdret; do
	grep "^$ev: " $D/fhook.n > $D/fhook.$ev
	grep "^$ev: " $D/ref.n > $D/ref.$ev
	nf=$(wc -l < $D/fhook.$ev) nr=$(wc -l < $D/ref.$ev)
	log "$ev: fhook $nf, tracefs $nr; first: $(head -n 1 $D/fhook.$ev)"
	[ "$nr" -gt 0 ] || fail "tracefs saw no $ev event from the workload"
	if ! cmp -s $D/fhook.$ev $D/ref.$ev; then
		diff $D/ref.$ev $D/fhook.$ev | head -n 10 | sed 's/^/#   /'
		grep -- "-$WPID .*: $ev: " $D/ref.raw | sed 's/^ *[^ ]* *\[[0-9]*\] [^ ]* *//' > $D/u.ref
		grep -- "-$WPID .*: $ev: " $D/f.out | sed 's/^ *[^ ]* *\[[0-9]*\] [^ ]* *//' > $D/u.f
		paste -d '|' $D/u.ref $D/u.f | awk -F'|' '{ a = $1; b = $2; sub(/^[0-9.]*: /, "", a);
			sub(/^[0-9.]*: /, "", b); sub(/\(.* <- /, "(<- ", a); sub(/\(.* <- /, "(<- ", b);
			if (a != b) { print NR ": " $0; if (++n > 4) exit } }' | sed 's/^/#   unsorted: /'
		[ -n "$KPROBE_ORACLE_DEBUG" ] && paste -d '|' $D/u.ref $D/u.f | sed 's/^/#   both: /'
		fail "$ev: fhook's events differ from kprobe_events' ($nf vs $nr lines)"
	fi
done
# the return sites fhook saw: do_sys_openat2 for every open (2 per
# iteration), do_open_execat for the exec; ksys_read for every read
nr=$(grep -c ': filpret: (do_sys_openat2+0x[0-9a-f]*/0x[0-9a-f]* <- do_filp_open) ' $D/f.out)
expect_eq "$nr" "$((2 * N))" "filpret events returning to do_sys_openat2"
nr=$(grep -c ': rdret: (ksys_read+0x[0-9a-f]*/0x[0-9a-f]* <- vfs_read) ret=[1-7]$' $D/f.out)
expect_eq "$nr" "$N" "rdret events returning 1..7 bytes to ksys_read"
# the workload's own opens are all there, with the flags it used (plus
# O_LARGEFILE, which the kernel adds on 64-bit)
no=$(grep -c '^open: .*path="/tmp/fhk-open-' $D/fhook.open)
expect_eq "$no" "$N" "open events for /tmp/fhk-open-*"
nc=$(grep -c "^open: .*path=\"/tmp/fhk-open-[0-9]*\" flags=$OCW mode=384 " $D/fhook.open)
expect_eq "$nc" "$(((N + 2) / 3))" "O_CREAT|O_WRONLY opens with mode 0600"
probes_exact $D/f.err 6

# fhook only: entry argument carried to the return ($arg3 = count), whose
# values the workload fixes: count == return value == I % 7 + 1.
run_fhook $D/g trace 'r:rdent vfs_read cnt=$arg3:u64 ret=$retval:s64' \
	"p:flt vfs_read bad=+0(\\0x10):u64 s=+0(\\0x18):string ok=$R3:u64" \
	-- fhook-workload open $N
expect_eq "$RC" 0 "fhook trace (entry args) exit code"
sed -n 's/.*: rdent: (.* <- vfs_read) cnt=\([0-9]*\) ret=\([0-9-]*\)$/\1 \2/p' $D/g.out > $D/rdent
expect_eq "$(wc -l < $D/rdent)" "$N" "rdent events"
i=0
while read -r cnt ret; do
	want=$((i % 7 + 1))
	[ "$cnt" = "$want" ] && [ "$ret" = "$want" ] ||
		fail "read $i: cnt=$cnt ret=$ret, the workload read $want bytes"
	i=$((i + 1))
done < $D/rdent
nflt=$(grep -c ': flt: (vfs_read+0x[0-9a-f]*/0x[0-9a-f]*) bad=(fault) s=(fault) ok=[1-7]$' $D/g.out)
expect_eq "$nflt" "$N" "faulting fetches print (fault), the others their value"
pass "$N opens; 6 definitions equal to kprobe_events; \$arg3 at return and faults exact"
