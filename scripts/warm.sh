#!/usr/bin/env bash
# make warm: compile what CI compiles, as CI compiles it (its compile
# cache, its paths, its flags: scripts/lib/ccache-env.sh), so that the
# next CI run on this machine, a fresh clone of this commit, finds every
# object in the cache: the modules for every target kernel, the CLI and
# its tests, the arm64 CLI, the Debian packages and their DKMS builds.
# A commit that changed kmod/ otherwise pays for its modules in CI's
# build phase (six kernels: 13 minutes on 2 CPUs against about 70 s).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/lib/ccache-env.sh
make -j"$(nproc)" all
make test-package
