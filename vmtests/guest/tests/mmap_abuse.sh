# mmap_abuse: fhook-mmaptest maps the rings the wrong way (offsets, sizes,
# PROT_EXEC, MAP_PRIVATE, writable meta/data), mprotects, mremaps (grow,
# shrink, move, DONTUNMAP), unmaps partially and while another thread reads,
# forks (the child must not have the ring), writes through /proc/self/mem,
# keeps a mapping past close; every step fails cleanly or works, and the
# session then still delivers exactly 200 intact records.
. /fhook/lib.sh

load_fhook
run_logged $D/mm.out fhook-mmaptest
rc=$RC
cat $D/mm.out
total=$(grep -c '^ok ' $D/mm.out) bad=$(grep -c '^not ok ' $D/mm.out)
[ "$rc" = 0 ] || fail "fhook-mmaptest exit $rc, $bad of $((total + bad)) checks failed: $(grep -m1 '^not ok\|^Bail' $D/mm.out)"
wait_for 10 detached || fail "enabled_functions not empty afterwards: $(head -n 2 $T/enabled_functions)"
[ "$(fhook_vmalloc)" = 0 ] || fail "vmalloc areas of fhook left"
pass "$total checks"
