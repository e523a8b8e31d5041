# btf_names: fetch arguments named with the kernel's BTF (the running
# kernel's /sys/kernel/btf/vmlinux, on 6.1 too, where tracefs has no names)
# give the values the workload fixes: the name of the file read ("zero"),
# the byte count, the open flags; they equal the same fields written with
# the offsets BTF gives (fhook-made, checked by the host unit tests against
# a hand-built BTF) and, where the kernel's kprobe_events understands names
# (6.12), the kernel's own events, the names of unnamed fields included.
# fhook list functions -v prints the prototype; record + report keep the
# resolved definition.
. /fhook/lib.sh

N=21
load_fhook
tracefs_reset
run_fhook $D/l list functions -v vfs_read
expect_eq "$RC" 0 "fhook list functions -v exit code"
grep -q '^vfs_read	ssize_t vfs_read(struct file \*file, char \*buf, size_t count, loff_t \*pos)$' $D/l.out ||
	fail "vfs_read's prototype: $(cat $D/l.out)"

DEF='p:fhkbtf/rd vfs_read name=file->f_path.dentry->d_name.name:string cnt=count fl=file->f_flags:x32 pos=$arg4'
run_fhook $D/f record -o $D/rec "$DEF" 'r:fhkbtf/rr vfs_read $args ret=$retval:s64' \
	-- fhook-workload open $N
expect_eq "$RC" 0 "fhook record exit code"
run_fhook $D/r report $D/rec
expect_eq "$RC" 0 "fhook report exit code"
grep ': rd: ' $D/r.out > $D/rd
expect_eq "$(wc -l < $D/rd)" "$N" "rd events"
i=0
while read -r line; do
	# (f_flags: O_RDONLY and the O_LARGEFILE the kernel adds, this CPU's: lib.sh)
	want="name=\"zero\" cnt=$((i % 7 + 1)) fl=$O_LARGEFILE "
	case "$line" in *"$want"*) ;; *) fail "read $i: '$line' lacks '$want'" ;; esac
	i=$((i + 1))
done < $D/rd
# $args of a return probe: fetched at entry, typed from BTF (count is size_t)
grep -c ': rr: (ksys_read+0x[0-9a-f]*/0x[0-9a-f]* <- vfs_read) file=0x[0-9a-f]* buf=0x[0-9a-f]* count=[1-7] pos=0x[0-9a-f]* ret=[1-7]$' $D/r.out > $D/rrn
expect_eq "$(cat $D/rrn)" "$N" "rr events with \$args and the return value"

# the kernel's own names, where it has them
# (unnamed fields: named after a BTF name, else argN, by both)
KDEF='p:fhkbtf/rd vfs_read name=file->f_path.dentry->d_name.name:string count:u64 file->f_flags:x32'
if echo "$KDEF" >> $T/kprobe_events 2>/dev/null; then
	echo 1 > $T/events/fhkbtf/enable
	echo > $T/trace
	echo 1 > $T/tracing_on
	run_fhook $D/g trace "$KDEF" -- fhook-workload open $N
	echo 0 > $T/tracing_on
	cp $T/trace $D/ref.raw
	echo 0 > $T/events/fhkbtf/enable
	echo > $T/kprobe_events
	WPID=$(sed -n 's/^ *fhook-workload-\([0-9]*\) .*/\1/p' $D/g.out | head -n 1)
	lines() { sed -n "s/^ *[^ ]*-$WPID *\[[0-9]*\] [^ ]* *[0-9.]*: //p" "$1"; }
	lines $D/g.out > $D/g.n
	lines $D/ref.raw > $D/ref.n
	cmp -s $D/g.n $D/ref.n || {
		diff $D/ref.n $D/g.n | head -n 6 | sed 's/^/#   /'
		fail "fhook's BTF-named fields differ from kprobe_events'"
	}
	oracle="equal to kprobe_events' own names"
else
	oracle="kprobe_events has no member names on this kernel"
fi
pass "$N reads: file name, count, flags from BTF names; \$args in a return probe; $oracle"
