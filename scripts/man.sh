#!/usr/bin/env bash
# Man pages from one source each: fhook(1) and fhook-COMMAND(1) from the
# CLI's own --help texts (help2man), fhook-probes(7) from docs/probes.md
# (go-md2man).  Nothing here is written twice by hand.
#   man.sh FHOOK OUTDIR
# FHOOK_MAN_EXEC: an emulator to run FHOOK in (a cross-built CLI: qemu-aarch64).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
fhook=$(realpath "$1") out=$2
for tool in help2man go-md2man; do
	command -v $tool >/dev/null || { echo "man.sh: $tool missing: run 'sudo make setup'" >&2; exit 1; }
done
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=(${FHOOK_MAN_EXEC:-} "$fhook")
version=$("${run[@]}" --version | head -n 1)
include=$top/packaging/man/common.h2m

# "  trace [options] ...   arm function probes ..." in fhook --help: the
# commands and the first line of what they do
"${run[@]}" --help | awk '
	function flush() { if (cmd != "" && !seen[cmd]++) print cmd "\t" desc; cmd = "" }
	/^Commands:/ { on = 1; next }
	/^$/ { flush(); on = 0 }
	!on { next }
	/^  [a-z]/ {
		flush(); cmd = $1; desc = ""
		if (substr($0, 24, 2) ~ /^ [^ ]/) desc = substr($0, 25)
		next
	}
	/^                        [^ ]/ { desc = desc (desc == "" ? "" : " ") substr($0, 25) }' > "$tmp/commands"
[ -s "$tmp/commands" ] || { echo "man.sh: no commands in '$fhook --help'" >&2; exit 1; }

# help2man runs PROGRAM --help and PROGRAM --version
wrapper() {
	printf '#!/bin/sh\n[ "$1" = --version ] && { echo "%s"; exit 0; }\nexec %s "%s" %s "$@"\n' \
		"$2 ${version#fhook }" "${FHOOK_MAN_EXEC:-}" "$fhook" "$1" > "$tmp/$2"
	chmod +x "$tmp/$2"
}

wrapper "" fhook
help2man --no-info --no-discard-stderr --section=1 --include="$include" \
	--name="kernel function tracing and hooking with the fhook module" \
	--output="$out/fhook.1" "$tmp/fhook"
while IFS=$'\t' read -r cmd desc; do
	wrapper "$cmd" "fhook-$cmd"
	help2man --no-info --no-discard-stderr --section=1 --include="$include" \
		--name="${desc:-fhook $cmd}" --output="$out/fhook-$cmd.1" "$tmp/fhook-$cmd"
done < "$tmp/commands"

{
	printf '%% fhook-probes 7 "%s" fhook\n\n' "${version#fhook }"
	printf '# NAME\n\nfhook-probes - the probe, fetch-argument, filter and trigger language of fhook\n\n'
	printf '# DESCRIPTION\n\n'
	sed '1{/^# /d}' "$top/docs/probes.md"
} > "$tmp/probes.md"
go-md2man -in "$tmp/probes.md" -out "$out/fhook-probes.7"
