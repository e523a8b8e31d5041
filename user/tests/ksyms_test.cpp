#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {
namespace {

const std::string kFixtures = FHOOK_TEST_FIXTURES;

class KsymsTest : public ::testing::Test {
protected:
    KsymsTest() : ksyms_(Ksyms::load(kFixtures + "/kallsyms")) {}
    Ksyms ksyms_;
};

TEST_F(KsymsTest, KeepsOnlyTextSymbols) {
    // 18 lines: 2 non-text (D, A), 1 module data (d).
    EXPECT_EQ(ksyms_.size(), 15u);
    EXPECT_FALSE(ksyms_.addresses_hidden());
}

// arm64 modules list mapping symbols ($x: code follows) among their
// functions: an address after one belongs to the function before it.
TEST(Ksyms, SkipsArm64MappingSymbols) {
    const Ksyms ks = Ksyms::parse(std::string_view("ffff800080010000 t $x\t[m]\n"
                                                   "ffff800080010008 t m_first\t[m]\n"
                                                   "ffff800080010040 t $x\t[m]\n"
                                                   "ffff800080010100 t m_second\t[m]\n"));
    EXPECT_EQ(ks.size(), 2u);
    const auto sym = ks.lookup(0xffff800080010048);
    ASSERT_TRUE(sym);
    EXPECT_EQ(sym->name, "m_first");
    EXPECT_EQ(sym->module, "m");
}

TEST_F(KsymsTest, ExactStart) {
    auto sym = ksyms_.lookup(0xffffffff812a0000);
    ASSERT_TRUE(sym);
    EXPECT_EQ(sym->name, "vfs_read");
    EXPECT_EQ(sym->offset, 0u);
    EXPECT_EQ(sym->module, "");
}

TEST_F(KsymsTest, IbtEntryIsSymPlus4) {
    auto sym = ksyms_.lookup(0xffffffff812a0004);
    ASSERT_TRUE(sym);
    EXPECT_EQ(sym->name, "vfs_read");
    EXPECT_EQ(sym->offset, 4u);
    EXPECT_EQ(ksyms_.name_of(0xffffffff812a0004), "vfs_read");
}

TEST_F(KsymsTest, BetweenSymbolsBelongsToThePreviousOne) {
    auto sym = ksyms_.lookup(0xffffffff812a01ff);
    ASSERT_TRUE(sym);
    EXPECT_EQ(sym->name, "vfs_read");
    EXPECT_EQ(sym->offset, 0x1ffu);
    EXPECT_EQ(ksyms_.name_of(0xffffffff812a0200), "vfs_write");
}

TEST_F(KsymsTest, DataSymbolsDoNotSplitText) {
    // some_data (D) at ...b0000 is not a text symbol.
    auto sym = ksyms_.lookup(0xffffffff812b0010);
    ASSERT_TRUE(sym);
    EXPECT_EQ(sym->name, "do_sys_open");
}

TEST_F(KsymsTest, AliasesResolveToTheFirstListed) {
    EXPECT_EQ(ksyms_.name_of(0xffffffff81000010), "_stext");
}

TEST_F(KsymsTest, ModuleSymbols) {
    auto sym = ksyms_.lookup(0xffffffffc0100204);
    ASSERT_TRUE(sym);
    EXPECT_EQ(sym->name, "lo_rw_aio");
    EXPECT_EQ(sym->module, "loop");
    EXPECT_EQ(sym->offset, 4u);
    // Weak symbols count as text.
    EXPECT_EQ(ksyms_.name_of(0xffffffff812a0801), "rcu_read_lock_held");
}

TEST_F(KsymsTest, UnknownAddressesPrintAsHex) {
    EXPECT_FALSE(ksyms_.lookup(0x1000));
    EXPECT_EQ(ksyms_.name_of(0x1000), "0x00001000");
    // Too far past the last symbol to belong to it.
    EXPECT_FALSE(ksyms_.lookup(0xffffffffc0200300 + Ksyms::kMaxOffset + 1));
    EXPECT_EQ(ksyms_.name_of(0xffffffffd0000000), "0xffffffffd0000000");
}

TEST_F(KsymsTest, AddressesOfNameInModule) {
    EXPECT_EQ(ksyms_.addresses_of("lo_rw_aio", "loop"),
              std::vector<std::uint64_t>{0xffffffffc0100200});
    EXPECT_EQ(ksyms_.addresses_of("lo_rw_aio", ""), std::vector<std::uint64_t>{0xffffffff812a0600});
    EXPECT_EQ(ksyms_.addresses_of("dup_static", "ext4").size(), 2u);
    EXPECT_TRUE(ksyms_.addresses_of("nope", "").empty());
    EXPECT_EQ(ksyms_.symbols_in("loop").size(), 3u);
}

// __init text: between _sinittext and _einittext, vmlinux's only
TEST(Ksyms, InitText) {
    const Ksyms ks = Ksyms::parse("ffffffff81000000 T _stext\n"
                                  "ffffffff81000100 T vfs_read\n"
                                  "ffffffff83783000 T _sinittext\n"
                                  "ffffffff83790000 T start_kernel\n"
                                  "ffffffff837f8910 T _einittext\n"
                                  "ffffffffc0100000 t init_mod\t[mod]\n");
    EXPECT_TRUE(ks.in_init_text(0xffffffff83790000));
    EXPECT_TRUE(ks.in_init_text(0xffffffff83783000));
    EXPECT_FALSE(ks.in_init_text(0xffffffff837f8910));
    EXPECT_FALSE(ks.in_init_text(0xffffffff81000100));
    EXPECT_FALSE(ks.in_init_text(0xffffffffc0100000));
    EXPECT_FALSE(
        Ksyms::parse("ffffffff83790000 T start_kernel\n").in_init_text(0xffffffff83790000));
}

TEST(Ksyms, HiddenAddresses) {
    Ksyms ks = Ksyms::load(kFixtures + "/kallsyms_hidden");
    EXPECT_TRUE(ks.addresses_hidden());
    EXPECT_TRUE(ks.empty());
    EXPECT_EQ(ks.name_of(0xffffffff812a0000), "0xffffffff812a0000");
}

TEST(Ksyms, HiddenAddressesSeenFromTheFirstFunction) {
    EXPECT_TRUE(kallsyms_addresses_hidden(kFixtures + "/kallsyms_hidden"));
    EXPECT_FALSE(kallsyms_addresses_hidden(kFixtures + "/kallsyms"));
    // (per-CPU symbols are at 0 when addresses are shown too)
    const std::string path = ::testing::TempDir() + "/fhook-kallsyms-percpu";
    std::ofstream(path) << "0000000000000000 A fixed_percpu_data\n"
                           "0000000000000000 D __per_cpu_start\n"
                           "ffffffff81000000 T startup_64\n";
    EXPECT_FALSE(kallsyms_addresses_hidden(path));
    std::ofstream(path) << "0000000000000000 A fixed_percpu_data\n";
    EXPECT_FALSE(kallsyms_addresses_hidden(path)) << "no function: nothing says hidden";
    std::remove(path.c_str());
    EXPECT_FALSE(kallsyms_addresses_hidden("/nonexistent/kallsyms"));
}

TEST(Ksyms, ToleratesJunkLines) {
    std::istringstream in("\n"
                          "garbage\n"
                          "zzzz T bad_addr\n"
                          "ffffffff81000000 T\n"
                          "ffffffff81000100 T good\n");
    Ksyms ks = Ksyms::parse(in);
    EXPECT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks.name_of(0xffffffff81000104), "good");
}

