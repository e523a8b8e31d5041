# shellcheck shell=sh
# The doc-test runner of the lessons (docs/learn/NN-topic.md, format in
# docs/learn/README.md): sourced by the learn_* guest tests after lib.sh.
#
#   learn_lesson NN-topic
#
# runs every ```console run block of /fhook/learn/NN-topic.md in order, in
# one shell (cd and variables carry over, as in a terminal), each command
# with its stdout and stderr together, and fails when a command's exit
# status is not the one shown ("[exit N]", default 0) or when a shown
# output line, normalised, is not found in what the command printed, in
# order.  Normalised on both sides: a task's pid (comm-123), timestamps
# (12.345678:), CPU numbers ([001], " 1)"), the need-resched flag (.N...
# when the scheduler wanted the CPU back), addresses (0xffff..., 16 hex
# digits), durations (12.345 us), fhook's per-CPU summary lines (which CPU
# ran the command varies), and every run of blanks is one space
# (columns shift with the widths of pids and timestamps); "<any>" in a
# shown line matches any text.

# learn_split FILE DIR: DIR/N.cmd, N.exp (the shown output), N.rc
learn_split() {
	awk -v dir="$2" '
	function flush() {
		if (open) {
			printf "%s", shown > (dir "/" n ".exp"); close(dir "/" n ".exp")
			print rc > (dir "/" n ".rc"); close(dir "/" n ".rc")
		}
		open = 0; shown = ""; rc = 0
	}
	/^```console run/ { inblock = 1; next }
	inblock && /^```/ { flush(); inblock = 0; next }
	!inblock { next }
	cont { print >> (dir "/" n ".cmd"); cont = /\\$/; next }
	/^\$ / { flush(); n++; open = 1; print substr($0, 3) > (dir "/" n ".cmd"); cont = /\\$/; next }
	/^\[exit [0-9]+\]$/ { rc = $2 + 0; next }
	{ shown = shown $0 "\n" }
	END { flush(); print n + 0 > (dir "/count") }' "$1"
}

# learn_norm: stdin normalised (see the top)
learn_norm() {
	sed -E 's/-[0-9]+( +\[)/-PID\1/g
		s/\[[0-9]{3}\]/[CPU]/g
		s/(\[CPU\] +[dX.])[NnpP]([hHsSzZ.][0-9.][0-9.])/\1.\2/g
		s/^ *[0-9]+\)/ C)/
		s/[0-9]+\.[0-9]{6}:/TS:/g
		s/0x[0-9a-f]{6,}/ADDR/g
		s/(^|[^0-9a-fx])[0-9a-f]{16}/\1ADDR/g
		s/[0-9]+\.[0-9]+ us/DUR us/g
		s/^fhook: cpu [0-9]+ events [0-9]+ lost [0-9]+$/fhook: cpu N events N lost N/
		s/[ \t]+/ /g; s/^ //; s/ $//'
}

# learn_match EXP OUT: every line of EXP is in OUT, in order ("<any>":
# anything; "...": a reminder that lines were left out, ignored)
learn_match() {
	awk 'NR == FNR { if ($0 != "..." && $0 != "") want[++n] = $0; next }
	function re(s,   r) { r = s; gsub(/[][\\.^$*+?(){}|\/]/, "\\\\&", r)
		gsub(/<any>/, ".*", r); return "^" r "$" }
	i < n && $0 ~ re(want[i + 1]) { i++ }
	END { if (i < n) { print "not found (after " i " of " n " shown lines): " want[i + 1]; exit 1 } }' \
		"$1" "$2"
}

# learn_each DIR FN: the commands learn_split wrote into DIR, run in order
# in one shell from /root/learn (a cd carries over, as in a terminal),
# stdout and stderr together into DIR/N.out; after each, FN N STATUS
# (FN sees the command as $_cmd)
learn_each() {
	_ld=$1
	_n=$(cat "$_ld/count")
	mkdir -p /root/learn
	cd /root/learn || return 1
	_i=1
	while [ "$_i" -le "$_n" ]; do
		_cmd=$(cat "$_ld/$_i.cmd")
		eval "$_cmd" > "$_ld/$_i.out" 2>&1 < /dev/null
		"$2" "$_i" "$?"
		_i=$((_i + 1))
	done
	cd / || true
}

# learn_check N STATUS: command N of lesson $_lesson exited as shown and
# printed the shown lines
learn_check() {
	log "\$ $_cmd"
	sed 's/^/#   /' "$_ld/$1.out" | head -n 60
	[ "$2" = "$(cat "$_ld/$1.rc")" ] ||
		fail "$_lesson, command $1 ($_cmd): exit $2, the lesson shows $(cat "$_ld/$1.rc")"
	learn_norm < "$_ld/$1.exp" > "$_ld/$1.expn"
	learn_norm < "$_ld/$1.out" > "$_ld/$1.outn"
	_why=$(learn_match "$_ld/$1.expn" "$_ld/$1.outn") ||
		fail "$_lesson, command $1 ($_cmd): $_why"
}

# learn_lesson NN-topic: the guest test of docs/learn/NN-topic.md
learn_lesson() {
	_lesson=$1
	[ -f "/fhook/learn/$1.md" ] || fail "no lesson /fhook/learn/$1.md"
	# a lesson whose outputs show one CPU's code says so: <!-- cpu: x86_64 -->
	_cpu=$(sed -n 's/^<!-- cpu: \([a-z0-9_]*\) -->$/\1/p' "/fhook/learn/$1.md")
	[ -z "$_cpu" ] || [ "$_cpu" = "$(uname -m)" ] ||
		skip "$1: its outputs are $_cpu's (disassembly, registers, symbols), not $(uname -m)'s"
	rm -rf "$D/learn"
	mkdir -p "$D/learn"
	learn_split "/fhook/learn/$1.md" "$D/learn"
	[ "$(cat "$D/learn/count")" -gt 0 ] || fail "$1: no run-marked command"
	learn_each "$D/learn" learn_check
	pass "$1: $_n commands, their output as the lesson shows it"
}

# learn_print N STATUS: for learn_record
learn_print() {
	echo "@@learn $_lesson $1 $2"
	cat "$_ld/$1.out"
}

# learn_record NN-topic: run the lesson's commands as learn_lesson does and
# print what each printed, for scripts/learn-outputs.sh: a line
# "@@learn NN-topic N STATUS", then the command's output
learn_record() {
	_lesson=$1
	rm -rf "${D:-/tmp}/learn-$1"
	mkdir -p "${D:-/tmp}/learn-$1"
	learn_split "/fhook/learn/$1.md" "${D:-/tmp}/learn-$1"
	learn_each "${D:-/tmp}/learn-$1" learn_print
}
