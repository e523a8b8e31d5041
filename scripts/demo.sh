#!/usr/bin/env bash
# Install everything, build, boot a Debian 6.1 guest under QEMU and show
# fhook tracing a real workload there (as root, on Debian bookworm).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
make all
exec bash vmtests/run.sh --demo
