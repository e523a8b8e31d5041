#include <fhook/engine/tracer_metrics.hpp>

namespace fhook {

namespace {

// The measures' families: a histogram NAME_seconds and a gauge
// NAME_max_seconds each.
struct Measure {
    const char* name;
    const char* help;
};

constexpr Measure kMeasures[] = {
    {"fhook_timerlat_latency",
     "how late the timer's IRQ handler (context=irq) and the thread it wakes (context=thread) "
     "ran, per CPU (fhook timerlat)"},
    {"fhook_osnoise_gap",
     "each gap of at least the threshold the osnoise threads saw, per CPU (fhook osnoise hist "
     "and trace)"},
    {"fhook_hwlat_gap",
     "the longest gap of each window with one over the threshold, per CPU (fhook hwlat)"},
    {"fhook_irqsoff_section", "the sections reported (each longer than every one before, or each "
                              "over the threshold), per CPU "
                              "(fhook irqsoff, preemptoff, preemptirqsoff)"},
};

} // namespace

void TracerMetricsSink::measure(const char* name, MetricLabels labels, std::uint64_t ns) {
    measures_[name][std::move(labels)].add(ns);
}

void TracerMetricsSink::on_event(const Event& ev) {
    const std::string cpu = std::to_string(ev.cpu);
    const std::lock_guard lock(mutex_);
    switch (ev.type) {
    case EventType::Timerlat:
        measure(kMeasures[0].name,
                {{"context", timerlat_of(ev).context == FHOOK_TIMERLAT_IRQ ? "irq" : "thread"},
                 {"cpu", cpu}},
                ev.duration);
        break;
    case EventType::OsnoiseNoise:
        measure(kMeasures[1].name, {{"cpu", cpu}}, ev.duration);
        break;
    case EventType::Osnoise:
        periods_[ev.cpu].add(osnoise_of(ev));
        break;
    case EventType::Hwlat:
        measure(kMeasures[2].name, {{"cpu", cpu}}, ev.duration);
        break;
    case EventType::Irqsoff:
        measure(kMeasures[3].name, {{"tracer", tracer_}, {"cpu", cpu}}, ev.duration);
        break;
    default:
        break;
    }
}

std::vector<MetricFamily> TracerMetricsSink::families() const {
    const std::lock_guard lock(mutex_);
    std::vector<MetricFamily> out;
    for (const Measure& m : kMeasures) {
        const auto it = measures_.find(m.name);
        if (it == measures_.end()) {
            continue;
        }
        auto hist = metric_family(std::string(m.name) + "_seconds",
                                  std::string(m.help) + "; log2 buckets as the module's",
                                  MetricType::Histogram);
        auto max =
            metric_family(std::string(m.name) + "_max_seconds",
                          std::string("the longest so far of: ") + m.help, MetricType::Gauge);
        for (const auto& [labels, h] : it->second) {
            hist.series.push_back(latency_series(h, labels));
            max.series.push_back(metric_value(labels, double(h.max_ns) / 1e9));
        }
        out.push_back(std::move(hist));
        out.push_back(std::move(max));
    }
    if (periods_.empty()) {
        return out;
    }
    auto runtime = metric_family("fhook_osnoise_runtime_seconds",
                                 "time the osnoise threads sampled, per CPU", MetricType::Counter);
    auto noise =
        metric_family("fhook_osnoise_noise_seconds",
                      "the gaps of at least the threshold in it, summed", MetricType::Counter);
    auto periods = metric_family("fhook_osnoise_periods", "sampling periods ended, per CPU",
                                 MetricType::Counter);
    auto interference = metric_family(
        "fhook_osnoise_interference",
        "gaps by their cause (hw: none seen, hardware or the hypervisor)", MetricType::Counter);
    auto longest =
        metric_family("fhook_osnoise_gap_max_seconds",
                      "the longest gap of any period so far, per CPU", MetricType::Gauge);
    for (const auto& [n, c] : periods_) {
        const std::string cpu = std::to_string(n);
        runtime.series.push_back(metric_value({{"cpu", cpu}}, double(c.runtime_ns) / 1e9));
        noise.series.push_back(metric_value({{"cpu", cpu}}, double(c.noise_ns) / 1e9));
        periods.series.push_back(metric_value({{"cpu", cpu}}, double(c.periods)));
        longest.series.push_back(metric_value({{"cpu", cpu}}, double(c.max_single_ns) / 1e9));
        for (const auto& [source, count] : {std::pair{"hw", c.hw},
                                            {"nmi", c.nmi},
                                            {"irq", c.irq},
                                            {"softirq", c.softirq},
                                            {"thread", c.thread}}) {
            interference.series.push_back(
                metric_value({{"cpu", cpu}, {"source", source}}, double(count)));
        }
    }
    for (auto* f : {&runtime, &noise, &periods, &interference}) {
        out.push_back(std::move(*f));
    }
    // (the gaps' own maximum when each gap is recorded; else the periods')
    if (!measures_.count(kMeasures[1].name)) {
        out.push_back(std::move(longest));
    }
    return out;
}

} // namespace fhook
