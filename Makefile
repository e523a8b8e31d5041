# fhook top-level build.
#
#   make            fhook.ko for every target kernel + userspace (CLI, tests)
#   make module     fhook.ko alone: build/kmod/<release>/fhook.ko (REL=: one kernel)
#   make kmod       only the modules: build/kmod/<release>/fhook.ko, and the
#                   examples of the hook API: build/examples/<release>/*.ko
#   make examples   the same
#   make kmod KDIR=/path/to/kernel/build   against any other kernel tree
#   make user       only userspace: build/user/ (CLI: build/user/fhook)
#   make user-arm64 the CLI cross-built for arm64 guests: build/user-arm64/fhook
#   make setup      install dependencies + target kernels (root, Debian)
#   make demo       the minimum setup and build, then fhook in a 6.1 guest (scripts/demo.sh)
#   make test       setup, build, lint, host unit tests, guest tests on all kernels
#                   (each guest test where it must run: vmtests/guest/tests.list)
#   make test-full  the same with every guest test on every kernel: run it
#                   before resolving a change of the module
#   make warm       compile what CI compiles into this machine's cache (scripts/warm.sh)
#   make lint       checkpatch (kernel C), W=1 build, clang-format (C++), ABI padding (pahole)
#   make man        man pages: build/man/
#   make learn-outputs  the lessons' shown outputs (docs/learn/) regenerated in a guest
#   make install    the CLI, man pages, bash completion, the udev rule (group
#                   fhook), the hook API header, the examples, fhook vm's
#                   runner, the module source for DKMS (DESTDIR, PREFIX)
#   make uninstall  all of that again
#   make deb        Debian packages fhook and fhook-dkms: build/deb/
#   make deb-arm64  the fhook package for arm64, cross-built: build/deb-arm64/
#   make test-package  the packages built, lintian, unpacked, DKMS-built
#   make test-install  the packages apt-installed into a fresh debootstrap
#                   root: DKMS for both kernels, man, completion, purge
#   make bench-host / bench-transport / bench-hooks   figures (docs/benchmarks.md), not tests

