#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <fhook_abi.h>

#include <fhook/core/error.hpp>
#include <fhook/probe/spec.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {
namespace {

const std::string kFixtures = FHOOK_TEST_FIXTURES;

TEST(ParseProbeSpec, PlainName) {
    ProbeSpec s = parse_probe_spec("vfs_read");
    EXPECT_EQ(s.text, "vfs_read");
    EXPECT_FALSE(s.negated);
    EXPECT_EQ(s.glob, "vfs_read");
    EXPECT_FALSE(s.module);
}

TEST(ParseProbeSpec, Globs) {
    for (const char* g : {"vfs_*", "*lock*", "*_read", "vfs_?ead", "[ab]*", "[!a-c]*", "*",
                          "foo.isra.0", "_ZN$LT$x"}) {
        ProbeSpec s = parse_probe_spec(g);
        EXPECT_EQ(s.glob, g);
        EXPECT_FALSE(s.negated);
    }
}

TEST(ParseProbeSpec, Negated) {
    ProbeSpec s = parse_probe_spec("!*rcu*");
    EXPECT_TRUE(s.negated);
    EXPECT_EQ(s.glob, "*rcu*");
    EXPECT_EQ(s.text, "!*rcu*");
}

TEST(ParseProbeSpec, ModuleForms) {
    ProbeSpec s = parse_probe_spec("ext4_*:mod:ext4");
    EXPECT_EQ(s.glob, "ext4_*");
    ASSERT_TRUE(s.module);
    EXPECT_EQ(*s.module, "ext4");

    s = parse_probe_spec(":mod:loop");
    EXPECT_EQ(s.glob, "*");
    EXPECT_EQ(*s.module, "loop");

    s = parse_probe_spec("*:mod:snd-hda-intel"); // '-' normalized like modprobe
    EXPECT_EQ(*s.module, "snd_hda_intel");
    EXPECT_EQ(s.text, "*:mod:snd-hda-intel");
}

TEST(ParseProbeSpec, MalformedAreUsageErrors) {
    const std::string long_glob(FHOOK_MAX_PATTERN_LEN + 1, 'a');
    for (const std::string& bad : {std::string(""),
                                   std::string("!"),
                                   std::string("foo:mod:"),
                                   std::string(":mod:"),
                                   std::string("foo:bar:baz"),
                                   std::string("foo:mod"),
                                   std::string("foo:"),
                                   std::string("vfs read"),
                                   std::string("vfs_read\t"),
                                   std::string(" vfs_read"),
                                   std::string("foo/bar"),
                                   std::string("foo;rm"),
                                   std::string("[abc"),
                                   std::string("abc]"),
                                   std::string("a!b"),
                                   std::string("!!foo"),
                                   std::string("!foo:mod:ext4"),
                                   std::string("!:mod:ext4"),
                                   std::string("foo:mod:a:b"),
                                   std::string("foo:mod:bad/mod"),
                                   std::string("vfs-read"),
                                   long_glob,
                                   std::string("x:mod:") + long_glob,
                                   std::string("foo\nbar")}) {
        try {
            parse_probe_spec(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Invalid) << bad;
        }
    }
}

TEST(ParseProbeSpec, MaxLengthIsAccepted) {
    const std::string glob(FHOOK_MAX_PATTERN_LEN, 'a');
    EXPECT_EQ(parse_probe_spec(glob).glob, glob);
    EXPECT_EQ(parse_probe_spec("!" + glob).glob, glob);
}

TEST(ParseProbeSpec, ErrorNamesTheSpec) {
    try {
        parse_probe_spec("foo:bar:baz");
        FAIL();
    } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("'foo:bar:baz'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'bar'"), std::string::npos) << msg;
    }
}

TEST(ParseProbeSpecs, EmptyListIsUsageError) {
    try {
        parse_probe_specs({});
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    }
    EXPECT_EQ(parse_probe_specs({"a", "!b"}).size(), 2u);
}

