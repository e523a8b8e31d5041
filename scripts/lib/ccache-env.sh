# shellcheck shell=bash
# The machine's compile cache, as CI uses it (sourced by scripts/test.sh
# and scripts/warm.sh with $top set to the tree being built).  Compiled
# once per machine: the CLI's and the modules' objects are cached beside
# the debug kernel (CI's next run recompiles only what its commit changed;
# the package build's flags differ, so it has entries of its own).
if command -v ccache > /dev/null; then
	export CCACHE_DIR=${FHOOK_CACHE:-/var/cache/fhook}/ccache CCACHE_MAXSIZE=2G
	# a clone elsewhere (each CI run is a fresh one) hits the same C++
	# entries; the modules' (compiled in the kernel's tree, named by their
	# absolute paths) those of a clone at the same place
	export CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=1
	export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
	# the modules: each kernel's Makefile names its own compiler (gcc-12,
	# x86_64-linux-gnu-gcc-12, aarch64-linux-gnu-gcc-12, gcc), Debian's
	# ccache links stand in for all of them (the Makefile's KCCACHE)
	[ ! -d /usr/lib/ccache ] || export KCCACHE=/usr/lib/ccache
	# ... and Kbuild is given this clone through a link at a fixed place
	# (the Makefile's KTOP), the packages' DKMS builds a fixed tree: the
	# same paths every run, so the modules hit too (one kernel's fhook.ko
	# from a clone elsewhere: 47 of 76 compilations missed, 60 s; through
	# the link: none, 4 s)
	fhook_cache=${FHOOK_CACHE:-/var/cache/fhook}
	mkdir -p "$fhook_cache"
	ln -sfn "$top" "$fhook_cache/src"
	export KTOP=$fhook_cache/src FHOOK_DKMS_TREE=$fhook_cache/dkms
fi
# every make builds the modules as make lint checks them (W=1, warnings
# are errors): built once, not again by lint and test-vm
export KCHECKED=1
