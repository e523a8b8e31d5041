#!/usr/bin/env bash
# `fhook vm`'s own tests (host side, one Debian kernel, ~2 minutes): exit
# statuses 0 and 7 come out, a guest panic is status 125 within the
# timeout, a KVM that aborts, pauses or spins falls back to TCG (stand-in
# QEMUs), --out brings a record file out (also past a panic), --add files
# appear in the guest, fhook.ko is loaded, the deny example works from a
# build tree run elsewhere, bad arguments are usage errors (2).  Part of
# `make test-vm`.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
fhook=$top/build/user/fhook
kernel=${1:-6.12}
failed=0
ok() { printf 'vm %-34s ok\n' "$1"; }
bad() { printf 'vm %-34s FAIL %s\n' "$1" "$2"; failed=1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1	# it works from any directory

# The checks below boot under TCG (the suite's accelerator): whether this
# host's KVM works is not what they test.  KVM's failures are tested with
# stand-in QEMUs that fail as nested KVMs do (kvm_case), then boot for real.
export FHOOK_VM_ACCEL=tcg
"$fhook" vm --kernel "$kernel" --timeout 300 -- true > out 2> err
rc=$?; [ $rc = 0 ] && ok "exit 0" || bad "exit 0" "status $rc: $(tail -n 3 err)"

# kvm_case NAME MODE WHY [ARGS]: fhook vm --accel auto with a /dev/kvm that
# opens and a QEMU that, under KVM, fails as MODE: abort (a MSR nested KVM
# cannot set: seen on a cloud machine), pause (an internal error: QEMU
# pauses, it does not exit), spin (the guest never reaches init); under
# TCG it is the real QEMU.  The command must run once, under TCG, after
# one line naming WHY; doctor's status file must say it too.
real_qemu=$(command -v qemu-system-x86_64)
mkdir -p fakeq
cat > fakeq/qemu-system-x86_64 <<'EOQ'
#!/usr/bin/env bash
acc="" pidfile="" console=""
prev=""
for a in "$@"; do
	case $prev in
	-accel) acc=$a ;;
	-pidfile) pidfile=$a ;;
	-serial) [[ $a == file:* ]] && [ -z "$console" ] && console=${a#file:} ;;
	esac
	prev=$a
done
[ "$acc" = kvm ] || exec "$REAL_QEMU" "$@"
[ -n "$pidfile" ] && echo $$ > "$pidfile"
case $FAKE_KVM in
abort)
	echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
	echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
	kill -ABRT $$ ;;
pause)
	echo "KVM internal error. Suberror: 1" >&2
	echo "emulation failure" >&2
	exec sleep 600 ;;
spin)
	echo "Booting from ROM..." > "$console"
	exec sleep 600 ;;
esac
EOQ
chmod +x fakeq/qemu-system-x86_64
: > fake-kvm
# with_fake_kvm MODE COMMAND...: COMMAND with the stand-in QEMU failing as
# MODE under KVM, a /dev/kvm that opens, doctor's status file in scratch
with_fake_kvm() {
	local mode=$1
	shift
	env -u FHOOK_VM_ACCEL PATH="$scratch/fakeq:$PATH" REAL_QEMU="$real_qemu" FAKE_KVM=$mode \
		FHOOK_VM_KVM_DEV="$scratch/fake-kvm" FHOOK_VM_KVM_WAIT=3 XDG_CACHE_HOME="$scratch/cache" "$@"
}
kvm_case() {
	local name=$1 mode=$2 why=$3
	rm -rf cache
	start=$(date +%s)
	with_fake_kvm "$mode" "$fhook" vm --kernel "$kernel" --timeout 300 \
		-- 'echo ran; fhook list events | grep -c sched_switch' > out 2> err
	rc=$?
	if [ $rc = 0 ] && [ "$(tr '\n' ' ' < out)" = "ran 1 " ] &&
		[ "$(grep -c 'KVM does not work here' err)" = 1 ] && grep -q "KVM does not work here ($why): booting again under TCG" err &&
		grep -q "^fails .* $why" cache/fhook/kvm-status; then
		ok "$name ($(($(date +%s) - start)) s)"
	else
		bad "$name" "status $rc, output '$(tr '\n' ' ' < out)': $(cat err)"
	fi
}
kvm_case "KVM aborts: TCG" abort "failed to set MSR 0x10a to 0x69"
kvm_case "KVM pauses: TCG" pause "KVM internal error. Suberror: 1"
kvm_case "KVM never reaches init: TCG" spin "the guest's init did not start within 3 s"
# asked for KVM: no fallback, one line
with_fake_kvm abort "$fhook" vm --kernel "$kernel" --accel kvm -- 'echo ran' > out 2> err
rc=$?
if [ $rc = 1 ] && [ ! -s out ] && grep -q '^fhook vm: error: KVM did not boot the guest: failed to set MSR 0x10a' err; then
	ok "--accel kvm: no fallback"