TEST(GlobMatch, TracefsGrammar) {
    EXPECT_TRUE(glob_match("vfs_read", "vfs_read"));
    EXPECT_FALSE(glob_match("vfs_read", "vfs_readv"));
    EXPECT_TRUE(glob_match("vfs_*", "vfs_read"));
    EXPECT_TRUE(glob_match("*lock*", "rcu_read_lock_held"));
    EXPECT_TRUE(glob_match("*_read", "ksys_read"));
    EXPECT_FALSE(glob_match("*_read", "vfs_readv"));
    EXPECT_TRUE(glob_match("vfs_?ead", "vfs_read"));
    EXPECT_TRUE(glob_match("[ab]*", "bio_put"));
    EXPECT_FALSE(glob_match("[ab]*", "cat"));
    EXPECT_TRUE(glob_match("[!ab]*", "cat"));
    EXPECT_TRUE(glob_match("*", "x"));
}

class FunctionsTest : public ::testing::Test {
protected:
    FunctionsTest()
        : functions_(FunctionList::load(kFixtures + "/available_filter_functions")),
          ksyms_(Ksyms::load(kFixtures + "/kallsyms")) {}

    std::vector<std::string> selected(const std::vector<std::string>& texts) {
        FunctionSelector sel(parse_probe_specs(texts));
        std::vector<std::string> out;
        for (const auto& f : functions_.functions()) {
            if (sel.selects(f)) {
                out.push_back(f.line());
            }
        }
        return out;
    }

    FunctionList functions_;
    Ksyms ksyms_;
};

TEST_F(FunctionsTest, ParsesNameAndModule) {
    const auto& fs = functions_.functions();
    ASSERT_EQ(fs.size(), 12u);
    EXPECT_EQ(fs[0].name, "vfs_read");
    EXPECT_EQ(fs[0].module, "");
    EXPECT_EQ(fs[6].name, "loop_queue_rq");
    EXPECT_EQ(fs[6].module, "loop");
    EXPECT_EQ(fs[6].line(), "loop_queue_rq [loop]");
}

TEST_F(FunctionsTest, SelectorSemantics) {
    EXPECT_EQ(selected({"vfs_*"}), (std::vector<std::string>{"vfs_read", "vfs_write"}));
    // Plain globs match module functions too (ftrace_set_filter compares names).
    EXPECT_EQ(selected({"lo_rw_aio"}), (std::vector<std::string>{"lo_rw_aio", "lo_rw_aio [loop]"}));
    EXPECT_EQ(selected({"lo_*:mod:loop"}), (std::vector<std::string>{"lo_rw_aio [loop]"}));
    EXPECT_EQ(selected({"*:mod:loop", "!loop_q*"}),
              (std::vector<std::string>{"loop_process_work [loop]", "lo_rw_aio [loop]"}));
    EXPECT_EQ(selected({":mod:ext4"}).size(), 3u);
    EXPECT_THROW(selected({"!*:mod:*"}), Error); // a negated :mod: never parses
}

TEST_F(FunctionsTest, OnlyNegativesSelectEverythingElse) {
    auto out = selected({"!*read*", "!*loop*"});
    EXPECT_EQ(out, (std::vector<std::string>{"vfs_write", "do_sys_open", "lo_rw_aio",
                                             "lo_rw_aio [loop]", "dup_static [ext4]"}));
}

// A call graph's "all but fhook's own, the hook API's kept" (plan.cpp):
// an extended glob no user's spec can hold
TEST(FunctionSelector, FhooksOwnButTheHookApi) {
    std::vector<ProbeSpec> specs = parse_probe_specs({"*"});
    specs.push_back(ProbeSpec{"!*:mod:fhook", true, "!(fhook_khook_*|__fhook_khook_*)", "fhook"});
    const FunctionSelector sel(specs);
    EXPECT_TRUE(sel.selects({"vfs_read", "", 0}));
    EXPECT_TRUE(sel.selects({"fhook_khook_arm", "fhook", 0}));
    EXPECT_TRUE(sel.selects({"__fhook_khook_install", "fhook", 0}));
    EXPECT_FALSE(sel.selects({"fhook_ioc_khooks", "fhook", 0}));
    EXPECT_FALSE(sel.selects({"x_fhook_khook_y", "fhook", 0}));
    EXPECT_TRUE(sel.selects({"fhook_ioc_khooks", "mymod", 0}));
    // (a user's glob is no extended one)
    EXPECT_FALSE(glob_match("!(a)", "b"));
}

