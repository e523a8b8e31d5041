# shellcheck shell=bash
# The tests: guest/tests.list parsed into groups (one boot each) and
# narrowed to --filter and --quick.
# Sourced by vmtests/run.sh, which sets the variables named here.

# load_tests: the t_* (per test) and g_* (per group) tables, tests,
# run_groups, needs_fhook
load_tests() {
	# tests.list: "@group NAME [smp=N] [mem=MB] [stress]" lines start a group
	# (one boot); "name timeout needs [kernels]" lines are its tests, in run
	# order.
	all_tests=() groups=() needs_fhook=0
	declare -gA t_needs t_tmo t_group t_kernels t_rt t_arm64 g_smp g_mem g_stress g_tests g_est g_slow_append g_append
	group=""
	while read -r -a f; do
		if [ "${f[0]}" = @group ]; then
			group=${f[1]}
			groups+=("$group")
			g_smp[$group]=2 g_mem[$group]=1024 g_stress[$group]=0 g_tests[$group]="" g_est[$group]=60
			g_slow_append[$group]="" g_append[$group]=""
			for kv in "${f[@]:2}"; do
				case $kv in
				smp=*) g_smp[$group]=${kv#smp=} ;;
				mem=*) g_mem[$group]=${kv#mem=} ;;
				est=*) g_est[$group]=${kv#est=} ;;
				stress) g_stress[$group]=1 ;;
				slow_append=*) g_slow_append[$group]=${kv#slow_append=} ;;
				append=*) g_append[$group]=${kv#append=} ;;
				*) die "tests.list: unknown group attribute '$kv'" ;;
				esac
			done
			continue
		fi
		[ -n "$group" ] || die "tests.list: test '${f[0]}' before the first @group"
		all_tests+=("${f[0]}")
		t_tmo[${f[0]}]=${f[1]}
		t_needs[${f[0]}]=${f[2]}
		t_kernels[${f[0]}]=${f[3]:-all}
		t_rt[${f[0]}]=0 t_arm64[${f[0]}]=0
		local -a marks
		IFS=, read -r -a marks <<< "${t_kernels[${f[0]}]}"
		t_kernels[${f[0]}]=${marks[0]}
		for m in "${marks[@]:1}"; do
			case $m in
			rt) t_rt[${f[0]}]=1 ;;
			arm64) t_arm64[${f[0]}]=1 ;;
			*) die "tests.list: ${f[0]}: unknown kernel mark ',$m' (',rt', ',arm64')" ;;
			esac
		done
		case ${t_kernels[${f[0]}]} in
		all | lines | debian | once) ;;
		*) die "tests.list: ${f[0]}: kernels must be 'all', 'lines', 'debian' or 'once', with ',rt' and ',arm64' or not" ;;
		esac
		t_group[${f[0]}]=$group
	done < <(awk '!/^#/ && NF' "$tests_list")
	tests=()
	for t in "${all_tests[@]}"; do
		[ $quick = 1 ] && [ "${g_stress[${t_group[$t]}]}" = 1 ] && continue
		if [ ${#filters[@]} -eq 0 ]; then
			tests+=("$t")
			continue
		fi
		for f in "${filters[@]}"; do
			# shellcheck disable=SC2053
			if [[ $t == $f ]]; then
				tests+=("$t")
				break
			fi
		done
	done
	for f in "${filters[@]}"; do
		found=0
		for t in "${all_tests[@]}"; do
			# shellcheck disable=SC2053
			[[ $t == $f ]] && found=1
		done
		[ $found = 1 ] || die "no test matches '$f' (see vmtests/run.sh --list)"
	done
	[ $demo = 1 ] && tests=()
	[ $demo = 1 ] || [ ${#tests[@]} -gt 0 ] || die "no test selected (--quick skips the stress groups)"
	for t in "${tests[@]}"; do
		[ "${t_needs[$t]}" = fhook ] && needs_fhook=1
		g_tests[${t_group[$t]}]+="$t "
	done
	[ $demo = 1 ] && needs_fhook=1
	run_groups=()
	for g in "${groups[@]}"; do
		# (an if: a last group without tests must not end the function false)
		if [ -n "${g_tests[$g]}" ]; then
			run_groups+=("$g")
		fi
	done
}
