# mod_filter: GLOB:mod:MODULE.  "fhook list functions '*:mod:M'" lists the
# same functions as tracefs's set_ftrace_filter after '*:mod:M', and a trace
# of 'lo_*:mod:loop' while using a loop device only shows those functions.
. /fhook/lib.sh

load_fhook
load_testmod
M=$MODTEST_MOD

run_fhook $D/l list functions "*:mod:$M"
expect_eq "$RC" 0 "fhook list functions exit code"
echo "*:mod:$M" > $T/set_ftrace_filter || fail "tracefs rejects '*:mod:$M'"
cat $T/set_ftrace_filter > $D/ref
echo > $T/set_ftrace_filter
n=$(wc -l < $D/l.out) nref=$(wc -l < $D/ref)
log "fhook list: $n functions, tracefs: $nref"
[ "$nref" -gt 0 ] || fail "tracefs lists no function for '*:mod:$M'"
expect_eq "$n" "$nref" "fhook list vs tracefs set_ftrace_filter line count"
bad=$(grep -v " \[$M\]\$" $D/l.out | head -n 3 | tr '\n' ' ')
[ -z "$bad" ] || fail "lines not of the form 'name [$M]': $bad"
awk '{ print $1 }' $D/l.out | sort > $D/l.names
awk '{ print $1 }' $D/ref | sort > $D/ref.names
cmp -s $D/l.names $D/ref.names || fail "function names differ from tracefs: $(diff $D/l.names $D/ref.names | grep '^[-+][^-+]' | head -n 4 | tr '\n' ' ')"

case $MODTEST_KIND in
loop)
	G='lo_*'
	dd if=/dev/zero of=/tmp/img bs=1024 count=1024 2>/dev/null || fail "cannot create the image file"
	set -- sh -c 'losetup /dev/loop0 /tmp/img &&
		      dd if=/dev/loop0 of=/dev/null bs=4096 count=64 2>/dev/null &&
		      losetup -d /dev/loop0'
	;;
brd)
	G='brd_*'
	set -- dd if=/dev/ram0 of=/dev/null bs=4096 count=64
	;;
*)
	skip "no workload for module $M"
	;;
esac
grep "^$G" $D/l.names > /dev/null || fail "no '$G' function in $M"
run_fhook $D/f trace "$G:mod:$M" -- "$@"
expect_eq "$RC" 0 "fhook trace exit code"
summary $D/f
ev=$(count_events $D/f.out)
[ "$ev" -gt 0 ] || fail "no events from '$G:mod:$M' while using the module"
functions $D/f.out > $D/f.names
log "traced functions: $(tr '\n' ' ' < $D/f.names)"
outside=$(grep -vxF -f $D/l.names $D/f.names | head -n 3 | tr '\n' ' ')
[ -z "$outside" ] || fail "events of functions outside $M: $outside"
notglob=$(grep -v "^${G%\*}" $D/f.names | head -n 3 | tr '\n' ' ')
[ -z "$notglob" ] || fail "events of functions not matching $G: $notglob"
pass "list=$n/$nref events=$ev functions=$(wc -l < $D/f.names)"