TEST_F(FunctionsTest, FirstUnmatched) {
    FunctionSelector sel(parse_probe_specs({"vfs_*", "!vfs_write", "nope_*", ":mod:ext4"}));
    auto idx = sel.first_unmatched(functions_);
    ASSERT_TRUE(idx);
    EXPECT_EQ(*idx, 2u);
    // An exclusion matching nothing is refused by ftrace_set_notrace() too.
    idx = FunctionSelector(parse_probe_specs({"vfs_*", "!nothing*"})).first_unmatched(functions_);
    ASSERT_TRUE(idx);
    EXPECT_EQ(*idx, 1u);
    EXPECT_FALSE(
        FunctionSelector(parse_probe_specs({"vfs_*", "!*read"})).first_unmatched(functions_));
}

TEST_F(FunctionsTest, ResolveModuleSpecUsesTheModulesSymbols) {
    auto ips = resolve_module_spec(parse_probe_spec("lo_*:mod:loop"), functions_, ksyms_);
    EXPECT_EQ(ips, std::vector<std::uint64_t>{0xffffffffc0100200}); // not the vmlinux lo_rw_aio
    ips = resolve_module_spec(parse_probe_spec(":mod:loop"), functions_, ksyms_);
    std::sort(ips.begin(), ips.end());
    EXPECT_EQ(ips, (std::vector<std::uint64_t>{0xffffffffc0100000, 0xffffffffc0100100,
                                               0xffffffffc0100200}));
}

TEST_F(FunctionsTest, ResolveDuplicateStaticNames) {
    auto ips = resolve_module_spec(parse_probe_spec("dup_static:mod:ext4"), functions_, ksyms_);
    std::sort(ips.begin(), ips.end());
    EXPECT_EQ(ips, (std::vector<std::uint64_t>{0xffffffffc0200100, 0xffffffffc0200200}));
}

TEST_F(FunctionsTest, ResolveErrors) {
    for (const char* text : {"nope:mod:loop", ":mod:notloaded", "vfs_read:mod:loop"}) {
        try {
            resolve_module_spec(parse_probe_spec(text), functions_, ksyms_);
            ADD_FAILURE() << text;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Runtime);
            EXPECT_NE(std::string(e.what()).find(std::string("'") + text + "'"), std::string::npos)
                << e.what();
        }
    }
    Ksyms hidden = Ksyms::load(kFixtures + "/kallsyms_hidden");
    try {
        resolve_module_spec(parse_probe_spec(":mod:loop"), functions_, hidden);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("hidden"), std::string::npos) << e.what();
    }
}

TEST_F(FunctionsTest, BuildProbeRequest) {
    auto req =
        build_probe_request(parse_probe_specs({"vfs_*", "!*rcu*", "lo_*:mod:loop", "*:mod:loop"}),
                            &functions_, &ksyms_);
    EXPECT_EQ(req.filters, (std::vector<std::string>{"vfs_*"}));
    EXPECT_EQ(req.excludes, (std::vector<std::string>{"*rcu*"}));
    EXPECT_EQ(req.ips.size(), 3u); // deduplicated across specs
    EXPECT_EQ(req.ips.front(), 0xffffffffc0100200u);

    req = build_probe_request(parse_probe_specs({"!*rcu*", "!vfs_*"}), nullptr, nullptr);
    EXPECT_EQ(req.filters, (std::vector<std::string>{"*"}));
    EXPECT_EQ(req.excludes, (std::vector<std::string>{"*rcu*", "vfs_*"}));
    EXPECT_TRUE(req.ips.empty());

    req = build_probe_request(parse_probe_specs({":mod:ext4", "!dup*"}), &functions_, &ksyms_);
    EXPECT_TRUE(req.filters.empty());
    EXPECT_EQ(req.ips.size(), 4u);

    EXPECT_THROW(build_probe_request(parse_probe_specs({":mod:ext4"}), nullptr, nullptr), Error);
    EXPECT_EQ(describe_specs(parse_probe_specs({"vfs_read", "!x", ":mod:ext4"})),
              "vfs_read !x :mod:ext4");
}

