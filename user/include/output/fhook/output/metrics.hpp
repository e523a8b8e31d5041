// Metrics: fhook's tables (counts, latency histograms, keyed hist tables,
// the session's health) as metric families, and their Prometheus text
// exposition (format 0.0.4, what every Prometheus server and
// `promtool check metrics` read).  docs/fleet.md names every metric.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fhook/core/latency.hpp>

namespace fhook {

enum class MetricType { Counter, Gauge, Histogram };

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// One series of a family: a counter's or gauge's value, or a histogram's
// cumulative buckets (upper bound, calls at or below it; +Inf is `count`),
// count and sum.
struct MetricSeries {
    MetricLabels labels;
    double value = 0;
    std::vector<std::pair<double, std::uint64_t>> buckets;
    std::uint64_t count = 0;
    double sum = 0;
};

// A counter's or gauge's series.
inline MetricSeries metric_value(MetricLabels labels, double v) {
    MetricSeries s;
    s.labels = std::move(labels);
    s.value = v;
    return s;
}

struct MetricFamily {
    std::string name; // a counter's without "_total": the exposition adds it
    std::string help;
    MetricType type = MetricType::Gauge;
    std::vector<MetricSeries> series;
};

// A family without series yet.
inline MetricFamily metric_family(std::string name, std::string help, MetricType type) {
    MetricFamily f;
    f.name = std::move(name);
    f.help = std::move(help);
    f.type = type;
    return f;
}

// The module's log2 nanosecond histogram as a Prometheus histogram in
// seconds, exactly: bucket i holds the integer durations [2^(i-1), 2^i) ns,
// which are those <= 2^i - 1 ns, so its bound is le = (2^i - 1) / 1e9
// (bucket 0, 0 ns, is le = 0); the module's last bucket (everything longer)
// is only in +Inf.  The buckets are always those up to 2^34 - 1 ns (17 s),
// the same set at every scrape (rate() and histogram_quantile() need one
// set over time), and up to the longest duration seen where that is more.
MetricSeries latency_series(const LatencyHist& h, MetricLabels labels);

// The exposition of `families` (text format 0.0.4): # HELP, # TYPE and
// the samples of each, label values escaped, families without series left
// out.
std::string prometheus_text(const std::vector<MetricFamily>& families);

// The same families as one OTLP/HTTP JSON ExportMetricsServiceRequest
// (opentelemetry-proto metrics/v1, JSON mapping: 64-bit integers as
// strings): resource attributes service.name = "fhook" and `resource`,
// scope "fhook" and its version; a counter is a cumulative monotonic Sum
// (asInt), a gauge a Gauge (asDouble), a histogram a cumulative Histogram
// whose explicitBounds are the buckets' upper bounds and bucketCounts each
// bucket's own calls (one more: above the last bound); times in ns since
// the epoch, `start_ns` the run's start.  Counters keep their name
// without "_total".
std::string otlp_metrics_json(const std::vector<MetricFamily>& families,
                              const MetricLabels& resource, std::uint64_t start_ns,
                              std::uint64_t now_ns);

// A metric or label name as Prometheus takes it: [a-zA-Z_:][a-zA-Z0-9_:]*
// (label names without ':'); other characters become '_'.
std::string metric_name(std::string_view name, bool label = false);

} // namespace fhook
