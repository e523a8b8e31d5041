#!/bin/bash
# The bash completion (packaging/completion/fhook.bash) against the built
# CLI: subcommands and options from its --help, function names from a
# tracefs directory, files, the traced command after "--".
#   completion.sh FHOOK COMPLETION
set -uo pipefail
fhook=$(realpath "$1") script=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/tracefs" "$tmp/files"
ln -s "$fhook" "$tmp/bin/fhook"
printf '%s\n' vfs_read vfs_readv vfs_write 'ext4_file_read_iter [ext4]' > "$tmp/tracefs/available_filter_functions"
touch "$tmp/files/out.fhk"
failed=0

# expect "WORDS" "EXPECTED COMPLETIONS": complete the last word of WORDS
expect() {
	local got
	got=$(cd "$tmp/files" && PATH="$tmp/bin:$PATH" FHOOK_TRACEFS="$tmp/tracefs" bash -c '
		. "$1"
		read -ra COMP_WORDS <<< "$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_fhook
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$script" "$1")
	if [[ $got != "$2 " && ! ($2 == *... && $got == "${2%...}"*) ]]; then
		echo "FAIL: '$1': got '$got', expected '$2'"
		failed=1
	fi
}

expect "fhook tr" "trace"
expect "fhook st" "stat status"
expect "fhook help re" "record report"
expect "fhook trace --ov" "--overwrite"
expect "fhook record --bu" "--buffer-size"
expect "fhook trace vfs_re" "vfs_read vfs_readv"
expect "fhook count ext4_" "ext4_file_read_iter"
expect "fhook trace -o o" "out.fhk"
expect "fhook report " "out.fhk"
expect "fhook list " "events functions"
expect "fhook trace vfs_read -- fhoo" "fhook..."
# a value fhook cannot guess: nothing rather than function names
expect "fhook trace --cpu " ""
# every command of fhook --help is completed
for cmd in $("$fhook" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }'); do
	expect "fhook $cmd" "$cmd..."
done
[ $failed = 0 ] && echo "completion: all passed"
exit $failed
