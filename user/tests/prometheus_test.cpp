// A real Prometheus server (Debian's prometheus, scripts/setup.sh) scrapes
// fhook's endpoint on a fake kernel every second; its HTTP API must answer
// exactly the counts the module holds, and histogram_quantile() over the
// log2 buckets what LatencyHist::quantile() says.  promtool checks the
// exposition.  Skipped where Prometheus is not installed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/engine/metrics.hpp>
#include <fhook/sys/http.hpp>

#include "fake_system.hpp"

extern char** environ;

namespace fhook {
namespace {

using test::spec_of;
using test::System;

bool installed(const char* program) {
    return std::system(("command -v " + std::string(program) + " > /dev/null").c_str()) == 0;
}

// A program run until the object goes (SIGTERM, then reaped).
class Child {
public:
    Child(std::vector<std::string> argv, const std::string& log) {
        std::vector<char*> args;
        for (auto& a : argv) {
            args.push_back(a.data());
        }
        args.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        EXPECT_EQ(posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ), 0);
        posix_spawn_file_actions_destroy(&fa);
    }
    ~Child() {
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
    }

private:
    pid_t pid_ = -1;
};

std::string url_encode(std::string_view s) {
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
            out += static_cast<char>(c);
        } else {
            char hex[4];
            std::snprintf(hex, sizeof(hex), "%%%02X", c);
            out += hex;
        }
    }
    return out;
}

// The value of an instant query with one result, or nullopt while there
// is none.
std::optional<double> query(const std::string& prometheus, const std::string& expr) {
    HttpReply r;
    try {
        r = http_request("GET", prometheus + "/api/v1/query?query=" + url_encode(expr));
    } catch (const Error&) {
        return std::nullopt; // not listening yet
    }
    if (r.status != 200) {
        return std::nullopt;
    }
    const auto j = nlohmann::json::parse(r.body);
    const auto& result = j["data"]["result"];
    if (result.size() != 1) {
        return std::nullopt;
    }
    return std::stod(result[0]["value"][1].get<std::string>());
}

