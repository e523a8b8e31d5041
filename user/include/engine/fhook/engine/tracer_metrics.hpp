// The latency tracers' measures as metrics (timerlat, osnoise, hwlat and
// the irqsoff tracers; docs/fleet.md names them): their records summed as
// the reader decodes them, made into families when the endpoint collects
// (from its own threads).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fhook/core/latency.hpp>
#include <fhook/core/osnoise.hpp>
#include <fhook/engine/tracer.hpp>
#include <fhook/output/metrics.hpp>

namespace fhook {

class TracerMetricsSink final : public EventSink {
public:
    // `tracer`: the tracer's name where one command runs several (irqsoff,
    // preemptoff, preemptirqsoff), a label of its families; "" for none.
    explicit TracerMetricsSink(std::string tracer = {}) : tracer_(std::move(tracer)) {}
    void on_event(const Event& ev) override;
    // What was summed so far: per CPU (and context), a log2 histogram of
    // the measures and their maximum; osnoise's periods as counters.
    // Thread-safe.
    std::vector<MetricFamily> families() const;

private:
    void measure(const char* family, MetricLabels labels, std::uint64_t ns);

    std::string tracer_;
    mutable std::mutex mutex_;
    // per family (kMeasures), per label set
    std::map<std::string, std::map<MetricLabels, LatencyHist>> measures_;
    std::map<unsigned, OsnoiseCpu> periods_;
};

} // namespace fhook
