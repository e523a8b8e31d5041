#!/usr/bin/env bash
# make test-package: build the Debian packages (lintian-clean, see
# scripts/deb.sh), unpack them into a scratch root with dpkg, check what
# they installed, and build the packaged module source with DKMS against
# the 6.1 and 6.12 Debian target kernels' headers, not the RT flavour's
# (private DKMS trees; nothing is loaded or installed into the machine's
# kernel).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$top/VERSION")
out=$top/build/deb
root=$top/build/deb-root
fail() { printf 'test-package: FAIL: %s\n' "$*" >&2; exit 1; }
say() { printf 'test-package: %s\n' "$*" >&2; }
start=$(date +%s)

bash "$top/scripts/deb.sh" "$out"

say "dpkg --root $root --unpack"
rm -rf "$root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: > "$root/var/lib/dpkg/status"
# --unpack runs only the preinsts (the postinsts add group fhook and run
# dkms: the host's business, not a scratch root's); chrootless, with
# DPKG_ROOT set, as dpkg runs them for a root without a shell: debhelper's
# snippets (the exporter unit's) then do nothing
dpkg --root="$root" --force-script-chrootless --force-depends --force-not-root --unpack \
	"$out/fhook_${version}_amd64.deb" "$out/fhook-dkms_${version}_all.deb" > /dev/null
dpkg --root="$root" -L fhook fhook-dkms > "$out/files" || fail "dpkg does not list the packages' files"

for f in usr/bin/fhook usr/share/man/man1/fhook.1.gz usr/share/man/man7/fhook-probes.7.gz \
	usr/share/bash-completion/completions/fhook lib/udev/rules.d/60-fhook.rules \
	usr/lib/fhook/vmtests/vm.sh usr/include/fhook/khook.h "usr/src/fhook-$version/dkms.conf" \
	"usr/src/fhook-$version/kmod/Kbuild" "usr/src/fhook-$version/shared/fhook_abi.h" \
	"usr/src/fhook-$version/shared/fhook_reasons.h" "usr/src/fhook-$version/kmod/arch/x86/tramp.S" \
	lib/systemd/system/fhook-export.service usr/share/doc/fhook/examples/export.toml; do
	[ -e "$root/$f" ] || fail "$f not installed"
done
"$root/usr/bin/fhook" --version | grep -qx "fhook $version (ABI [0-9]*)" ||
	fail "installed fhook --version: $("$root/usr/bin/fhook" --version | head -n 1)"
