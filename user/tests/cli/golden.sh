#!/bin/bash
# CLI golden tests: the options, help texts and error messages of every
# command, byte for byte, without a module (docs/userspace.md).
#   golden.sh FHOOK CASES GOLDEN_DIR MAKE_RECFILE [--update]
# @REC@ in a case's ARGS is a record file MAKE_RECFILE writes (every kind
# of event); its path prints as @REC@.  @GRAPH@: a call graph's recording
# (MAKE_RECFILE FILE graph); @WAKEUP@, @TIMERLAT@, @HWLAT@, @OSNOISE@ and
# @IRQSOFF@: the latency tracers' (FILE wakeup, FILE timerlat, ...).
set -uo pipefail
fhook=$1 cases=$2 golden=$3 make_recfile=$4 update=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rec=$tmp/sample.fhk
"$make_recfile" "$rec" || exit 1
graph=$tmp/graph.fhk
"$make_recfile" "$graph" graph || exit 1
tracers="wakeup timerlat hwlat osnoise irqsoff"
paths="s|$rec|@REC@|g; s|$graph|@GRAPH@|g"
for t in $tracers; do
	"$make_recfile" "$tmp/$t.fhk" "$t" || exit 1
	paths="$paths; s|$tmp/$t.fhk|@${t^^}@|g"
done
failed=0 n=0
while read -r name args; do
	case $name in '' | '#'*) continue ;; esac
	n=$((n + 1))
	args=${args//@REC@/$rec}
	args=${args//@GRAPH@/$graph}
	for t in $tracers; do
		args=${args//@${t^^}@/$tmp/$t.fhk}
	done
	# shellcheck disable=SC2086
	FHOOK_DEVICE=/nonexistent FHOOK_KALLSYMS=/nonexistent FHOOK_TRACEFS=/nonexistent \
		"$fhook" $args > "$tmp/out" 2> "$tmp/err" < /dev/null
	rc=$?
	{
		echo "exit $rc"
		echo "-- stdout"
		cat "$tmp/out"
		echo "-- stderr"
		cat "$tmp/err"
	} | sed "$paths" > "$tmp/$name"
	if [ "$update" = --update ]; then
		cp "$tmp/$name" "$golden/$name.out"
	elif ! cmp -s "$tmp/$name" "$golden/$name.out"; then
		echo "FAIL $name: fhook $args"
		diff -u "$golden/$name.out" "$tmp/$name" | head -n 20
		failed=$((failed + 1))
	fi
done < "$cases"
[ "$update" = --update ] && { echo "updated $n golden files"; exit 0; }
echo "$((n - failed)) of $n CLI golden cases match"
[ $failed = 0 ]
