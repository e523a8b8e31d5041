# bash completion for fhook(1)
#
# Subcommands and options come from the CLI's own --help (nothing listed
# twice); function names from tracefs' available_filter_functions (or
# /proc/kallsyms when tracefs is not readable); after "--" a command.

# fhook's help texts, once per shell
_fhook_help() {
	local key=_fhook_help_${1:-top}
	key=${key//-/_}
	if [[ -z ${!key-} ]]; then
		printf -v "$key" '%s' "$(command fhook $1 --help 2>/dev/null)"
	fi
	printf '%s\n' "${!key}"
}

_fhook_commands() {
	_fhook_help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
		on && /^  [a-z]/ { print $1 }' | sort -u
}

# "-p [ --pid ] PID" and "--cpu LIST": every spelling of every option
_fhook_options() {
	_fhook_help "$1" | awk '/^ +-/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^-/) { sub(/[,=].*/, "", $i); print $i }
		else if ($i != "[" && $i != "]") break }'
}

# does option $2 of command $1 take a value ("-o [ --output ] FILE")?
_fhook_option_arg() {
	_fhook_help "$1" | awk -v o="$2" '/^ +-/ {
		n = 0; for (i = 1; i <= NF; i++) {
			if ($i == o) hit = 1
			else if ($i ~ /^-/ || $i == "[" || $i == "]") continue
			else { if (hit && $i ~ /^[A-Z][A-Z0-9_.=]*$/) { print $i; exit } break }
		}
		hit = 0 }'
}

_fhook_functions() {
	local tracefs=${FHOOK_TRACEFS:-/sys/kernel/tracing} cur=$1
	if [[ -r $tracefs/available_filter_functions ]]; then
		awk -v p="$cur" 'index($1, p) == 1 { print $1 }' "$tracefs/available_filter_functions"
	elif [[ -r /proc/kallsyms ]]; then
		awk -v p="$cur" '$2 ~ /^[tT]$/ && index($3, p) == 1 { print $3 }' /proc/kallsyms
	fi | sort -u | head -n 2000
}

_fhook() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd="" i arg
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			# the traced command and its arguments
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			else
				mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			fi
			return
		fi
		[[ -z $cmd && ${COMP_WORDS[i]} != -* ]] && cmd=${COMP_WORDS[i]}
	done
	if [[ -z $cmd ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_fhook_commands) --help --version" -- "$cur")
		return
	fi
	if [[ $cmd == help ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_fhook_commands)" -- "$cur")
		return
	fi
	if [[ $prev == -* ]]; then
		arg=$(_fhook_option_arg "$cmd" "$prev")
		case $arg in
		'') ;;
		FILE | DIR | PATH) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
		*) return ;;	# a value fhook cannot guess
		esac
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_fhook_options "$cmd")" -- "$cur")
		return
	fi
	case $cmd in
	report | vm) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	list) [[ $COMP_CWORD -eq 2 ]] && mapfile -t COMPREPLY < <(compgen -W "functions events" -- "$cur") ;;
	status | bench) ;;
	*) mapfile -t COMPREPLY < <(_fhook_functions "$cur") ;;
	esac
}
complete -F _fhook fhook
