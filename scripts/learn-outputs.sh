#!/usr/bin/env bash
# make learn-outputs: run every lesson's run-marked commands (docs/learn/)
# in a guest of KERNEL (default 6.1) with fhook vm and write what each
# printed into the lesson, as its shown output ("[exit N]" after it when
# it did not exit 0).  The shown output is then the real one, whole:
# trim it by hand afterwards if it is long ("..." marks a cut), the
# guest tests accept a shown output that leaves lines out.
#
#   scripts/learn-outputs.sh [KERNEL]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
kernel=${1:-6.1}
cli=build/user/fhook
[ -x "$cli" ] || { echo "learn-outputs: $cli missing: make first" >&2; exit 1; }
out=build/learn-outputs.txt
mkdir -p build
# what the suite's guests have and fhook vm's do not: the example modules
# (lessons 8, 9) and the test programs (lesson 6) where a build left them
adds=()
case $kernel in
*kdebug*) pick="build/examples/$kernel*" ;;
*) pick="build/examples/$kernel.[0-9]*-amd64" ;;
esac
for dir in $pick; do
	for ko in "$dir"/fhook_*.ko; do
		[ -f "$ko" ] && adds+=(--add "$ko:/fhook/$(basename "$ko")")
	done
	break
done
for prog in "${FHOOK_VM_DIR:-build/vm}"/progs/fhook-*; do
	[ -x "$prog" ] && adds+=(--add "$prog:/fhook/bin/$(basename "$prog")")
done
"$cli" vm --kernel "$kernel" --timeout 1200 --add docs/learn:/fhook/learn \
	--add vmtests/guest/learn.sh:/fhook/learn.sh "${adds[@]}" -- \
	'. /fhook/learn.sh; for f in /fhook/learn/[0-9]*.md; do n=${f##*/}; learn_record ${n%.md}; done' \
	| tr -d '\r' > "$out"
for md in docs/learn/[0-9]*.md; do
	lesson=$(basename "$md" .md)
	awk -v lesson="$lesson" -v rec="$out" '
	BEGIN {
		# the recorded outputs of this lesson: out[N], rc[N]
		while ((getline line < rec) > 0) {
			if (line ~ /^@@learn /) { split(line, f, " "); cur = f[2] == lesson ? f[3] : 0
				if (cur) { rc[cur] = f[4]; out[cur] = "" }; continue }
			if (cur) out[cur] = out[cur] line "\n"
		}
	}
	function put() { if (n in out) { printf "%s", out[n]; if (rc[n] != 0) print "[exit " rc[n] "]" } }
	/^```console run/ { inblock = 1; print; next }
	inblock && /^```/ { inblock = 0; print; next }
	!inblock { print; next }
	cont { print; cont = /\\$/; if (!cont) put(); next }
	/^\$ / { n++; print; cont = /\\$/; if (!cont) put(); next }
	{ next }	# the old shown output, replaced by put()
	' "$md" > "$md.new"
	if cmp -s "$md" "$md.new"; then
		rm "$md.new"
	else
		mv "$md.new" "$md"
		echo "learn-outputs: $md updated"
	fi
done