TEST(FunctionList, MissingFileIsARuntimeError) {
    try {
        FunctionList::load("/nonexistent/available_filter_functions");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Runtime);
        EXPECT_NE(std::string(e.what()).find("/nonexistent/available_filter_functions"),
                  std::string::npos);
    }
}

TEST(FunctionList, ParseIgnoresBlankLines) {
    std::istringstream in("a\n\nb [m]\r\n  \n");
    auto list = FunctionList::parse(in);
    ASSERT_EQ(list.functions().size(), 2u);
    EXPECT_EQ(list.functions()[1].module, "m");
}

// A kernel with more traceable functions than FHOOK_ARM_SLICE: f0.. in
// vmlinux, g0.. in module m, "dup" with two text symbols in vmlinux but one
// call site (the other copy notrace), "mdup" the same in m, and 6.1's
// discarded weak functions.
class SlicedTest : public ::testing::Test {
protected:
    static constexpr std::size_t kN = FHOOK_ARM_SLICE + 100;
    void SetUp() override {
        std::string aff, addrs, syms;
        auto add = [&](const std::string& name, const std::string& mod, std::uint64_t at,
                       bool traceable) {
            char line[128];
            const std::string tag = mod.empty() ? "" : " [" + mod + "]";
            std::snprintf(line, sizeof(line), "%016llx t %s%s\n", (unsigned long long)at,
                          name.c_str(), tag.c_str());
            syms += line;
            if (traceable) {
                aff += name + tag + "\n";
                std::snprintf(line, sizeof(line), "%llx %s%s\n", (unsigned long long)at + 4,
                              name.c_str(), tag.c_str());
                addrs += line;
            }
        };
        for (std::size_t i = 0; i < kN; i++) {
            add("f" + std::to_string(i), "", 0xffffffff81000000 + 0x100 * i, true);
            add("g" + std::to_string(i), "m", 0xffffffffc0000000 + 0x100 * i, true);
        }
        add("dup", "", 0xffffffff82000000, true);
        add("dup", "", 0xffffffff82000100, false);
        add("mdup", "m", 0xffffffffc1000000, true);
        add("mdup", "m", 0xffffffffc1000100, false);
        aff += "__ftrace_invalid_address___64\n";
        std::istringstream a(aff), b(addrs);
        functions_ = FunctionList::parse(a);
        with_addrs_ = FunctionList::parse_with_addresses(b);
        ksyms_ = Ksyms::parse(syms);
        aff_ = aff;
        syms_ = syms;
    }
    FunctionList functions_, with_addrs_;
    Ksyms ksyms_;
    std::string aff_, syms_;
};

TEST_F(SlicedTest, FewFunctionsStayPatterns) {
    EXPECT_FALSE(build_sliced_request(parse_probe_specs({"f1*"}), functions_, &ksyms_));
    EXPECT_FALSE(build_sliced_request(parse_probe_specs({"f1*"}), with_addrs_, nullptr));
}

TEST_F(SlicedTest, CallSiteAddressesFromAddrsFile) {
    ASSERT_EQ(with_addrs_.functions().size(), 2 * kN + 2);
    EXPECT_EQ(with_addrs_.functions()[1].module, "m");
    auto req = build_sliced_request(parse_probe_specs({"*", "!g*"}), with_addrs_, nullptr);
    ASSERT_TRUE(req);
    EXPECT_TRUE(req->filters.empty());
    EXPECT_TRUE(req->excludes.empty());
    ASSERT_EQ(req->ips.size(), kN + 2); // f*, dup, mdup
    EXPECT_EQ(req->ips.front(), 0xffffffff81000004u);
}

