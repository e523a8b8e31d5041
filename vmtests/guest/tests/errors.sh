# errors: fhook errors names the function an error came from, with the
# kernel as the witness.  One run watches four known failures:
#   fhook_testmod_fail_outer  -ENOMEM from fhook_testmod_fail_alloc, three
#                             calls deep, after a sibling that failed
#                             (-EAGAIN) and did not matter (vmtests/testmod)
#   do_sys_openat2            open("/nonexistent...") -> -ENOENT, and, as
#                             uid 1000, a file in a root-only directory ->
#                             -EACCES
#   __x64_sys_bpf             an array map with max_entries 0 -> -EINVAL
#   (__arm64_sys_bpf)
# For each chain: the first failing function F really returned that errno
# (a kretprobe in kprobe_events, during the same workload), and no function
# F called (the function_graph tracer, one level below F) returned it: the
# error did not come from deeper.  Then return types (a NULL, a bool's
# false, a void function's leftover register), --watch, --fail,
# --ustack, --args (a kprobe's registers as the witness), --lines (the
# test module's source) and a module's failed install of fhook's hooks,
# then 10,000 good opens (2,000 on the debug kernel): no chain and not one
# record.  Bad input is refused in one line.
. /fhook/lib.sh

load_fhook
load_workmod
P=/proc/fhook_testmod
# the CPU's bpf(2) entry and return register
SYS_BPF=$(sed -n 's/.* \(__\(x64\|arm64\)_sys_bpf\)$/\1/p' /proc/kallsyms | head -n 1)
RETREG=ax
[ "$(uname -m)" = aarch64 ] && RETREG=x0
mkdir -p /tmp/fhk-priv && chmod 0700 /tmp/fhk-priv && : > /tmp/fhk-priv/f

# the failures, as one script
cat > $D/work.sh << EOF
echo fail 1 > $P
echo fail 1 > $P
true < /nonexistent-fhk
fhook-capexec 1000 1000 - - -- sh -c 'true < /tmp/fhk-priv/f'
fhook-workload bpf-einval 2
echo faildeep 100 > $P
exit 0
EOF

run_fhook $D/e errors --format json fhook_testmod_fail_outer fhook_testmod_fail_deep do_sys_openat2 $SYS_BPF -- sh $D/work.sh
expect_eq "$RC" 0 "fhook errors exit code"
sed 's/^/#   /' $D/e.out | cut -c 1-400
# "ENTRY RESULT FIRST NFRAMES" per chain
sed -n 's/.*"entry":"\([^"]*\)","result":"\([^"]*\)","errno":[0-9]*,"first":"\([^"]*\)".*/\1 \2 \3/p' $D/e.out > $D/chains
while read -r entry result first; do
	log "chain: $entry $result, first $first"
done < $D/chains

# want ENTRY RESULT: the first failing function of the chain ENTRY RESULT
want() {
	_w=$(awk -v e="$1" -v r="$2" '$1 == e && $2 == r { print $3; exit }' $D/chains)
	[ -n "$_w" ] || fail "no chain $1 $2: $(cat $D/e.out | head -c 600)"
	echo "$_w"
}
tm=$(want fhook_testmod_fail_outer -ENOMEM)
expect_same "$tm" fhook_testmod_fail_alloc "the first failing function of the test module's chain"
frames=$(grep '^{"ts_ns".*"entry":"fhook_testmod_fail_outer"' $D/e.out | grep -o '"function":"[a-z_]*"' | tr '\n' ' ')
expect_same "$frames" '"function":"fhook_testmod_fail_outer" "function":"fhook_testmod_fail_middle" "function":"fhook_testmod_fail_alloc" ' "the test module's chain"
grep '"entry":"do_sys_openat2","result":"-ENOENT"' $D/e.out | grep -q '"result":"ERR_PTR(-ENOENT)"' ||
	fail "no ERR_PTR(-ENOENT) frame (do_filp_open's) in the -ENOENT chain"
