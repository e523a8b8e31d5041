#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <fhook/output/format.hpp>
#include <fhook/output/graph_format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/ksyms.hpp>

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

// A tracepoint's record counts the tracepoint's own preempt_disable:
// tracefs prints trace events without it, syscall events with it.
TEST(ContextChars, TracepointPreemptAsTracefsPrintsIt) {
    KprobeDef exec;
    exec.is_tracepoint = true;
    exec.group = "sched";
    exec.event = "sched_process_exec";
    KprobeDef openat = exec;
    openat.group = "syscalls";
    openat.event = "sys_enter_openat";
    Event ev;
    ev.type = EventType::Tracepoint;
    ev.preempt = 0x21; // migrate-disable 2, preempt 1
    EXPECT_EQ(shown_preempt(ev, &exec), 0x20);
    EXPECT_EQ(shown_preempt(ev, &openat), 0x21);
    EXPECT_EQ(shown_preempt(ev, nullptr), 0x21);
    ev.preempt = 0x20;
    EXPECT_EQ(shown_preempt(ev, &exec), 0x20); // nothing to take off
    ev.type = EventType::Kprobe;
    ev.preempt = 0x01;
    EXPECT_EQ(shown_preempt(ev, &exec), 0x01);
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

// OTLP logs: a line per batch of up to 256 events, each a LogRecord whose
// body is the text line, attributes the NDJSON fields, time the stamp on
// the realtime clock; lost records WARN.
TEST_F(TextFormatterTest, OtlpLogsCarryTheTextLineAndTheFields) {
    OtlpFormatter otlp(ksyms_, 1'000'000'000'000);
    std::string out;
    for (int i = 0; i < 300; i++) {
        otlp.format(func_event(), out);
    }
    Event lost;
    lost.type = EventType::Lost;
    lost.ts = 7;
    lost.cpu = 1;
    lost.lost = 30;
    otlp.format(lost, out);
    otlp.end(out);
    std::istringstream lines(out);
    std::string line;
    std::vector<nlohmann::json> docs;
    while (std::getline(lines, line)) {
        docs.push_back(nlohmann::json::parse(line));
    }
    ASSERT_EQ(docs.size(), 2u);
    const auto& rl = docs[0]["resourceLogs"][0];
    EXPECT_EQ(rl["resource"]["attributes"][0]["value"]["stringValue"], "fhook");
    EXPECT_EQ(rl["scopeLogs"][0]["scope"]["name"], "fhook");
    const auto& records = rl["scopeLogs"][0]["logRecords"];
    ASSERT_EQ(records.size(), 256u);
    EXPECT_EQ(docs[1]["resourceLogs"][0]["scopeLogs"][0]["logRecords"].size(), 45u);
    const auto& r = records[0];
    EXPECT_EQ(r["timeUnixNano"], "1002431445999");
    EXPECT_EQ(r["severityText"], "INFO");
    EXPECT_EQ(r["body"]["stringValue"],
              "             cat-94      [001] d.h1.     2.431445: vfs_read <-ksys_read");
    std::map<std::string, nlohmann::json> attrs;
    for (const auto& a : r["attributes"]) {
        attrs[a["key"]] = a["value"];
    }
    EXPECT_EQ(attrs["fhook.func"]["stringValue"], "vfs_read");
    EXPECT_EQ(attrs["fhook.pid"]["intValue"], "94");
    EXPECT_EQ(attrs["fhook.comm"]["stringValue"], "cat");
    const auto& last = docs[1]["resourceLogs"][0]["scopeLogs"][0]["logRecords"].back();
    EXPECT_EQ(last["severityText"], "WARN");
    EXPECT_EQ(last["severityNumber"], 13);
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

// Hex fields of every size as the kernel prints them ("0x%x" of the
// value): values of every digit count, zero and all ones among them.
TEST(TextFormatterOracle, HexFieldsMatchSnprintf) {
    std::istringstream in("ffffffff812a0000 T vfs_read\n");
    const Ksyms ksyms = Ksyms::parse(in);
    KprobeDef def;
    def.event = "p_vfs_read_0";
    unsigned offset = 0;
    for (unsigned size : {1U, 2U, 4U, 8U}) {
        FetchType t;
        t.kind = FetchType::Kind::Hex;
        t.size = size;
        ProbeField f;
        f.name = "x" + std::to_string(size * 8);
        f.type = t;
        f.offset = static_cast<std::uint16_t>(offset);
        f.store = static_cast<std::uint32_t>(def.fields.size());
        def.fields.push_back(f);
        offset += size;
    }
    ProbeTable probes;
    probes.add(1, def);
    TextFormatter fmt(ksyms);
    fmt.set_probes(&probes);
    std::uint64_t seed = 7;
    for (int i = 0; i < 5000; i++) {
        Event ev;
        ev.type = EventType::Kprobe;
        ev.probe_id = 1;
        ev.comm = "cat";
        ev.pid = 94;
        ev.ip = 0xffffffff812a0000;
        std::string want = "p_vfs_read_0: (vfs_read+0x0/0x0)";
        for (unsigned size : {1U, 2U, 4U, 8U}) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            // a random value cut to a random number of bits
            const unsigned bits = static_cast<unsigned>(seed >> 58); // 0..63
            std::uint64_t v = (seed >> 3) & (bits == 0 ? 0 : ~std::uint64_t{0} >> (64 - bits));
            if (i == 1) {
                v = ~std::uint64_t{0};
            }
            if (size < 8) {
                v &= (std::uint64_t{1} << (size * 8)) - 1;
            }
            for (unsigned b = 0; b < size; b++) {
                ev.data.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
            }
            char buf[32];
            std::snprintf(buf, sizeof(buf), " x%u=0x%llx", size * 8,
                          static_cast<unsigned long long>(v));
            want += buf;
        }
        std::string got;
        fmt.format(ev, got);
        const std::size_t at = got.find("p_vfs_read_0");
        ASSERT_NE(at, std::string::npos) << got;
        ASSERT_EQ(got.substr(at), want + "\n") << "event " << i;
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

// The function_graph format: leaves where a CPU's next record is the
// call's own return, "{" otherwise, "}" closing the entry printed at that
// depth, "} /* func */" for a return whose entry is not the one open (here
// after a loss), a task switch block, duration marks, retval, unfinished
// calls at the end.
TEST(GraphFormatter, DrawsTheKernelsTree) {
    std::istringstream in("ffffffff81000000 T vfs_read\n"
                          "ffffffff81000100 T rw_verify_area\n"
                          "ffffffff81000200 T schedule\n");
    const Ksyms ksyms = Ksyms::parse(in);
    GraphFormatOptions view;
    view.nr_cpus = 2;
    GraphFormatter f(ksyms, view);
    std::string out;
    f.begin(out);
    auto ev = [](EventType type, std::uint64_t ip, std::uint32_t depth, std::uint64_t ts,
                 std::uint64_t calltime = 0, std::uint32_t pid = 42, std::uint16_t cpu = 0) {
        Event e;
        e.type = type;
        e.ip = ip;
        e.depth = depth;
        e.ts = ts;
        e.calltime = calltime;
        e.duration = calltime ? ts - calltime : 0;
        e.pid = pid;
        e.tgid = pid;
        e.comm = pid == 42 ? "cat" : "sh";
        e.cpu = cpu;
        return e;
    };
    const std::uint64_t read = 0xffffffff81000000, verify = 0xffffffff81000100,
                        sched = 0xffffffff81000200;
    f.format(ev(EventType::GraphEntry, read, 0, 1000), out);
    f.format(ev(EventType::GraphEntry, verify, 1, 1100), out);
    // another CPU's line waits behind CPU 0's undecided entry (and is
    // printed after rw_verify_area's, which came first)
    f.format(ev(EventType::GraphEntry, sched, 0, 1150, 0, 7, 1), out);
    f.format(ev(EventType::GraphReturn, verify, 1, 1581, 1100), out);
    f.format(ev(EventType::GraphReturn, read, 0, 13905, 1000), out);
    f.format(ev(EventType::GraphEntry, read, 0, 20000, 0, 7, 0), out);
    f.format(ev(EventType::GraphReturn, read, 0, 20500, 20000, 7, 0), out);
    Event lost;
    lost.type = EventType::Lost;
    lost.cpu = 0;
    lost.lost = 3;
    f.format(lost, out);
    f.format(ev(EventType::GraphReturn, read, 0, 2000000, 300, 7, 0), out);
    f.end(out);
    EXPECT_EQ(out, "# tracer: function_graph\n"
                   "#\n"
                   "# CPU  DURATION                  FUNCTION CALLS\n"
                   "# |     |   |                     |   |   |   |\n"
                   " 0)               |  vfs_read() {\n"
                   " 0)   0.481 us    |    rw_verify_area();\n"
                   " 1)               |  schedule() {\n"
                   " 0) + 12.905 us   |  }\n"
                   " ------------------------------------------\n"
                   " 0)     cat-42     =>      sh-7     \n"
                   " ------------------------------------------\n"
                   "\n"
                   " 0)   0.500 us    |  vfs_read();\n"
                   "CPU:0 [LOST 3 EVENTS]\n"
                   " 0) # 1999.700 us |  } /* vfs_read */\n"
                   " 1)               |  } /* schedule unfinished */\n");
}

TEST(GraphFormatter, RetvalProcAndLongDurations) {
    std::istringstream in("ffffffff81000000 T vfs_read\n");
    const Ksyms ksyms = Ksyms::parse(in);
    GraphFormatOptions view;
    view.nr_cpus = 12;
    view.proc = true;
    view.retval = true;
    GraphFormatter f(ksyms, view);
    std::string out;
    Event e;
    e.type = EventType::GraphEntry;
    e.ip = 0xffffffff81000000;
    e.pid = 1234;
    e.comm = "kworker/u16:3";
    e.cpu = 3;
    e.ts = 10;
    f.format(e, out);
    Event r = e;
    r.type = EventType::GraphReturn;
    r.calltime = 10;
    r.ts = 10 + 123456789;
    r.duration = 123456789;
    r.retval = static_cast<std::uint64_t>(-22);
    f.format(r, out);
    e.ts = r.ts + 1;
    f.format(e, out);
    Event in_call = e;
    in_call.type = EventType::Lost;
    in_call.lost = 0;
    r.calltime = e.ts;
    r.ts = e.ts + 1234567;
    r.duration = 1234567;
    r.retval = 0xffff888003c5e000;
    f.format(r, out);
    f.end(out);
    EXPECT_EQ(out,
              "  3)  kworker-1234  | @ 123456.7 us |  vfs_read(); /* = -22 */\n"
              "  3)  kworker-1234  | # 1234.567 us |  vfs_read(); /* = 0xffff888003c5e000 */\n");
}

} // namespace
} // namespace fhook

#include <fhook/engine/sinks.hpp>

#include "fake_system.hpp"
#include "records.hpp"

namespace fhook {
namespace {

// The text formatter as a formatter without the FN path: PrintSink gives
// it Events.
class EventsOnly final : public Formatter {
public:
    explicit EventsOnly(const Ksyms& ksyms) : text_(ksyms) {}
    void format(const Event& ev, std::string& out) override { text_.format(ev, out); }

private:
    TextFormatter text_;
};

// PrintSink formats FN records without an Event (Decoder::decode_fn(),
// TextFormatter::format_fn()): the same text as the Event path, over a
// random stream of FN records (every context bit, tasks named, renamed
// and never named, pid 0, CPUs, seconds, calls) with COMM, FUNC, LOST and
// FN_KPROBE records (a kprobe's events, not the FN path's) between them,
// FN records with a stack flag among them.
TEST(PrintSinkFn, SameTextAsTheEventPath) {
    std::istringstream in("ffffffff81000000 T vfs_read\nffffffff81000400 t ksys_read\n"
                          "ffffffff81000800 t do_syscall_64\n");
    const Ksyms ksyms = Ksyms::parse(in);
    const ProbeTable probes;
    test::Capture fast_out;
    test::Capture events_out;
    PrintSink fast(fast_out.fd(), ksyms, OutputFormat::Text, probes);
    PrintSink events(events_out.fd(), std::make_unique<EventsOnly>(ksyms), probes);
    std::uint64_t seed = 7;
    auto next = [&seed]() {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        return seed >> 11;
    };
    const char* const comms[] = {"cat", "kworker/u8:1", "exactly15chars_", "a"};
    const std::uint64_t ips[] = {0xffffffff81000004, 0xffffffff81000437, 0xffffffff81000810,
                                 0xffffffff80000000};
    std::uint64_t ts = 999000000;
    std::size_t fn_records = 0;
    for (int i = 0; i < 20000; i++) {
        const auto pid = static_cast<std::uint32_t>(next() % 8 == 0 ? 0 : 90 + next() % 6);
        const auto cpu = static_cast<std::uint16_t>(next() % 4 == 0 ? next() % 3 : 0);
        ts += next() % 8 == 0 ? next() % 3000000000 : next() % 2000;
        const int kind = static_cast<int>(next() % 16);
        std::vector<std::uint64_t> words;
        const auto put = [&words](const auto& rec) {
            words.assign((sizeof(rec) + 7) / 8, 0);
            std::memcpy(words.data(), &rec, sizeof(rec));
        };
        if (kind == 0 && pid != 95) { // pid 95 is never named
            put(test::comm_rec(pid, comms[next() % 4], cpu));
        } else if (kind == 1) {
            put(test::func_rec(ts, cpu, ips[next() % 4], ips[next() % 4], pid));
        } else if (kind == 2) {
            put(test::lost_rec(ts, cpu, next() % 3));
        } else if (kind == 3 && next() % 2 == 0) {
            // a kprobe's hit in FN's layout: an Event of the general path
            words = test::fn_kprobe_rec(ts, cpu, ips[next() % 4], ips[next() % 4], {next()}, pid,
                                        static_cast<std::uint32_t>(next() % 8) << 24)
                        .words;
        } else {
            // the context: a preempt depth (over 15 too), any flag, any
            // irq context, bottom halves off
            std::uint32_t ctx = static_cast<std::uint32_t>(next() % 4 == 0 ? next() % 300 : 0);
            ctx |= next() % 3 == 0 ? static_cast<std::uint32_t>(next()) & 0x0fffff00U : 0;
            ctx |= static_cast<std::uint32_t>(next() % 8) << 24;
            put(test::fn_rec(ts, cpu, ips[next() % 4], ips[next() % 4], pid, ctx));
            fn_records++;
        }
        const auto* rec = reinterpret_cast<const fhook_rec*>(words.data());
        fast.on_record(rec);
        events.on_record(rec);
    }
    // a task renamed between two calls of the same CPU and context
    const auto both = [&](const auto& rec) {
        fast.on_record(reinterpret_cast<const fhook_rec*>(&rec));
        events.on_record(reinterpret_cast<const fhook_rec*>(&rec));
    };
    both(test::comm_rec(91, "before", 0));
    both(test::fn_rec(ts + 1, 0, ips[0], ips[1], 91));
    both(test::comm_rec(91, "after", 0));
    both(test::fn_rec(ts + 2, 0, ips[0], ips[1], 91));
    fast.flush();
    events.flush();
    const std::string got = fast_out.text();
    EXPECT_NE(got.find("after-91"), std::string::npos);
    EXPECT_NE(got.find("probe1: (vfs_read+0x4/0x400)"), std::string::npos);
    EXPECT_GT(fn_records, 15000u);
    EXPECT_GT(std::count(got.begin(), got.end(), '\n'), 17000);
    ASSERT_EQ(got, events_out.text());
}

} // namespace
} // namespace fhook
