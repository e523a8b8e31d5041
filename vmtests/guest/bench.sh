# shellcheck shell=sh
# vmtests/run.sh --bench: the transport and hook benchmarks
# (docs/benchmarks.md): the first on 3 vCPUs, the second on one.
. /fhook/config
echo "FHOOK-DEMO-BEGIN"
[ "$(nproc)" -gt 1 ] && echo "transport benchmark: $(uname -r), $(nproc) vCPUs, producers on CPU 0 (and 1), consumer on CPU $(($(nproc) - 1))"
insmod /fhook/fhook.ko || echo "insmod fhook.ko failed"
insmod /fhook/fhook_testmod.ko || echo "insmod fhook_testmod.ko failed"
# let the guest settle after boot (deferred work, RCU) before measuring
sleep 3
# run.sh boots 3 vCPUs for the transport benchmark, 1 for the hooks
if [ "$(nproc)" -gt 1 ]; then
	/fhook/bench/fhook-bench-transport -o /fhook/bench/ringbuf.bpf.o -n "${FHOOK_TEST_BENCH_EVENTS:-200000}" -r "${FHOOK_TEST_BENCH_REPEATS:-2}" 2>&1
else
	sh /fhook/bench-hooks.sh 2>&1
fi
rmmod fhook_testmod
rmmod fhook
echo "FHOOK-DEMO-END"