enoent=$(want do_sys_openat2 -ENOENT)
eacces=$(want do_sys_openat2 -EACCES)
einval=$(want $SYS_BPF -EINVAL)
# 101 calls failing one inside the other: the innermost 64 fill what the
# module keeps per task, the call above them is kept alone (its callees'
# chain lost), so the chain holds the outer 37 calls and says the first
# failure lies deeper, naming none
deep=$(grep '^{"ts_ns".*"entry":"fhook_testmod_fail_deep"' $D/e.out)
echo "$deep" | grep -q '"result":"-ENOMEM","errno":12,"first":null,"truncated":true,"incomplete":false' ||
	fail "the 101-deep chain does not say the first failure lies deeper: $(echo "$deep" | head -c 300)"
expect_eq "$(echo "$deep" | grep -o '"function":"fhook_testmod_fail_deep"' | wc -l)" 37 "frames of the 101-deep chain"
tail -n 1 $D/e.out | grep -q '^{"failures":' || fail "no closing counts object: $(tail -n 1 $D/e.out)"
# the test module's chain twice, bpf's twice: counted, printed once
expect_eq "$(grep '^{"ts_ns"' $D/e.out | grep -c '"entry":"fhook_testmod_fail_outer"')" 1 "test module chains printed"
grep -q '"count":2,"result":"-ENOMEM","entry":"fhook_testmod_fail_outer"' $D/e.out ||
	fail "the test module's two failures not counted: $(tail -n 1 $D/e.out)"

# the kernel's view of the same workload: function_graph one level below
# the first failing functions (their callees), then kretprobes on them and
# on their callees
tracefs_reset
echo 0 > $T/tracing_on
printf '%s\n' fhook_testmod_fail_try "$tm" "$enoent" "$eacces" "$einval" | sort -u > $D/firsts
cat $D/firsts > $T/set_graph_function || fail "set_graph_function refused: $(cat $D/firsts)"
echo 2 > $T/max_graph_depth
echo 0 > $T/options/funcgraph-irqs
echo function_graph > $T/current_tracer
echo 1 > $T/tracing_on
sh $D/work.sh > /dev/null 2>&1
echo 0 > $T/tracing_on
cat $T/trace > $D/graph.txt
echo nop > $T/current_tracer
echo > $T/set_graph_function
echo 0 > $T/max_graph_depth
echo 1 > $T/options/funcgraph-irqs
# "FIRST CALLEE" pairs
awk '
{
	n = split($0, f, "|")
	if (n < 2) next
	t = f[n]
	sub(/^  /, "", t)
	match(t, /^ */)
	d = RLENGTH / 2
	t = substr(t, RLENGTH + 1)
	if (t ~ /^[}\/]/) next
	sub(/\(.*/, "", t)
	if (d == 0) top = t
	else if (d == 1 && top != "") print top, t
}' $D/graph.txt | sort -u > $D/callees
log "callees of the first failing functions: $(wc -l < $D/callees)"

tracefs_reset
echo 0 > $T/tracing_on
i=0
for fn in $(cat $D/firsts) $(awk '{ print $2 }' $D/callees | sort -u); do
	i=$((i + 1))
	# (a function kprobes may not probe is left out, and said so)
	echo "r:fhkerr/r$i $fn ret=\$retval:s32" >> $T/kprobe_events 2> /dev/null ||
		{ log "no kretprobe on $fn"; continue; }
	echo "r$i $fn" >> $D/probes
