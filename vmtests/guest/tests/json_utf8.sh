# json_utf8: NDJSON keeps UTF-8 as it is (jq shows "é€", not "Ã©") and
# turns a byte that is no UTF-8 into U+FFFD; the strings come from the
# kernel through a +0($arg2):ustring fetch of openat's path (the second
# argument: any CPU).
. /fhook/lib.sh

load_fhook
good=$(printf '/tmp/caf\303\251\342\202\254.txt')	# café€.txt
bad=$(printf '/tmp/bad\377name.txt')
: > "$good"
: > "$bad"
run_fhook $D/j trace --format json 'p:fh/op do_sys_openat2 path=+0($arg2):ustring' \
	-- sh -c "cat '$good' '$bad' > /dev/null"
expect_eq "$RC" 0 "fhook trace --format json exit code"
grep -q "\"path\":\"$good\"" $D/j.out || fail "no UTF-8 path as it is: $(grep -m3 tmp $D/j.out)"
grep -qF '"path":"/tmp/bad\ufffdname.txt"' $D/j.out || fail "no U+FFFD for the byte 0xff: $(grep -m3 bad $D/j.out)"
! grep -q '\\u00c3' $D/j.out || fail "UTF-8 escaped byte by byte: $(grep -m1 'u00c3' $D/j.out)"
rm -f "$good" "$bad"
pass "UTF-8 path kept, 0xff as U+FFFD"
