// The metrics of a running Tracer, read from the module when asked (at
// each scrape, no background copying): what `--listen` serves and
// `--push` sends (docs/fleet.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <fhook/engine/tracer.hpp>
#include <fhook/output/metrics.hpp>
#include <fhook/sys/http.hpp>

namespace fhook {

struct MetricsOptions {
    // series of one metric past which new label sets are folded into one
    // series whose labels are all "other" (fhook_series_folded counts them)
    std::size_t series_limit = 10000;
};

class MetricsCollector {
public:
    // `tracer` set up and started; `collect` what it collects (its tables)
    MetricsCollector(const Tracer& tracer, Collect collect, MetricsOptions opt = {});

    // Every family, its tables read from the module now.  Thread-safe (one
    // collection at a time).
    std::vector<MetricFamily> collect();
    // collect() in the Prometheus text format, with the collection's own
    // duration (fhook_scrape_duration_seconds).
    std::string prometheus_text();

private:
    void bound(MetricFamily& family);
    void add_health(std::vector<MetricFamily>& out) const;

    const Tracer& tracer_;
    Collect collect_;
    MetricsOptions opt_;
    std::mutex mutex_;
    // per metric: the label sets given a series of their own so far (a
    // set once admitted stays: its counter stays monotonic)
    std::map<std::string, std::set<MetricLabels>> admitted_;
    std::map<std::string, std::size_t> folded_;
    std::chrono::duration<double> last_scrape_{0};
};

// A collector behind an HTTP endpoint while it lives: GET /metrics (the
// Prometheus text format), GET / (a page naming it), 404 elsewhere.
class MetricsServer {
public:
    MetricsServer(const Tracer& tracer, Collect collect, const std::string& address,
                  MetricsOptions opt = {});
    // "http://127.0.0.1:9110/metrics"
    std::string url() const { return server_.url() + "/metrics"; }

private:
    MetricsCollector collector_;
    HttpServer server_;
};

} // namespace fhook