done
echo 1 > $T/events/fhkerr/enable
echo 1 > $T/tracing_on
sh $D/work.sh > /dev/null 2>&1
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkerr/enable
cat $T/trace > $D/kret.txt
echo > $T/kprobe_events
# returned FUNC ERRNO: how often FUNC returned -ERRNO (its low 32 bits)
returned() {
	_r=$(awk -v f="$1" '$2 == f { print $1; exit }' $D/probes)
	[ -n "$_r" ] || { echo 0; return; }
	grep -c " $_r: .* ret=-$2\$" $D/kret.txt
}
# witness FIRST ERRNO: FIRST returned it, none of its callees did
witness() {
	[ "$(returned "$1" "$2")" -gt 0 ] ||
		fail "the kernel never saw $1 return -$2: $(grep -c . $D/kret.txt) kretprobe events"
	for c in $(awk -v f="$1" '$1 == f { print $2 }' $D/callees); do
		[ "$(returned "$c" "$2")" -eq 0 ] || fail "$c, called by $1, returned -$2 too: it is deeper"
	done
	log "$1 returned -$2 and none of its $(awk -v f="$1" '$1 == f' $D/callees | wc -l) callees did"
}
witness "$tm" 12
witness "$enoent" 2
witness "$eacces" 13
witness "$einval" 22
# the sibling failed indeed: choosing the latest failing callee matters
[ "$(returned fhook_testmod_fail_try 11)" -gt 0 ] || fail "fhook_testmod_fail_try never returned -EAGAIN"

# text, and 10,000 good opens: no chain, no record.  The debug kernel
# makes 2,000 (10,000 took 96 of the test's 304 s there).  Only the test
# module's failing functions and do_filp_open are watched (arming every
# function again costs 10-20 s under TCG, about 50 s on the debug kernel;
# the first run armed them all)
OPENS=$(pick 10000 2000)
run_fhook $D/t errors --watch 'fhook_testmod_fail_*' --watch do_filp_open fhook_testmod_fail_outer do_sys_openat2 -- sh -c "echo fail 1 > $P; echo fail 1 > $P; fhook-workload reopen $OPENS"
expect_eq "$RC" 0 "fhook errors (text) exit code"
sed 's/^/#   /' $D/t.out
head -n 1 $D/t.out | grep -q ': fhook_testmod_fail_outer returned -ENOMEM after ' ||
	fail "title line: $(head -n 1 $D/t.out)"
grep -q '^      fhook_testmod_fail_alloc .*-ENOMEM.*<- first$' $D/t.out ||
	fail "no marked first failing frame three levels down"
grep -q fhook_testmod_fail_try $D/t.out && fail "the failure that did not matter is in the chain"
expect_same "$(tail -n 1 $D/t.out)" "# 2 failing calls, 1 distinct chain (identical ones printed once)" "the closing line"
summary $D/t
expect_eq "$H" 2 "records tried (hits): the two failures alone"

# by type (vmtests/testmod "failnull"): NULL is a pointer's failure, false a
# bool's only when asked, and a void function's register is no errno: the
# kernel's kretprobes see fhook_testmod_null_note return with -EAGAIN in
# %rax (the register: 6.12 knows it returns void).  Types come from the
# module's BTF, which a module built without the kernel's vmlinux (Debian's
# 6.1 headers have none) lacks: then values are judged alone, and a NULL is
# no failure.  Watched with --watch: only the test module's functions.
run_fhook $D/n errors --format json --watch 'fhook_testmod_*' fhook_testmod_null_outer fhook_testmod_null_check -- \
	sh -c "echo failnull 1 > $P; echo failnull 0 > $P; true"
expect_eq "$RC" 0 "fhook errors (types) exit code"
sed 's/^/#   /' $D/n.out | cut -c 1-400
frames=$(grep '^{"ts_ns".*"entry":"fhook_testmod_null_outer"' $D/n.out | grep -o '"function":"[a-z_]*"' | tr '\n' ' ')
if [ -e /sys/kernel/btf/fhook_testmod ]; then
	expect_same "$frames" '"function":"fhook_testmod_null_outer" "function":"fhook_testmod_null_middle" "function":"fhook_testmod_null_find" ' "the chain of NULLs (no void, no bool in it)"
	grep -q '"entry":"fhook_testmod_null_outer","result":"NULL","errno":0,"first":"fhook_testmod_null_find"' $D/n.out ||
		fail "the NULL chain's first failure is not fhook_testmod_null_find: $(head -c 400 $D/n.out)"
	run_fhook $D/nf errors --fail-false --format json --watch 'fhook_testmod_null_*' fhook_testmod_null_check -- \
		sh -c "echo failnull 1 > $P; echo failnull 0 > $P; true"
	expect_eq "$(grep -c '^{"ts_ns".*"entry":"fhook_testmod_null_check","result":"false"' $D/nf.out)" 1 "false chains with --fail-false"
	types="NULL by type, false when asked, no void"
