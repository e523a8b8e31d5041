#!/usr/bin/env bash
# make test-install: the packages installed as a user installs them, with
# their maintainer scripts, into a fresh Debian bookworm root
# (debootstrap --variant=minbase, then chroot): apt installs both .debs
# next to the headers of the two Debian target kernels; DKMS must build
# and sign fhook.ko for both, `man fhook-trace` and the completion must
# work, a kernel (re)installed later must get its module (AUTOINSTALL),
# and purging must take everything back.  Nothing is loaded: the root
# only builds.  Needs the network (~200 MB of packages) and a few
# minutes, so it is not part of `make test`; run it after changing
# packaging/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$top/VERSION")
out=$top/build/deb
root=$top/build/install-root
fail() { printf 'test-install: FAIL: %s\n' "$*" >&2; exit 1; }
say() { printf 'test-install: [%3ds] %s\n' $(( $(date +%s) - start )) "$*" >&2; }
start=$(date +%s)

[ "$(id -u)" = 0 ] || fail "run as root (debootstrap, chroot)"
[ -f "$top/build/kernels/targets" ] || fail "no target kernels: run scripts/setup.sh"
mapfile -t rels < <(awk '$1 !~ /kdebug/ { print $1 }' "$top/build/kernels/targets")
[ "${#rels[@]}" -ge 2 ] || fail "expected the two Debian target kernels in build/kernels/targets"
command -v debootstrap > /dev/null || apt-get install -y -qq debootstrap > /dev/null
# (the packages of this tree, never an older build's)
bash "$top/scripts/deb.sh" "$out"

in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 bash -c "$1"; }
unmount() { for m in proc sys dev; do umount -l "$root/$m" 2> /dev/null || true; done; }
trap unmount EXIT
unmount
for m in proc sys dev; do	# never rm -rf through a bind mount of the host's /dev
	! mountpoint -q "$root/$m" || fail "$root/$m is still mounted"
done
rm -rf "$root"

say "debootstrap --variant=minbase bookworm"
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2> /dev/null)
debootstrap --variant=minbase bookworm "$root" "${mirror:-http://deb.debian.org/debian}" \
	> "$out/debootstrap.log" 2>&1 || { tail -n 20 "$out/debootstrap.log" >&2; fail "debootstrap"; }
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2> /dev/null &&
	rm -f "$root/etc/apt/sources.list"
mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"

say "headers of ${rels[*]}, man-db, bash-completion"
in_root "apt-get update -qq && apt-get install -y -qq --no-install-recommends man-db bash-completion \
	$(printf 'linux-headers-%s ' "${rels[@]}")" > "$out/install-root.log" 2>&1 ||
	{ tail -n 20 "$out/install-root.log" >&2; fail "installing the headers"; }

say "apt install ./fhook_${version}_amd64.deb ./fhook-dkms_${version}_all.deb"
cp "$out/fhook_${version}_amd64.deb" "$out/fhook-dkms_${version}_all.deb" "$root/tmp/"
in_root "cd /tmp && apt-get install -y -qq ./fhook_${version}_amd64.deb ./fhook-dkms_${version}_all.deb" \
	>> "$out/install-root.log" 2>&1 || { tail -n 30 "$out/install-root.log" >&2; fail "apt install"; }

# the module of every kernel: built by DKMS, of this version, signed
check_module() {
	local ko
	ko=$(in_root "find /lib/modules/$1/updates/dkms -name 'fhook.ko*'")
	[ -n "$ko" ] || fail "no fhook.ko under /lib/modules/$1/updates/dkms"
	[ "$(in_root "modinfo -F version $ko")" = "$version" ] || fail "$ko: not version $version"
	[ -n "$(in_root "modinfo -F signer $ko")" ] || fail "$ko is not signed"
}
# (whole outputs in variables: grep -q in a pipeline would end it early,
# a SIGPIPE pipefail counts as a failure)
status=$(in_root "dkms status fhook 2> /dev/null")
for rel in "${rels[@]}"; do
	grep -q "^fhook/$version, $rel, x86_64: installed" <<< "$status" ||
		fail "dkms status has no installed fhook for $rel: $status"
	check_module "$rel"
done
in_root "getent group fhook" > /dev/null || fail "the postinst did not create group fhook"
grep -qx "fhook $version (ABI [0-9]*)" <<< "$(in_root "fhook --version")" || fail "fhook --version"
grep -q "fhook trace \[options\] PROBE" <<< "$(in_root "MANWIDTH=80 man fhook-trace 2> /dev/null")" ||
	fail "man fhook-trace"
completed=$(in_root '. /usr/share/bash-completion/bash_completion; _completion_loader fhook
	COMP_WORDS=(fhook tra); COMP_CWORD=1; _fhook; echo "${COMPREPLY[*]}"' | tr -d '\n')
[ "$completed" = trace ] || fail "completion of 'fhook tra': '$completed'"

say "a kernel installed later: ${rels[0]} without the module, its headers configured again"
in_root "dkms remove fhook/$version -k ${rels[0]}" > /dev/null 2>&1
[ -z "$(in_root "find /lib/modules/${rels[0]} -name 'fhook.ko*'")" ] || fail "dkms remove left the module"
in_root "dpkg-reconfigure linux-headers-${rels[0]}" >> "$out/install-root.log" 2>&1 ||
	fail "dpkg-reconfigure linux-headers-${rels[0]}"
check_module "${rels[0]}"

say "apt purge"
in_root "apt-get purge -y -qq fhook fhook-dkms" >> "$out/install-root.log" 2>&1 || fail "apt purge"
left=$(in_root "find /lib/modules /usr/src /usr/bin /var/lib/dkms -name 'fhook*'")
[ -z "$left" ] || fail "left after purge: $left"
say "passed: DKMS built and signed fhook.ko for ${rels[*]}; man, completion, group; rebuilt for a kernel configured later; purge clean"
