#!/usr/bin/env bash
# make install / make uninstall: one list of what goes where.
#   install.sh install|uninstall|dkms-source DIR
# Environment: DESTDIR, PREFIX (default /usr/local), BUILD (build/).
#
#   PREFIX/bin/fhook                          the CLI
#   PREFIX/share/man/man1/fhook*.1, man7/     man pages (scripts/man.sh)
#   PREFIX/share/bash-completion/completions/fhook
#   PREFIX/include/fhook/khook.h              the kernel hook API
#   PREFIX/share/doc/fhook/examples/          hook modules using it
#   PREFIX/lib/fhook/vmtests/                 fhook vm's runner
#   /etc/udev/rules.d/60-fhook.rules          /dev/fhook for group fhook
#   /usr/src/fhook-VERSION/                   the module's source for DKMS
#
# Without DESTDIR, install also creates group fhook and, when dkms is
# installed, builds and installs fhook.ko for the running kernel with it
# (rebuilt by DKMS at every kernel upgrade); uninstall removes it again.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
action=${1:?install, uninstall or dkms-source DIR}
prefix=${PREFIX:-/usr/local}
dest=${DESTDIR:-}
build=${BUILD:-$top/build}
version=$(cat "$top/VERSION")
src=/usr/src/fhook-$version

# the module's source as DKMS builds it (also the fhook-dkms package's)
dkms_source() {
	local d=$1
	install -d "$d/kmod" "$d/shared" "$d/include/fhook"
	install -m 644 -t "$d/kmod" "$top"/kmod/*.c "$top"/kmod/*.h "$top/kmod/Kbuild"
	for a in "$top"/kmod/arch/*/; do
		install -d "$d/kmod/arch/$(basename "$a")"
		install -m 644 -t "$d/kmod/arch/$(basename "$a")" "$a"*
	done
	install -m 644 "$top/shared/fhook_abi.h" "$top/shared/fhook_reasons.h" "$d/shared/"
	install -m 644 "$top/include/fhook/khook.h" "$d/include/fhook/"
	install -m 644 "$top/VERSION" "$d/"
	sed "s/#MODULE_VERSION#/$version/" "$top/packaging/dkms/dkms.conf" > "$d/dkms.conf"
}

do_install() {
	[ -x "$build/user/fhook" ] || { echo "install: $build/user/fhook missing: run make user" >&2; exit 1; }
	[ -f "$build/man/fhook.1" ] || { echo "install: man pages missing: run make man" >&2; exit 1; }
	install -D -m 755 "$build/user/fhook" "$dest$prefix/bin/fhook"
	install -d "$dest$prefix/share/man/man1" "$dest$prefix/share/man/man7"
	install -m 644 -t "$dest$prefix/share/man/man1" "$build"/man/*.1
	install -m 644 -t "$dest$prefix/share/man/man7" "$build"/man/*.7
	install -D -m 644 "$top/packaging/completion/fhook.bash" \
		"$dest$prefix/share/bash-completion/completions/fhook"
	install -D -m 644 "$top/include/fhook/khook.h" "$dest$prefix/include/fhook/khook.h"
	install -d "$dest$prefix/share/doc/fhook/examples"
	install -m 644 -t "$dest$prefix/share/doc/fhook/examples" "$top"/examples/*.c "$top/examples/Kbuild" \
		"$top/packaging/export.toml"
	install -D -m 644 "$top/packaging/systemd/fhook-export.service" \
		"$dest/lib/systemd/system/fhook-export.service"
	install -D -m 755 "$top/vmtests/vm.sh" "$dest$prefix/lib/fhook/vmtests/vm.sh"
	install -d "$dest$prefix/lib/fhook/vmtests/lib"
	install -m 644 -t "$dest$prefix/lib/fhook/vmtests/lib" "$top"/vmtests/lib/*.sh
	install -D -m 755 "$top/vmtests/guest/vm-init" "$dest$prefix/lib/fhook/vmtests/guest/vm-init"
	install -D -m 644 "$top/packaging/udev/60-fhook.rules" "$dest/etc/udev/rules.d/60-fhook.rules"
	rm -rf "$dest$src"
	dkms_source "$dest$src"
	[ -z "$dest" ] || return 0
	getent group fhook >/dev/null || groupadd --system fhook
	udevadm control --reload-rules 2>/dev/null || true
	if command -v dkms >/dev/null; then
		dkms remove "fhook/$version" --all >/dev/null 2>&1 || true
		dkms add "fhook/$version" && dkms install "fhook/$version" ||
			echo "install: dkms could not build fhook.ko for $(uname -r) (headers installed?)" >&2
	elif [ -f "$build/kmod/$(uname -r)/fhook.ko" ]; then
		# no DKMS: the module built for this kernel, until its next upgrade
		install -D -m 644 "$build/kmod/$(uname -r)/fhook.ko" "/lib/modules/$(uname -r)/extra/fhook.ko"
		depmod -a "$(uname -r)"
	else
		echo "install: dkms is not installed: install it (rebuilds fhook.ko at every kernel upgrade) or 'make kmod KDIR=...'" >&2
	fi
	echo "installed; to let a member of group fhook trace without root:"
	echo "  sudo setcap cap_perfmon+ep $prefix/bin/fhook   (and cap_syslog for function names)"
}

do_uninstall() {
	if [ -z "$dest" ] && command -v dkms >/dev/null; then
		dkms remove "fhook/$version" --all >/dev/null 2>&1 || true
	fi
	if [ -z "$dest" ] && [ -f "/lib/modules/$(uname -r)/extra/fhook.ko" ]; then
		rm -f "/lib/modules/$(uname -r)/extra/fhook.ko"
		depmod -a "$(uname -r)"
	fi
	rm -f "$dest$prefix/bin/fhook" "$dest$prefix"/share/man/man1/fhook.1 \
		"$dest$prefix"/share/man/man1/fhook-*.1 "$dest$prefix"/share/man/man7/fhook-*.7 \
		"$dest$prefix/share/bash-completion/completions/fhook" \
		"$dest$prefix/include/fhook/khook.h" "$dest/etc/udev/rules.d/60-fhook.rules" \
		"$dest/lib/systemd/system/fhook-export.service"
	rmdir "$dest$prefix/include/fhook" 2>/dev/null || true
	rm -rf "$dest$prefix/share/doc/fhook" "$dest$prefix/lib/fhook" "$dest$src"
}

case $action in
install) do_install ;;
uninstall) do_uninstall ;;
dkms-source) dkms_source "${2:?dkms-source DIR}" ;;
*) echo "install.sh: unknown action '$action'" >&2; exit 2 ;;
esac
