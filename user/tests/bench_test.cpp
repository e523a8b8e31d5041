// Host tests of fhook bench's results: medians, overheads and ratios, the
// targets, the table, the JSON round trip and the SVG plot.
#include <gtest/gtest.h>

#include <fhook/bench/bench.hpp>
#include <fhook/core/error.hpp>

namespace fhook::bench {
namespace {

Results sample_results() {
    Results r;
    r.kernel = "6.12.117+deb12-amd64";
    r.cpus = 1;
    r.workload = "kloop";
    r.function = "fhook_testmod_nop";
    r.calls = 1000000;
    r.repeats = 3;
    r.clock = "guest ns = instructions";
    r.rows = {
        {"baseline", "none", "nothing attached", {10.0, 10.5, 9.5}, "", {}, std::nullopt},
        {"ftrace-function",
         "ftrace",
         "function tracer",
         {1110.0, 1120.0, 1100.0},
         "",
         {},
         std::nullopt},
        {"bpftrace-fentry-count",
         "bpftrace",
         "kfunc count",
         {210.0, 200.0, 220.0},
         "",
         {},
         std::nullopt},
        {"fhook-ops-record", "fhook", "ops record", {540.0, 530.0, 550.0}, "", {}, 0.0},
        {"fhook-ops-record-raw",
         "fhook",
         "ops record to a file",
         {640.0, 630.0, 650.0},
         "",
         {201.5, 199, 200},
         0.25},
        {"fhook-direct-count", "fhook", "direct count", {60.0, 60.0, 60.0}, "", {}, std::nullopt},
        {"fhook-ops-count", "fhook", "ops count", {156.0, 150.0, 160.0}, "", {}, std::nullopt},
        {"kprobe-events-2args",
         "kprobe_events",
         "2 args",
         {1010.0, 1010.0, 1010.0},
         "",
         {},
         std::nullopt},
        {"fhook-kprobe-2args",
         "fhook",
         "kprobe 2 args",
         {710.0, 700.0, 720.0},
         "",
         {},
         std::nullopt},
        {"funclatency",
         "libbpf-tools",
         "funclatency",
         {},
         "funclatency not found",
         {},
         std::nullopt},
    };
    return r;
}

TEST(Bench, SummarizeMedianMinMax) {
    const Sample odd = summarize({3, 1, 2});
    EXPECT_DOUBLE_EQ(odd.median, 2);
    EXPECT_DOUBLE_EQ(odd.min, 1);
    EXPECT_DOUBLE_EQ(odd.max, 3);
    EXPECT_DOUBLE_EQ(summarize({4, 1, 2, 3}).median, 2.5);
}

TEST(Bench, OverheadAndRatios) {
    const Results r = sample_results();
    ASSERT_TRUE(r.overhead("ftrace-function"));
    EXPECT_DOUBLE_EQ(*r.overhead("ftrace-function"), 1100.0);
    EXPECT_DOUBLE_EQ(*r.overhead("fhook-ops-record"), 530.0);
    EXPECT_NEAR(*r.ratio("fhook-ops-record", "ftrace-function"), 530.0 / 1100.0, 1e-9);
    EXPECT_FALSE(r.overhead("funclatency")); // skipped
    EXPECT_FALSE(r.overhead("no-such-row"));
}

TEST(Bench, TargetsMetMissedAndUnmeasured) {
    const Results r = sample_results();
    const auto ts = targets(r);
    auto find = [&](std::string_view row) {
        for (const auto& t : ts) {
            if (t.row == row) {
                return t;
            }
        }
        ADD_FAILURE() << "no target for " << row;
        return Target{};
    };
    EXPECT_TRUE(find("fhook-ops-record").met());   // 0.48 <= 0.5
    EXPECT_TRUE(find("fhook-direct-count").met()); // 50 / 200 = 0.25, the limit itself
    EXPECT_NEAR(*find("fhook-direct-count").ratio, 50.0 / 200.0, 1e-9);
    EXPECT_TRUE(find("fhook-ops-count").met());     // 146 <= 200
    EXPECT_FALSE(find("fhook-latency-hist").ratio); // not measured
    EXPECT_FALSE(find("fhook-kprobe-2args").met()); // 700 / 1000
    EXPECT_NEAR(*find("fhook-kprobe-2args").ratio, 0.7, 1e-9);
}

TEST(Bench, ATargetWithALossySideHasNoRatio) {
    Results r = sample_results();
    r.rows.push_back({"trace-cmd-function-graph",
                      "trace-cmd",
                      "graph",
                      {1610, 1600, 1620},
                      "",
                      {},
                      1.86}); // lost most events: it did less work
    r.rows.push_back({"fhook-graph-raw", "fhook", "graph raw", {1500, 1510, 1490}, "", {}, 0.0});
    for (const auto& t : targets(r)) {
        if (t.row == "fhook-graph-raw") {
            EXPECT_FALSE(t.ratio);
            EXPECT_FALSE(t.met());
            EXPECT_EQ(t.lossy, "trace-cmd-function-graph");
        }
    }
    EXPECT_NE(render_text(r).find("not comparable (trace-cmd-function-graph lost 186.0% of its "
                                  "events)"),
              std::string::npos);
    EXPECT_NE(render_json(r).find("\"lossy\": \"trace-cmd-function-graph\""), std::string::npos);
}

TEST(Bench, AWorkloadTargetOnlyInItsWorkload) {
    Results r = sample_results();
    const auto has_all = [&] {
        for (const auto& t : targets(r)) {
            if (t.row == "fhook-graph-raw-all") {
                return true;
            }
        }
        return false;
    };
    r.workload = "kloop";
    EXPECT_TRUE(has_all());
    r.workload = "read"; // depth 2 records vfs_read's callees there: another figure
    EXPECT_FALSE(has_all());
}

TEST(Bench, TextTableShowsFiguresSkipsAndTargets) {
    const std::string text = render_text(sample_results());
    EXPECT_NE(text.find("fhook-ops-record"), std::string::npos);
    EXPECT_NE(text.find("  530.00"), std::string::npos) << text; // overhead column
    EXPECT_NE(text.find("0.48x"), std::string::npos) << text;
    EXPECT_NE(text.find("   200.00  25.0% "), std::string::npos) << text; // consumer, lost
    EXPECT_NE(text.find("skipped: funclatency not found"), std::string::npos) << text;
    EXPECT_NE(text.find("MISSED"), std::string::npos) << text;
    EXPECT_NE(text.find("not measured"), std::string::npos) << text;
}

TEST(Bench, JsonRoundTrip) {
    const Results r = sample_results();
    const Results back = parse_json(render_json(r), "test");
    EXPECT_EQ(back.kernel, r.kernel);
    EXPECT_EQ(back.calls, r.calls);
    EXPECT_EQ(back.clock, r.clock);
    ASSERT_EQ(back.rows.size(), r.rows.size());
    for (std::size_t i = 0; i < r.rows.size(); i++) {
        EXPECT_EQ(back.rows[i].name, r.rows[i].name);
        EXPECT_EQ(back.rows[i].skipped, r.rows[i].skipped);
        ASSERT_EQ(back.rows[i].ns.size(), r.rows[i].ns.size());
        EXPECT_EQ(back.rows[i].consumer_ns, r.rows[i].consumer_ns);
        EXPECT_EQ(back.rows[i].lost, r.rows[i].lost);
        for (std::size_t j = 0; j < r.rows[i].ns.size(); j++) {
            EXPECT_NEAR(back.rows[i].ns[j], r.rows[i].ns[j], 1e-3);
        }
    }
    EXPECT_THROW(parse_json("{\"kernel\": 1}", "x.json"), Error);
    EXPECT_THROW(parse_json("not json", "x.json"), Error);
}

TEST(Bench, SvgHasABarPerMeasuredMechanismAndKernel) {
    Results a = sample_results();
    Results b = sample_results();
    b.kernel = "6.1.0-56-amd64";
    const std::string svg = render_svg({a, b});
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    std::size_t bars = 0;
    for (auto pos = svg.find("<rect x=\"200\""); pos != std::string::npos;
         pos = svg.find("<rect x=\"200\"", pos + 1)) {
        bars++;
    }
    EXPECT_EQ(bars, 2u * 8u); // 8 measured mechanisms besides the baseline, 2 kernels
    EXPECT_NE(svg.find("not measured"), std::string::npos); // funclatency
    EXPECT_NE(svg.find(">1100<"), std::string::npos);       // the function tracer's label
    // log scale over 4 decades (1..10k) of 520 px: 1,100 -> 3.04 decades,
    // 50 (fhook-direct-count) -> 1.70 decades
    EXPECT_NE(svg.find("width=\"395\" height"), std::string::npos) << svg;
    EXPECT_NE(svg.find("width=\"221\" height"), std::string::npos) << svg;
    EXPECT_NE(svg.find(">10k<"), std::string::npos);
}

} // namespace
} // namespace fhook::bench
