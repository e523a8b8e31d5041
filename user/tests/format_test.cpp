#include <nlohmann/json.hpp>
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

TEST_F(TextFormatterTest, LostLineWithSeqRangeAndBreakdown) {
    Event ev;
    ev.type = EventType::Lost;
    ev.cpu = 1;
    ev.lost = 30;
    ev.first_seq = 100;
    ev.last_seq = 129;
    ev.lost_probes = {{1, 10}, {3, 20}};
    EXPECT_EQ(render(ev), "CPU:1 [LOST 30 EVENTS] (seq 100-129; probe 1: 10, probe 3: 20)\n");

    // synthesised by the reader after the last record of the CPU
    ev.first_seq = ev.last_seq = kSeqUnknown;
    ev.lost_probes = {{2, 30}};
    EXPECT_EQ(render(ev), "CPU:1 [LOST 30 EVENTS] (after the last record; probe 2: 30)\n");

    // a range too small for the count (nested drops) is not shown
    ev.first_seq = 5;
    ev.last_seq = 6;
    EXPECT_EQ(render(ev), "CPU:1 [LOST 30 EVENTS] (probe 2: 30)\n");
}

TEST(JsonFormatterLost, SeqRangeAndBreakdown) {
    Ksyms ksyms;
    Event ev;
    ev.type = EventType::Lost;
    ev.ts = 7;
    ev.cpu = 1;
    ev.lost = 30;
    ev.first_seq = 100;
    ev.last_seq = 129;
    ev.lost_probes = {{1, 10}, {3, 20}};
    std::string out;
    JsonFormatter(ksyms).format(ev, out);
    EXPECT_EQ(out, "{\"type\":\"lost\",\"ts\":7,\"cpu\":1,\"lost\":30,\"first_seq\":100,"
                   "\"last_seq\":129,\"probes\":[{\"probe\":1,\"lost\":10},"
                   "{\"probe\":3,\"lost\":20}]}\n");
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

namespace fhook {
namespace {

// The hand-written TextFormatter against the printf format of ftrace's
// function tracer, over random field values (widths overflowing included).
TEST(TextFormatterOracle, MatchesSnprintfForRandomEvents) {
    std::istringstream in("ffffffff812a0000 T vfs_read\nffffffff812a0400 t ksys_read\n");
    const Ksyms ksyms = Ksyms::parse(in);
    TextFormatter fmt(ksyms);
    std::uint64_t seed = 42;
    auto next = [&seed]() {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return seed >> 11;
    };
    const char* const comms[] = {"", "a", "cat", "kworker/u8:1", "exactly15chars_", "<x y>"};
    for (int i = 0; i < 20000; i++) {
        Event ev;
        ev.type = EventType::Function;
        ev.comm = comms[next() % 6];
        const std::uint32_t pids[] = {0, 1, 94, 1234567, 12345678, 4294967295U};
        ev.pid = pids[next() % 6];
        // few distinct values as well as any: the formatter caches the line
        // head (comm, pid, CPU, context) and the seconds between events
        ev.cpu = static_cast<std::uint16_t>(next() % 3 == 0 ? next() % 65536 : next() % 2);
        ev.flags = static_cast<std::uint8_t>(next() % 3 == 0 ? next() : next() % 2);
        ev.preempt = static_cast<std::uint8_t>(next() % 3 == 0 ? next() : 0);
        const std::uint64_t tss[] = {
            0, 999, 2431445999, 99999999999999ULL, next(), ~0ULL, 2431000000 + next() % 1000000000};
        ev.ts = tss[next() % 7];
        ev.ip = next() % 2 ? 0xffffffff812a0004 : next();
        ev.parent_ip = next() % 2 ? 0xffffffff812a0437 : next() % 0x100000;
        std::string got;
        fmt.format(ev, got);

        const auto ctx = context_chars(ev.flags, ev.preempt);
        char buf[256];
        std::snprintf(buf, sizeof(buf), "%16s-%-7u [%03u] %c%c%c%c%c %5llu.%06llu: ",
                      ev.pid == 0 ? "<idle>" : ev.comm.c_str(), ev.pid,
                      static_cast<unsigned>(ev.cpu), ctx[0], ctx[1], ctx[2], ctx[3], ctx[4],
                      static_cast<unsigned long long>(ev.ts / 1000000000),
                      static_cast<unsigned long long>(ev.ts % 1000000000 / 1000));
        std::string want = buf;
        want += ksyms.name_of(ev.ip) + " <-" + ksyms.name_of(ev.parent_ip) + "\n";
        ASSERT_EQ(got, want) << "event " << i;
    }
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

using Json = nlohmann::json;

// Chrome trace JSON: parsed back, every event has ph/ts/pid/tid, tasks are
// named once, a trace-around call is a complete event that starts dur
// before its record, lost records sit on their CPU's track.
TEST(ChromeFormatter, ParsesWithTheExpectedEvents) {
    std::istringstream in("ffffffff812a0000 T vfs_read\n"
                          "ffffffff812a0400 t ksys_read\n");
    const Ksyms ksyms = Ksyms::parse(in);
    ChromeFormatter f(ksyms);
    std::string out;
    f.begin(out);
    Event ev;
    ev.type = EventType::Function;
    ev.comm = "cat";
    ev.pid = 95;
    ev.tgid = 94;
    ev.cpu = 1;
    ev.ip = 0xffffffff812a0000;
    ev.parent_ip = 0xffffffff812a0410;
    ev.ts = 2431445123456;
    f.format(ev, out);
    ev.ts += 1000;
    f.format(ev, out); // the same task: no new metadata
    Event hook = ev;
    hook.type = EventType::Hook;
    hook.action = FHOOK_HOOK_AROUND;
    hook.ts = 2431445200000;
    hook.duration = 50000;
    hook.retval = static_cast<std::uint64_t>(-5);
    f.format(hook, out);
    Event lost;
    lost.type = EventType::Lost;
    lost.cpu = 1;
    lost.lost = 7;
    lost.ts = 2431445300000;
    f.format(lost, out);
    f.end(out);

    const Json doc = Json::parse(out);
    const Json& events = doc.at("traceEvents");
    int meta = 0, instant = 0, complete = 0;
    for (const Json& e : events) {
        ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid")) << e.dump();
        const std::string ph = e.at("ph");
        if (ph == "M") {
            meta++;
            continue;
        }
        ASSERT_TRUE(e.contains("ts")) << e.dump();
        if (ph == "X") {
            complete++;
            EXPECT_EQ(e.at("name"), "vfs_read");
            EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 2431445150.0);
            EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 50.0);
            EXPECT_EQ(e.at("args").at("ret"), -5);
        } else {
            instant++;
        }
    }
    EXPECT_EQ(meta, 4); // process + thread of cat, the lost process + CPU 1
    EXPECT_EQ(complete, 1);
    EXPECT_EQ(instant, 3);
    EXPECT_EQ(events[2].at("name"), "vfs_read");
    EXPECT_EQ(events[2].at("args").at("parent"), "ksys_read");
    EXPECT_EQ(events[2].at("pid"), 94);
    EXPECT_EQ(events[2].at("tid"), 95);
    EXPECT_DOUBLE_EQ(events[2].at("ts").get<double>(), 2431445123.456);
    EXPECT_EQ(events.back().at("pid"), ChromeFormatter::kLostPid);
    EXPECT_EQ(events.back().at("tid"), 1);
    EXPECT_EQ(events.back().at("args").at("lost"), 7);
}

TEST(ChromeFormatter, EmptyTraceIsAValidDocument) {
    std::istringstream in("");
    const Ksyms ksyms = Ksyms::parse(in);
    ChromeFormatter f(ksyms);
    std::string out;
    f.begin(out);
    f.end(out);
    EXPECT_TRUE(Json::parse(out).at("traceEvents").empty());
}

} // namespace
} // namespace fhook
