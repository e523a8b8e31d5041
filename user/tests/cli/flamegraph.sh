#!/bin/bash
# fhook report --hist keys=...stacktrace --folded / --flamegraph on the
# test recording: the folded lines add up to the histogram's hits and put
# the outermost caller first; the SVG is well-formed XML (xmllint) with a
# frame per node of the merged stacks.
# usage: flamegraph.sh FHOOK MAKE_RECFILE
set -u
fhook=$1 make_recfile=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "flamegraph: FAIL: $*" >&2; exit 1; }

"$make_recfile" "$tmp/r.rec" || fail "make_recfile"
"$fhook" report -q --hist keys=comm,stacktrace --probe 1 --folded --flamegraph "$tmp/fg.svg" \
	"$tmp/r.rec" > "$tmp/folded" || fail "report --folded --flamegraph"
hits=$("$fhook" report -q --hist keys=comm,stacktrace --probe 1 "$tmp/r.rec" | sed -n 's/^ *Hits: //p')
sum=$(awk '{ n += $NF } END { print n }' "$tmp/folded")
[ "$sum" = "$hits" ] || fail "folded counts add up to $sum, the histogram has $hits hits"
grep -qx 'sh"x\\;0x00001234;__x64_sys_read;ksys_write 1' "$tmp/folded" ||
	fail "no folded line for sh's stack, outermost first: $(cat "$tmp/folded")"
xmllint --noout "$tmp/fg.svg" || fail "the flame graph is not well-formed XML"
# all, three tasks, three frames of sh's stack
n=$(grep -c '<g class="f"' "$tmp/fg.svg")
[ "$n" = 7 ] || fail "$n frames in the flame graph, want 7"
grep -q '<title>ksys_write (1 samples, 33.33%)</title>' "$tmp/fg.svg" || fail "no frame for ksys_write"
"$fhook" report -q --hist keys=comm --probe 1 --folded "$tmp/r.rec" 2> "$tmp/err" &&
	fail "--folded without a stacktrace key succeeded"
grep -q 'need a stacktrace or ustacktrace key' "$tmp/err" || fail "no reason given: $(cat "$tmp/err")"
echo "flamegraph: ok ($sum stacks' counts, $n frames)"
