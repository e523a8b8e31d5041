# ring_nomem: a ring the guest cannot afford (256 MiB per CPU in a 1 GiB
# guest) is refused with one clear error line naming --buffer-size and
# exit 1, without the OOM killer or a kernel warning (the run's kernel-log
# check), leaving nothing behind; a large affordable one (32 MiB per CPU)
# works and traces exactly.  Sessions together hold at most half of the
# memory: 12 sessions of 32 MiB per CPU, each affordable alone, are
# admitted only while their rings stay under MemTotal / 2 (before, each
# was checked against what was left, and together they took most of it).
# kretprobe instances count in the same budget (see the end).
. /fhook/lib.sh

load_fhook
log "MemAvailable: $(grep MemAvailable /proc/meminfo)"
run_fhook $D/big trace -b 262144 vfs_read --duration 1
expect_eq "$RC" 1 "exit code for 256 MiB per CPU"
expect_eq "$(wc -l < $D/big.err)" 1 "error lines"
grep -q 'out of kernel memory.*--buffer-size' $D/big.err || fail "unclear error: $(cat $D/big.err)"
expect_eq "$(fhook_vmalloc)" 0 "vmalloc areas of fhook after the refusal"
run_fhook $D/st status
grep -qx 'sessions: 0' $D/st.out || fail "a session survived: $(grep sessions $D/st.out)"
run_fhook $D/ok trace -b 32768 vfs_read -- fhook-workload read 200
expect_eq "$RC" 0 "exit code for 32 MiB per CPU"
n=$(count_func $D/ok.out vfs_read)
tracefs_ref $D/ref vfs_read 0 fhook-workload read 200
expect_eq "$n" "$(count_func $D/ref vfs_read)" "vfs_read with a 32 MiB ring vs tracefs"

# many sessions: the rings of those admitted stay under MemTotal / 2
total_kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
ncpu=$(grep -c '^processor' /proc/cpuinfo)
per_kb=$(( (32768 + 8) * ncpu ))	# 32 MiB data + 2 pages, per CPU
i=0
pids=
while [ $i -lt 12 ]; do
	fhook trace -b 32768 vfs_read -- sleep 600 > /dev/null 2> $D/m$i.err &
	pids="$pids $!"
	i=$((i + 1))
done
# settled: every fhook is alive with its probe armed on vfs_read (the ops
# count in enabled_functions), or exited refused
settled() {
	alive=0
	for p in $pids; do
		kill -0 $p 2> /dev/null && alive=$((alive + 1))
	done
	held=$(sed -n 's/^vfs_read (\([0-9]*\)).*/\1/p' $T/enabled_functions)
	held=${held:-0}
	refused=$(grep -l 'out of kernel memory' $D/m*.err | wc -l)
	[ "$held" = "$alive" ] && [ $((alive + refused)) -ge 12 ]
}
wait_for 120 settled || log "not settled after 120 s: $alive alive, $held armed, $refused refused"
sleep 2
settled
for f in $D/m*.err; do
	[ -s $f ] && ! grep -q 'out of kernel memory' $f && log "$f: $(head -c 200 $f)"
done
log "MemTotal ${total_kb} kB: $held sessions of $per_kb kB held, $refused refused"
[ "$held" -ge 1 ] || fail "no session admitted"
[ $((held * per_kb)) -le $((total_kb / 2)) ] ||
	fail "$held sessions hold $((held * per_kb)) kB of rings, over MemTotal / 2 = $((total_kb / 2)) kB"
expect_eq "$((held + refused))" 12 "sessions held + refused"
[ "$refused" -ge 1 ] || fail "no session refused: the cap was never reached"
kill $(jobs -p) 2> /dev/null
wait
wait_for 30 no_sessions || fail "sessions left after the kill"

# kretprobe instances are allocated by the kernel (not charged to the
# caller's memory cgroup): they count in the same module-wide budget.  40
# return probes of 4096 instances with 4 KiB of entry data each would be
# 1.25 GiB: refused with ENOMEM at the probe that crosses MemTotal / 2,
# not by the OOM killer (the run's kernel-log check), and nothing is kept.
avail0=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
set --
i=0
while [ $i -lt 40 ]; do
	set -- "$@" "r4096:fh/k$i vfs_read s=+0(\$arg2):string"
	i=$((i + 1))
done
run_fhook $D/kret trace "$@" --duration 1
expect_eq "$RC" 1 "exit code for 40 kretprobes of 4096 instances"
expect_eq "$(wc -l < $D/kret.err)" 1 "error lines"
grep -q 'memory' $D/kret.err || fail "unclear error: $(cat $D/kret.err)"
wait_for 30 no_sessions || fail "a session survived the refusal"
avail1=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
log "kretprobes: $(cat $D/kret.err); MemAvailable $avail0 -> $avail1 kB"
[ $((avail0 - avail1)) -lt $((total_kb / 16)) ] ||
	fail "MemAvailable fell from $avail0 to $avail1 kB after the refused kretprobes"
pass "refused: $(cut -c1-80 $D/big.err); 32 MiB ring: $n events; $held of 12 sessions admitted (MemTotal/2); kretprobe instances refused: $(cut -c1-60 $D/kret.err)"
