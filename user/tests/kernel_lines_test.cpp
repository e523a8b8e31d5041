// KernelLines against binutils' addr2line on the debug kernel's vmlinux
// (setup builds it: /var/cache/fhook/debug-kernel/*/linux-source-*/vmlinux;
// skipped without one), and its refusals: a file of another build, a
// function it does not have.
#include <glob.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include <fhook/sys/kernel_lines.hpp>

namespace fhook {
namespace {

std::string debug_vmlinux() {
    glob_t g{};
    std::string path;
    if (::glob("/var/cache/fhook/debug-kernel/*/linux-source-*/vmlinux", 0, nullptr, &g) == 0 &&
        g.gl_pathc > 0) {
        path = g.gl_pathv[0];
    }
    ::globfree(&g);
    return path;
}

std::string run(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(command.c_str(), "r"), ::pclose);
    std::string out;
    char buf[512];
    while (p && std::fgets(buf, sizeof(buf), p.get())) {
        out += buf;
    }
    return out;
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

TEST(KernelLines, VmlinuxAgreesWithAddr2line) {
    const std::string vmlinux = debug_vmlinux();
    if (vmlinux.empty()) {
        GTEST_SKIP() << "no debug kernel's vmlinux";
    }
    // (no /sys here: no build id to check against)
    KernelLines lines({vmlinux}, "none", "/nonexistent");
    // the functions' addresses, then addr2line's lines, in one run each
    const std::string fns[] = {"do_sys_openat2", "vfs_read", "path_openat"};
    const unsigned offs[] = {0, 0x40, 0x100};
    std::string addrs;
    for (const std::string& fn : fns) {
        const std::string addr = run("nm " + vmlinux + " | awk '$3 == \"" + fn +
                                     "\" && $2 ~ /[tT]/ { print $1; exit }'");
        ASSERT_FALSE(addr.empty()) << fn;
        for (unsigned off : offs) {
            addrs += " " + hex(std::stoull(addr, nullptr, 16) + off);
        }
    }
    const std::string want = run("addr2line -e " + vmlinux + addrs);
    std::size_t at = 0;
    for (const std::string& fn : fns) {
        for (unsigned off : offs) {
            const std::size_t nl = want.find('\n', at);
            ASSERT_NE(nl, std::string::npos) << want;
            const std::string line = want.substr(at, nl - at);
            at = nl + 1;
            const std::optional<std::string> got = lines.line("", fn, off);
            ASSERT_TRUE(got) << fn << "+" << off;
            // (addr2line prefixes the build tree)
            EXPECT_TRUE(line.ends_with("/" + *got) || line == *got)
                << fn << "+" << off << ": " << *got << " vs " << line;
        }
    }
    EXPECT_FALSE(lines.line("", "no_such_function_fhook", 0));
    EXPECT_FALSE(lines.line("no_such_module_fhook", "f", 0));
    EXPECT_TRUE(lines.mismatched().empty());
}

TEST(KernelLines, AnotherBuildIsNotUsed) {
    const std::string vmlinux = debug_vmlinux();
    if (vmlinux.empty()) {
        GTEST_SKIP() << "no debug kernel's vmlinux";
    }
    // a running kernel whose build id is all zeroes
    const std::filesystem::path sys = std::filesystem::temp_directory_path() / "fhook-kl-sys";
    std::filesystem::create_directories(sys / "kernel");
    {
        std::ofstream notes(sys / "kernel" / "notes", std::ios::binary);
        const std::uint32_t head[3] = {4, 20, 3};
        notes.write(reinterpret_cast<const char*>(head), sizeof(head));
        notes.write("GNU\0", 4);
        notes.write(std::string(20, '\0').data(), 20);
    }
    KernelLines lines({vmlinux}, "none", sys.string());
    EXPECT_FALSE(lines.line("", "vfs_read", 0));
    EXPECT_EQ(lines.mismatched(), std::vector<std::string>{vmlinux});
    std::filesystem::remove_all(sys);
}

} // namespace
} // namespace fhook
