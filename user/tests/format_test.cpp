#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <fhook/format.hpp>
#include <fhook/ksyms.hpp>

namespace fhook {
namespace {

std::string ctx(std::uint8_t flags, std::uint8_t preempt) {
    auto c = context_chars(flags, preempt);
    return std::string(c.begin(), c.end());
}

TEST(ContextChars, MatchesFtrace) {
    EXPECT_EQ(ctx(0, 0), ".....");
    EXPECT_EQ(ctx(FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ, 1), "d.h1.");
    EXPECT_EQ(ctx(FHOOK_CTX_IRQS_OFF, 0), "d....");
    EXPECT_EQ(ctx(FHOOK_CTX_NEED_RESCHED | FHOOK_CTX_PREEMPT_RESCHED, 0), ".N...");
    EXPECT_EQ(ctx(FHOOK_CTX_NEED_RESCHED, 0), ".n...");
    EXPECT_EQ(ctx(FHOOK_CTX_PREEMPT_RESCHED, 0), ".p...");
    EXPECT_EQ(ctx(FHOOK_CTX_NMI | FHOOK_CTX_HARDIRQ, 0), "..Z..");
    EXPECT_EQ(ctx(FHOOK_CTX_NMI, 0), "..z..");
    EXPECT_EQ(ctx(FHOOK_CTX_HARDIRQ | FHOOK_CTX_SOFTIRQ, 0), "..H..");
    EXPECT_EQ(ctx(FHOOK_CTX_HARDIRQ, 0), "..h..");
    EXPECT_EQ(ctx(FHOOK_CTX_SOFTIRQ, 0x01), "..s1.");
    // Bottom halves disabled: first column, as trace_print_lat_fmt() does.
    EXPECT_EQ(ctx(FHOOK_CTX_BH_OFF, 0), "b....");
    EXPECT_EQ(ctx(FHOOK_CTX_IRQS_OFF | FHOOK_CTX_BH_OFF, 0), "D....");
    EXPECT_EQ(ctx(FHOOK_CTX_IRQS_OFF | FHOOK_CTX_NEED_RESCHED | FHOOK_CTX_PREEMPT_RESCHED |
                      FHOOK_CTX_SOFTIRQ,
                  0x02),
              "dNs2.");
}

TEST(ContextChars, PreemptAndMigrateDepthNibbles) {
    EXPECT_EQ(ctx(0, 0x01), "...1.");
    EXPECT_EQ(ctx(0, 0x0a), "...a.");
    EXPECT_EQ(ctx(0, 0x10), "....1");
    EXPECT_EQ(ctx(0, 0x21), "...12");
    EXPECT_EQ(ctx(0, 0xff), "...ff");
}

class TextFormatterTest : public ::testing::Test {
protected:
    TextFormatterTest() {
        std::istringstream in("ffffffff812a0000 T vfs_read\n"
                              "ffffffff812a0400 t ksys_read\n"
                              "ffffffffc0100000 t loop_queue_rq\t[loop]\n");
        ksyms_ = Ksyms::parse(in);
    }

    static Event func_event() {
        Event ev;
        ev.type = EventType::Function;
        ev.comm = "cat";
        ev.pid = 94;
        ev.tgid = 94;
        ev.cpu = 1;
        ev.flags = FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ;
        ev.preempt = 1;
        ev.ts = 2431445999;                // 2.431445999 s -> 2.431445 (truncated like ftrace)
        ev.ip = 0xffffffff812a0004;        // vfs_read+4 (IBT: after endbr64)
        ev.parent_ip = 0xffffffff812a0437; // inside ksys_read
        return ev;
    }

    std::string render(const Event& ev) {
        std::string out;
        TextFormatter(ksyms_).format(ev, out);
        return out;
    }

    Ksyms ksyms_;
};

TEST_F(TextFormatterTest, FunctionLineMatchesDocsExample) {
    EXPECT_EQ(render(func_event()),
              "             cat-94      [001] d.h1.     2.431445: vfs_read <-ksys_read\n");
}

TEST_F(TextFormatterTest, FunctionLineMatchesFtracePrintf) {
    Event ev = func_event();
    ev.comm = "kworker/u16:3";
    ev.pid = 1234567;
    ev.cpu = 12;
    ev.flags = 0;
    ev.preempt = 0;
    ev.ts = 12345000001000;
    ev.ip = 0xffffffffc0100010;
    char want[256];
    std::snprintf(want, sizeof(want), "%16s-%-7d [%03d] %s %5llu.%06llu: %s <-%s\n",
                  "kworker/u16:3", 1234567, 12, ".....", 12345ULL, 1ULL, "loop_queue_rq",
                  "ksys_read");
    EXPECT_EQ(render(ev), want);
}

TEST_F(TextFormatterTest, IdleTaskAndUnknownAddresses) {
    Event ev = func_event();
    ev.pid = 0;
    ev.comm = "swapper/1";
    ev.ip = 0x1234;
    ev.parent_ip = 0xffffffff90000000; // far beyond the last symbol
    EXPECT_EQ(render(ev), "          <idle>-0       [001] d.h1.     2.431445: 0x00001234 "
                          "<-0xffffffff90000000\n");
}

TEST_F(TextFormatterTest, LostLine) {
    Event ev;
    ev.type = EventType::Lost;
    ev.cpu = 1;
    ev.lost = 1234;
    EXPECT_EQ(render(ev), "CPU:1 [LOST 1234 EVENTS]\n");
}

TEST_F(TextFormatterTest, LostZeroPrintsNothing) {
    // The kernel may emit LOST 0 when a nested writer reported the drop.
    Event ev;
    ev.type = EventType::Lost;
    ev.lost = 0;
    EXPECT_EQ(render(ev), "");
}

TEST_F(TextFormatterTest, AppendsToExistingText) {
    std::string out = "x";
    TextFormatter(ksyms_).format(func_event(), out);
    EXPECT_EQ(out.substr(0, 2), "x ");
    EXPECT_EQ(out.back(), '\n');
}

} // namespace
} // namespace fhook