TEST(Ksyms, MissingFileIsARuntimeError) {
    try {
        Ksyms::load("/nonexistent/kallsyms");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Runtime);
        EXPECT_EQ(e.sys_errno(), ENOENT);
    }
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

// Why kallsyms showed zeros, from the two sysctls kallsyms_show_value() reads.
TEST(KsymsPolicy, HiddenReasonNamesTheSysctls) {
    char tmpl[] = "/tmp/fhook-sysctl-XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    auto set = [&](const char* name, const char* value) {
        std::ofstream(dir + "/" + name) << value << "\n";
    };
    set("kptr_restrict", "0");
    set("perf_event_paranoid", "3");
    EXPECT_EQ(kallsyms_hidden_reason(dir),
              "kernel.kptr_restrict is 0 and kernel.perf_event_paranoid 3: kallsyms addresses "
              "need CAP_SYSLOG or perf_event_paranoid <= 1");
    set("kptr_restrict", "1");
    EXPECT_EQ(kallsyms_hidden_reason(dir),
              "kernel.kptr_restrict is 1: kallsyms addresses need CAP_SYSLOG");
    set("kptr_restrict", "2");
    EXPECT_NE(kallsyms_hidden_reason(dir).find("hidden from everyone"), std::string::npos);
    std::filesystem::remove_all(dir);
    EXPECT_NE(kallsyms_hidden_reason(dir).find("CAP_SYSLOG"), std::string::npos);
}

