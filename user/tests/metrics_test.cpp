// Metrics: the Prometheus text exposition, the log2 buckets as Prometheus
// histograms, the series limit, and the endpoint over HTTP, on the fake
// kernel.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/engine/metrics.hpp>
#include <fhook/engine/otlp_sink.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/tracer_metrics.hpp>
#include <fhook/output/metrics.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/sys/http.hpp>

#include "fake_system.hpp"
#include "records.hpp"

namespace fhook {
namespace {

using test::spec_of;
using test::System;

TEST(Metrics, PrometheusTextHasHelpTypeAndEscapedLabels) {
    MetricFamily calls{"fhook_calls", "calls \\ counted\nper function", MetricType::Counter, {}};
    calls.series.push_back({{{"function", "vfs_read"}, {"module", ""}}, 7, {}, 0, 0});
    calls.series.push_back({{{"function", "a\"b\\c\nd"}, {"module", "loop"}}, 1e15, {}, 0, 0});
    MetricFamily probes{"fhook_probes", "probes armed", MetricType::Gauge, {}};
    probes.series.push_back({{}, 2, {}, 0, 0});
    MetricFamily empty{"fhook_empty", "nothing", MetricType::Gauge, {}};
    EXPECT_EQ(prometheus_text({calls, empty, probes}),
              "# HELP fhook_calls_total calls \\\\ counted\\nper function\n"
              "# TYPE fhook_calls_total counter\n"
              "fhook_calls_total{function=\"vfs_read\",module=\"\"} 7\n"
              "fhook_calls_total{function=\"a\\\"b\\\\c\\nd\",module=\"loop\"} 1e+15\n"
              "# HELP fhook_probes probes armed\n"
              "# TYPE fhook_probes gauge\n"
              "fhook_probes 2\n");
}

// Bucket i of the module, [2^(i-1), 2^i) integer ns, is le = (2^i - 1) ns
// in seconds; cumulative; the module's last bucket only in +Inf.
TEST(Metrics, LatencyBucketsKeepTheModulesBoundsExactly) {
    LatencyHist h;
    h.buckets[0] = 1; // 0 ns
    h.buckets[1] = 2; // 1 ns
    h.buckets[3] = 4; // 4..7 ns
    h.buckets[FHOOK_LAT_BUCKETS - 1] = 1;
    h.count = 8;
    h.sum_ns = 1'500'000'000;
    const MetricSeries s = latency_series(h, {{"function", "f"}});
    ASSERT_EQ(s.buckets.size(), 35u); // up to 2^34 - 1 ns, always
    EXPECT_EQ(s.buckets[0], std::make_pair(0.0, std::uint64_t{1}));
    EXPECT_EQ(s.buckets[1], std::make_pair(1e-9, std::uint64_t{3}));
    EXPECT_EQ(s.buckets[2], std::make_pair(3e-9, std::uint64_t{3}));
    EXPECT_EQ(s.buckets[3], std::make_pair(7e-9, std::uint64_t{7}));
    EXPECT_EQ(s.buckets[34].first, double((1ULL << 34) - 1) / 1e9);
    EXPECT_EQ(s.buckets[34].second, 7u);
    const std::string text =
        prometheus_text({{"d_seconds", "durations", MetricType::Histogram, {s}}});
    EXPECT_NE(text.find("# TYPE d_seconds histogram\n"
                        "d_seconds_bucket{function=\"f\",le=\"0\"} 1\n"
                        "d_seconds_bucket{function=\"f\",le=\"1e-09\"} 3\n"
                        "d_seconds_bucket{function=\"f\",le=\"3e-09\"} 3\n"
                        "d_seconds_bucket{function=\"f\",le=\"7e-09\"} 7\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("d_seconds_bucket{function=\"f\",le=\"17.179869183\"} 7\n"
                        "d_seconds_bucket{function=\"f\",le=\"+Inf\"} 8\n"
                        "d_seconds_sum{function=\"f\"} 1.5\n"
                        "d_seconds_count{function=\"f\"} 8\n"),
              std::string::npos)
        << text;
    // a duration past 17 s adds its bucket (and those below it)
    h.buckets[40] = 1;
    EXPECT_EQ(latency_series(h, {}).buckets.size(), 41u);
}

// A record of the latency tracers, decoded as the reader decodes it.
template <class R>
Event tracer_event(std::uint16_t type, std::uint16_t cpu, const std::function<void(R&)>& fill) {
    R r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = test::header(type, sizeof(r), 1000, cpu);
    fill(r);
    return decode(&r.hdr).value();
}

const MetricFamily* find_family(const std::vector<MetricFamily>& fs, const std::string& name) {
    const auto it = std::find_if(fs.begin(), fs.end(), [&](auto& f) { return f.name == name; });
    return it == fs.end() ? nullptr : &*it;
}

// timerlat, hwlat, osnoise and irqsoff records summed per CPU (and
// context) into log2 histograms, maxima and osnoise's counters
TEST(Metrics, TheLatencyTracersMeasuresBecomeHistogramsPerCpu) {
    TracerMetricsSink sink("preemptoff");
    EXPECT_TRUE(sink.families().empty());
    for (const std::uint64_t ns : {3000, 5000, 70000}) {
        sink.on_event(tracer_event<fhook_rec_timerlat>(FHOOK_REC_TIMERLAT, 1, [&](auto& r) {
            r.latency = ns;
            r.context = FHOOK_TIMERLAT_THREAD;
        }));
    }
    sink.on_event(tracer_event<fhook_rec_timerlat>(FHOOK_REC_TIMERLAT, 0, [](auto& r) {
        r.latency = 900;
        r.context = FHOOK_TIMERLAT_IRQ;
    }));
    sink.on_event(tracer_event<fhook_rec_hwlat>(FHOOK_REC_HWLAT, 0, [](auto& r) {
        r.inner_ns = 12000;
        r.outer_ns = 40000;
    }));
    sink.on_event(tracer_event<fhook_rec_irqsoff>(FHOOK_REC_IRQSOFF, 1,
                                                  [](auto& r) { r.latency_ns = 250000; }));
    for (const std::uint32_t hw : {2, 3}) {
        sink.on_event(tracer_event<fhook_rec_osnoise>(FHOOK_REC_OSNOISE, 1, [&](auto& r) {
            r.runtime_ns = 1'000'000'000;
            r.noise_ns = 5000;
            r.max_single_ns = 1000 * hw;
            r.hw_count = hw;
            r.irq_count = 1;
        }));
    }
    const std::vector<MetricFamily> fs = sink.families();
    const MetricFamily* t = find_family(fs, "fhook_timerlat_latency_seconds");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->type, MetricType::Histogram);
    ASSERT_EQ(t->series.size(), 2u);
    // (series by labels: irq on CPU 0, then thread on CPU 1)
    EXPECT_EQ(t->series[0].labels, (MetricLabels{{"context", "irq"}, {"cpu", "0"}}));
    EXPECT_EQ(t->series[0].count, 1u);
    const MetricSeries& thread = t->series[1];
    EXPECT_EQ(thread.labels, (MetricLabels{{"context", "thread"}, {"cpu", "1"}}));
    EXPECT_EQ(thread.count, 3u);
    EXPECT_DOUBLE_EQ(thread.sum, 78000e-9);
    // 3000 and 5000 ns: [2048, 4096) and [4096, 8192); 70000 in [65536, 131072)
    EXPECT_EQ(thread.buckets[11], std::make_pair(2047e-9, std::uint64_t{0}));
    EXPECT_EQ(thread.buckets[12], std::make_pair(4095e-9, std::uint64_t{1}));
    EXPECT_EQ(thread.buckets[13].second, 2u);
    EXPECT_EQ(thread.buckets[16].second, 2u);
    EXPECT_EQ(thread.buckets[17].second, 3u);
    const MetricFamily* tmax = find_family(fs, "fhook_timerlat_latency_max_seconds");
    ASSERT_TRUE(tmax);
    EXPECT_DOUBLE_EQ(tmax->series[1].value, 70000e-9);
    const MetricFamily* hw = find_family(fs, "fhook_hwlat_gap_max_seconds");
    ASSERT_TRUE(hw);
    EXPECT_DOUBLE_EQ(hw->series.at(0).value, 40000e-9); // the longer of inner and outer
    const MetricFamily* irqs = find_family(fs, "fhook_irqsoff_section_seconds");
    ASSERT_TRUE(irqs);
    EXPECT_EQ(irqs->series.at(0).labels, (MetricLabels{{"tracer", "preemptoff"}, {"cpu", "1"}}));
    // osnoise's periods (no gap records: the longest gap is the periods')
    const MetricFamily* inter = find_family(fs, "fhook_osnoise_interference");
    ASSERT_TRUE(inter);
    EXPECT_EQ(inter->type, MetricType::Counter);
    EXPECT_EQ(inter->series.at(0).labels, (MetricLabels{{"cpu", "1"}, {"source", "hw"}}));
    EXPECT_EQ(inter->series.at(0).value, 5);
    EXPECT_EQ(inter->series.at(2).value, 2); // irq
    EXPECT_EQ(find_family(fs, "fhook_osnoise_runtime_seconds")->series.at(0).value, 2);
    EXPECT_DOUBLE_EQ(find_family(fs, "fhook_osnoise_gap_max_seconds")->series.at(0).value, 3e-6);
    EXPECT_FALSE(find_family(fs, "fhook_osnoise_gap_seconds"));
    // each name once (promtool refuses a family twice)
    std::set<std::string> names;
    for (const MetricFamily& f : fs) {
        EXPECT_TRUE(names.insert(f.name).second) << f.name;
    }
}

TEST(Metrics, NamesArePrometheusNames) {
    EXPECT_EQ(metric_name("fhook:calls-total.x"), "fhook:calls_total_x");
    EXPECT_EQ(metric_name("9lives", true), "_lives");
    EXPECT_EQ(metric_name("a:b", true), "a_b");
}

// count's table and the health metrics, read when collected
TEST(Metrics, CountsAndHealthComeFromTheModuleAtEachCollection) {
    System sys;
    sys.kernel->stats[1] = {{3, 0, 0, 0}, {4, 0, 0, 1}};
    Tracer tracer(spec_of(Collect::Counts, {"vfs_read"}), sys.paths());
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);
    MetricsCollector metrics(tracer, Collect::Counts);
    std::string text = metrics.prometheus_text();
    EXPECT_NE(text.find("fhook_calls_total{function=\"vfs_read\",module=\"\"} 7\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("fhook_probe_missed_total{probe=\"1\",spec=\"vfs_read\"} 1\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("fhook_probes 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE fhook_scrape_duration_seconds gauge\n"), std::string::npos);
    sys.kernel->stats[1] = {{30, 0, 0, 0}, {40, 0, 0, 1}};
    text = metrics.prometheus_text();
    EXPECT_NE(text.find("fhook_calls_total{function=\"vfs_read\",module=\"\"} 70\n"),
              std::string::npos)
        << text;
}

// 16,000 functions called (count's most): the first limit - 1 keep their series, the
// rest are one "other" series holding their sum, counted as folded.
TEST(Metrics, TheSeriesLimitFoldsNewLabelSetsIntoOther) {
    System sys;
    sys.big(16'000, true);
    Tracer tracer(spec_of(Collect::Counts, {"f*"}), sys.paths());
    tracer.setup();
    ASSERT_EQ(sys.kernel->probes.size(), 1u);
    std::uint64_t all = 0;
    for (const std::uint64_t ip : sys.kernel->probes[0].ips) {
        sys.kernel->function_hits[1][ip] = 2;
        all += 2;
    }
    ASSERT_EQ(all, 32'000u);
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);
    MetricsCollector metrics(tracer, Collect::Counts, {1000});
    const std::vector<MetricFamily> families = metrics.collect();
    ASSERT_EQ(families[0].name, "fhook_calls");
    const auto& series = families[0].series;
    ASSERT_EQ(series.size(), 1000u);
    double sum = 0;
    for (const auto& s : series) {
        sum += s.value;
    }
    EXPECT_EQ(sum, 32'000);
    const MetricLabels other{{"function", "other"}, {"module", "other"}};
    EXPECT_EQ(series.back().labels, other);
    EXPECT_EQ(series.back().value, 2 * 15'001);
    EXPECT_NE(prometheus_text(families).find("fhook_series_folded{metric=\"fhook_calls\"} 15001\n"),
              std::string::npos);
}

// A hist table of `n` tasks: key common_pid.execname (pids 1000.., two
// names), hitcount 1 and n=2 each, and 5 drops.
HistTable task_table(std::uint64_t n) {
    HistSpec spec = parse_hist_trigger("keys=common_pid.execname:vals=n");
    spec.keys[0].source = HistSource::Pid;
    std::vector<HistEntry> entries;
    for (std::uint64_t i = 0; i < n; i++) {
        entries.push_back({{HistKeyPart{1000 + i}}, 1, {2}, i % 2 ? "odd" : "even"});
    }
    HistTable t(spec);
    t.set(std::move(entries), n, 5);
    return t;
}

// hist's tables: a series per key, the task's name a label and its pid
// only when asked; tasks of one name summed otherwise.
TEST(Metrics, HistKeysBecomeLabelsAndPidsOnlyWhenAsked) {
    System sys;
    Tracer tracer(spec_of(Collect::Events, {"vfs_read"}), sys.paths());
    tracer.setup();
    tracer.start();
    MetricsCollector summed(tracer, Collect::Events);
    summed.set_hist([] { return std::vector<HistTable>{task_table(4)}; });
    std::string text = summed.prometheus_text();
    EXPECT_NE(text.find("fhook_hist_hits_total{table=\"0\",comm=\"even\"} 2\n"
                        "fhook_hist_hits_total{table=\"0\",comm=\"odd\"} 2\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("fhook_hist_n_total{table=\"0\",comm=\"odd\"} 4\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("fhook_hist_drops_total{table=\"0\"} 5\n"), std::string::npos) << text;
    MetricsCollector pids(tracer, Collect::Events, {10000, true});
    pids.set_hist([] { return std::vector<HistTable>{task_table(4)}; });
    text = pids.prometheus_text();
    EXPECT_NE(text.find("fhook_hist_hits_total{table=\"0\",comm=\"odd\",common_pid=\"1003\"} 1\n"),
              std::string::npos)
        << text;
}

// 100,000 distinct keys (pids as labels) against a limit of 1000
TEST(Metrics, TheSeriesLimitHoldsUnder100000Keys) {
    System sys;
    Tracer tracer(spec_of(Collect::Events, {"vfs_read"}), sys.paths());
    tracer.setup();
    tracer.start();
    MetricsCollector metrics(tracer, Collect::Events, {1000, true});
    const HistTable table = task_table(100'000);
    metrics.set_hist([&] { return std::vector<HistTable>{table}; });
    const std::vector<MetricFamily> families = metrics.collect();
    ASSERT_EQ(families[0].name, "fhook_hist_hits");
    ASSERT_EQ(families[0].series.size(), 1000u);
    EXPECT_EQ(families[0].series.back().value, 99'001);
    EXPECT_EQ(families[1].name, "fhook_hist_n");
    EXPECT_EQ(families[1].series.size(), 1000u);
    EXPECT_NE(
        prometheus_text(families).find("fhook_series_folded{metric=\"fhook_hist_hits\"} 99001\n"),
        std::string::npos);
}

TEST(Metrics, TheEndpointServesMetricsOverHttp) {
    System sys;
    LatencyHist h;
    h.count = 3;
    h.sum_ns = 3000;
    h.buckets[10] = 2;
    h.buckets[11] = 1;
    sys.kernel->latency[1] = h;
    Tracer tracer(spec_of(Collect::Latency, {"vfs_read"}), sys.paths());
    MetricsCollector metrics(tracer, Collect::Latency);
    MetricsServer server(metrics, "127.0.0.1:0");
    ASSERT_EQ(server.url().rfind("http://127.0.0.1:", 0), 0u) << server.url();
    // (listening before the probes are armed: no answer from them yet)
    EXPECT_EQ(http_request("GET", server.url()).status, 503u);
    tracer.setup();
    tracer.start();
    metrics.ready();
    const HttpReply reply = http_request("GET", server.url());
    EXPECT_EQ(reply.status, 200u);
    EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_NE(reply.body.find("fhook_function_duration_seconds_bucket{function=\"vfs_read\",le="
                              "\"1.023e-06\"} 2\n"),
              std::string::npos)
        << reply.body;
    EXPECT_NE(reply.body.find("fhook_function_duration_seconds_count{function=\"vfs_read\"} 3\n"),
              std::string::npos);
    const std::string base = server.url().substr(0, server.url().size() - 8);
    EXPECT_EQ(http_request("GET", base + "/nothing").status, 404u);
    EXPECT_EQ(http_request("POST", server.url(), "text/plain", "x").status, 405u);
    EXPECT_EQ(http_request("GET", base + "/").status, 200u);
    // a scraper's kept connection: one server thread for all its requests
    HttpClient client(base);
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(client.request("GET", "/metrics").status, 200u);
    }
}

// A server that takes the connection and never answers: the request ends
// at its timeout with an error (the reader that posts would hang else).
TEST(Metrics, ARequestToASilentServerTimesOut) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&at), sizeof(at)), 0);
    ASSERT_EQ(::listen(s, 4), 0); // (the kernel accepts; nobody reads)
    socklen_t len = sizeof(at);
    ::getsockname(s, reinterpret_cast<sockaddr*>(&at), &len);
    HttpClient client("http://127.0.0.1:" + std::to_string(ntohs(at.sin_port)),
                      std::chrono::milliseconds(300));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_THROW(client.request("GET", "/metrics"), Error);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    ::close(s);
}

// --otlp: one OTLP/HTTP JSON request to a loopback sink, its fields as
// opentelemetry-proto's JSON mapping has them: a cumulative monotonic Sum
// with string asInt, a Histogram whose bucketCounts are per bucket (one
// more than explicitBounds) and add up to count, the resource and scope.
TEST(Metrics, OtlpCarriesTheSameMetrics) {
    System sys;
    sys.kernel->stats[1] = {{3, 0, 0, 0}, {4, 0, 0, 0}};
    Tracer counter(spec_of(Collect::Counts, {"vfs_read"}), sys.paths());
    counter.setup();
    counter.start();
    MetricsCollector metrics(counter, Collect::Counts);
    std::string path, type_seen, body;
    HttpServer sink("127.0.0.1:0",
                    [&](std::string_view method, std::string_view target, std::string_view b) {
                        path = std::string(method) + " " + std::string(target);
                        body = b;
                        return HttpReply{200, "application/json", "{}"};
                    });
    otlp_push_metrics(metrics, sink.url());
    EXPECT_EQ(path, "POST /v1/metrics");
    const auto j = nlohmann::json::parse(body);
    const auto& rm = j["resourceMetrics"][0];
    EXPECT_EQ(rm["resource"]["attributes"][0]["key"], "service.name");
    EXPECT_EQ(rm["resource"]["attributes"][0]["value"]["stringValue"], "fhook");
    EXPECT_EQ(rm["resource"]["attributes"][1]["key"], "host.name");
    const auto& sm = rm["scopeMetrics"][0];
    EXPECT_EQ(sm["scope"]["name"], "fhook");
    const auto& calls = sm["metrics"][0];
    EXPECT_EQ(calls["name"], "fhook_calls");
    EXPECT_EQ(calls["sum"]["aggregationTemporality"], 2);
    EXPECT_EQ(calls["sum"]["isMonotonic"], true);
    const auto& point = calls["sum"]["dataPoints"][0];
    EXPECT_EQ(point["asInt"], "7");
    EXPECT_EQ(point["attributes"][0]["key"], "function");
    EXPECT_EQ(point["attributes"][0]["value"]["stringValue"], "vfs_read");
    EXPECT_LE(std::stoull(point["startTimeUnixNano"].get<std::string>()),
              std::stoull(point["timeUnixNano"].get<std::string>()));

    LatencyHist h;
    h.buckets[0] = 1;
    h.buckets[10] = 2;
    h.buckets[FHOOK_LAT_BUCKETS - 1] = 4;
    h.count = 7;
    h.sum_ns = 4000;
    const auto hj = nlohmann::json::parse(otlp_metrics_json(
        {{"d_seconds", "durations", MetricType::Histogram, {latency_series(h, {})}}}, {}, 1, 2));
    const auto& hp =
        hj["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["histogram"]["dataPoints"][0];
    ASSERT_EQ(hp["bucketCounts"].size(), hp["explicitBounds"].size() + 1);
    std::uint64_t total = 0;
    for (const auto& c : hp["bucketCounts"]) {
        total += std::stoull(c.get<std::string>());
    }
    EXPECT_EQ(total, 7u);
    EXPECT_EQ(hp["count"], "7");
    EXPECT_EQ(hp["bucketCounts"][10], "2");
    EXPECT_EQ(hp["bucketCounts"].back(), "4"); // above the last bound
    EXPECT_EQ(hp["explicitBounds"][10], 1.023e-06);
    EXPECT_DOUBLE_EQ(hp["sum"].get<double>(), 4e-06);
    // a refusing endpoint is named with its answer
    HttpServer refusing("127.0.0.1:0", [](std::string_view, std::string_view, std::string_view) {
        return HttpReply{415, "text/plain", "Unsupported Media Type\n"};
    });
    try {
        otlp_push_metrics(metrics, refusing.url());
        ADD_FAILURE() << "a 415 was taken";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "the OTLP endpoint at " + refusing.url() +
                                             "/v1/metrics answered 415: Unsupported Media Type");
    }
}

// --otlp on the event commands: the formatter's lines are the requests (up
// to 256 records each), a partial batch sent once it has waited `linger`,
// the rest at the end
TEST(Metrics, OtlpSinkPostsEachBatchAsItFills) {
    std::vector<std::string> bodies;
    std::string path;
    std::mutex m;
    HttpServer collector("127.0.0.1:0", [&](std::string_view method, std::string_view target,
                                            std::string_view body) {
        const std::lock_guard lock(m);
        path = std::string(method) + " " + std::string(target);
        bodies.emplace_back(body);
        return HttpReply{200, "application/json", "{}"};
    });
    const Ksyms ksyms = Ksyms::parse("ffffffff81000000 T vfs_read\n");
    const ProbeTable probes;
    OtlpSink sink(collector.url(), "/v1/logs", make_formatter(OutputFormat::Otlp, ksyms, 0), probes,
                  std::chrono::milliseconds(0));
    Event ev;
    ev.ip = 0xffffffff81000000;
    for (int i = 0; i < 300; i++) {
        sink.on_event(ev);
    }
    EXPECT_EQ(sink.requests(), 1u); // 256
    sink.flush();                   // (linger 0: the 44 go now)
    EXPECT_EQ(sink.requests(), 2u);
    sink.on_event(ev);
    sink.finish({}, {});
    ASSERT_EQ(bodies.size(), 3u);
    EXPECT_EQ(path, "POST /v1/logs");
    std::size_t records = 0;
    for (const std::string& b : bodies) {
        records += nlohmann::json::parse(b)["resourceLogs"][0]["scopeLogs"][0]["logRecords"].size();
    }
    EXPECT_EQ(records, 301u);
    // a collector that refuses ends the run with its answer
    HttpServer refusing("127.0.0.1:0", [](std::string_view, std::string_view, std::string_view) {
        return HttpReply{503, "text/plain", "busy\n"};
    });
    OtlpSink refused(refusing.url() + "/otlp/v1/logs", "/v1/logs",
                     make_formatter(OutputFormat::Otlp, ksyms, 0), probes);
    refused.on_event(ev);
    try {
        refused.finish({}, {});
        ADD_FAILURE() << "a 503 was taken";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "the OTLP endpoint at " + refusing.url() + "/otlp/v1/logs answered 503: busy");
    }
}

TEST(Metrics, BadAddressesAreRefusedWithTheReason) {
    const auto refused = [](const std::string& address) {
        try {
            HttpServer server(address, [](std::string_view, std::string_view, std::string_view) {
                return HttpReply{};
            });
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(refused("9110"), "'9110' is not HOST:PORT (e.g. 127.0.0.1:9110 or :9110)");
    EXPECT_EQ(refused(":99999"), "'99999' in ':99999' is not a TCP port (0-65535)");
    EXPECT_EQ(refused("localhost:9110"), "'localhost' in 'localhost:9110' is not an IP address");
    // a port taken
    HttpServer first("127.0.0.1:0", [](std::string_view, std::string_view, std::string_view) {
        return HttpReply{};
    });
    const std::string taken = first.url().substr(7);
    EXPECT_EQ(refused(taken).rfind("cannot listen on " + taken + ": ", 0), 0u) << refused(taken);
    EXPECT_THROW(http_request("GET", "https://example.org/"), Error);
}

} // namespace
} // namespace fhook
