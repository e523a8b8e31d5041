// Host tests of the wakeup tracer's output: a FHOOK_REC_WAKEUP record
// decoded and printed as the kernel's latency trace (the lines of a real
// wakeup_rt report on the PREEMPT_RT kernel), its JSON, task states, and
// rtla-style top tables.
#include <stdlib.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/wakeup_sink.hpp>
#include <fhook/output/wakeup_format.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {
namespace {

// The report of docs/cli.md: fhook-wakeprog's FIFO 50 thread 163 woken by
// 162 on CPU 0, switched to on CPU 1 from 115, 1,361 us later.
fhook_rec_wakeup sample() {
    fhook_rec_wakeup w{};
    w.hdr.size = sizeof(w);
    w.hdr.type = FHOOK_REC_WAKEUP;
    w.hdr.probe_id = 1;
    w.hdr.ts = 5001361000;
    w.hdr.pid = w.hdr.tgid = 115;
    w.hdr.cpu = 1;
    w.hdr.flags = FHOOK_CTX_IRQS_OFF;
    w.hdr.preempt = 4;
    w.latency = 1361000;
    w.wakeup_ts = 5000000000;
    w.max = 1361000;
    w.nr = 7;
    w.pid = 163;
    w.tgid = 162;
    w.wakeup_cpu = 1;
    w.waker_cpu = 0;
    w.waker_pid = 162;
    w.prio = 49;
    w.waker_prio = 120;
    w.prev_prio = 120;
    w.prev_state = 0;
    w.policy = 1;
    w.rt_priority = 50;
    w.uid = 0;
    w.wflags = FHOOK_WAKEUP_NEW_MAX;
    w.waker_flags = FHOOK_CTX_IRQS_OFF;
    w.waker_preempt = 6;
    std::strcpy(w.comm, "fhook-wakeprog");
    std::strcpy(w.waker_comm, "fhook-wakeprog");
    return w;
}

TEST(Wakeup, DecodedAsRecorded) {
    const fhook_rec_wakeup w = sample();
    const std::optional<Event> ev = decode(&w.hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Wakeup);
    EXPECT_EQ(ev->duration, 1361000u);
    const fhook_rec_wakeup back = wakeup_of(*ev);
    EXPECT_EQ(std::memcmp(&back, &w, sizeof(w)), 0);
    fhook_rec_wakeup shorter = w;
    shorter.hdr.size = sizeof(w) - 8;
    EXPECT_THROW(decode(&shorter.hdr), Error);
}

// The record as the module writes it with both stacks: the struct, the
// switch's trailer (2 ips, 2), then the waker's (1 ip, 1).
TEST(Wakeup, BothStacksDecoded) {
    fhook_rec_wakeup w = sample();
    w.wflags |= FHOOK_WAKEUP_SWITCH_STACK;
    w.hdr.flags |= FHOOK_CTX_STACK;
    const std::uint64_t trailers[] = {0xffffffff81000200, 0xffffffff81000300, 2, 0xffffffff81000010,
                                      1};
    w.hdr.size = sizeof(w) + sizeof(trailers);
    std::vector<std::uint8_t> rec(w.hdr.size);
    std::memcpy(rec.data(), &w, sizeof(w));
    std::memcpy(rec.data() + sizeof(w), trailers, sizeof(trailers));
    const auto* hdr = reinterpret_cast<const fhook_rec*>(rec.data());
    const std::optional<Event> ev = decode(hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->stack, (std::vector<std::uint64_t>{0xffffffff81000010}));
    EXPECT_EQ(wakeup_switch_stack(*ev),
              (std::vector<std::uint64_t>{0xffffffff81000200, 0xffffffff81000300}));
    EXPECT_EQ(wakeup_of(*ev).latency, 1361000u);
    // a waker's trailer of 0 ips is a trailer too
    const std::uint64_t no_waker[] = {0xffffffff81000200, 1, 0};
    w.hdr.size = sizeof(w) + sizeof(no_waker);
    std::memcpy(rec.data(), &w, sizeof(w));
    std::memcpy(rec.data() + sizeof(w), no_waker, sizeof(no_waker));
    const std::optional<Event> ev2 = decode(hdr);
    ASSERT_TRUE(ev2);
    EXPECT_TRUE(ev2->stack.empty());
    EXPECT_EQ(wakeup_switch_stack(*ev2), (std::vector<std::uint64_t>{0xffffffff81000200}));
    // a switch trailer that claims more than the record holds
    const std::uint64_t forged[] = {0xffffffff81000200, 9, 0};
    std::memcpy(rec.data() + sizeof(w), forged, sizeof(forged));
    EXPECT_THROW(decode(hdr), Error);
    // without the flag, nothing after the struct is a switch stack
    const fhook_rec_wakeup plain = sample();
    EXPECT_TRUE(wakeup_switch_stack(*decode(&plain.hdr)).empty());
}

TEST(Wakeup, KernelLatencyTrace) {
    const LatencyTraceHost host{"wakeup_rt", "6.12.118+deb12-rt-amd64", "preempt_rt", 2};
    const std::string out =
        format_wakeup_trace(WakeupReport{sample(), "fhook-workload", {}, {}, {}}, Ksyms(), host);
    EXPECT_NE(out.find("# tracer: wakeup_rt\n#\n# wakeup_rt latency trace v1.1.5 on "
                       "6.12.118+deb12-rt-amd64\n"),
              std::string::npos);
    EXPECT_NE(out.find("# latency: 1361 us, #2/2, CPU#1 | (M:preempt_rt VP:0, KP:0, SP:0 HP:0 "
                       "#P:2)\n"),
              std::string::npos);
    EXPECT_NE(out.find("#    | task: fhook-wakeprog-163 (uid:0 nice:0 policy:1 rt_prio:50)\n"),
              std::string::npos);
    // the wakeup: waker, CPU 0, "d..6.", 0 us, '#' (1,361 us to the next line)
    EXPECT_NE(out.find("fhook-wa-162       0d..6.    0us#:      162:120:R   + [001]     163: "
                       "49:R fhook-wakeprog\n"),
              std::string::npos);
    // the switch: the task switched out, CPU 1, "d..4."
    EXPECT_NE(out.find("fhook-wo-115       1d..4. 1361us :      115:120:R ==> [001]     163: "
                       "49:R fhook-wakeprog\n"),
              std::string::npos);
}

TEST(Wakeup, WakerStack) {
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T try_to_wake_up\n"
                                     "ffffffff81000100 T pipe_write\n");
    const std::vector<std::uint64_t> stack = {0xffffffff81000010, 0xffffffff81000120};
    const LatencyTraceHost host{"wakeup_rt", "6.12.118+deb12-rt-amd64", "preempt_rt", 2};
    const std::string out =
        format_wakeup_trace(WakeupReport{sample(), "fhook-workload", stack, {}, {}}, ksyms, host);
    EXPECT_NE(out.find("# latency: 1361 us, #3/3, CPU#1"), std::string::npos) << out;
    // after the wakeup line, in the waker's context, before the switch
    EXPECT_NE(out.find("fhook-wa-162       0d..6.    0us#: <stack trace>\n => try_to_wake_up\n => "
                       "pipe_write\nfhook-wo-115"),
              std::string::npos)
        << out;
    const std::string j = format_wakeup_json(
        WakeupReport{sample(), "fhook-workload", stack, {}, {}}, ksyms, "wakeup_rt");
    EXPECT_NE(j.find(",\"waker_stack\":[\"try_to_wake_up\",\"pipe_write\"]}"), std::string::npos)
        << j;
}

