# count_functions: `fhook count GLOB` counts function by function (the
# module's FHOOK_PROBE_F_COUNT_IPS) exactly what the kernel's function
# tracer sees on the same workload (fhook_testmod's functions: writes to
# its proc files call them a known number of times); negated arguments
# leave functions out; --top N keeps the N most called; --format json
# says the same; -i prints what each interval counted (the blocks add up
# to the whole); --via direct counts a glob as one total.
. /fhook/lib.sh

load_fhook
load_workmod
TM=/proc/fhook_testmod
TH=/proc/fhook_testmod_hooks
WORK="echo call 3000 > $TM; echo ret 500 > $TH; echo args8 200 > $TH"

# "function hits" lines, sorted, from fhook's table and from a tracefs trace
fhook_counts() { awk 'NR > 1 { print $2, $1 }' "$1" | sort; }
ref_counts() { events "$1" | awk '{ n[$3]++ } END { for (f in n) print f, n[f] }' | sort; }

run_fhook $D/all count 'fhook_testmod_*' -- sh -c "$WORK"
expect_eq "$RC" 0 "fhook count 'fhook_testmod_*' exit code"
tracefs_ref $D/ref 'fhook_testmod_*' 1 sh -c "$WORK"
fhook_counts $D/all.out > $D/all.cnt
ref_counts $D/ref > $D/ref.cnt
log "fhook: $(tr '\n' '|' < $D/all.cnt)"
log "tracefs: $(tr '\n' '|' < $D/ref.cnt)"
grep -q '^fhook_testmod_target 3000$' $D/all.cnt || fail "no 3000 calls of fhook_testmod_target: $(cat $D/all.out)"
grep -q '\[fhook_testmod\]$' $D/all.out || fail "the module's functions are not tagged: $(cat $D/all.out)"
cmp -s $D/all.cnt $D/ref.cnt || fail "per-function counts differ from the function tracer's: $(diff $D/ref.cnt $D/all.cnt | tr '\n' '|')"
# most calls first
awk 'NR > 2 && $1 > prev { exit 1 } NR > 1 { prev = $1 }' $D/all.out ||
	fail "not sorted by calls: $(cat $D/all.out)"
grep -q "^fhook: probe 1 hits [0-9]* filtered 0 missed 0 via ops: fhook_testmod_\\*$" $D/all.err ||
	fail "no summary line: $(cat $D/all.err)"
detached || fail "still attached: $(cat $T/enabled_functions)"

# a negated argument leaves its functions out
run_fhook $D/neg count 'fhook_testmod_*' '!fhook_testmod_target' -- sh -c "$WORK"
expect_eq "$RC" 0 "count with a negated argument"
! grep -q ' fhook_testmod_target ' $D/neg.out || fail "the negated function was counted: $(cat $D/neg.out)"
expect_eq "$(fhook_counts $D/neg.out | wc -l)" "$(($(wc -l < $D/all.cnt) - 1))" "functions without the negated one"

# --top 2 and JSON
run_fhook $D/top count --top 2 'fhook_testmod_*' -- sh -c "$WORK"
expect_eq "$(wc -l < $D/top.out)" 3 "lines of --top 2 (with the header)"
expect_same "$(sed -n 2p $D/top.out | awk '{ print $2 }')" fhook_testmod_target "the most called function"
run_fhook $D/js count --format json 'fhook_testmod_*' -- sh -c "$WORK"
expect_eq "$(wc -l < $D/js.out)" 1 "JSON lines"
grep -q '"function":"fhook_testmod_target","module":"fhook_testmod","probe":1,"hits":3000}' $D/js.out ||
	fail "no fhook_testmod_target object with 3000 hits: $(cat $D/js.out)"

# no call: said under the header as latency says it, an empty list in JSON
run_fhook $D/none count -d 0.3 'fhook_testmod_tar*'
expect_eq "$RC" 0 "count with no calls"
[ "$(wc -l < $D/none.out)" = 2 ] && grep -qx '     (no calls)' $D/none.out ||
	fail "count with no calls: $(cat $D/none.out)"
run_fhook $D/nonej count -d 0.3 --format json 'fhook_testmod_tar*'
grep -qx '{"functions":\[\]}' $D/nonej.out || fail "JSON of no calls: $(cat $D/nonej.out)"

# -i: blocks under the time of day, adding up to the whole
run_fhook $D/iv count -i 0.4 'fhook_testmod_tar*' -- sh -c "echo call 1000 > $TM; sleep 1.5; echo call 500 > $TM"
expect_eq "$RC" 0 "count -i exit code"
blocks=$(grep -c '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$' $D/iv.out)
[ "$blocks" -ge 3 ] || fail "$blocks interval blocks in 1.5 s at 0.4 s: $(tr '\n' '|' < $D/iv.out)"
expect_eq "$(awk '$2 == "fhook_testmod_target" { n += $1 } END { print n + 0 }' $D/iv.out)" 1500 "calls over the intervals"
n=$(grep -c ' fhook_testmod_target ' $D/iv.out)
# (the other intervals print no row; a write may straddle two)
[ "$n" -ge 2 ] && [ "$n" -lt "$blocks" ] || fail "$n of $blocks intervals with calls: $(tr '\n' '|' < $D/iv.out)"

# --via direct: a glob is one counter (where fhook has direct calls: not
# on arm64, docs/arm64.md)
DIRECT="no direct calls here"
if has_feature direct; then
	run_fhook $D/dir count --via direct 'fhook_testmod_tar*' -- sh -c "echo call 700 > $TM"
	expect_eq "$RC" 0 "count --via direct exit code"
	expect_same "$(sed -n 2p $D/dir.out | awk '{ print $1, $2 }')" "700 fhook_testmod_tar*" "the direct probe's total"
	DIRECT="direct total"
fi
detached || fail "still attached at the end: $(cat $T/enabled_functions)"
pass "$(wc -l < $D/all.cnt) functions counted as the function tracer did; negation, --top, JSON, $blocks intervals summing to 1500, $DIRECT"
