// Host tests of what fhook hook / explain / count add to the library:
// capstone disassembly of known kernel patch-site bytes, tracefs
// enabled_functions parsing and conflict plans, hook records decoded and
// printed, the count table.
#include <cstring>
#include <sstream>

#include <gtest/gtest.h>

#include <fhook/output/format.hpp>
#include <fhook/output/summary.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/sys/disasm.hpp>
#include <fhook/sys/ftrace_state.hpp>
#include <fhook/sys/ksyms.hpp>

#include "records.hpp"

namespace fhook {
namespace {

TEST(Disasm, IdleFentrySiteAfterEndbr) {
    // endbr64; nopl 0x0(%rax,%rax,1) (ftrace's idle 5-byte NOP); push %rbp
    const std::vector<std::uint8_t> code = {0xf3, 0x0f, 0x1e, 0xfa, 0x0f,
                                            0x1f, 0x44, 0x00, 0x00, 0x55};
    const auto insns = disassemble(code, 0xffffffff81000000, 16);
    ASSERT_EQ(insns.size(), 3u);
    EXPECT_EQ(insns[0].mnemonic, "endbr64");
    EXPECT_EQ(insns[1].addr, 0xffffffff81000004u);
    EXPECT_EQ(insns[1].bytes.size(), 5u);
    ASSERT_TRUE(fentry_index(insns));
    EXPECT_EQ(*fentry_index(insns), 1u);
    EXPECT_EQ(site_state(insns[1]), SiteState::Nop);
    EXPECT_EQ(insns[2].mnemonic, "pushq");
    EXPECT_EQ(insns[2].operands, "%rbp");
}

TEST(Disasm, ArmedSiteCallTargetIsComputed) {
    // call rel32 at 0xffffffff81000000 to 0xffffffffc0203000
    const std::uint64_t at = 0xffffffff81000000, to = 0xffffffffc0203000;
    const auto rel = static_cast<std::int32_t>(to - (at + 5));
    std::vector<std::uint8_t> code = {0xe8, 0, 0, 0, 0, 0xcc};
    std::memcpy(&code[1], &rel, 4);
    const auto insns = disassemble(code, at, 16);
    ASSERT_EQ(insns.size(), 2u);
    EXPECT_EQ(*fentry_index(insns), 0u);
    EXPECT_EQ(site_state(insns[0]), SiteState::Call);
    ASSERT_TRUE(insns[0].target);
    EXPECT_EQ(*insns[0].target, to);
    EXPECT_EQ(site_state(insns[1]), SiteState::Int3);
}

TEST(Disasm, StopsAtGarbage) {
    const std::vector<std::uint8_t> code = {0x90, 0x0f, 0xff};
    const auto insns = disassemble(code, 0x1000, 16);
    ASSERT_GE(insns.size(), 1u);
    EXPECT_EQ(insns[0].mnemonic, "nop");
    EXPECT_TRUE(disassemble({}, 0x1000, 16).empty());
    EXPECT_FALSE(fentry_index({}));
}

// enabled_functions as 6.1 prints it, a direct call on its own line
constexpr const char* kEnabled =
    "vfs_read (2) R I   \ttramp: 0xffffffffc0203000 (fhook_hook_callback+0x0/0x1e0 [fhook]) "
    "->fhook_hook_callback+0x0/0x1e0 [fhook]\n"
    "fhook_testmod_target [fhook_testmod] (1) R   D \ttramp: ftrace_regs_caller+0x0/0x58 "
    "(call_direct_funcs+0x0/0x30)\n"
    "\tdirect-->fhook_direct_count_0+0x0/0x10 [fhook]\n"
    "schedule (1)        \ttramp: 0xffffffffc0205000 (function_trace_call+0x0/0x1a0)\n"
    // two ops on one site: the list function, after a space, not a tab
    "vfs_write (2)       ->arch_ftrace_ops_list_func+0x0/0x1d0\n";

TEST(FtraceState, ParsesFlagsDetailAndDirectContinuation) {
    const auto all = parse_enabled_functions(kEnabled, "");
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(all[0].name, "vfs_read");
    EXPECT_EQ(all[0].refs, 2);
    EXPECT_EQ(all[0].flags, "RI");
    EXPECT_TRUE(all[0].ipmodify());
    EXPECT_FALSE(all[0].direct());
    EXPECT_EQ(all[1].name, "fhook_testmod_target [fhook_testmod]");
    EXPECT_EQ(all[1].flags, "RD");
    EXPECT_TRUE(all[1].direct());
    EXPECT_NE(all[1].detail.find("direct-->fhook_direct_count_0"), std::string::npos);
    EXPECT_EQ(all[2].flags, "");
    EXPECT_EQ(all[2].refs, 1);
    EXPECT_EQ(all[3].flags, "");
    EXPECT_EQ(all[3].refs, 2);
    EXPECT_EQ(all[3].detail, "->arch_ftrace_ops_list_func+0x0/0x1d0");
}

TEST(FtraceState, SaysHowTheSiteReachesItsOps) {
    const auto all = parse_enabled_functions(kEnabled, "");
    ASSERT_EQ(all.size(), 4u);
    EXPECT_NE(std::string(enabled_dispatch_meaning(all[0])).find("of the ops' own"),
              std::string::npos);
    EXPECT_STREQ(enabled_dispatch_meaning(all[1]), ""); // direct: the D flag says it
    EXPECT_NE(std::string(enabled_dispatch_meaning(all[3])).find("list function"),
              std::string::npos);
}

TEST(FtraceState, SelectsOneFunctionModuleOrNot) {
    const auto one = parse_enabled_functions(kEnabled, "fhook_testmod_target");
    ASSERT_EQ(one.size(), 1u);
    EXPECT_TRUE(one[0].direct());
    EXPECT_TRUE(parse_enabled_functions(kEnabled, "vfs_readv").empty());
    EXPECT_EQ(parse_enabled_functions(kEnabled, "schedule").size(), 1u);
}

TEST(FtraceState, ConflictPlans) {
    const auto all = parse_enabled_functions(kEnabled, "");
    auto plan = hook_conflicts({all[0]}, true);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_NE(plan[0].find("already has an IPMODIFY user"), std::string::npos);
    plan = hook_conflicts({all[1]}, true);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_NE(plan[0].find("has a direct trampoline"), std::string::npos);
    EXPECT_TRUE(hook_conflicts({all[1]}, false).empty());
    EXPECT_TRUE(hook_conflicts({all[2]}, true).empty()); // a plain tracer shares
    // an IPMODIFY user that is a module's hook (fhook's hook API) is named
    ModuleHook owner;
    owner.function = all[0].name;
    owner.owner = "fhook_deny_open";
    owner.kind = FHOOK_KHOOK_KIND_REPLACE;
    ModuleHook other = owner;
    other.function = "some_other_function [loop]";
    plan = hook_conflicts({all[0]}, true, {other, owner});
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0],
              all[0].name +
                  " is hooked by module fhook_deny_open with fhook's hook API (replace): a "
                  "function takes one IPMODIFY user at a time, unload fhook_deny_open first");
    EXPECT_STRNE(enabled_flag_meaning('I'), enabled_flag_meaning('R'));
}