TEST(Wakeup, SwitchStack) {
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T __schedule\n"
                                     "ffffffff81000100 T schedule\n");
    const std::vector<std::uint64_t> at_switch = {0xffffffff81000010, 0xffffffff81000120};
    const LatencyTraceHost host{"wakeup_rt", "6.12.118+deb12-rt-amd64", "preempt_rt", 2};
    const WakeupReport r{sample(), "fhook-workload", {}, {}, at_switch};
    const std::string out = format_wakeup_trace(r, ksyms, host);
    EXPECT_NE(out.find("# latency: 1361 us, #3/3, CPU#1"), std::string::npos) << out;
    // last, after the switch line, in the switch's context
    EXPECT_TRUE(out.ends_with(
        "fhook-wakeprog\nfhook-wo-115       1d..4. 1361us : <stack trace>\n => __schedule\n => "
        "schedule\n"))
        << out;
    const std::string j = format_wakeup_json(r, ksyms, "wakeup_rt");
    EXPECT_NE(j.find(",\"switch_stack\":[\"__schedule\",\"schedule\"]}"), std::string::npos) << j;
}

TEST(Wakeup, Json) {
    const std::string j = format_wakeup_json(WakeupReport{sample(), "fhook-workload", {}, {}, {}},
                                             Ksyms(), "wakeup_rt");
    EXPECT_EQ(j,
              "{\"tracer\":\"wakeup_rt\",\"latency_ns\":1361000,\"new_max\":true,\"max_ns\":"
              "1361000,\"nr\":7,\"wakeup_ts\":5000000000,\"switch_ts\":5001361000,\"cpu\":1,"
              "\"wakeup_cpu\":1,\"task\":{\"comm\":\"fhook-wakeprog\",\"pid\":163,\"prio\":49,"
              "\"tgid\":162,\"policy\":1,\"rt_priority\":50,\"nice\":0,\"uid\":0,\"forked\":"
              "false},\"waker\":{\"comm\":\"fhook-wakeprog\",\"pid\":162,\"prio\":120,\"cpu\":0},"
              "\"prev\":{\"comm\":\"fhook-workload\",\"pid\":115,\"prio\":120,\"state\":\"R\"}}");
}