else
	bad "--accel kvm: no fallback" "status $rc, output '$(cat out)': $(cat err)"
fi

# --out: a record file written in the guest is read on the host, also
# when the guest panics afterwards; output captured here has no terminal
# escapes (fhook's progress lines are for terminals)
rm -rf res
"$fhook" vm --kernel "$kernel" --timeout 300 --out res -- \
	'fhook record -o /out/t.fhk vfs_read -- dd if=/etc/passwd of=/dev/null bs=64; echo done > /out/flag; echo c > /proc/sysrq-trigger' > out 2> err
rc=$?
if [ $rc = 125 ] && [ "$(cat res/flag 2> /dev/null)" = done ] &&
	"$fhook" report res/t.fhk > report 2>&1 && [ "$(grep -c ' vfs_read <-' report)" -ge 2 ] &&
	! grep -q $'\033' out; then
	ok "--out: record in the guest, report here"
else
	bad "--out: record in the guest, report here" "status $rc, $(head -c 300 report 2> /dev/null), $(grep -c $'\033' out) escapes: $(tail -n 3 err)"
fi

# the guest command sees a terminal when fhook vm's output is one (script:
# a pseudo-terminal), a pipe when it is captured
if script -qec true /dev/null > /dev/null 2>&1; then
	script -qec "'$fhook' vm --kernel '$kernel' --timeout 300 -- '[ -t 1 ] && echo terminal || echo pipe'" /dev/null > tty.out 2>&1
else
	echo "vm: no pseudo-terminal here (script fails): the terminal half is not checked"
	echo terminal > tty.out
fi
"$fhook" vm --kernel "$kernel" --timeout 300 -- '[ -t 1 ] && echo terminal || echo pipe' > out 2> err
if [ "$(tr -d '\r' < tty.out | tail -n 1)" = terminal ] && [ "$(cat out)" = pipe ]; then
	ok "terminal or pipe, as here"
else
	bad "terminal or pipe, as here" "under script: '$(tr -d '\r' < tty.out | tail -n 1)', captured: '$(cat out)'"
fi

"$fhook" vm --kernel "$kernel" --timeout 300 -- 'echo to-stdout; exit 7' > out 2> err
rc=$?
if [ $rc = 7 ] && [ "$(cat out)" = to-stdout ]; then ok "exit 7, output"; else bad "exit 7, output" "status $rc, output '$(cat out)'"; fi

start=$(date +%s)
"$fhook" vm --kernel "$kernel" --timeout 300 -- 'echo c > /proc/sysrq-trigger' > out 2> err
rc=$?
if [ $rc = 125 ] && grep -q 'Kernel panic' err; then
	ok "panic -> 125 ($(($(date +%s) - start)) s)"
else
	bad "panic -> 125" "status $rc: $(head -n 3 err)"
fi

echo payload > file.txt
mkdir -p dir/sub && echo deep > dir/sub/f
"$fhook" vm --kernel "$kernel" --timeout 300 --add file.txt --add dir:/opt/dir \
	-- 'cat /root/file.txt /opt/dir/sub/f; grep -c "^fhook " /proc/modules' > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(tr '\n' ' ' < out)" = "payload deep 1 " ]; then
	ok "--add, fhook.ko loaded"
