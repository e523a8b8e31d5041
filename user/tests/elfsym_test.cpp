// elf_symbol_offset against the loader's view of this very binary.
#include <link.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/elfsym.hpp>
#include <fhook/sys/usersyms.hpp>

extern "C" __attribute__((noinline, used)) int fhook_elfsym_test_target(int x) {
    return x * 3;
}

// C++ functions named as people write them; two overloads
namespace fhook_test_ns {
__attribute__((noinline, used)) int scaled(int x) {
    return x * 5;
}
__attribute__((noinline, used)) long twice(long x) {
    return x * 2;
}
__attribute__((noinline, used)) double twice(double x) {
    return x * 2;
}
} // namespace fhook_test_ns

namespace fhook {
namespace {

std::uintptr_t exe_base() {
    std::uintptr_t base = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            *static_cast<std::uintptr_t*>(data) = info->dlpi_addr; // the executable comes first
            return 1;
        },
        &base);
    return base;
}

std::string message_of(const std::string& path, std::string_view sym) {
    try {
        elf_symbol_offset(path, sym);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(ElfSymbol, OffsetOfAFunctionOfThisBinary) {
    // the PIE's text segment has p_vaddr == p_offset: the file offset is the
    // function's address minus the load base
    const auto addr = reinterpret_cast<std::uintptr_t>(&fhook_elfsym_test_target);
    EXPECT_EQ(elf_symbol_offset("/proc/self/exe", "fhook_elfsym_test_target"), addr - exe_base());
    EXPECT_EQ(fhook_elfsym_test_target(2), 6);
}

TEST(ElfSymbol, DemangledNames) {
    const auto addr = reinterpret_cast<std::uintptr_t>(&fhook_test_ns::scaled);
    const std::uint64_t want = addr - exe_base();
    EXPECT_EQ(elf_symbol_offset("/proc/self/exe", "_ZN13fhook_test_ns6scaledEi"), want);
    EXPECT_EQ(elf_symbol_offset("/proc/self/exe", "fhook_test_ns::scaled"), want);
    EXPECT_EQ(elf_symbol_offset("/proc/self/exe", "fhook_test_ns::scaled(int)"), want);
    // an overloaded name: both listed; the signature picks one
    const std::string both = message_of("/proc/self/exe", "fhook_test_ns::twice");
    EXPECT_NE(both.find("fhook_test_ns::twice(double); fhook_test_ns::twice(long)"),
              std::string::npos)
        << both;
    EXPECT_EQ(elf_symbol_offset("/proc/self/exe", "fhook_test_ns::twice(long)"),
              reinterpret_cast<std::uintptr_t>(static_cast<long (*)(long)>(&fhook_test_ns::twice)) -
                  exe_base());
    // a uprobe definition takes the name: the path ends at its first ':'
    const KprobeDef def = parse_kprobe("p:u /proc/self/exe:fhook_test_ns::scaled+4",
                                       [](std::string_view) { return std::nullopt; });
    EXPECT_EQ(def.path, "/proc/self/exe");
    EXPECT_EQ(def.symbol, "fhook_test_ns::scaled");
    EXPECT_EQ(def.offset, want + 4);
    EXPECT_EQ(demangle("_ZN13fhook_test_ns6scaledEi"), "fhook_test_ns::scaled(int)");
    EXPECT_EQ(demangle("main"), "main");
    EXPECT_EQ(fhook_test_ns::scaled(1) + fhook_test_ns::twice(1L) + fhook_test_ns::twice(1.0), 9);
}

// User stack frames: this process's own functions, by its mappings while
// it lives, and for a process that is gone by the binary noted with its
// load bias.
TEST(UserSymbols, NamesFramesOfALiveProcessAndOfANotedBinary) {
    const auto addr = reinterpret_cast<std::uintptr_t>(&fhook_test_ns::scaled) + 2;
    UserSymbolizer syms;
    std::string out;
    syms.append(static_cast<std::uint32_t>(getpid()), addr, out);
    EXPECT_EQ(out.rfind("fhook_test_ns::scaled(int)+0x2 (", 0), 0u) << out;
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ASSERT_GT(n, 0);
    exe[n] = 0;
    const std::uint64_t off = elf_symbol_offset(exe, "fhook_test_ns::scaled");
    const auto vaddr = elf_offset_vaddr(exe, off);
    ASSERT_TRUE(vaddr);
    const std::uint32_t gone = 0x3ffffff0; // no such process
    std::string named;
    syms.append(gone, addr, named);
    EXPECT_EQ(named.rfind("0x", 0), 0u) << named; // nothing known yet
    syms.note_mapping(gone, exe, reinterpret_cast<std::uintptr_t>(&fhook_test_ns::scaled) - *vaddr);
    named.clear();
    syms.append(gone, addr, named);
    EXPECT_EQ(named, "fhook_test_ns::scaled(int)+0x2 (" + std::string(exe) + ")");
}

// A process that exited but is not reaped yet (a workload fhook started,
// its events formatted before fhook waits for it) has an empty
// /proc/PID/maps: its frames come from the noted binary.  (Its auxv reads
// empty too on 6.1 and 6.12, so that libdwfl reports an empty address
// space without an error; newer kernels answer ESRCH.  Guest tests
// probe_stack and hist_ustack on the debug kernel hit it there.)
TEST(UserSymbols, NamesFramesOfAnExitedUnreapedProcessByItsNotedBinary) {
    const auto addr = reinterpret_cast<std::uintptr_t>(&fhook_test_ns::scaled) + 2;
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ASSERT_GT(n, 0);
    exe[n] = 0;
    const auto vaddr = elf_offset_vaddr(exe, elf_symbol_offset(exe, "fhook_test_ns::scaled"));
    ASSERT_TRUE(vaddr);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        _exit(0);
    }
    siginfo_t info{};
    ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0); // a zombie
    UserSymbolizer syms;
    const auto tgid = static_cast<std::uint32_t>(child);
    syms.note_mapping(tgid, exe, reinterpret_cast<std::uintptr_t>(&fhook_test_ns::scaled) - *vaddr);
    std::string named;
    syms.append(tgid, addr, named);
    EXPECT_EQ(named, "fhook_test_ns::scaled(int)+0x2 (" + std::string(exe) + ")");
    ASSERT_EQ(waitpid(child, nullptr, 0), child);
}

TEST(ElfSymbol, Errors) {
    EXPECT_NE(message_of("/proc/self/exe", "no_such_symbol_xyz").find("has no symbol"),
              std::string::npos);
    EXPECT_NE(message_of("/nonexistent/bin", "main").find("cannot open"), std::string::npos);
    char path[] = "/tmp/fhook-elfsym-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "not an elf file\n", 16), 16);
    close(fd);
    EXPECT_NE(message_of(path, "main").find("is not an ELF file"), std::string::npos);
    unlink(path);
}

} // namespace
} // namespace fhook