TEST(Wakeup, TaskStates) {
    EXPECT_EQ(task_state_char(0x0000), 'R');
    EXPECT_EQ(task_state_char(0x0001), 'S');
    EXPECT_EQ(task_state_char(0x0002), 'D');
    EXPECT_EQ(task_state_char(0x0004), 'T');
    EXPECT_EQ(task_state_char(0x0008), 't');
    EXPECT_EQ(task_state_char(0x0010), 'X');
    EXPECT_EQ(task_state_char(0x0020), 'Z');
    EXPECT_EQ(task_state_char(0x0040), 'P');
    EXPECT_EQ(task_state_char(0x0402), 'I'); // TASK_IDLE
    EXPECT_EQ(task_state_char(0x1000), 'D'); // TASK_RTLOCK_WAIT: as the kernel reports it
    EXPECT_EQ(task_state_char(0x8000), 'D'); // TASK_FROZEN
    EXPECT_EQ(task_state_index(0x0402), 8u);
}

TEST(Wakeup, TopTable) {
    LatencyHist cpu1;
    cpu1.count = 299;
    cpu1.sum_ns = 24480563;
    cpu1.min_ns = 34737;
    cpu1.max_ns = 1072327;
    const std::vector<CpuLatency> rows{{0, LatencyHist{}}, {1, cpu1}, {-1, cpu1}};
    EXPECT_EQ(format_latency_top(rows, "wakeup_rt latency", LatencyUnit::Usecs),
              "wakeup_rt latency (us)\n"
              "CPU          COUNT          MIN          AVG          MAX\n"
              "1              299       34.737       81.874     1072.327\n"
              "ALL            299       34.737       81.874     1072.327\n");
    EXPECT_EQ(format_latency_top_json(rows, "t"),
              "{\"title\":\"t\",\"cpus\":[{\"count\":299,\"min_ns\":34737,\"avg_ns\":81874,"
              "\"max_ns\":1072327,\"cpu\":1}],\"all\":{\"count\":299,\"min_ns\":34737,\"avg_ns\":"
              "81874,\"max_ns\":1072327}}");
    const std::vector<CpuLatency> none{{0, LatencyHist{}}, {-1, LatencyHist{}}};
    EXPECT_NE(format_latency_top(none, "wakeup latency", LatencyUnit::Nsecs).find("(no wakeups)"),
              std::string::npos);
}

// A function call on CPU 1 by the task switched out, `us` after the wakeup.
fhook_rec_func call_at(std::uint64_t us, std::uint64_t ip) {
    fhook_rec_func f{};
    f.hdr.size = sizeof(f);
    f.hdr.type = FHOOK_REC_FUNC;
    f.hdr.probe_id = 2;
    f.hdr.ts = sample().wakeup_ts + us * 1000;
    f.hdr.pid = f.hdr.tgid = 115;
    f.hdr.cpu = 1;
    f.hdr.flags = FHOOK_CTX_IRQS_OFF;
    f.hdr.preempt = 2;
    f.ip = ip;
    f.parent_ip = 0xffffffff81000120;
    return f;
}

const char* const kCallSyms = "ffffffff81000000 T try_to_wake_up\n"
                              "ffffffff81000100 T pipe_write\n"
                              "ffffffff81000200 T schedule\n";

