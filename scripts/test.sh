#!/usr/bin/env bash
# The whole fhook test suite on a fresh Debian bookworm machine (as root):
# setup (packages + target kernels), build, style gates, host unit tests,
# the Debian packages (lintian, DKMS builds), then the guest suite on every
# target kernel.  Exit status 0 = all green.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
start=$(date +%s)
bash scripts/setup.sh
# every make below builds the modules as make lint checks them (W=1,
# warnings are errors): built once, not again by lint and test-vm
export KCHECKED=1
make all
make lint
make test-host
make test-package
make test-vm
echo "fhook: test suite passed in $(( $(date +%s) - start )) s"
