// The metrics of a running Tracer, read from the module when asked (at
// each scrape, no background copying): what `--listen` serves and
// `--push` sends (docs/fleet.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fhook/engine/tracer.hpp>
#include <fhook/output/metrics.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/sys/http.hpp>

namespace fhook {

struct MetricsOptions {
    // series of one metric past which new label sets are folded into one
    // series whose labels are all "other" (fhook_series_folded counts them)
    std::size_t series_limit = 10000;
    // hist tables: keys naming a task (common_pid, pid, tgid) as labels;
    // without, their entries are summed over tasks
    bool pid_labels = false;
    // Collect::Wakeup: the tracer's name (wakeup, wakeup_rt, wakeup_dl), a label
    std::string tracer = "wakeup";
};

// What a hist command's tables read now (cumulative, thread-safe: called
// from the endpoint's threads).
using HistTablesRead = std::function<std::vector<HistTable>()>;
// Families a command sums itself (TracerMetricsSink::families()), read at
// each collection (thread-safe: called from the endpoint's threads).
using FamiliesRead = std::function<std::vector<MetricFamily>()>;

class MetricsCollector {
public:
    // `collect`: what `tracer` collects (its tables); collections answer
    // only once it is started and ready() called.
    MetricsCollector(const Tracer& tracer, Collect collect, MetricsOptions opt = {});
    void ready() { ready_ = true; }
    // Collect::Events with hist tables (fhook hist): their entries as
    // fhook_hist_hits_total and fhook_hist_<val>_total series labelled
    // with the keys (hist_key_labels()) and the table's index.  Before
    // ready().
    void set_hist(HistTablesRead read);
    // Families of the caller's besides the tracer's tables (the latency
    // tracers' measures), each held to the series limit.  Before ready().
    void set_families(FamiliesRead read) { families_ = std::move(read); }
    bool is_ready() const { return ready_; }

    // Every family, its tables read from the module now.  Thread-safe (one
    // collection at a time).
    std::vector<MetricFamily> collect();
    // collect() in the Prometheus text format, with the collection's own
    // duration (fhook_scrape_duration_seconds).
    std::string prometheus_text();
    // collect() as an OTLP/HTTP JSON metrics request (otlp_metrics_json()):
    // the resource's host.name this machine's, its start the collector's
    std::string otlp_json();

private:
    void bound(MetricFamily& family);
    void add_health(std::vector<MetricFamily>& out) const;
    void add_hist(std::vector<MetricFamily>& out);

    const Tracer& tracer_;
    Collect collect_;
    MetricsOptions opt_;
    std::mutex mutex_;
    // per metric: the label sets given a series of their own so far (a
    // set once admitted stays: its counter stays monotonic)
    std::map<std::string, std::set<MetricLabels>> admitted_;
    std::map<std::string, std::size_t> folded_;
    std::chrono::duration<double> last_scrape_{0};
    std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();
    std::atomic<bool> ready_{false};
    HistTablesRead hist_;
    FamiliesRead families_;
};

// Metrics behind an HTTP endpoint while it lives: GET /metrics (the
// Prometheus text format; 503 while `text` has none yet), GET / (a page
// naming it), 404 elsewhere.
class MetricsServer {
public:
    using Text = std::function<std::optional<std::string>()>;
    MetricsServer(Text text, const std::string& address);
    // a collector's, once ready()
    MetricsServer(MetricsCollector& collector, const std::string& address);
    // "http://127.0.0.1:9110/metrics"
    std::string url() const { return server_.url() + "/metrics"; }

private:
    HttpServer server_;
};

// The collector's metrics PUT to a Prometheus Pushgateway at `url`
// ("http://HOST:PORT": its group /metrics/job/fhook; or a push URL with
// its own /metrics/job/NAME[/LABEL/VALUE...] path), replacing what that
// group held.  A Runtime Error naming the gateway's answer otherwise.
void push_metrics(MetricsCollector& collector, const std::string& url);

// The collector's metrics POSTed to an OpenTelemetry collector's OTLP/HTTP
// endpoint `url` ("http://HOST:4318": its /v1/metrics; or the full URL) as
// JSON.  A Runtime Error naming the answer otherwise.
void otlp_push_metrics(MetricsCollector& collector, const std::string& url);

} // namespace fhook
