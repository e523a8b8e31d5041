# shellcheck shell=bash
# The target kernels: build/kernels/targets (scripts/setup.sh writes it),
# narrowed to --kernel and the mode (demo: the first; bench: Debian kernels).
# Sourced by vmtests/run.sh, which sets the variables named here.

# read_targets: t_vmlinuz[REL], t_moddir[REL], t_hdr[REL], all_rels
read_targets() {
	[ -f "$targets_file" ] || die "$targets_file missing: run scripts/setup.sh first"
	declare -gA t_vmlinuz t_moddir t_hdr
	local rel hdr vmlinuz moddir	# (callers have variables of these names)
	all_rels=()
	while read -r rel hdr vmlinuz moddir; do
		[ -n "$rel" ] || continue
		all_rels+=("$rel")
		t_vmlinuz[$rel]=$vmlinuz
		t_moddir[$rel]=$moddir
		t_hdr[$rel]=$hdr
	done < "$targets_file"
}

# target_named NAME: the release NAME stands for: a release, or 6.1 / 6.12
# (the Debian kernel of that series), rt (the PREEMPT_RT one) or debug (the
# -kdebug one); "" if none
target_named() {
	local rel
	for rel in "${all_rels[@]}"; do
		case $1 in
		"$rel") echo "$rel"; return ;;
		debug) [[ $rel == *-kdebug ]] && { echo "$rel"; return; } ;;
		rt) [[ $rel == *-rt-* ]] && { echo "$rel"; return; } ;;
		*) [[ $rel == "$1".* && $rel != *-kdebug && $rel != *-rt-* ]] && { echo "$rel"; return; } ;;
		esac
	done
}

# load_targets: read_targets, narrowed to the kernels asked for
load_targets() {
	read_targets
	[ ${#all_rels[@]} -gt 0 ] || die "no kernel in $targets_file"
	if [ ${#kernels[@]} -eq 0 ]; then
		kernels=("${all_rels[@]}")
		[ $mode = demo ] && kernels=("${all_rels[0]}")
		if [ $mode = bench ]; then	# figures of the kernels users run
			kernels=()
			for rel in "${all_rels[@]}"; do
				[[ $rel == *-kdebug ]] || kernels+=("$rel")
			done
		fi
	fi
	for rel in "${kernels[@]}"; do
		[ -n "${t_vmlinuz[$rel]:-}" ] || die "kernel '$rel' is not in $targets_file (have: ${all_rels[*]})"
		[ -f "${t_vmlinuz[$rel]}" ] || die "${t_vmlinuz[$rel]} missing: run scripts/setup.sh"
	done
}
