#!/usr/bin/env bash
# The debug kernel cache's checks (scripts/lib/kcache.sh) on a stand-in
# entry: sealed and unchanged is valid; a changed, a missing or an added
# byte in a sealed file is corrupt; no MANIFEST is partial.  Host test.
set -euo pipefail
# shellcheck source=scripts/lib/kcache.sh
. "$(dirname "$0")/lib/kcache.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "test-kcache: $*" >&2; exit 1; }
expect() { local s; s=$(kcache_state "$t/e"); [ "$s" = "$1" ] || fail "$2: $s, expected $1"; }

expect missing "no entry"
mkdir -p "$t/e/tree/include" "$t/e/install/lib"
echo image > "$t/e/tree/bzImage"
echo header > "$t/e/tree/include/a.h"
echo module > "$t/e/install/lib/m.ko"
expect partial "a build that never sealed"
kcache_seal "$t/e" tree/bzImage tree/include install
expect valid "just sealed"
grep -q 'install/lib/m.ko' "$t/e/MANIFEST" || fail "a directory's files are not in the MANIFEST"
echo other > "$t/e/tree/include/a.h"
expect corrupt "a header changed"
echo header > "$t/e/tree/include/a.h"
expect valid "the header restored"
truncate -s 3 "$t/e/tree/bzImage"
expect corrupt "a truncated image"
echo image > "$t/e/tree/bzImage"
rm "$t/e/install/lib/m.ko"
expect corrupt "a module gone"
echo module > "$t/e/install/lib/m.ko"
: > "$t/e/MANIFEST"
expect partial "an empty MANIFEST (a crash while sealing)"
echo "test-kcache: ok"