TOP      := $(CURDIR)
BUILD    := $(TOP)/build
# The path Kbuild is given for this tree: the tree itself, or (KTOP=,
# scripts/test.sh) a link to it at a fixed place.  Each CI run is a fresh
# clone somewhere else; through the link the compiler's command lines name
# the same files every run, so ccache finds the modules' objects again.
KTOP     ?= $(TOP)
KBUILD_OUT := $(KTOP)/build
TARGETS  := $(BUILD)/kernels/targets
# arm64 kernels (scripts/setup.sh): modules cross-built, the CLI in build/user-arm64
TARGETS_ARM64 := $(BUILD)/kernels/targets-arm64
ARM64_CROSS := aarch64-linux-gnu-
KSRC     := $(wildcard $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(TOP)/kmod/*.S) $(TOP)/kmod/Kbuild
# what differs between CPUs: kmod/arch/<arch>/, linked file by file (the
# objects go beside the links, not into the tree)
KARCH_SRC := $(wildcard $(TOP)/kmod/arch/*/*)
TESTMOD_SRC := $(wildcard $(TOP)/vmtests/testmod/*.c $(TOP)/vmtests/testmod/*.h) $(TOP)/vmtests/testmod/Kbuild
EXAMPLES_SRC := $(wildcard $(TOP)/examples/*.c) $(TOP)/examples/Kbuild
KHOOKTEST_SRC := $(wildcard $(TOP)/vmtests/khooktest/*.c) $(TOP)/vmtests/khooktest/Kbuild
# the kernel-side style gate of make lint (W=1, every warning an error);
# with KCHECKED=1 every build of the modules is so (scripts/test.sh: built once)
KCHECK   := W=1 KCFLAGS=-Werror
# a debugging example whose point is trace_printk(): checkpatch's only
# objection to it, TRACE_PRINTK, is the lesson it teaches (docs/learn 9)
TRACE_PRINTK_EXAMPLE := examples/fhook_stop_on_error.c
ifdef KCHECKED
KBUILD_EXTRA := $(KCHECK)
endif
CMAKE_GEN := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo 'Unix Makefiles')

.PHONY: all module kmod learn-outputs examples user user-arm64 setup demo test test-full test-host test-package warm test-install test-vm lint clean install uninstall man deb deb-arm64 bench-host bench-transport bench-hooks

# (the arm64 CLI where setup fetched arm64 kernels)
all: kmod user $(if $(wildcard $(TARGETS_ARM64)),user-arm64)
	@echo "fhook built:"
	@for m in $(BUILD)/kmod/*/fhook.ko; do [ -f "$$m" ] && echo "  module   $$m"; done; true
	@echo "  cli      $(BUILD)/user/fhook"
	@[ ! -x $(BUILD)/user-arm64/fhook ] || echo "  cli      $(BUILD)/user-arm64/fhook (arm64)"

# Kbuild's make; KCCACHE=DIR (scripts/test.sh: /usr/lib/ccache) puts a
# directory of ccache links named as the compilers first in its PATH
KMAKE = $(if $(KCCACHE),PATH=$(KCCACHE):$$PATH )$(MAKE)

# One build directory per kernel, populated with links to the sources so
# several kernels can be built from one tree.
define build_module
	rel=$(1); hdr=$(2); out=$(KBUILD_OUT)/kmod/$$rel; \
	mkdir -p $$out && \
	for f in $(KSRC); do ln -sf $$f $$out/; done && \
	for f in $(KARCH_SRC); do a=$${f#$(TOP)/kmod/}; mkdir -p $$out/$${a%/*}; ln -sf $$f $$out/$$a; done && \
	$(KMAKE) -C $$hdr M=$$out FHOOK_SHARED=$(KTOP)/shared FHOOK_INCLUDE=$(KTOP)/include \
		FHOOK_VERSION_FILE=$(KTOP)/VERSION $(KBUILD_EXTRA) modules && \
	echo "  module   $(BUILD)/kmod/$$rel/fhook.ko"
endef

# fhook.ko, the test modules and the examples
define build_kmod
	$(call build_module,$(1),$(2)) && \
	tout=$(KBUILD_OUT)/testmod/$$rel; mkdir -p $$tout && \
	for f in $(TESTMOD_SRC); do ln -sf $$f $$tout/; done && \
	$(KMAKE) -C $$hdr M=$$tout $(KBUILD_EXTRA) modules && \
	echo "  module   $(BUILD)/testmod/$$rel/fhook_testmod.ko" && \
	$(call build_users,$$rel,$$hdr,examples,$(EXAMPLES_SRC)) && \
	$(call build_users,$$rel,$$hdr,khooktest,$(KHOOKTEST_SRC))
endef

# Modules that use fhook's hook API (examples/, the API's guest tests),
# against fhook.ko's Module.symvers: build/<dir>/<release>/
define build_users
	eout=$(KBUILD_OUT)/$(3)/$(1); mkdir -p $$eout && \
	for f in $(4); do ln -sf $$f $$eout/; done && \
	$(KMAKE) -C $(2) M=$$eout FHOOK_INCLUDE=$(KTOP)/include \
		KBUILD_EXTRA_SYMBOLS=$(KBUILD_OUT)/kmod/$(1)/Module.symvers $(KBUILD_EXTRA) modules && \
	echo "  modules  $(BUILD)/$(3)/$(1)/*.ko"
endef

# fhook.ko alone (scripts/demo.sh), for one kernel: make module REL=...
module:
	@[ -f $(TARGETS) ] || { echo "no target kernels: run 'sudo make setup'"; exit 1; }
	+@while read rel hdr vmlinuz mods; do \
		[ -z "$(REL)" ] || [ "$$rel" = "$(REL)" ] || continue; \
		$(call build_module,$$rel,$$hdr) || exit 1; \
	done < $(TARGETS)

kmod:
ifdef KDIR
# (the release of the module's vermagic: Debian's 6.1 headers have another
# one in include/config/kernel.release)
	+@rel=$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$$/\1/p' $(KDIR)/include/generated/utsrelease.h); \
	$(call build_kmod,$$rel,$(KDIR))
else
	@[ -f $(TARGETS) ] || { echo "no target kernels: run 'sudo make setup' (or pass KDIR=)"; exit 1; }
	+@while read rel hdr vmlinuz mods; do \
		$(call build_kmod,$$rel,$$hdr) || exit 1; \
	done < $(TARGETS)
	+@[ ! -f $(TARGETS_ARM64) ] || while read rel hdr vmlinuz mods; do \
		export CROSS_COMPILE=$(ARM64_CROSS); $(call build_kmod,$$rel,$$hdr) || exit 1; \
	done < $(TARGETS_ARM64)
endif

# fhook.ko and the examples for every target kernel: build/examples/<release>/
examples: kmod

user:
	@cmake -S $(TOP) -B $(BUILD)/user -G '$(CMAKE_GEN)' -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD)/user -j2

# the CLI for arm64 guests, cross-built (no tests): build/user-arm64/fhook
user-arm64:
	@cmake -S $(TOP) -B $(BUILD)/user-arm64 -G '$(CMAKE_GEN)' -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_TOOLCHAIN_FILE=$(TOP)/cmake/aarch64-linux-gnu.cmake -DFHOOK_TESTS=OFF >/dev/null
	@cmake --build $(BUILD)/user-arm64 -j2 --target fhook

setup:
	bash $(TOP)/scripts/setup.sh

# the lessons' shown outputs from a 6.1 guest (docs/learn/README.md)
learn-outputs: all
	bash $(TOP)/scripts/learn-outputs.sh

demo:
	bash $(TOP)/scripts/demo.sh

test-host: user
	ctest --test-dir $(BUILD)/user --output-on-failure

# Host throughput figures (docs/benchmarks.md); not a test.
bench-host: user
	$(BUILD)/user/fhook_bench_decode --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

# fhook's rings vs BPF ringbuf vs the ftrace ring, in a guest of each Debian
# kernel, deterministic (-icount) and wall-clock (docs/benchmarks.md).
bench-transport: kmod
	FHOOK_TEST_BENCH=transport bash $(TOP)/vmtests/run.sh --bench --icount --timeout 3600
	FHOOK_TEST_BENCH=transport bash $(TOP)/vmtests/run.sh --bench --timeout 3600

# fhook bench: the cost per hit of every mechanism, fhook's and its peers'
# (docs/benchmarks.md); JSON and SVG plots in build/bench/.
bench-hooks: kmod user
	bash $(TOP)/vmtests/bench/run.sh

test-vm: kmod user
	bash $(TOP)/vmtests/run.sh
	bash $(TOP)/vmtests/vm_test.sh

test:
	bash $(TOP)/scripts/test.sh

test-full:
	bash $(TOP)/scripts/test.sh --full

lint:
	@cp=$(BUILD)/tools/checkpatch/checkpatch.pl; \
	[ -f $$cp ] || { echo "checkpatch.pl missing: run 'sudo make setup'"; exit 1; }; \
	perl $$cp --no-tree --terse -f $(wildcard kmod/*.c kmod/*.h kmod/*.S kmod/arch/*/*.[chS]) shared/fhook_abi.h shared/fhook_reasons.h include/fhook/khook.h $(filter-out $(TRACE_PRINTK_EXAMPLE),$(wildcard examples/*.c vmtests/khooktest/*.c)) vmtests/testmod/fhook_testmod.c vmtests/testmod/fhook_failunreg.c vmtests/testmod/fhook_linger.c && \
	perl $$cp --no-tree --terse --ignore TRACE_PRINTK -f $(TRACE_PRINTK_EXAMPLE)
	@# W=1 with every warning an error: nothing to rebuild when the modules
	@# were built so already (scripts/test.sh builds them that way)
	@$(MAKE) --no-print-directory kmod KBUILD_EXTRA="$(KCHECK)" 2>&1 | tee $(BUILD)/w1.log; \
	! grep -E 'warning:|error:' $(BUILD)/w1.log
	@clang-format --dry-run --Werror $$(git ls-files 'user/*.cpp' 'user/*.hpp' 'user/*.h' 'tools/*.cpp' 'tools/*.hpp')
	@bash $(TOP)/scripts/abi-holes.sh

PREFIX ?= /usr/local
export PREFIX DESTDIR

# man pages from the CLI's --help and docs/probes.md: build/man/
man: user
	bash $(TOP)/scripts/man.sh $(BUILD)/user/fhook $(BUILD)/man

# scripts/install.sh has the list (and the DKMS source); nothing is loaded
install: user man
	BUILD=$(BUILD) bash $(TOP)/scripts/install.sh install

uninstall:
	BUILD=$(BUILD) bash $(TOP)/scripts/install.sh uninstall

# Debian packages fhook and fhook-dkms in build/deb/ (docs/install.md)
deb:
	bash $(TOP)/scripts/deb.sh $(BUILD)/deb

# the same, fhook cross-built for arm64: build/deb-arm64/
deb-arm64:
	bash $(TOP)/scripts/deb.sh $(BUILD)/deb-arm64 arm64

# the packages built, lintian-clean, unpacked and checked, DKMS-built for
# every Debian target kernel
test-package:
	bash $(TOP)/scripts/test-package.sh

# what CI compiles, into the machine's compile cache: its next run is warm
warm:
	bash $(TOP)/scripts/warm.sh

# the packages installed with their maintainer scripts into a fresh
# bookworm root (network, a few minutes; not part of make test)
test-install:
	bash $(TOP)/scripts/test-install.sh

clean:
	rm -rf $(BUILD)/kmod $(BUILD)/user $(BUILD)/vm $(BUILD)/man $(BUILD)/deb
