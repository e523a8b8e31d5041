# abi_abuse: fhook-abitest feeds bad input to /dev/fhook through the raw
# ABI (errnos, limits, mmap rules, privileges) and runs one real session;
# afterwards the CLI still traces exactly.
. /fhook/lib.sh

load_fhook
fhook-abitest > $D/abi.out 2>&1
rc=$?
cat $D/abi.out
echo "# failed checks:"
grep '^not ok\|^Bail' $D/abi.out
total=$(grep -c '^ok ' $D/abi.out) bad=$(grep -c '^not ok ' $D/abi.out)
[ "$rc" = 0 ] || fail "fhook-abitest exit $rc, $bad of $((total + bad)) checks failed: $(grep -m1 '^not ok\|^Bail' $D/abi.out)"

run_fhook $D/f trace vfs_read -- fhook-workload read 300
expect_eq "$RC" 0 "fhook trace exit code after the abuse"
n=$(count_func $D/f.out vfs_read)
tracefs_ref $D/ref vfs_read 0 fhook-workload read 300
expect_eq "$n" "$(count_func $D/ref vfs_read)" "vfs_read after the abuse: fhook vs tracefs"
pass "$total checks; then vfs_read=$n"
