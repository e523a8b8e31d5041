// elf_symbol_offset against the loader's view of this very binary.
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include <fhook/elfsym.hpp>
#include <fhook/error.hpp>

extern "C" __attribute__((noinline, used)) int fhook_elfsym_test_target(int x) {
    return x * 3;
}

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
