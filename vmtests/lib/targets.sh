# shellcheck shell=bash
# The target kernels: build/kernels/targets (scripts/setup.sh writes it),
# narrowed to --kernel and the mode (demo: the first; bench: Debian kernels).
# Sourced by vmtests/run.sh, which sets the variables named here.

# load_targets: t_vmlinuz[REL], t_moddir[REL], all_rels, kernels
load_targets() {
	[ -f "$targets_file" ] || die "$targets_file missing: run scripts/setup.sh first"
	declare -gA t_vmlinuz t_moddir
	all_rels=()
	while read -r rel _hdr vmlinuz moddir; do
		[ -n "$rel" ] || continue
		all_rels+=("$rel")
		t_vmlinuz[$rel]=$vmlinuz
		t_moddir[$rel]=$moddir
	done < "$targets_file"
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
