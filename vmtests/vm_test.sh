#!/usr/bin/env bash
# `fhook vm`'s own tests (host side, one Debian kernel, ~1 minute): exit
# statuses 0 and 7 come out, a guest panic is status 125 within the
# timeout, --add files appear in the guest, fhook.ko is loaded, the deny
# example works from a build tree run elsewhere, bad arguments are usage
# errors (2).  Part of `make test-vm`.
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

"$fhook" vm --kernel "$kernel" --timeout 300 -- true > out 2> err
rc=$?; [ $rc = 0 ] && ok "exit 0" || bad "exit 0" "status $rc: $(tail -n 3 err)"
# a KVM found not to work (the fallback was just exercised) is not tried
# again by every later check
if grep -q 'KVM does not work here' err; then
	echo "vm: $(grep -m1 'KVM does not work here' err)"
	export FHOOK_VM_ACCEL=tcg
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

for args in "--smp 0 -- true" "--mem 12 -- true" "--timeout x -- true" "--add /nonexistent -- true" \
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
