# ring_nomem: a ring the guest cannot afford (256 MiB per CPU in a 1 GiB
# guest) is refused with one clear error line naming --buffer-size and
# exit 1, without the OOM killer or a kernel warning (the run's kernel-log
# check), leaving nothing behind; a large affordable one (32 MiB per CPU)
# works and traces exactly.
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
pass "refused: $(cut -c1-80 $D/big.err); 32 MiB ring: $n events"
