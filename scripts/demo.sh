#!/usr/bin/env bash
# README's first command: on a fresh Debian bookworm machine (as root),
# install what the demo needs, build fhook.ko for the Debian 6.1 kernel and
# the CLI, boot that kernel under QEMU with `fhook vm` and show fhook there:
# function events, a kprobe with fetched arguments, a latency histogram,
# explain and a call graph.  It prints a line per step with the time
# spent so far.  The test suite (scripts/test.sh) needs the rest of setup.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
start=$(date +%s)
step() { printf 'demo: [%s/4 %3ds] %s\n' "$1" $(( $(date +%s) - start )) "$2" >&2; }

step 1 "packages and the Debian 6.1 kernel (scripts/setup.sh --demo)"
bash scripts/setup.sh --demo
rel=$(awk '$1 ~ /^6\.1\./ { print $1; exit }' build/kernels/targets)
[ -n "$rel" ] || { echo "demo: no 6.1 kernel in build/kernels/targets" >&2; exit 1; }

step 2 "fhook.ko for $rel"
make -s module REL="$rel" -j"$(nproc)"

# the CLI alone, unoptimised (half the compile time of the release
# build; the demo's work is in the guest's kernel)
step 3 "the fhook CLI (build/demo/fhook)"
gen=$(command -v ninja > /dev/null && echo Ninja || echo 'Unix Makefiles')
cmake -S . -B build/demo -G "$gen" -DFHOOK_TESTS=OFF -DCMAKE_BUILD_TYPE=Demo \
	-DCMAKE_C_FLAGS_DEMO=-O0 -DCMAKE_CXX_FLAGS_DEMO=-O0 > /dev/null
# (a line every 10 files; compiler errors as they come; not glibc's
# note that a static program using dlopen needs its libraries: nss only)
cmake --build build/demo --target fhook -j"$(nproc)" 2>&1 |
	awk '/^\[[0-9]+\/[0-9]+\] Building/ { if (++n % 10 == 0) { print "demo:   " n " files compiled"; fflush() }; next }
	     /^\[[0-9]+\/[0-9]+\] / || /statically linked applications|: in function `/ { next }
	     { print; fflush() }'

step 4 "booting $rel under QEMU with fhook vm (KVM if it works here, else TCG)"
build/demo/fhook vm --kernel "$rel" --no-load --timeout 600 \
	--add vmtests/guest/demo.sh:/root/demo.sh -- sh /root/demo.sh
echo "demo: done in $(( $(date +%s) - start )) s" >&2