else
	expect_same "$frames" "" "chains of a NULL without the test module's BTF"
	types="no BTF for the test module: NULL no failure"
fi
grep -q '"entry":"fhook_testmod_null_check"' $D/n.out && fail "a bool's false failed without --fail-false"
tracefs_reset
echo 0 > $T/tracing_on
echo "r:fhkerr/note fhook_testmod_null_note ret=%$RETREG:s32" >> $T/kprobe_events &&
	echo 'r:fhkerr/find fhook_testmod_null_find ret=$retval:x64' >> $T/kprobe_events ||
	fail "kretprobes on the test module's functions refused: $(tail -n 3 $T/error_log); $(grep fhook_testmod_null /proc/kallsyms)"
echo 1 > $T/events/fhkerr/enable
echo 1 > $T/tracing_on
echo failnull 1 > $P 2> /dev/null
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkerr/enable
grep -q ' note: .* ret=-11$' $T/trace || fail "the void function did not return with -EAGAIN in %rax: $(grep fhkerr $T/trace)"
grep -q ' find: .* ret=0x0$' $T/trace || fail "the kernel did not see fhook_testmod_null_find return NULL: $(grep fhkerr $T/trace)"
echo > $T/kprobe_events
# --watch: what it does not match is not in the chain (fhook_testmod_fail_middle)
run_fhook $D/w errors --format json --watch 'fhook_testmod_fail_al*' fhook_testmod_fail_outer -- sh -c "echo fail 1 > $P; true"
frames=$(grep '^{"ts_ns"' $D/w.out | grep -o '"function":"[a-z_]*"' | tr '\n' ' ')
expect_same "$frames" '"function":"fhook_testmod_fail_outer" "function":"fhook_testmod_fail_alloc" ' "the chain with --watch fhook_testmod_fail_al*"

# --fail: an ENTRY fails when the filter on its value holds, as its type
# holds the value: generic_permission is an int (-13 in the low half of
# %rax, for the uid-1000 open of a root-only file), vfs_write an ssize_t
# (dd's two 4,099-byte writes)
run_fhook $D/fl errors --format json --depth 1 --fail 'ret == -13' generic_permission -- \
	fhook-capexec 1000 1000 - - -- sh -c 'true < /tmp/fhk-priv/f'
grep -q '"result":"-EACCES","entry":"generic_permission","first":"generic_permission"' $D/fl.out ||
	fail "--fail 'ret == -13': no -EACCES of generic_permission: $(tail -n 1 $D/fl.out)"
expect_eq "$(grep '^{"ts_ns"' $D/fl.out | grep -vc '"result":"-EACCES"')" 0 "chains of other values with --fail 'ret == -13'"
run_fhook $D/fn errors --format json --depth 1 --fail 'ret == -12' generic_permission -- \
	fhook-capexec 1000 1000 - - -- sh -c 'true < /tmp/fhk-priv/f'
grep -q '^{"failures":0,' $D/fn.out || fail "--fail 'ret == -12': chains of an -EACCES: $(tail -n 1 $D/fn.out)"
run_fhook $D/fw errors --format json --depth 1 --fail 'ret == 4099' vfs_write -- \
	dd if=/dev/zero of=/dev/null bs=4099 count=2
grep -q '"failures":2,.*"count":2,"result":"4099","entry":"vfs_write","first":"vfs_write"' $D/fw.out ||
	fail "--fail 'ret == 4099': not dd's two writes: $(tail -n 1 $D/fw.out)"

# --ustack: each chain with its task's user stack, named from the process's
# mappings while it runs (fhook-workload is static, with frame pointers)
run_fhook $D/u errors --format json --depth 1 --ustack $SYS_BPF -- fhook-workload -d 500 bpf-einval 2
grep -q '^{"ts_ns".*"entry":"'$SYS_BPF'","result":"-EINVAL".*"ustack":\["[^"]*fhook-workload)"' $D/u.out ||
	fail "--ustack: no user frame in fhook-workload: $(head -c 600 $D/u.out)"

