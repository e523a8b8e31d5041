#include <unistd.h>

#include <algorithm>

#include <fhook/core/error.hpp>
#include <fhook/engine/metrics.hpp>
#include <fhook/output/hist_format.hpp>

namespace fhook {

namespace {

// the Prometheus text exposition's media type
constexpr const char* kExposition = "text/plain; version=0.0.4; charset=utf-8";

// `into` plus `s` (the same kind of series): the "other" series
void merge(MetricSeries& into, const MetricSeries& s) {
    into.value += s.value;
    into.count += s.count;
    into.sum += s.sum;
    if (into.buckets.size() < s.buckets.size()) {
        const std::size_t had = into.buckets.size();
        const std::uint64_t top = had ? into.buckets.back().second : 0;
        into.buckets.resize(s.buckets.size());
        for (std::size_t i = had; i < s.buckets.size(); i++) {
            into.buckets[i] = {s.buckets[i].first, top};
        }
    }
    for (std::size_t i = 0; i < into.buckets.size(); i++) {
        // (a shorter set: its last cumulative count holds above it)
        into.buckets[i].second +=
            i < s.buckets.size() ? s.buckets[i].second : (s.buckets.empty() ? 0 : s.count);
    }
}

} // namespace

void MetricsCollector::set_hist(HistTablesRead read) {
    hist_ = std::move(read);
}

void MetricsCollector::add_hist(std::vector<MetricFamily>& out) {
    const std::vector<HistTable> tables = hist_();

    auto drops = metric_family("fhook_hist_drops", "hits a full hist table had no entry for",
                               MetricType::Counter);
    // the values' families by name, and a series' index in its family by
    // its labels (the entries of tasks summed when pids are not labels)
    struct Family {
        MetricFamily f;
        std::map<MetricLabels, std::size_t> at;
        void add(const MetricLabels& labels, double v) {
            const auto [it, fresh] = at.emplace(labels, f.series.size());
            if (fresh) {
                f.series.push_back(metric_value(labels, 0));
            }
            f.series[it->second].value += v;
        }
    };
    Family hits{metric_family("fhook_hist_hits", "hits of each key of a hist table (its hitcount)",
                              MetricType::Counter),
                {}};
    std::map<std::string, Family> vals;
    for (std::size_t t = 0; t < tables.size(); t++) {
        const HistSpec& spec = tables[t].spec();
        const std::string table = std::to_string(t);
        for (const HistEntry& e : tables[t].sorted()) {
            MetricLabels labels{{"table", table}};
            for (auto& [name, v] : hist_key_labels(spec, e, tracer_.ksyms(), opt_.pid_labels)) {
                labels.emplace_back(metric_name(name, true), std::move(v));
            }
            hits.add(labels, double(e.hitcount));
            for (std::size_t v = 0; v < spec.vals.size() && v < e.sums.size(); v++) {
                const std::string name = "fhook_hist_" + metric_name(spec.vals[v].name, true);
                auto it = vals.find(name);
                if (it == vals.end()) {
                    it = vals.emplace(name, Family{metric_family(name,
                                                                 "the sum of " + spec.vals[v].name +
                                                                     " over a hist key's hits",
                                                                 MetricType::Counter),
                                                   {}})
                             .first;
                }
                it->second.add(labels, double(e.sums[v]));
            }
        }
        drops.series.push_back(metric_value({{"table", table}}, double(tables[t].dropped())));
    }
    bound(hits.f);
    out.push_back(std::move(hits.f));
    for (auto& [name, v] : vals) {
        bound(v.f);
        out.push_back(std::move(v.f));
    }
    out.push_back(std::move(drops));
}

MetricsCollector::MetricsCollector(const Tracer& tracer, Collect collect, MetricsOptions opt)
    : tracer_(tracer), collect_(collect), opt_(opt) {}

void MetricsCollector::bound(MetricFamily& f) {
    auto& admitted = admitted_[f.name];
    std::vector<MetricSeries> kept;
    std::optional<MetricSeries> other;
    std::size_t folded = 0;
    for (MetricSeries& s : f.series) {
        // (room for the "other" series within the limit)
        if (admitted.count(s.labels) ||
            (admitted.size() + 1 < opt_.series_limit && admitted.insert(s.labels).second)) {
            kept.push_back(std::move(s));
            continue;
        }
        folded++;
        if (!other) {
            other.emplace();
            for (const auto& label : s.labels) {
                other->labels.emplace_back(label.first, "other");
            }
        }
        merge(*other, s);
    }
    if (other) {
        kept.push_back(std::move(*other));
    }
    f.series = std::move(kept);
    folded_[f.name] = folded;
}

void MetricsCollector::add_health(std::vector<MetricFamily>& out) const {
    const Stats session = tracer_.stats();
    auto events =
        metric_family("fhook_events", "records written to the rings", MetricType::Counter);
    auto lost = metric_family("fhook_lost_events",
                              "records lost, by CPU and reason (ring_full: the reader fell behind)",
                              MetricType::Counter);
    for (std::size_t cpu = 0; cpu < session.per_cpu.size(); cpu++) {
        const std::string c = std::to_string(cpu);
        events.series.push_back(metric_value({{"cpu", c}}, double(session.per_cpu[cpu].written)));
        lost.series.push_back(
            metric_value({{"cpu", c}, {"reason", "ring_full"}}, double(session.per_cpu[cpu].lost)));
    }
    auto hits = metric_family("fhook_probe_hits", "hits of each probe, filtered ones included",
                              MetricType::Counter);
    auto missed = metric_family("fhook_probe_missed",
                                "hits a probe could not take (recursion, kprobe misses)",
                                MetricType::Counter);
    for (const ProbeSummary& p : tracer_.probes()) {
        const Stats s = tracer_.stats(p.id);
        const MetricLabels labels{{"probe", std::to_string(p.id)}, {"spec", p.description}};
        hits.series.push_back(metric_value(labels, double(s.total.hits)));
        missed.series.push_back(metric_value(labels, double(s.total.missed)));
    }
    auto probes = metric_family("fhook_probes", "probes armed", MetricType::Gauge);
    probes.series.push_back(metric_value({}, double(tracer_.probes().size())));
    auto folded = metric_family("fhook_series_folded",
                                "label sets of a metric folded into its \"other\" series (the "
                                "per-metric series limit)",
                                MetricType::Gauge);
    for (const auto& [name, n] : folded_) {
        folded.series.push_back(metric_value({{"metric", name}}, double(n)));
    }
    auto scrape =
        metric_family("fhook_scrape_duration_seconds",
                      "how long the previous collection of these metrics took", MetricType::Gauge);
    scrape.series.push_back(metric_value({}, last_scrape_.count()));
    for (auto* f : {&events, &lost, &hits, &missed, &probes, &folded, &scrape}) {
        out.push_back(std::move(*f));
    }
}

std::vector<MetricFamily> MetricsCollector::collect() {
    const std::lock_guard lock(mutex_);
    const auto start = std::chrono::steady_clock::now();
    std::vector<MetricFamily> out;
    if (collect_ == Collect::Counts) {
        auto calls = metric_family("fhook_calls", "calls of each function counted (fhook count)",
                                   MetricType::Counter);
        for (const CountRow& row : tracer_.count_rows()) {
            calls.series.push_back(metric_value(
                {{"function", row.function}, {"module", row.module}}, double(row.hits)));
        }
        bound(calls);
        out.push_back(std::move(calls));
    } else if (collect_ == Collect::Latency) {
        auto duration = metric_family("fhook_function_duration_seconds",
                                      "durations of each function's calls, entry to return "
                                      "(fhook latency; the module's log2 buckets)",
                                      MetricType::Histogram);
        auto inflight = metric_family("fhook_function_inflight", "calls inside each function now",
                                      MetricType::Gauge);
        for (const ProbeSummary& p : tracer_.probes()) {
            const LatencyHist h = tracer_.latency(p.id);
            duration.series.push_back(latency_series(h, {{"function", p.description}}));
            inflight.series.push_back(
                metric_value({{"function", p.description}}, double(h.inflight)));
        }
        bound(duration);
        bound(inflight);
        out.push_back(std::move(duration));
        out.push_back(std::move(inflight));
    }
    if (collect_ == Collect::Wakeup) {
        // the module's histogram of every wakeup latency, per CPU
        auto latency = metric_family("fhook_wakeup_latency_seconds",
                                     "wakeup to switch latency of the tracked tasks, per CPU "
                                     "(fhook wakeup; the module's log2 buckets)",
                                     MetricType::Histogram);
        auto max = metric_family("fhook_wakeup_latency_max_seconds",
                                 "the longest wakeup latency so far, per CPU", MetricType::Gauge);
        const std::uint32_t id = tracer_.probes().front().id;
        for (unsigned cpu = 0; cpu < tracer_.nr_rings(); cpu++) {
            const LatencyHist h = tracer_.latency(id, cpu);
            const MetricLabels labels{{"tracer", opt_.tracer}, {"cpu", std::to_string(cpu)}};
            latency.series.push_back(latency_series(h, labels));
            max.series.push_back(metric_value(labels, double(h.max_ns) / 1e9));
        }
        out.push_back(std::move(latency));
        out.push_back(std::move(max));
    }
    if (hist_) {
        add_hist(out);
    }
    if (families_) {
        for (MetricFamily& f : families_()) {
            bound(f);
            out.push_back(std::move(f));
        }
    }
    add_health(out);
    last_scrape_ = std::chrono::steady_clock::now() - start;
    return out;
}

std::string MetricsCollector::prometheus_text() {
    return fhook::prometheus_text(collect());
}

std::string MetricsCollector::otlp_json() {
    std::vector<MetricFamily> families = collect();
    char host[256] = "";
    ::gethostname(host, sizeof(host) - 1);
    const auto ns = [](std::chrono::system_clock::time_point t) {
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
    };
    return otlp_metrics_json(families, {{"host.name", host}}, ns(started_),
                             ns(std::chrono::system_clock::now()));
}

MetricsServer::MetricsServer(Text text, const std::string& address)
    : server_(address, [text = std::move(text)](std::string_view method, std::string_view target,
                                                std::string_view) {
          const std::string_view path = target.substr(0, target.find('?'));
          if (method != "GET" && method != "HEAD") {
              return HttpReply{405, "text/plain; charset=utf-8", "GET /metrics\n"};
          }
          if (path == "/metrics") {
              std::optional<std::string> body = text();
              if (!body) {
                  return HttpReply{503, "text/plain; charset=utf-8", "fhook: arming the probes\n"};
              }
              return HttpReply{200, kExposition, std::move(*body)};
          }
          if (path == "/") {
              return HttpReply{200, "text/html; charset=utf-8",
                               "<html><head><title>fhook</title></head><body><h1>fhook</h1>"
                               "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n"};
          }
          return HttpReply{404, "text/plain; charset=utf-8", "not found: GET /metrics\n"};
      }) {}

MetricsServer::MetricsServer(MetricsCollector& collector, const std::string& address)
    : MetricsServer(
          [&collector]() -> std::optional<std::string> {
              if (!collector.is_ready()) {
                  return std::nullopt;
              }
              return collector.prometheus_text();
          },
          address) {}

void push_metrics(MetricsCollector& collector, const std::string& url) {
    // (a bare gateway address: the group of job "fhook")
    http_send("PUT", url_with_path(url, "/metrics/job/fhook"), kExposition,
              collector.prometheus_text(), "the Pushgateway");
}

void otlp_push_metrics(MetricsCollector& collector, const std::string& url) {
    http_send("POST", url_with_path(url, "/v1/metrics"), "application/json", collector.otlp_json(),
              "the OTLP endpoint");
}

} // namespace fhook