else
	bad "--add, fhook.ko loaded" "status $rc, output '$(tr '\n' ' ' < out)'"
fi

"$fhook" vm --kernel "$kernel" --timeout 300 --no-load -- 'grep -c "^fhook " /proc/modules' > out 2> err
rc=$?; [ "$(cat out)" = 0 ] && ok "--no-load" || bad "--no-load" "status $rc, output '$(cat out)'"

rel=$(awk -v k="$kernel" '$1 ~ "^" k "\\." && $1 !~ /kdebug/ { print $1; exit }' "$top/build/kernels/targets")
"$fhook" vm --kernel "$kernel" --timeout 300 --add "$top/build/examples/$rel/fhook_deny_open.ko" \
	-- 'insmod fhook_deny_open.ko path=/etc/passwd && cat /etc/passwd; echo "status $?"' > out 2> err
rc=$?
if [ $rc = 0 ] && grep -q 'Permission denied' out && grep -q 'status 1' out; then
	ok "the deny example"
else
	bad "the deny example" "status $rc, output '$(cat out)'"
fi

# a kernel image given by path, with the directory of its fhook.ko
vmlinuz=$(awk -v r="$rel" '$1 == r { print $3 }' "$top/build/kernels/targets")
"$fhook" vm --kernel "$vmlinuz" --modules "$top/build/kmod/$rel" --timeout 300 \
	-- 'uname -r; grep -c "^fhook " /proc/modules' > out 2> err
rc=$?
if [ $rc = 0 ] && [ "$(tr '\n' ' ' < out)" = "$rel 1 " ]; then
	ok "--kernel BZIMAGE --modules DIR"
else
	bad "--kernel BZIMAGE --modules DIR" "status $rc, output '$(tr '\n' ' ' < out)': $(tail -n 2 err)"
fi
"$fhook" vm --kernel "$vmlinuz" -- true > out 2> err
rc=$?
[ $rc = 1 ] && grep -q -- '--modules DIR' err && ok "BZIMAGE without --modules" ||
	bad "BZIMAGE without --modules" "status $rc: $(cat err)"

# arm64: Debian's arm64 6.12 under qemu-system-aarch64 with the arm64 CLI
# (cat copies with sendfile, no vfs_read; dd reads)
if [ -f "$top/build/kernels/targets-arm64" ]; then
	"$fhook" vm --arch arm64 --kernel 6.12 --timeout 300 -- \
		'uname -m; fhook trace vfs_read -- cat /etc/hostname; fhook trace vfs_read -- dd if=/etc/hostname of=/dev/null 2> /dev/null | grep -c " vfs_read <-ksys_read"' > out 2> err
	rc=$?
	# (the guest command's stderr comes on its stdout)
	if [ $rc = 0 ] && [ "$(head -n 1 out)" = aarch64 ] && grep -qx fhook-vm out &&
		grep -q '^fhook: probe 1 hits 0 events 0 lost 0 missed 0: vfs_read$' out &&
		[ "$(tail -n 1 out)" -ge 2 ]; then
		ok "--arch arm64: trace in a 6.12 arm64 guest"
	else
		bad "--arch arm64: trace in a 6.12 arm64 guest" "status $rc, output '$(tr '\n' ' ' < out)': $(tail -n 3 err)"
	fi
fi

for args in "--arch sparc -- true" "--smp 0 -- true" "--mem 12 -- true" "--accel xen -- true" "--timeout x -- true" "--add /nonexistent -- true" \
	"--kernel /nonexistent/bzImage -- true" "--bogus"; do
	# shellcheck disable=SC2086
	"$fhook" vm $args > out 2> err
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l < err)" = 1 ] && ok "usage: $args" || bad "usage: $args" "status $rc: $(cat err)"
done
"$fhook" vm --kernel 9.9 -- true > out 2> err
rc=$?
[ $rc = 1 ] && grep -q "no kernel '9.9'" err && ok "unknown kernel" || bad "unknown kernel" "status $rc: $(cat err)"
exit $failed