# --args: each frame's arguments by BTF name, the registers a kprobe on
# the same call reads as the witness (dfd is AT_FDCWD, -100, for sh's open)
tracefs_reset
echo 0 > $T/tracing_on
echo 'p:fhkerr/open do_sys_openat2 dfd=$arg1:s32 filename=$arg2:x64' >> $T/kprobe_events ||
	fail "kprobe on do_sys_openat2 refused: $(tail -n 3 $T/error_log)"
echo 1 > $T/events/fhkerr/enable
echo 1 > $T/tracing_on
run_fhook $D/a errors --format json --args --watch do_filp_open do_sys_openat2 -- sh -c 'true < /nonexistent-fhk-args'
echo 0 > $T/tracing_on
echo 0 > $T/events/fhkerr/enable
grep -q '"function":"do_sys_openat2","result":"-ENOENT",.*"args":{"dfd":-100,"filename":"0x[0-9a-f]*","how":"0x' $D/a.out ||
	fail "--args: no do_sys_openat2(dfd=-100, filename, how): $(head -c 600 $D/a.out)"
grep -q '"function":"do_filp_open",.*"args":{"dfd":-100,' $D/a.out ||
	fail "--args: no do_filp_open(dfd=-100, ...): $(head -c 600 $D/a.out)"
fname=$(grep -o '"args":{"dfd":-100,"filename":"0x[0-9a-f]*"' $D/a.out | head -n 1 | cut -d'"' -f8)
grep -q " open: .* dfd=-100 filename=$fname\$" $T/trace ||
	fail "--args: the kprobe saw no call with filename=$fname: $(grep ' open: ' $T/trace | tail -n 3)"
echo > $T/kprobe_events

# --lines: where in each frame the chain goes on, the line from the test
# module's own debug info (its .ko, the loaded module's build id), its
# source as the witness: outer's call of middle, alloc's start (middle
# may jump to alloc: a tail call has no call site); without debug info
# (vmlinux) function+offset, inside the frame's function
S=/fhook/fhook_testmod.c
lo=$(grep -n 'return PTR_ERR_OR_ZERO(fhook_testmod_fail_middle(n));' $S | cut -d: -f1)
lm=$(grep -n '	return fhook_testmod_fail_alloc(n);' $S | cut -d: -f1)
la=$(grep -n '^static noinline void \*fhook_testmod_fail_alloc(unsigned long n)$' $S | cut -d: -f1)
run_fhook $D/l errors --format json --debuginfo /fhook/fhook_testmod.ko --watch 'fhook_testmod_fail_*' fhook_testmod_fail_outer -- \
	sh -c "echo fail 1 > $P; true"
src() { grep -o "\"function\":\"$1\",[^}]*" $D/l.out | head -n 1 | sed -n 's/.*"source":"[^"]*fhook_testmod\.c:\([0-9]*\)".*/\1/p'; }
expect_eq "$(src fhook_testmod_fail_outer)" "$lo" "--lines: fhook_testmod_fail_outer's line (its call of middle)"
a=$(src fhook_testmod_fail_alloc)
# (its opening lines; arm64's patch site has no row of its own, and the
# row after it is the body's statement, 4 lines on)
[ "${a:-0}" -ge "$la" ] && [ "$a" -le $((la + 4)) ] ||
	fail "--lines: fhook_testmod_fail_alloc's line $a, not its start $la: $(head -c 800 $D/l.out)"
m=$(src fhook_testmod_fail_middle)
[ -z "$m" ] || [ "$m" = "$lm" ] || fail "--lines: fhook_testmod_fail_middle's line $m, not its call of alloc $lm"
run_fhook $D/lv errors --lines --watch do_filp_open do_sys_openat2 -- sh -c 'true < /nonexistent-fhk-lines'
grep -A 1 '^  do_sys_openat2 ' $D/lv.out | grep -q '^    at do_sys_openat2+0x[0-9a-f]*/0x[0-9a-f]*$' ||
	fail "--lines without debug info: no 'at do_sys_openat2+0x...': $(head -n 6 $D/lv.out)"