TEST(Ksyms, OnDemandAsksOncePerSymbol) {
    std::vector<std::uint64_t> asked;
    Ksyms ks = Ksyms::on_demand([&](std::span<const std::uint64_t> addrs) {
        std::vector<Ksyms::Resolved> out;
        for (std::uint64_t a : addrs) {
            asked.push_back(a);
            if (a >= 0xffffffff81001000 && a < 0xffffffff81001080) {
                out.push_back({a - 0xffffffff81001000, 0x80, "vfs_read", ""});
            } else if (a >= 0xffffffffc0002000 && a < 0xffffffffc0002010) {
                out.push_back({a - 0xffffffffc0002000, 0x10, "testmod_fn", "testmod"});
            } else {
                out.push_back({});
            }
        }
        return out;
    });
    std::string s;
    ks.append_offset(0xffffffff81001004, s);
    EXPECT_EQ(s, "vfs_read+0x4/0x80");
    // the same symbol again, anywhere inside it: no second question
    EXPECT_EQ(ks.name_of(0xffffffff8100107f), "vfs_read");
    EXPECT_EQ(ks.size_of(0xffffffff81001000), 0x80u);
    EXPECT_EQ(asked.size(), 1u);
    // past its end: asked, and nothing there, once
    EXPECT_EQ(ks.name_of(0xffffffff81001080), "0xffffffff81001080");
    EXPECT_FALSE(ks.lookup(0xffffffff81001080));
    EXPECT_EQ(asked.size(), 2u);
    auto m = ks.lookup(0xffffffffc0002008);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->name, "testmod_fn");
    EXPECT_EQ(m->offset, 8u);
    EXPECT_EQ(m->module, "testmod");
    s.clear();
    ks.append_offset(0xffffffffc0002008, s);
    EXPECT_EQ(s, "testmod_fn+0x8/0x10 [testmod]");
    // views stay valid as more symbols are met
    const std::string_view first = ks.lookup(0xffffffff81001000)->name;
    for (std::uint64_t a = 0; a < 64; a++) {
        ks.lookup(0x1000 + a * 0x100);
    }
    EXPECT_EQ(first, "vfs_read");
    // the name-to-address queries see an empty table
    EXPECT_TRUE(ks.find_text("vfs_read").empty());
}

// A start answered again with another size (a reused BPF slot) keeps the
// first answer's names where SymbolRef points; a range that would wrap is
// no symbol; a resolver that throws leaves numbers, asked no more.
TEST(Ksyms, OnDemandConflictsWrapsAndFailures) {
    int calls = 0;
    bool fail = false;
    Ksyms ks = Ksyms::on_demand([&](std::span<const std::uint64_t> addrs) {
        calls++;
        if (fail) {
            throw_runtime("gone", EIO);
        }
        const std::uint64_t a = addrs[0];
        std::vector<Ksyms::Resolved> out;
        if (a == 0xffffffffa0000000 || a == 0xffffffffa0000008) {
            out.push_back({a - 0xffffffffa0000000, 0x10, "bpf_prog_one", "bpf"});
        } else if (a == 0xffffffffa0000020) {
            // the same start, now 0x40 long: another program
            out.push_back({0x20, 0x40, "bpf_prog_two", "bpf"});
        } else if (a == 0xffffffffc0000008) {
            out.push_back({8, ~0ULL, "wrapped", "mod"});
        } else {
            out.push_back({});
        }
        return out;
    });
    const std::string_view one = ks.lookup(0xffffffffa0000000)->name;
    auto two = ks.lookup(0xffffffffa0000020);
    ASSERT_TRUE(two);
    EXPECT_EQ(two->name, "bpf_prog_two");
    EXPECT_EQ(two->offset, 0x20u);
    EXPECT_EQ(one, "bpf_prog_one");
    EXPECT_EQ(ks.name_of(0xffffffffa0000008), "bpf_prog_one");
    EXPECT_FALSE(ks.lookup(0xffffffffc0000008));
    EXPECT_EQ(ks.size_of(0xffffffffc0000008), 0u);
    fail = true;
    const int before = calls;
    EXPECT_EQ(ks.name_of(0xffffffff81000000), "0xffffffff81000000");
    EXPECT_EQ(ks.name_of(0xffffffff81000100), "0xffffffff81000100");
    EXPECT_EQ(calls, before + 1);
    EXPECT_EQ(ks.name_of(0xffffffffa0000004), "bpf_prog_one"); // still known
}

} // namespace
} // namespace fhook
