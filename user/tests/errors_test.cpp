// fhook errors' output: a failing chain from do_sys_openat2 down to the
// path walk that produced -ENOENT, as text and JSON, identical chains
// keyed alike, and the --stat table.
#include <gtest/gtest.h>

#include <fhook/output/errors_format.hpp>

namespace fhook {
namespace {

const Ksyms& ksyms() {
    static const Ksyms k = Ksyms::parse("ffffffff81300000 T do_sys_openat2\n"
                                        "ffffffff81300400 T do_filp_open\n"
                                        "ffffffff81300800 t path_openat\n"
                                        "ffffffff81300c00 t walk_component\n"
                                        "ffffffff81301000 T vfs_open\n");
    return k;
}

// open("/nonexistent"): the walk's -ENOENT returned up through
// path_openat's ERR_PTR and do_filp_open's to do_sys_openat2 (a long)
ErrorChain open_chain() {
    const ReturnType l{ReturnType::Kind::Errno, 8}, i{ReturnType::Kind::Errno, 4},
        p{ReturnType::Kind::Pointer, 8};
    const auto enoent = static_cast<std::uint64_t>(-2);
    ErrorChain c;
    c.ts = 12345678000;
    c.pid = c.tgid = 150;
    c.cpu = 1;
    c.comm = "cat";
    c.frames = {{0xffffffff81300000, 12345670000, 8000, enoent, l},
                {0xffffffff81300400, 12345671000, 6500, enoent, p},
                {0xffffffff81300800, 12345671200, 6000, enoent, p},
                {0xffffffff81300c00, 12345672000, 1200, 0x00000000fffffffeULL, i}};
    return c;
}

TEST(Errors, ChainText) {
    const std::string out = format_error_chain(open_chain(), ksyms());
    EXPECT_EQ(out.substr(0, out.find('\n')),
              "cat-150 [001] 12.345678: do_sys_openat2 returned -ENOENT after 8.000 us");
    EXPECT_NE(out.find("\n  do_sys_openat2 "), std::string::npos) << out;
    EXPECT_NE(out.find("\n    do_filp_open "), std::string::npos) << out;
    EXPECT_NE(out.find("ERR_PTR(-ENOENT)"), std::string::npos) << out;
    // the deepest frame is marked, and only it
    EXPECT_NE(out.find("walk_component"), std::string::npos);
    EXPECT_EQ(out.find("<- first"), out.rfind("<- first"));
    EXPECT_TRUE(out.ends_with("1.200 us  <- first\n")) << out;
    ErrorChain cut = open_chain();
    cut.truncated = true;
    EXPECT_TRUE(format_error_chain(cut, ksyms(), 3).ends_with("<- deeper calls not watched\n"));
    EXPECT_NE(format_error_chain(cut, ksyms(), 3).find("after 8.000 us (3 times)\n"),
              std::string::npos);
}

TEST(Errors, ChainJson) {
    const std::string j = format_error_chain_json(open_chain(), ksyms());
    EXPECT_EQ(j.substr(0, j.find(",\"frames\"")),
              "{\"ts_ns\":12345678000,\"cpu\":1,\"pid\":150,\"tgid\":150,\"comm\":\"cat\","
              "\"entry\":\"do_sys_openat2\",\"result\":\"-ENOENT\",\"errno\":2,\"first\":"
              "\"walk_component\",\"truncated\":false,\"repeats\":1");
    EXPECT_NE(j.find("{\"function\":\"path_openat\",\"result\":\"ERR_PTR(-ENOENT)\","
                     "\"duration_ns\":6000,\"calltime_ns\":12345671200}"),
              std::string::npos)
        << j;
}

TEST(Errors, IdenticalChainsShareAKey) {
    ErrorChain a = open_chain(), b = open_chain();
    b.ts += 1000000;
    b.pid = 151;
    b.frames[0].duration = 9000; // times aside
    EXPECT_EQ(error_chain_key(a), error_chain_key(b));
    b.frames[3].retval = static_cast<std::uint32_t>(-13); // -EACCES
    EXPECT_NE(error_chain_key(a), error_chain_key(b));
    b = open_chain();
    b.truncated = true;
    EXPECT_NE(error_chain_key(a), error_chain_key(b));
}

TEST(Errors, StatTable) {
    ErrorStats stats;
    EXPECT_EQ(stats.text(ksyms()), "(no failures)\n");
    stats.add(open_chain());
    stats.add(open_chain());
    ErrorChain eacces = open_chain();
    eacces.frames.resize(1);
    eacces.frames[0].retval = static_cast<std::uint64_t>(-13);
    stats.add(eacces);
    EXPECT_EQ(stats.total(), 3u);
    const std::string t = stats.text(ksyms());
    // the most frequent first
    EXPECT_LT(t.find("walk_component"), t.find("-EACCES")) << t;
    EXPECT_NE(t.find("         2  -ENOENT"), std::string::npos) << t;
    EXPECT_NE(t.find("         1  -EACCES              do_sys_openat2                   "
                     "do_sys_openat2\n"),
              std::string::npos)
        << t;
}

} // namespace
} // namespace fhook