TEST(Wakeup, FunctionCalls) {
    const Ksyms ksyms = Ksyms::parse(kCallSyms);
    const LatencyTraceHost host{"wakeup_rt", "6.12.118+deb12-rt-amd64", "preempt_rt", 2};
    WakeupReport r{sample(), "fhook-workload", {}, {}, {}};
    r.calls.push_back({r.rec.wakeup_ts + 5000, 0xffffffff81000200, 0xffffffff81000120, 115, 1,
                       FHOOK_CTX_IRQS_OFF, 2, "fhook-workload"});
    const std::string out = format_wakeup_trace(r, ksyms, host);
    EXPECT_NE(out.find("# latency: 1361 us, #3/3, CPU#1"), std::string::npos) << out;
    // the wakeup's delay mark is to the call (5 us: none), the call's to the switch
    EXPECT_NE(out.find("fhook-wa-162       0d..6.    0us : "), std::string::npos) << out;
    EXPECT_NE(out.find("fhook-wo-115       1d..2.    5us#: schedule <-pipe_write\n"
                       "fhook-wo-115       1d..4. 1361us :"),
              std::string::npos)
        << out;
    const std::string j = format_wakeup_json(r, ksyms, "wakeup_rt");
    EXPECT_NE(j.find(",\"functions\":[{\"ts\":5000005000,\"cpu\":1,\"pid\":115,\"comm\":"
                     "\"fhook-workload\",\"function\":\"schedule\",\"parent\":\"pipe_write\"}]}"),
              std::string::npos)
        << j;
}

// The sink takes the calls between the wakeup and the switch, leaves the
// ones before (a wakeup not reported), keeps later ones for the next
// report, and writes only what it reported to the file.
TEST(Wakeup, SinkAssemblesReportsAndWritesThem) {
    char path[] = "/tmp/fhook-wakeup-XXXXXX";
    UniqueFd fd(::mkstemp(path));
    ASSERT_TRUE(fd);
    const Ksyms ksyms = Ksyms::parse(kCallSyms);
    RecordWriter::Info info;
    info.nr_cpus = 2;
    info.kernel_release = "6.12.118+deb12-rt-amd64";
    info.preempt_model = "preempt_rt";
    info.probes = {{1, "wakeup_rt"}, {2, "schedule"}};
    std::vector<WakeupReport> reports;
    {
        FileSink file(std::move(fd), path, info, ksyms);
        WakeupSink sink([&](const WakeupReport& r) { reports.push_back(r); }, &file);
        fhook_rec_comm comm{};
        comm.hdr.size = sizeof(comm);
        comm.hdr.type = FHOOK_REC_COMM;
        comm.hdr.pid = comm.hdr.tgid = 115;
        comm.hdr.ts = sample().wakeup_ts - 1000000;
        std::strcpy(comm.comm, "fhook-workload");
        sink.on_record(&comm.hdr);
        const fhook_rec_func before = call_at(0, 0xffffffff81000000);
        fhook_rec_func early = before;
        early.hdr.ts -= 1000; // a microsecond before the wakeup
        fhook_rec_func within = call_at(5, 0xffffffff81000200);
        fhook_rec_wakeup w = sample();
        fhook_rec_func after = call_at(1400, 0xffffffff81000200);
        for (const fhook_rec* rec : {&early.hdr, &within.hdr, &after.hdr, &w.hdr}) {
            sink.on_record(rec);
        }
        ASSERT_EQ(sink.reports(), 1u);
        sink.finish(Stats{}, {{1, {}, "wakeup_rt"}, {2, {}, "schedule"}});
    }
    ASSERT_EQ(reports.size(), 1u);
    ASSERT_EQ(reports[0].calls.size(), 1u);
    EXPECT_EQ(reports[0].calls[0].ip, 0xffffffff81000200u);
    EXPECT_EQ(reports[0].calls[0].comm, "fhook-workload");
    EXPECT_EQ(reports[0].prev_comm, "fhook-workload");
    // the file: the task's name, the call in the report and the report
    const RecordFile f = RecordFile::open(path);
    EXPECT_EQ(f.info("preempt_model"), "preempt_rt");
    std::vector<std::uint16_t> types;
    f.for_each_record([&](const fhook_rec* rec) { types.push_back(rec->type); });
    EXPECT_EQ(types,
              (std::vector<std::uint16_t>{FHOOK_REC_COMM, FHOOK_REC_FUNC, FHOOK_REC_WAKEUP}));
    ::unlink(path);
}

} // namespace
} // namespace fhook
