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
# (12.345678:), CPU numbers ([001], " 1)"), addresses (0xffff..., 16 hex
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

learn_lesson() {
	_md=/fhook/learn/$1.md
	[ -f "$_md" ] || fail "no lesson $_md"
	_ld=$D/learn
	rm -rf "$_ld"
	mkdir -p "$_ld" /root/learn
	learn_split "$_md" "$_ld"
	_n=$(cat "$_ld/count")
	[ "$_n" -gt 0 ] || fail "$1: no run-marked command"
	cd /root/learn || fail "cd /root/learn"
	_i=1
	while [ "$_i" -le "$_n" ]; do
		_cmd=$(cat "$_ld/$_i.cmd")
		log "\$ $_cmd"
		eval "$_cmd" > "$_ld/$_i.out" 2>&1 < /dev/null
		_rc=$?
		sed 's/^/#   /' "$_ld/$_i.out" | head -n 60
		[ "$_rc" = "$(cat "$_ld/$_i.rc")" ] ||
			fail "$1, command $_i ($_cmd): exit $_rc, the lesson shows $(cat "$_ld/$_i.rc")"
		learn_norm < "$_ld/$_i.exp" > "$_ld/$_i.expn"
		learn_norm < "$_ld/$_i.out" > "$_ld/$_i.outn"
		_why=$(learn_match "$_ld/$_i.expn" "$_ld/$_i.outn") ||
			fail "$1, command $_i ($_cmd): $_why"
		_i=$((_i + 1))
	done
	cd / || true
	pass "$1: $_n commands, their output as the lesson shows it"
}

# learn_record NN-topic: run the lesson's commands as learn_lesson does and
# print what each printed, for scripts/learn-outputs.sh: a line
# "@@learn NN-topic N STATUS", then the command's output
learn_record() {
	_ld=${D:-/tmp}/learn-$1
	rm -rf "$_ld"
	mkdir -p "$_ld" /root/learn
	learn_split "/fhook/learn/$1.md" "$_ld"
	_n=$(cat "$_ld/count")
	cd /root/learn || return 1
	_i=1
	while [ "$_i" -le "$_n" ]; do
		eval "$(cat "$_ld/$_i.cmd")" > "$_ld/$_i.out" 2>&1 < /dev/null
		echo "@@learn $1 $_i $?"
		cat "$_ld/$_i.out"
		_i=$((_i + 1))
	done
	cd / || true
}
