# explain: fhook explain shows a function's ftrace site: a 5-byte NOP while
# nothing traces it; with --arm direct/ops/kprobe/hook a call whose decoded
# target is the right symbol, at the address /proc/kallsyms gives for it;
# the kernel's own function tracer on the function shows up as a foreign
# ops with the site armed; functions that cannot be traced say why.
. /fhook/lib.sh

load_fhook
load_workmod
tracefs_reset
ksym() { awk -v n="$1" '$3 == n && ($2 == "t" || $2 == "T") { print $1; exit }' /proc/kallsyms; }
# json FILE KEY: the first "KEY":"VALUE" of FILE (armed view after idle)
jget() { sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1; }

F=fhook_testmod_target
run_fhook $D/idle explain $F
expect_eq "$RC" 0 "fhook explain exit code"
sed 's/^/#   /' $D/idle.out | head -n 12
addr=$(ksym $F)
grep -q "^$F: 0x$(echo $addr | sed 's/^0*//')," $D/idle.out ||
	fail "explain's address differs from /proc/kallsyms ($addr): $(head -n 1 $D/idle.out)"
# (x86-64's NOP is 5 bytes; arm64's, in the BL's place, 4)
nop=5
[ "$(uname -m)" = aarch64 ] && nop=4
grep -q "<- ftrace site: a $nop-byte NOP" $D/idle.out || fail "the idle site is not shown as a NOP"
grep -q 'traceable: yes' $D/idle.out || fail "not traceable?"

# (each explain reads kallsyms, BTF and the function list: the slow debug
# kernel checks the two fhook trampolines only)
# (arm64 has no kprobes on ftrace: its kprobe is a brk, checked below)
ARM64=0
[ "$(uname -m)" = aarch64 ] && ARM64=1
# (direct where the kernel has direct calls: not arm64 6.1)
DIRECT=
has_feature direct && DIRECT=direct
for how in $(pick "$DIRECT ops $([ $ARM64 = 1 ] || echo kprobe) hook" "$DIRECT hook"); do
	run_fhook $D/$how explain --arm $how --format json $F
	expect_eq "$RC" 0 "explain --arm $how exit code"
	idle_site=$(sed 's/"armed":.*//' $D/$how.out | sed -n 's/.*"idle":{"site":"\([a-z]*\)".*/\1/p')
	armed=$(sed -n 's/.*"armed":\(.*\)/\1/p' $D/$how.out)
	echo "$armed" > $D/$how.armed
	site=$(echo "$armed" | sed -n 's/^{"site":"\([a-z]*\)".*/\1/p')
	target=$(jget $D/$how.armed site_target)
	log "--arm $how: idle $idle_site, armed $site -> $target"
	[ "$idle_site" = nop ] || fail "--arm $how: idle site is '$idle_site'"
	[ "$site" = call ] || fail "--arm $how: the armed site is '$site', not a call"
	# the call's decoded target is the symbol kallsyms has at that address
	# (x86-64: call 0x..., arm64: bl #0x...)
	op=$(sed -n 's/.*"site_addr":"[^"]*".*"text":"\(call[q]*\|bl\) #*0x\([0-9a-f]*\)".*/\2/p' $D/$how.armed | head -n 1)
	[ -n "$op" ] || op=$(echo "$armed" | grep -o '"text":"\(call[q]*\|bl\) #*0x[0-9a-f]*"' | head -n 1 | sed 's/.*0x//;s/"//')
	sym=${target%%+*}
	case $sym in
	*" "*) sym=${sym%% *} ;;
	esac
	if [ "$how" = direct ]; then
		case $target in
		fhook_direct_fast_*) ;;
		*) fail "--arm direct: the site calls $target, not fhook's fast counting trampoline" ;;
		esac
		kaddr=$(ksym "$sym")
		[ "$(echo $kaddr | sed 's/^0*//')" = "$op" ] ||
			fail "--arm direct: call operand 0x$op, kallsyms has $sym at $kaddr"
	fi
	# one ops on the function: ftrace gives it a trampoline of its own,
	# which kallsyms lists (once it exists) and enabled_functions shows;
	# arm64's ftrace has none: the site calls ftrace_caller, which finds
	# the ops in the literal before the function (CALL_OPS); from a module
	# out of a BL's reach (128 MiB) through the module's ftrace PLT
	if [ "$how" = ops ] && [ $ARM64 = 1 ]; then
		case $target in
		"ftrace_caller+0x0/"* | *" [fhook_testmod]") ;;
		*) fail "--arm ops: the site calls $target, not ftrace_caller or the module's PLT to it" ;;
		esac
	elif [ "$how" = ops ]; then
		case $target in
		"ftrace_trampoline+0x0/"*" [__builtin__ftrace]") ;;
		*) fail "--arm ops: the site calls $target, not an ftrace_trampoline" ;;
		esac
		grep -q "tramp: 0x$op" $D/$how.armed || fail "--arm ops: call operand 0x$op is not the trampoline enabled_functions shows"
	fi
	[ "$how" = direct ] && ! grep -q '"flags":"[A-Z]*D' $D/$how.armed && fail "no D flag while armed direct"
	[ "$how" = hook ] && ! grep -q '"flags":"[A-Z]*I' $D/$how.armed && fail "no I flag while hooked"
	[ "$how" = kprobe ] && ! grep -q 'FTRACE' $D/$how.armed && fail "the kprobe list does not show [FTRACE]"