// `expr` once Prometheus has it equal to `want` (to 1e-12 relative: its
// float arithmetic is not ours), within 30 s; else its last value
std::optional<double> await(const std::string& prometheus, const std::string& expr, double want) {
    std::optional<double> v;
    for (int i = 0; i < 300; i++) {
        v = query(prometheus, expr);
        if (v && std::abs(*v - want) <= std::abs(want) * 1e-12) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return v;
}

// A port of its own for a server under test: one the kernel gave and took back.
std::string free_address() {
    HttpServer probe("127.0.0.1:0", [](std::string_view, std::string_view, std::string_view) {
        return HttpReply{};
    });
    return probe.url().substr(7);
}

TEST(Prometheus, ScrapesExactCountsAndQuantilesFromTheEndpoint) {
    if (!installed("prometheus")) {
        GTEST_SKIP() << "no prometheus (scripts/setup.sh installs it)";
    }
    System counts, latency;
    counts.kernel->stats[1] = {{1000, 0, 0, 0}, {234, 0, 0, 0}};
    LatencyHist h;
    h.buckets[9] = 10;  // [256, 511] ns
    h.buckets[10] = 70; // [512, 1023] ns
    h.buckets[14] = 20; // [8192, 16383] ns
    h.count = 100;
    h.sum_ns = 200'000;
    latency.kernel->latency[1] = h;
    Tracer counter(spec_of(Collect::Counts, {"vfs_read"}), counts.paths());
    Tracer timer(spec_of(Collect::Latency, {"vfs_read"}), latency.paths());
    for (Tracer* t : {&counter, &timer}) {
        t->setup();
        t->start();
    }
    MetricsCollector count_metrics(counter, Collect::Counts),
        latency_metrics(timer, Collect::Latency);
    count_metrics.ready();
    latency_metrics.ready();
    MetricsServer count_server(count_metrics, "127.0.0.1:0");
    MetricsServer latency_server(latency_metrics, "127.0.0.1:0");
    const auto target = [](const MetricsServer& s) {
        const std::string u = s.url();
        return u.substr(7, u.size() - 7 - 8); // host:port
    };

    char dir[] = "/tmp/fhook-prometheus-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    std::ofstream(std::string(dir) + "/prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           "scrape_configs:\n  - job_name: fhook\n    static_configs:\n"
           "      - targets: ['"
        << target(count_server) << "', '" << target(latency_server) << "']\n";
    // (a port of its own: one the kernel gave and took back)
    std::string web;
    {
        HttpServer probe("127.0.0.1:0", [](std::string_view, std::string_view, std::string_view) {
            return HttpReply{};
        });
        web = probe.url();
    }
    Child prometheus({"prometheus", "--config.file=" + std::string(dir) + "/prometheus.yml",
                      "--storage.tsdb.path=" + std::string(dir) + "/data",
                      "--web.listen-address=" + web.substr(7), "--log.level=warn"},
                     std::string(dir) + "/prometheus.log");

    EXPECT_EQ(await(web, "fhook_calls_total{function=\"vfs_read\"}", 1234), 1234);
    // the next scrape reads the module again
    counts.kernel->stats[1] = {{5000, 0, 0, 0}, {0, 0, 0, 0}};
    EXPECT_EQ(await(web, "fhook_calls_total{function=\"vfs_read\"}", 5000), 5000);
    for (const double q : {0.05, 0.5, 0.9, 0.99}) {
        const std::string expr = "histogram_quantile(" + std::to_string(q) +
                                 ", fhook_function_duration_seconds_bucket{function=\"vfs_read\"})";
        const double want = h.quantile(q) / 1e9;
        const auto got = await(web, expr, want);
        ASSERT_TRUE(got) << expr;
        EXPECT_NEAR(*got, want, want * 1e-12) << expr;
    }
    EXPECT_EQ(await(web, "fhook_function_duration_seconds_count", 100), 100);
    std::system(("rm -rf " + std::string(dir)).c_str());
}

// --push: the metrics PUT to a real Pushgateway (Debian's), which then
// serves them under job="fhook"; a second push replaces the first; a
// gateway that refuses is named with its answer.
TEST(Prometheus, APushReachesThePushgateway) {
    if (!installed("prometheus-pushgateway")) {
        GTEST_SKIP() << "no prometheus-pushgateway (scripts/setup.sh installs it)";
    }
    System sys;
    sys.kernel->stats[1] = {{40, 0, 0, 0}, {2, 0, 0, 0}};
    Tracer tracer(spec_of(Collect::Counts, {"vfs_read"}), sys.paths());
    tracer.setup();
    tracer.start();
    MetricsCollector metrics(tracer, Collect::Counts);
    metrics.ready();
    const std::string at = free_address();
    char dir[] = "/tmp/fhook-pushgateway-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    Child gateway({"prometheus-pushgateway", "--web.listen-address=" + at, "--log.level=warn"},
                  std::string(dir) + "/pushgateway.log");
    const std::string url = "http://" + at;
    const std::string series =
        "fhook_calls_total{function=\"vfs_read\",instance=\"\",job=\"fhook\",module=\"\"} ";
    // (until it listens)
    for (int i = 0; i < 100; i++) {
        try {
            push_metrics(metrics, url);
            break;
        } catch (const Error&) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    std::string held = http_request("GET", url + "/metrics").body;
    EXPECT_NE(held.find(series + "42\n"), std::string::npos) << held;
    sys.kernel->stats[1] = {{50, 0, 0, 0}, {50, 0, 0, 0}};
    push_metrics(metrics, url + "/metrics/job/fhook");
    held = http_request("GET", url + "/metrics").body;
    EXPECT_NE(held.find(series + "100\n"), std::string::npos) << held;
    try {
        push_metrics(metrics, url + "/metrics/nojob");
        ADD_FAILURE() << "a bad push URL was taken";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(
                      "the Pushgateway at " + url + "/metrics/nojob answered 4", 0),
                  0u)
            << e.what();
    }
    std::system(("rm -rf " + std::string(dir)).c_str());
}

TEST(Prometheus, PromtoolFindsNothingToSayAboutTheExposition) {
    if (!installed("promtool")) {
        GTEST_SKIP() << "no promtool (scripts/setup.sh installs prometheus)";
    }
    System sys;
    sys.kernel->stats[1] = {{3, 0, 0, 0}, {4, 0, 0, 1}};
    LatencyHist h;
    h.buckets[10] = 3;
    h.count = 3;
    sys.kernel->latency[2] = h;
    Tracer tracer(spec_of(Collect::Counts, {"vfs_read"}), sys.paths());
    tracer.setup();
    tracer.start();
    MetricsCollector metrics(tracer, Collect::Counts);
    metrics.ready();
    std::string text = metrics.prometheus_text();
    text += prometheus_text({{"fhook_function_duration_seconds",
                              "durations",
                              MetricType::Histogram,
                              {latency_series(h, {{"function", "vfs_write"}})}}});
    const std::string file = "/tmp/fhook-promtool-" + std::to_string(::getpid());
    std::ofstream(file) << text;
    const std::string out = file + ".out";
    EXPECT_EQ(std::system(("promtool check metrics < " + file + " > " + out + " 2>&1").c_str()), 0);
    std::ifstream in(out);
    const std::string said((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(said, "") << text;
    std::remove(file.c_str());
    std::remove(out.c_str());
}

} // namespace
} // namespace fhook