TEST_F(SlicedTest, KallsymsAddressesAndAmbiguousNamesAsPatterns) {
    auto req = build_sliced_request(parse_probe_specs({"*"}), functions_, &ksyms_);
    ASSERT_TRUE(req);
    // which "dup" ftrace can trace only ftrace knows: the name goes as is
    EXPECT_EQ(req->filters, (std::vector<std::string>{"dup", "mdup"}));
    EXPECT_EQ(req->ips.size(), 2 * kN);
    EXPECT_TRUE(std::find(req->ips.begin(), req->ips.end(), 0xffffffffc0000100u) != req->ips.end());

    req = build_sliced_request(parse_probe_specs({"*", "!*dup"}), functions_, &ksyms_);
    ASSERT_TRUE(req);
    EXPECT_TRUE(req->filters.empty());
    EXPECT_EQ(req->ips.size(), 2 * kN);
}

TEST_F(SlicedTest, NoAddressesNoSlices) {
    // m's "mdup" is ambiguous, and a name pattern would also take the
    // vmlinux "mdup" that ":mod:m" leaves out
    std::istringstream in(aff_ + "mdup\n");
    const FunctionList more = FunctionList::parse(in);
    const Ksyms more_syms = Ksyms::parse(syms_ + "ffffffff83000000 t mdup\n");
    EXPECT_FALSE(build_sliced_request(parse_probe_specs({":mod:m"}), more, &more_syms));
    auto req = build_sliced_request(parse_probe_specs({":mod:m"}), functions_, &ksyms_);
    ASSERT_TRUE(req);
    EXPECT_EQ(req->filters, (std::vector<std::string>{"mdup"}));

    EXPECT_FALSE(build_sliced_request(parse_probe_specs({"*"}), functions_, nullptr));
    std::string zeros;
    for (std::size_t i = 0; i < kN; i++) {
        zeros += "0000000000000000 t f" + std::to_string(i) + "\n";
    }
    const Ksyms hidden = Ksyms::parse(zeros);
    ASSERT_TRUE(hidden.addresses_hidden());
    EXPECT_FALSE(build_sliced_request(parse_probe_specs({"*"}), functions_, &hidden));
}

// CAP_PERFMON users cannot read tracefs: function names come from kallsyms
TEST(FunctionListKallsyms, TextSymbolsByName) {
    std::istringstream in("0000000000000000 T vfs_read\n"
                          "0000000000000000 t __pfx_vfs_read\n"
                          "0000000000000000 D jiffies\n"
                          "0000000000000000 W weak_fn\n"
                          "ffffffffc0001000 t ext4_fill_super\t[ext4]\n"
                          "garbage\n");
    const FunctionList list = FunctionList::parse_kallsyms(in);
    ASSERT_EQ(list.functions().size(), 3u);
    EXPECT_EQ(list.functions()[0].line(), "vfs_read");
    EXPECT_EQ(list.functions()[1].line(), "weak_fn");
    EXPECT_EQ(list.functions()[2].line(), "ext4_fill_super [ext4]");
    EXPECT_EQ(list.functions()[0].addr, 0u);
}

TEST(FunctionListKallsyms, OnlyWhenPermissionIsRefused) {
    const std::string dir = ::testing::TempDir();
    const std::string syms = dir + "/fhook_kallsyms_test";
    std::ofstream(syms) << "0000000000000000 T vfs_read\n";
    // a missing file is not a permission problem: its error stays
    EXPECT_THROW(FunctionList::load_or_kallsyms(dir + "/no_such_functions", syms), Error);
    if (::geteuid() != 0) {
        const std::string locked = dir + "/fhook_locked_functions";
        std::ofstream(locked) << "vfs_write\n";
        ::chmod(locked.c_str(), 0);
        const FunctionList list = FunctionList::load_or_kallsyms(locked, syms);
        ASSERT_EQ(list.functions().size(), 1u);
        EXPECT_EQ(list.functions()[0].name, "vfs_read");
        EXPECT_THROW(FunctionList::load_or_kallsyms(locked, dir + "/no_such_kallsyms"), Error);
    }
}

} // namespace
} // namespace fhook