# the hook API: why a module's install failed, through fhook's own
# install path (the hook API's functions are watched, no other of fhook's),
# the module's kernel line as the witness: a function that does not exist
# (the kprobe that resolves it), then vfs_read twice in one array (the
# calls below watched: --watch, cheaper to arm than every function)
K=/fhook/fhook_khook_test.ko
dmesg -c > /dev/null
run_fhook $D/k errors --format json --watch '*khook*' --watch '*kprobe*' __fhook_khook_install -- \
	sh -c "insmod $K mode=missing; insmod $K mode=twice; true"
dmesg > $D/k.dmesg
grep -q 'hook 1 (fhook_no_such_function): no such function (-2)' $D/k.dmesg ||
	fail "no kernel line for the missing function: $(tail -n 2 $D/k.dmesg)"
grep -q 'hook 1 (vfs_read): module fhook_khook_test holds it .*(-16)' $D/k.dmesg ||
	fail "no kernel line for the conflict: $(tail -n 2 $D/k.dmesg)"
grep '^{"ts_ns"' $D/k.out > $D/k.chains
frames=$(grep '"result":"-ENOENT"' $D/k.chains | head -n 1 | grep -o '"function":"[a-z_]*"' | cut -d'"' -f4 | head -n 4 | tr '\n' ' ')
expect_same "$frames" "__fhook_khook_install fhook_khook_arm fhook_khook_resolve register_kprobe " "the missing function's chain"
grep '"result":"-ENOENT"' $D/k.chains | grep -q '"first":"_*fhook_' &&
	fail "the missing function's first failure in fhook, not in the kprobe's lookup: $(head -c 400 $D/k.out)"
grep -q '"entry":"__fhook_khook_install","result":"-EBUSY","errno":16,"first":"fhook_khook_arm"' $D/k.chains ||
	fail "the conflict's -EBUSY not first in fhook_khook_arm: $(grep -- -EBUSY $D/k.out | head -c 400)"

# recorded (record --errors), read back as text and as Chrome spans; the
# test module's failing functions watched (--watch), not every function
run_fhook $D/r record --errors --args --watch 'fhook_testmod_fail_*' -o $D/e.fhk fhook_testmod_fail_outer \
	-- sh -c "echo fail 1 > $P; true"
expect_eq "$RC" 0 "record --errors exit code"
fhook report $D/e.fhk > $D/rep.out 2> $D/rep.err || fail "report of record --errors: $(cat $D/rep.err)"
grep -q '^      fhook_testmod_fail_alloc .*<- first$' $D/rep.out ||
	fail "report: no chain down to fhook_testmod_fail_alloc: $(head -n 5 $D/rep.out)"
# (n is 1: by name where the test module has BTF, else the first register)
grep -A 1 '^      fhook_testmod_fail_alloc ' $D/rep.out | grep -Eq '^        \((n=1|arg1=0x1, .*)\)$' ||
	fail "report: no fhook_testmod_fail_alloc(n=1): $(head -n 8 $D/rep.out)"
fhook report --format chrome $D/e.fhk > $D/rep.json 2> $D/rep.err || fail "report --format chrome: $(cat $D/rep.err)"
expect_eq "$(grep -o '"cat":"errors"' $D/rep.json | wc -l)" 3 "Chrome spans of the recorded chain"

bad_options $D/bad errors "" "--depth 500 vfs_read" "p:fhk/x_vfs_read" "--stat --format chrome vfs_read" "--format html vfs_read" \
	"--watch !vfs_* vfs_read" "--watch vfs_* --depth 1 vfs_read" "--fail ret== vfs_read" \
	"--fail nosuch>1 vfs_read" "--fail ret<0 vfs_read generic_permission" "--args --format chrome vfs_read"
pass "first failing: $tm -ENOMEM, $enoent -ENOENT, $eacces -EACCES, $einval -EINVAL, each witnessed by kretprobes, none of their $(wc -l < $D/callees) callees returned it; $types; $OPENS good opens: no record"
