#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The ABI's padding is explicit: compile one object of every struct in
# shared/fhook_abi.h with debug info and let pahole report holes or
# trailing padding.  Part of `make lint`; needs gcc and pahole (dwarves).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
structs=$(sed -n 's/^struct \(fhook_[a-z_0-9]*\) {$/\1/p' "$top/shared/fhook_abi.h")
{
	echo '#include "fhook_abi.h"'
	for s in $structs; do echo "struct $s v_$s;"; done
} > "$tmp/abi.c"
gcc -g -c -I"$top/shared" -o "$tmp/abi.o" "$tmp/abi.c"
bad=0
for s in $structs; do
	out=$(pahole -C "$s" "$tmp/abi.o")
	[ -n "$out" ] || { echo "abi-holes: pahole does not know struct $s" >&2; bad=1; continue; }
	if grep -q 'XXX' <<< "$out"; then
		echo "abi-holes: struct $s has implicit padding:" >&2
		grep 'XXX' <<< "$out" >&2
		bad=1
	fi
done
[ $bad = 0 ] && echo "abi-holes: $(wc -w <<< "$structs") structs, no implicit padding"
exit $bad
