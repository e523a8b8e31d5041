// The timerlat and osnoise summaries (rtla's top and hist figures) and
// their text and JSON forms, the hwlat line, from records whose figures
// are known.
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fhook/core/osnoise.hpp>
#include <fhook/core/timerlat.hpp>
#include <fhook/output/hwlat_format.hpp>
#include <fhook/output/irqsoff_format.hpp>
#include <fhook/output/osnoise_format.hpp>
#include <fhook/output/timerlat_format.hpp>

namespace fhook {
namespace {

fhook_rec_timerlat measure(unsigned cpu, std::uint32_t context, std::uint64_t ns,
                           std::uint64_t seq = 1) {
    fhook_rec_timerlat r{};
    r.hdr.type = FHOOK_REC_TIMERLAT;
    r.hdr.size = sizeof(r);
    r.hdr.cpu = cpu;
    r.hdr.pid = 42;
    r.hdr.ts = 54029328123ULL;
    r.hdr.flags = FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ;
    r.hdr.preempt = 1;
    r.latency = ns;
    r.seqnum = seq;
    r.context = context;
    return r;
}

TEST(Timerlat, SummaryPerCpuAndAll) {
    TimerlatSummary s(1000, 10);
    s.add(measure(0, FHOOK_TIMERLAT_IRQ, 900));
    s.add(measure(0, FHOOK_TIMERLAT_THREAD, 4200));
    s.add(measure(0, FHOOK_TIMERLAT_IRQ, 2100));
    s.add(measure(1, FHOOK_TIMERLAT_IRQ, 15000)); // past 10 buckets of 1 us
    ASSERT_EQ(s.cpus().size(), 2u);
    const TimerlatCpu& c0 = s.cpus().at(0);
    EXPECT_EQ(c0.irq.count, 2u);
    EXPECT_EQ(c0.irq.min_ns, 900u);
    EXPECT_EQ(c0.irq.max_ns, 2100u);
    EXPECT_EQ(c0.irq.cur_ns, 2100u);
    EXPECT_EQ(c0.irq.avg_ns(), 1500u);
    EXPECT_EQ(c0.irq.buckets[0], 1u);
    EXPECT_EQ(c0.irq.buckets[2], 1u);
    EXPECT_EQ(c0.thread.count, 1u);
    EXPECT_EQ(c0.thread.buckets[4], 1u);
    EXPECT_EQ(s.cpus().at(1).irq.over, 1u);
    const TimerlatCpu all = s.all();
    EXPECT_EQ(all.irq.count, 3u);
    EXPECT_EQ(all.irq.min_ns, 900u);
    EXPECT_EQ(all.irq.max_ns, 15000u);
    EXPECT_EQ(all.irq.over, 1u);
    EXPECT_EQ(all.thread.count, 1u);
}

TEST(Timerlat, TraceLineAsTheKernelPrintsIt) {
    const std::string line = format_timerlat_line(measure(3, FHOOK_TIMERLAT_IRQ, 932, 7), "<idle>");
    EXPECT_EQ(line, "          <idle>-42      [003] d.h1.    54.029328: #7     context    irq "
                    "timer_latency       932 ns\n");
    fhook_rec_timerlat idle = measure(0, FHOOK_TIMERLAT_IRQ, 1);
    idle.hdr.pid = 0;
    EXPECT_EQ(format_timerlat_line(idle, "swapper/0").substr(0, 25), "          <idle>-0       ");
    fhook_rec_timerlat stop = measure(0, FHOOK_TIMERLAT_THREAD, 11700);
    stop.tflags = FHOOK_TIMERLAT_STOPPED;
    EXPECT_NE(format_timerlat_line(stop, "fhook-tlat/0")
                  .find("context thread timer_latency     "
                        "11700 ns (stop)"),
              std::string::npos);
    const auto j = nlohmann::json::parse(format_timerlat_json(stop, "fhook-tlat/0"));
    EXPECT_EQ(j["context"], "thread");
    EXPECT_EQ(j["latency_ns"], 11700);
    EXPECT_EQ(j["stopped"], true);
}

TEST(Timerlat, TopAndHistTables) {
    TimerlatSummary s(1000, 256);
    EXPECT_NE(format_timerlat_top(s, LatencyUnit::Usecs).find("(no measures)"), std::string::npos);
    s.add(measure(0, FHOOK_TIMERLAT_IRQ, 1500));
    s.add(measure(0, FHOOK_TIMERLAT_THREAD, 5250));
    const std::string top = format_timerlat_top(s, LatencyUnit::Usecs);
    EXPECT_NE(top.find("IRQ Timer Latency (us)"), std::string::npos) << top;
    EXPECT_NE(top.find("  0 #1         |     1.500     1.500     1.500     1.500 |     5.250     "
                       "5.250     5.250     5.250 |"),
              std::string::npos)
        << top;
    EXPECT_NE(top.find("ALL #1"), std::string::npos) << top;
    const std::string hist = format_timerlat_hist(s, LatencyUnit::Usecs);
    EXPECT_NE(hist.find("IRQ-000      Thr-000"), std::string::npos) << hist;
    EXPECT_NE(hist.find("# Time unit is us, buckets of 1\n"), std::string::npos) << hist;
    EXPECT_NE(hist.find("\n1                 1            0\n"), std::string::npos) << hist;
    EXPECT_NE(hist.find("\n5                 0            1\n"), std::string::npos) << hist;
    const auto j = nlohmann::json::parse(format_timerlat_hist_json(s));
    EXPECT_EQ(j["cpus"][0]["thread"]["buckets"][0]["lo_ns"], 5000);
    EXPECT_EQ(j["all"]["irq"]["max_ns"], 1500);
}

TEST(Hwlat, LineAsTheKernelPrintsIt) {
    fhook_rec_hwlat r{};
    r.hdr.type = FHOOK_REC_HWLAT;
    r.hdr.size = sizeof(r);
    r.hdr.cpu = 1;
    r.hdr.pid = 77;
    r.hdr.ts = 1234567890123ULL;
    r.hdr.flags = FHOOK_CTX_IRQS_OFF;
    r.inner_ns = 19999;
    r.outer_ns = 26001;
    r.seqnum = 1;
    r.count = 6;
    EXPECT_EQ(
        format_hwlat_line(r, "fhook-hwlat"),
        "     fhook-hwlat-77      [001] d....  1234.567890: #1     inner/outer(us):   19/26    "
        "ts:1234.567890123 count:6\n");
    r.nmi_count = 2;
    r.nmi_total_ns = 7400;
    EXPECT_NE(format_hwlat_line(r, "x").find("count:6 nmi-total:7 nmi-count:2\n"),
              std::string::npos);
    const auto j = nlohmann::json::parse(format_hwlat_json(r));
    EXPECT_EQ(j["outer_ns"], 26001);
    EXPECT_EQ(j["nmi_count"], 2);
}

fhook_rec_osnoise period(unsigned cpu, std::uint64_t runtime, std::uint64_t noise,
                         std::uint64_t single, std::uint32_t hw, std::uint32_t irq) {
    fhook_rec_osnoise r{};
    r.hdr.type = FHOOK_REC_OSNOISE;
    r.hdr.size = sizeof(r);
    r.hdr.cpu = cpu;
    r.hdr.pid = 90;
    r.hdr.ts = 81637220456ULL;
    r.runtime_ns = runtime;
    r.noise_ns = noise;
    r.max_single_ns = single;
    r.seqnum = 1;
    r.hw_count = hw;
    r.irq_count = irq;
    r.softirq_count = 18;
    r.thread_count = 1;
    return r;
}

fhook_rec_osnoise_noise gap(unsigned cpu, std::uint64_t ns, std::uint32_t irq) {
    fhook_rec_osnoise_noise r{};
    r.hdr.type = FHOOK_REC_OSNOISE_NOISE;
    r.hdr.size = sizeof(r);
    r.hdr.cpu = cpu;
    r.hdr.pid = 90;
    r.hdr.ts = 81637220456ULL;
    r.start_ns = 81637208456ULL;
    r.duration_ns = ns;
    r.irq_count = irq;
    return r;
}

TEST(Osnoise, LineAsTheKernelPrintsIt) {
    // the kernel's: runtime, noise, 100 - noise/runtime with five decimals,
    // max single (us), then HW NMI IRQ SIRQ THREAD
    EXPECT_EQ(format_osnoise_line(period(0, 1000000000, 190000, 9500, 0, 1007), "fhook-osn/0"),
              "     fhook-osn/0-90      [000] .....    81.637220: 1000000        190  99.98100 "
              "      9      0      0   1007     18      1\n");
    EXPECT_EQ(format_osnoise_noise_line(gap(1, 12000, 1), "fhook-osn/1"),
              "     fhook-osn/1-90      [001] .....    81.637220: sample_threshold: start "
              "81.637208456 duration 12000 ns interference 1 (irq:1)\n");
    EXPECT_NE(format_osnoise_noise_line(gap(1, 12000, 0), "x").find("interference 0 (hw)\n"),
              std::string::npos);
}

TEST(Osnoise, TopSumsPeriodsAsRtla) {
    OsnoiseSummary s;
    s.add(period(0, 1000000000, 100000, 20000, 1, 250));
    s.add(period(0, 1000000000, 300000, 40000, 0, 260));
    s.add(period(1, 1000000000, 0, 0, 0, 250));
    const OsnoiseCpu& c0 = s.cpus().at(0);
    EXPECT_EQ(c0.periods, 2u);
    EXPECT_EQ(c0.noise_ns, 400000u);
    EXPECT_EQ(c0.max_noise_ns, 300000u); // the noisiest period
    EXPECT_EQ(c0.max_single_ns, 40000u);
    EXPECT_EQ(c0.available_e5(), 9998000u); // 99.98000 %
    EXPECT_EQ(s.all().irq, 760u);
    const std::string top = format_osnoise_top(s);
    EXPECT_NE(top.find("  0 #2           2000000          400   99.98000         300           40 "
                       "           1            0          510           36            2\n"),
              std::string::npos)
        << top;
    EXPECT_NE(top.find("ALL #3"), std::string::npos);
    const auto j = nlohmann::json::parse(format_osnoise_top_json(s));
    EXPECT_EQ(j["cpus"][1]["available_percent"], 100.0);
    EXPECT_EQ(j["all"]["hw"], 1);
    EXPECT_NE(format_osnoise_top(OsnoiseSummary{}).find("(no periods)"), std::string::npos);
}

TEST(Osnoise, HistOfGaps) {
    OsnoiseSummary s(1000, 16);
    s.add(gap(0, 5200, 1));
    s.add(gap(0, 5900, 1));
    s.add(gap(0, 40000, 1)); // past 16 buckets of 1 us
    s.add(gap(1, 7000, 0));
    const std::string h = format_osnoise_hist(s);
    EXPECT_NE(
        h.find(
            "Index    CPU-000   CPU-001\n5              2         0\n7              0         1\n"),
        std::string::npos)
        << h;
    EXPECT_NE(h.find("over:          1         0\ncount:         3         1\n"), std::string::npos)
        << h;
    EXPECT_NE(h.find("max:      40.000     7.000\n"), std::string::npos) << h;
    const auto j = nlohmann::json::parse(format_osnoise_hist_json(s));
    EXPECT_EQ(j["cpus"][0]["buckets"][0]["lo_ns"], 5000);
    EXPECT_EQ(j["all"]["count"], 4);
}

TEST(Irqsoff, LatencyTraceAsTheKernelPrintsIt) {
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T fhook_testmod_write\n"
                                     "ffffffff81000100 T fhook_testmod_irqsoff\n"
                                     "ffffffff81000200 T vfs_write\n");
    fhook_rec_irqsoff r{};
    r.hdr.type = FHOOK_REC_IRQSOFF;
    r.hdr.cpu = 1;
    r.hdr.pid = 321;
    r.hdr.flags = FHOOK_CTX_IRQS_OFF;
    r.latency_ns = 20345000;
    r.start_ip = 0xffffffff81000110;
    r.start_parent_ip = 0xffffffff81000020;
    r.end_ip = 0xffffffff81000140;
    r.end_parent_ip = 0xffffffff81000030;
    const std::vector<std::uint64_t> stack = {0xffffffff81000140, 0xffffffff81000030,
                                              0xffffffff81000210};
    const std::string t = format_irqsoff_trace(
        r, "sh", stack, ksyms, LatencyTraceHost{"irqsoff", "6.1.192-kdebug", "voluntary", 2});
    EXPECT_NE(t.find("# tracer: irqsoff\n"), std::string::npos) << t;
    EXPECT_NE(t.find("# latency: 20345 us, #3/3, CPU#1 | (M:voluntary VP:0, KP:0, SP:0 HP:0 "
                     "#P:2)\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("#    | task: sh-321\n"), std::string::npos) << t;
    EXPECT_NE(t.find("#  => started at: fhook_testmod_write\n#  => ended at:   "
                     "fhook_testmod_write\n"),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("trace_hardirqs_on <-fhook_testmod_write\n"), std::string::npos) << t;
    EXPECT_NE(t.find("<stack trace>\n => fhook_testmod_irqsoff\n => fhook_testmod_write\n => "
                     "vfs_write\n"),
              std::string::npos)
        << t;
    const auto j = nlohmann::json::parse(format_irqsoff_json(r, "sh", stack, ksyms, "irqsoff"));
    EXPECT_EQ(j["latency_ns"], 20345000);
    EXPECT_EQ(j["started_at"], "fhook_testmod_write");
    EXPECT_EQ(j["start_function"], "fhook_testmod_irqsoff");
    EXPECT_EQ(j["stack"][2], "vfs_write");
}

} // namespace
} // namespace fhook
