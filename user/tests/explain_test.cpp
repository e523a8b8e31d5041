// fhook explain's text and JSON, from a recorded view of a function.
#include <gtest/gtest.h>

#include <fhook/output/explain.hpp>

namespace fhook {
namespace {

SiteView view(const std::vector<std::uint8_t>& code, const std::string& call_target) {
    SiteView v;
    v.insns = disassemble(code, 0xffffffff812a0000, 16);
    for (const Insn& insn : v.insns) {
        v.targets.push_back(insn.target ? call_target : "");
    }
    v.site = fentry_index(v.insns);
    return v;
}

Explanation sample() {
    Explanation e;
    e.name = "vfs_read";
    e.addr = 0xffffffff812a0000;
    e.size = 464;
    e.traceable = true;
    e.prototype = "ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)";
    // endbr64; nopl 0x0(%rax,%rax,1) (the fentry site); push %rbp
    e.idle = view({0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55}, "");
    e.arm = ExplainArm::Direct;
    // endbr64; call <fhook_direct_fast_0>; push %rbp
    e.armed = view({0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0xfb, 0x0f, 0x00, 0x00, 0x55},
                   "fhook_direct_fast_0+0x0/0x40 [fhook]");
    EnabledFunction f;
    f.name = "vfs_read";
    f.refs = 1;
    f.flags = "D";
    f.line = "vfs_read (1) R   D   \tdirect-->fhook_direct_fast_0+0x0/0x40 [fhook]";
    e.armed->attached.push_back(f);
    e.armed->kprobes.push_back("ffffffff812a0000  k  vfs_read+0x0 \"quoted\"");
    return e;
}

TEST(Explain, SiteAfterSealedEndbr) {
    // 6.12: nopw (%rax) (a sealed endbr64); nopl 0x0(%rax,%rax,1); push %rbp
    const SiteView v = view({0x66, 0x0f, 0x1f, 0x00, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55}, "");
    ASSERT_TRUE(v.site);
    EXPECT_EQ(*v.site, 1u);
    EXPECT_EQ(v.insns[1].bytes.size(), 5u);
    // without IBT: the site is the first instruction
    EXPECT_EQ(fentry_index(disassemble({0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55}, 0, 4)), 0u);
}

// arm64: bti c; mov x9, x30; bl (ftrace_caller, armed) -- the site is the bl;
// idle, two NOPs; a kprobe's brk.  (little-endian instruction words)
TEST(Explain, Arm64Site) {
    const std::vector<std::uint8_t> armed = {0x5f, 0x24, 0x03, 0xd5, 0xe9, 0x03, 0x1e, 0xaa,
                                             0x00, 0x00, 0x00, 0x94, 0xfd, 0x7b, 0xbf, 0xa9};
    const auto insns = disassemble(armed, 0xffff800080300000, 8, Arch::Arm64);
    ASSERT_EQ(insns.size(), 4u);
    EXPECT_EQ(insns[0].mnemonic, "bti");
    EXPECT_EQ(insns[1].mnemonic, "mov");
    EXPECT_EQ(fentry_index(insns, Arch::Arm64), 2u);
    EXPECT_EQ(site_state(insns[2]), SiteState::Call);
    EXPECT_EQ(insns[2].target, 0xffff800080300008u);
    const std::vector<std::uint8_t> idle = {0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20,
                                            0x03, 0xd5, 0x80, 0x00, 0x20, 0xd4};
    const auto nops = disassemble(idle, 0xffff800080300000, 8, Arch::Arm64);
    ASSERT_EQ(nops.size(), 3u);
    EXPECT_EQ(fentry_index(nops, Arch::Arm64), 1u);
    EXPECT_EQ(site_state(nops[1]), SiteState::Nop);
    EXPECT_EQ(site_state(nops[2]), SiteState::Int3);
}

TEST(Explain, Text) {
    EXPECT_EQ(explain_text(sample()),
              "vfs_read: 0xffffffff812a0000, 464 bytes (vmlinux)\n"
              "  prototype: ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t "
              "*pos) (BTF)\n"
              "  traceable: yes (in available_filter_functions)\n"
              "  kprobes: allowed\n"
              "\n"
              "now:\n"
              "  ffffffff812a0000:  f3 0f 1e fa              endbr64 \n"
              "  ffffffff812a0004:  0f 1f 44 00 00           nopl (%rax, %rax)   <- "
              "ftrace site: a 5-byte NOP, nothing traces the function\n"
              "  ffffffff812a0009:  55                       pushq %rbp\n"
              "  attached (tracefs enabled_functions): nothing\n"
              "  kprobes (debugfs kprobes/list): none\n"
              "\n"
              "armed (direct): fhook's counting trampoline through the direct-call API "
              "(register_ftrace_direct)\n"
              "  ffffffff812a0000:  f3 0f 1e fa              endbr64 \n"
              "  ffffffff812a0004:  e8 fb 0f 00 00           callq 0xffffffff812a1004   <- ftrace "
              "site: call fhook_direct_fast_0+0x0/0x40 [fhook]\n"
              "  ffffffff812a0009:  55                       pushq %rbp\n"
              "  attached (tracefs enabled_functions):\n"
              "    vfs_read (1) R   D   \tdirect-->fhook_direct_fast_0+0x0/0x40 [fhook]\n"
              "      D: a direct trampoline is attached (register_ftrace_direct)\n"
              "  kprobes (debugfs kprobes/list):\n"
              "    ffffffff812a0000  k  vfs_read+0x0 \"quoted\"\n");
}

TEST(Explain, Json) {
    Explanation e = sample();
    e.traceable = false;
    e.why_not = "notrace";
    EXPECT_EQ(
        explain_json(e),
        "{\"function\":\"vfs_read\",\"addr\":\"0xffffffff812a0000\",\"size\":464,\"module\":\"\","
        "\"traceable\":false,\"why_not\":\"notrace\",\"kprobe_blacklisted\":false,"
        "\"prototype\":\"ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t "
        "*pos)\",\"idle\":{\"site\":\"nop\",\"site_addr\":\"0xffffffff812a0004\",\"insns\":["
        "{\"addr\":\"0xffffffff812a0000\",\"bytes\":\"f3 0f 1e fa\",\"text\":\"endbr64\"},"
        "{\"addr\":\"0xffffffff812a0004\",\"bytes\":\"0f 1f 44 00 00\",\"text\":\"nopl (%rax, "
        "%rax)\"},{\"addr\":\"0xffffffff812a0009\",\"bytes\":\"55\",\"text\":\"pushq %rbp\"}],"
        "\"attached\":[],\"kprobes\":[]},\"armed\":{\"site\":\"call\",\"site_addr\":"
        "\"0xffffffff812a0004\",\"site_target\":\"fhook_direct_fast_0+0x0/0x40 [fhook]\","
        "\"insns\":[{\"addr\":\"0xffffffff812a0000\",\"bytes\":\"f3 0f 1e fa\",\"text\":"
        "\"endbr64\"},{\"addr\":\"0xffffffff812a0004\",\"bytes\":\"e8 fb 0f 00 00\",\"text\":"
        "\"callq 0xffffffff812a1004\"},{\"addr\":\"0xffffffff812a0009\",\"bytes\":\"55\",\"text\":"
        "\"pushq %rbp\"}],\"attached\":[{\"flags\":\"D\",\"refs\":1,\"line\":\"vfs_read (1) R   D  "
        " "
        "\\tdirect-->fhook_direct_fast_0+0x0/0x40 [fhook]\"}],\"kprobes\":[\"ffffffff812a0000  k  "
        "vfs_read+0x0 \\\"quoted\\\"\"]},\"via\":\"direct\"}\n");
}

} // namespace
} // namespace fhook
