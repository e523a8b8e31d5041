# kprobe_errors: every bad kprobe definition is one line on stderr naming
# the bad token and why, a non-zero exit, and nothing left registered
# (the kernel's own kprobes/list stays empty).
. /fhook/lib.sh

load_fhook
mount | grep -q ' /sys/kernel/debug ' || mount -t debugfs none /sys/kernel/debug
LIST=/sys/kernel/debug/kprobes/list
BL=/sys/kernel/debug/kprobes/blacklist

n=0
# bad CODE 'DEFINITION' 'EXPECTED TEXT': fhook trace DEFINITION must exit
# CODE with one line on stderr containing TEXT
bad() {
	_code=$1 _def=$2 _want=$3
	n=$((n + 1))
	run_fhook $D/e$n trace --duration 1 "$_def"
	[ "$RC" = "$_code" ] || fail "'$_def': exit $RC, expected $_code: $(cat $D/e$n.err)"
	expect_eq "$(wc -l < $D/e$n.err)" 1 "stderr lines for '$_def'"
	grep -qF -- "$_want" $D/e$n.err || fail "'$_def': error lacks '$_want': $(cat $D/e$n.err)"
	[ ! -s $LIST ] || fail "'$_def' left a kprobe registered: $(head -n 2 $LIST)"
}

bad 1 'p:x no_such_function_xyz' "no symbol 'no_such_function_xyz'"
bad 2 'p:x vfs_read d=%foo' "unknown register '%foo'"
bad 2 "p:x vfs_read d=$R1:u7" "unknown type 'u7'"
bad 2 'p:x vfs_read r=$retval' 'only in return probes'
bad 2 'p:x vfs_read+8 a=$arg1' 'function entry'
bad 2 'r:x vfs_read+8' 'no offset'
bad 2 "p:x vfs_read d=+0($R1" 'dereference is'
bad 2 'p:x vfs_read d=$nope' "unknown variable '\$nope'"
bad 2 'p:x vfs_read d=@no_such_symbol_xyz' "unknown symbol 'no_such_symbol_xyz'"
bad 2 "p:x vfs_read d=$R1 d=$R2" "used twice"
bad 2 "p:x vfs_read d=+0($R1):string[2]" 'arrays of strings'
bad 2 'p:9bad vfs_read' "bad event name '9bad'"
bad 2 'p:x' 'no place to probe'
bad 2 'r0:x vfs_read' 'MAXACTIVE'
# fhook's own code
f=$(awk '$3 == "fhook_ioctl" || $3 == "fhook_session_ioctl" { print $3; exit }' /proc/kallsyms)
[ -n "$f" ] || fail "no fhook_session_ioctl in kallsyms"
bad 1 "p:x $f" 'inside fhook itself'
# the kprobe blacklist: its first function that kallsyms also lists
b=$(awk '{ print $2 }' $BL | head -n 50 | while read -r s; do
	grep -q " $s\$" /proc/kallsyms && { echo "$s"; break; }
done)
[ -n "$b" ] || fail "no blacklisted symbol found in $BL"
bad 1 "p:x $b" 'kprobe blacklist'
# not an instruction boundary: an offset kprobe_events refuses too
for o in 1 2 3; do
	if ! echo "p:fhkchk/x vfs_read+$o" >> $T/kprobe_events 2>/dev/null; then
		bad 1 "p:x vfs_read+$o" 'instruction boundary'
		break
	fi
	echo "-:fhkchk/x" >> $T/kprobe_events
done

# uprobes: a binary without the symbol, a stripped one, no binary
bad 1 'p:x /fhook/bin/fhook-utarget:no_such_symbol' "has no symbol 'no_such_symbol'"
BB=$(readlink -f /bin/sh)
if ! grep -q . /dev/null && [ -f "$BB" ]; then
	run_fhook $D/bb trace --duration 1 "p:x $BB:main"
	if [ "$RC" != 0 ]; then
		grep -q "stripped\|has no symbol" $D/bb.err || fail "busybox: $(cat $D/bb.err)"
	fi
fi
bad 1 'p:x /no/such/binary:main' "cannot open '/no/such/binary'"
bad 2 'p:x /fhook/bin/fhook-utarget:fhk_target a=@jiffies' 'not in uprobes'
bad 1 't:sched:no_such_event' 'no trace event sched:no_such_event'

run_fhook $D/st status
grep -qx 'sessions: 0' $D/st.out || fail "a session is still open: $(grep sessions $D/st.out)"
pass "$n bad definitions refused: blacklisted $b, fhook's $f"
