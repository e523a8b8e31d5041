#!/usr/bin/env bash
# make deb: the Debian packages fhook (CLI, man pages, completion, udev
# rule) and fhook-dkms (module source for DKMS) in OUTDIR, then lintian.
#   deb.sh OUTDIR [arm64]
# arm64: fhook_VERSION_arm64.deb cross-built on an amd64 host (Debian's cross
# compilers and the :arm64 libraries of scripts/setup.sh; the CLI's man
# pages come from running it in qemu-user, which this installs as root).
# The source tree is staged in OUTDIR/src with packaging/debian/ as debian/
# and a changelog entry made from VERSION (the one version of fhook).
# The unit tests are not run in the package build (the suite runs them);
# FHOOK_DEB_CHECK=1 runs them there too.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:?deb.sh OUTDIR [arm64]}")
host=${2:-}
version=$(cat "$top/VERSION")
say() { printf 'deb: %s\n' "$*" >&2; }

for tool in dpkg-buildpackage dh dh_dkms lintian help2man go-md2man; do
	command -v $tool >/dev/null || { say "$tool missing: run 'sudo make setup'"; exit 1; }
done
cross=()
case $host in
"") ;;
arm64)
	# (-P: the test dependencies are not there for arm64; cross: qemu-user)
	cross=(-aarm64 -Pnocheck,cross)
	command -v aarch64-linux-gnu-g++ > /dev/null || { say "no arm64 cross compiler: run 'sudo make setup'"; exit 1; }
	if ! command -v qemu-aarch64 > /dev/null; then
		[ "$(id -u)" = 0 ] || { say "qemu-user missing (the man pages run the arm64 CLI): apt-get install qemu-user"; exit 1; }
		say "apt-get install qemu-user (the man pages run the arm64 CLI)"
		apt-get install -y -qq --no-install-recommends qemu-user > /dev/null
	fi ;;
*) say "deb.sh: the packages are built for amd64 or arm64, not '$host'"; exit 2 ;;
esac
stage=$out/src/fhook-$version
rm -rf "$out" && mkdir -p "$stage"
# the tracked files (and new ones not ignored), as they are in the tree
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -c) |
		tar -x -C "$stage"
else
	tar -C "$top" --exclude=./build -c . | tar -x -C "$stage"
fi
cp -r "$top/packaging/debian" "$stage/debian"
cp "$top/packaging/dkms/dkms.conf" "$stage/debian/fhook-dkms.dkms"
cp "$top/packaging/udev/60-fhook.rules" "$stage/debian/fhook.udev"
cp "$top/packaging/systemd/fhook-export.service" "$stage/debian/fhook.fhook-export.service"
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
{
	echo "fhook ($version) unstable; urgency=medium"
	echo
	echo "  * fhook $version, built from commit $commit."
	echo
	echo " -- fhook developers <fhook-devel@lists.fhook.dev>  $(date -R)"
} > "$stage/debian/changelog"

say "building fhook $version${host:+ for $host} (dpkg-buildpackage, $(nproc) jobs)"
opts="${FHOOK_DEB_CHECK:+}${FHOOK_DEB_CHECK:-nocheck}"
[ -n "$host" ] && opts=nocheck
(cd "$stage" && DEB_BUILD_OPTIONS="$opts parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b "${cross[@]}" > "$out/build.log" 2>&1) ||
	{ tail -n 40 "$out/build.log" >&2; say "dpkg-buildpackage failed: $out/build.log"; exit 1; }
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out/"
say "lintian"
lintian --fail-on error,warning \
	"$out"/*.changes
ls "$out"/*.deb