done
if [ $ARM64 = 1 ]; then
	run_fhook $D/kp explain --arm kprobe $F
	expect_eq "$RC" 0 "explain --arm kprobe exit code"
	sed 's/^/#   /' $D/kp.out | head -n 20
	grep -q '<- a brk: a kprobe' $D/kp.out || fail "no brk shown for the kprobe on arm64"
fi
if [ -n "$DIRECT" ]; then
	run_fhook $D/armtext explain --arm direct $F
	expect_eq "$RC" 0 "explain --arm direct (text) exit code"
	sed 's/^/#   /' $D/armtext.out
	grep -q '<- ftrace site: call fhook_direct_fast_' $D/armtext.out || fail "text view of the armed site"
fi
detached || fail "explain --arm left something attached: $(cat $T/enabled_functions)"

# a foreign ops: the kernel's function tracer on the function
echo $F > $T/set_ftrace_filter
echo function > $T/current_tracer
run_fhook $D/foreign explain $F
echo nop > $T/current_tracer
echo > $T/set_ftrace_filter
sed -n '/attached/,$p' $D/foreign.out | sed 's/^/#   /'
grep -q "^    $F \[fhook_testmod\] (1)" $D/foreign.out || fail "the function tracer is not listed as attached"
grep -q '<- ftrace site: call' $D/foreign.out || fail "the site is not a call under the function tracer"

# functions that cannot be traced
run_fhook $D/none explain no_such_function_fhk
expect_eq "$RC" 1 "explain of an unknown function: exit code"
grep -q 'no such kernel function' $D/none.err || fail "unknown function: $(cat $D/none.err)"
clone=$(awk '$2 ~ /^[tT]$/ && $3 ~ /\.constprop\.0$/ && NF == 3 { print $3 }' /proc/kallsyms | head -n 200 |
	while read -r c; do b=${c%.constprop.0}; grep -q " $b\$" /proc/kallsyms || { echo $b; break; }; done)
if [ -n "$clone" ]; then
	run_fhook $D/clone explain "$clone"
	expect_eq "$RC" 1 "explain of $clone (only clones exist): exit code"
	grep -q 'only as clones' $D/clone.err || fail "clone reason for $clone: $(cat $D/clone.err)"
fi
# __init text: freed after boot
run_fhook $D/init explain start_kernel
expect_eq "$RC" 0 "explain of start_kernel (__init): exit code"
grep -q 'traceable: no: __init code, freed once the kernel had booted' $D/init.out ||
	fail "start_kernel's reason: $(grep traceable $D/init.out)"
run_fhook $D/notrace explain __schedule
log "__schedule: $(grep traceable $D/notrace.out)"
grep -q 'traceable: no' $D/notrace.out || fail "__schedule (notrace) shown as traceable"
pass "idle NOP, armed call targets (direct = kallsyms)$([ $ARM64 = 0 ] || echo ', a kprobe brk'), foreign ops, reasons for unknown/clone/__init/notrace"