# one man page per command of fhook --help, each rendering without warnings
cmds=$("$root/usr/bin/fhook" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
	on && /^  [a-z]/ { print $1 }' | sort -u)
for c in $cmds; do
	page=$root/usr/share/man/man1/fhook-$c.1.gz
	[ -f "$page" ] || fail "no man page for 'fhook $c'"
	zcat "$page" | grep -q "^\.SH OPTIONS" || fail "fhook-$c(1) has no OPTIONS section"
done
for page in "$root"/usr/share/man/man1/*.gz "$root"/usr/share/man/man7/*.gz; do
	err=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >/dev/null |
		grep -v -e 'table wider than line width' -e "^warning: file '.*', around line [0-9]*:\$" ||
		true)	# (docs/probes.md's tables are wider than 80 columns)
	[ -z "$err" ] || fail "$(basename "$page"): $err"
done
grep -q "^PACKAGE_VERSION=\"$version\"" "$root/usr/src/fhook-$version/dkms.conf" ||
	fail "dkms.conf does not carry version $version"
grep -q 'GROUP="fhook", MODE="0660"' "$root/lib/udev/rules.d/60-fhook.rules" ||
	fail "the udev rule does not give /dev/fhook to group fhook"
bash -n "$root/usr/share/bash-completion/completions/fhook" || fail "completion script does not parse"
# the exporter's unit, as systemd reads it (its paths the scratch root's),
# and its example jobs as fhook export reads them
said=$("$root/usr/bin/fhook" export --config "$root/usr/share/doc/fhook/examples/export.toml" \
	--listen 127.0.0.1:0 2>&1 || true)
# (without the module its first job cannot arm: the file parsed)
[ -e /dev/fhook ] || [[ $said == "fhook: error: job 'vfs': /dev/fhook"* ]] ||
	fail "the example export.toml: $said"
sed "s|/usr/bin/fhook|$root/usr/bin/fhook|; s|/etc/fhook/export.toml|$root/usr/share/doc/fhook/examples/export.toml|" \
	"$root/lib/systemd/system/fhook-export.service" > "$out/fhook-export.service"
if command -v systemd-analyze > /dev/null; then
	err=$(systemd-analyze verify --man=no "$out/fhook-export.service" 2>&1) ||
		fail "systemd-analyze verify fhook-export.service: $err"
fi

# DKMS: the packaged source, built for each Debian target kernel (one of
# each line: 6.1 and 6.12)
[ -f "$top/build/kernels/targets" ] || fail "no target kernels: run scripts/setup.sh"
# (FHOOK_DKMS_TREE, scripts/test.sh: a fixed place, so that ccache hits)
dk=${FHOOK_DKMS_TREE:-$top/build/dkms}
while read -r rel hdr _; do
	[ -e "/lib/modules/$rel/build" ] || continue	# a kernel tree, not Debian headers
	# (the PREEMPT_RT flavour: the 6.12 line's packaging again, its module
	# compiled and tested by make all and the guest suite; 65 s of CI)
	case $rel in *-rt-*) continue ;; esac
	say "dkms build fhook/$version -k $rel"
	rm -rf "$dk" && mkdir -p "$dk"
	dkms add -m fhook -v "$version" --sourcetree "$root/usr/src" --dkmstree "$dk" > /dev/null
	# (KCCACHE, from scripts/test.sh: ccache's compiler links first, as
	# for the modules' build)
	PATH=${KCCACHE:+$KCCACHE:}$PATH dkms build -m fhook -v "$version" -k "$rel" --sourcetree "$root/usr/src" --dkmstree "$dk" \
		< /dev/null > "$out/dkms-$rel.log" 2>&1 || { tail -n 30 "$out/dkms-$rel.log" >&2; fail "dkms build for $rel"; }
	ko=$(find "$dk/fhook/$version/$rel" -name 'fhook.ko*' | head -n 1)
	[ -n "$ko" ] || fail "dkms built no fhook.ko for $rel"
	[ "$(modinfo -F version "$ko")" = "$version" ] || fail "$ko: version $(modinfo -F version "$ko")"
	modinfo -F vermagic "$ko" | grep -q "^$rel " || fail "$ko: vermagic $(modinfo -F vermagic "$ko")"
	mkdir -p "$out/ko/$rel"
	case $ko in
	*.xz) xz -dc "$ko" > "$out/ko/$rel/fhook.ko" ;;
	*) cp "$ko" "$out/ko/$rel/fhook.ko" ;;
	esac
	n=$((${n:-0} + 1))
done < "$top/build/kernels/targets"
[ "${n:-0}" -ge 2 ] || fail "dkms built for ${n:-0} kernels, expected the two Debian targets"
rm -rf "$dk"

# The installed layout at work: the packaged CLI's fhook vm (its runner
# from the package too) boots each Debian kernel with the DKMS-built
# module, where the packaged CLI (copied in) runs --version, doctor and a
# trace
while read -r rel _ vmlinuz _; do
	[ -f "$out/ko/$rel/fhook.ko" ] || continue
	say "installed fhook vm on $rel"
	"$root/usr/bin/fhook" vm --kernel "$vmlinuz" --modules "$out/ko/$rel" --timeout 300 -- \
		'fhook --version && fhook doctor && fhook trace -o /tmp/t -q vfs_read -- dd if=/etc/passwd of=/dev/null bs=64 &&
		 echo "vfs_read events: $(grep -c " vfs_read <-" /tmp/t)"' < /dev/null > "$out/vm-$rel.log" 2>&1 ||
		{ tail -n 30 "$out/vm-$rel.log" >&2; fail "installed fhook vm on $rel"; }
	grep -qx "module: fhook.ko $version (ABI [0-9]*), loaded" "$out/vm-$rel.log" ||
		fail "$rel: the packaged CLI does not see the DKMS-built module: $out/vm-$rel.log"
	grep -q '^fhook will work here' "$out/vm-$rel.log" || fail "$rel: doctor in the guest: $out/vm-$rel.log"
	events=$(sed -n 's/^vfs_read events: //p' "$out/vm-$rel.log")
	[ "${events:-0}" -gt 0 ] || fail "$rel: no vfs_read events from dd: $out/vm-$rel.log"
	booted=$((${booted:-0} + 1))
done < "$top/build/kernels/targets"
[ "${booted:-0}" -ge 2 ] || fail "the installed fhook vm ran on ${booted:-0} kernels, expected 2"
say "passed in $(( $(date +%s) - start )) s: $(ls "$out"/*.deb | xargs -n1 basename | tr '\n' ' ')"
