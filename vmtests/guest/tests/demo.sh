# demo: the README's demo (vmtests/guest/demo.sh, run by scripts/demo.sh in
# fhook vm) runs here too, so it cannot rot: every step exits 0 and shows
# what it promises, checked against what the workloads do.
. /fhook/lib.sh

unload_fhook
sh /fhook/demo.sh > $D/demo.out 2>&1
RC=$?
sed 's/^/#   /' $D/demo.out
expect_eq "$RC" 0 "demo exit code"
fhook_loaded && fail "the demo left fhook loaded"
o=$D/demo.out
# dd: 4 blocks of 32 bytes read and written (and the read that finds EOF)
n=$(grep -c ' dd-[0-9]* .* vfs_read <-ksys_read$' $o)
[ "$n" -ge 4 ] || fail "function events: $n vfs_read lines of dd, want 4 or more"
# (the open flags with this CPU's O_LARGEFILE, lib.sh: 0x8000 on x86-64,
# 0x20000 on arm64; O_TRUNC|O_CREAT|O_WRONLY are 0x241 on both)
grep -q "open: (do_sys_openat2+0x0/0x[0-9a-f]*) dfd=-100 path=\"/etc/passwd\" flags=$O_LARGEFILE\$" $o ||
	fail "kprobe: no open of /etc/passwd with dfd AT_FDCWD and O_LARGEFILE ($O_LARGEFILE)"
grep -q "open: (do_sys_openat2+0x0/0x[0-9a-f]*) dfd=-100 path=\"/dev/null\" flags=$(printf '0x%x' $((O_LARGEFILE | 0x241)))\$" $o ||
	fail "kprobe: no open of /dev/null for writing (O_LARGEFILE|O_TRUNC|O_CREAT|O_WRONLY)"
# the latency histogram counted the 2000 reads of dd (count=2000); not on
# a kernel without direct calls (arm64 6.1)
if grep -q '^\$ (no fhook latency here' $o; then
	! grep -q ' ftrace_stub_direct_tramp$' /proc/kallsyms || fail "latency left out where the kernel has direct calls"
else
	grep -q '^avg = [0-9]* usecs, total: [0-9]* usecs, count: 200[0-9], min: [0-9.]* usecs, max: [0-9.]* usecs$' $o ||
		fail "latency: no histogram of about 2000 vfs_read calls: $(grep '^avg' $o)"
fi
# (x86-64: a 5-byte NOP, armed a call of the ops' own ftrace_trampoline;
# arm64: a 4-byte NOP in the BL's place, armed a BL to ftrace_caller, which
# finds the ops in the literal before the function: see explain)
if [ "$(uname -m)" = aarch64 ]; then
	nop=4 tramp=ftrace_caller
else
	nop=5 tramp=ftrace_trampoline
fi
grep -q "<- ftrace site: a $nop-byte NOP" $o || fail "explain: idle site not a $nop-byte NOP"
grep -q "<- ftrace site: call $tramp+" $o || fail "explain: armed site does not call $tramp"
grep -q '^ [0-9]) *|  do_sys_openat2() {$' $o || fail "graph: no do_sys_openat2 tree"
grep -q '^ [0-9]) .*|    getname();$' $o || fail "graph: getname not drawn as a leaf under do_sys_openat2"
pass "the README demo: events, kprobe fetchargs, latency, explain, graph"