fhook_rec_hook hook_rec(std::uint32_t action, std::uint64_t retval, std::uint64_t duration) {
    fhook_rec_hook r;
    std::memset(&r, 0, sizeof(r));
    r.hdr.size = sizeof(r);
    r.hdr.type = FHOOK_REC_HOOK;
    r.hdr.probe_id = 1;
    r.hdr.ts = 2431445999;
    r.hdr.pid = 94;
    r.hdr.tgid = 94;
    r.hdr.cpu = 1;
    r.ip = 0xffffffff812a0004;
    r.ret_ip = 0xffffffff812a0437;
    r.retval = retval;
    r.duration = duration;
    r.action = action;
    return r;
}

class HookFormat : public ::testing::Test {
protected:
    HookFormat() {
        std::istringstream in("ffffffff812a0000 T vfs_read\n"
                              "ffffffff812a0400 t ksys_read\n"
                              "ffffffff812a0600 t other\n");
        ksyms_ = Ksyms::parse(in);
        probes_.add(1, parse_kprobe("p:hook/vfs_read vfs_read", {}));
    }
    std::string render(const fhook_rec_hook& r, bool json = false) {
        Decoder d; // the task's name as the module gives it
        const auto comm = test::comm_rec(94, "sh", 1);
        d.decode(&comm.hdr);
        auto ev = d.decode(&r.hdr);
        EXPECT_TRUE(ev);
        std::string out;
        if (json) {
            JsonFormatter f(ksyms_);
            f.set_probes(&probes_);
            f.format(*ev, out);
        } else {
            TextFormatter f(ksyms_);
            f.set_probes(&probes_);
            f.format(*ev, out);
        }
        return out;
    }
    Ksyms ksyms_;
    ProbeTable probes_;
};

TEST_F(HookFormat, DecodesEveryField) {
    const auto r = hook_rec(FHOOK_HOOK_AROUND, static_cast<std::uint64_t>(-12), 1500);
    const auto ev = decode(&r.hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Hook);
    EXPECT_EQ(ev->retval, static_cast<std::uint64_t>(-12));
    EXPECT_EQ(ev->duration, 1500u);
    EXPECT_EQ(ev->action, static_cast<std::uint32_t>(FHOOK_HOOK_AROUND));
    EXPECT_TRUE(ev->data.empty());
}

TEST_F(HookFormat, TextLines) {
    EXPECT_EQ(render(hook_rec(FHOOK_HOOK_AROUND, static_cast<std::uint64_t>(-12), 1500)),
              "              sh-94      [001] .....     2.431445: vfs_read: "
              "(ksys_read+0x37/0x200 <- vfs_read) ret=-12 duration=1500ns\n");
    EXPECT_EQ(render(hook_rec(FHOOK_HOOK_RETURN, 5, 0)),
              "              sh-94      [001] .....     2.431445: vfs_read: "
              "(ksys_read+0x37/0x200 <- vfs_read) injected ret=5\n");
    EXPECT_EQ(render(hook_rec(FHOOK_HOOK_REDIRECT, 0, 0)),
              "              sh-94      [001] .....     2.431445: vfs_read: "
              "(ksys_read+0x37/0x200 <- vfs_read) redirected\n");
}

TEST_F(HookFormat, JsonFields) {
    const std::string out = render(hook_rec(FHOOK_HOOK_AROUND, 3, 77), true);
    EXPECT_NE(out.find("\"type\":\"hook\""), std::string::npos) << out;
    EXPECT_NE(out.find("\"action\":\"around\",\"retval\":3,\"duration_ns\":77"), std::string::npos)
        << out;
    EXPECT_NE(out.find("\"func\":\"vfs_read\""), std::string::npos) << out;
}

} // namespace
} // namespace fhook
