// Latency histograms: the in-module log2 histograms of latency probes
// (FHOOK_PROBE_F_LATENCY) and the latency tracers (FHOOK_PROBE_WAKEUP),
// read with FHOOK_IOC_LATENCY.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include <fhook_abi.h>

namespace fhook {
struct LatencyHist {
    std::uint64_t count = 0;    // calls timed
    std::uint64_t sum_ns = 0;   // their total duration
    std::uint64_t inflight = 0; // calls inside the function when read
    // the shortest and longest so far, 0 without any (or from a module
    // without FHOOK_FEAT_WAKEUP)
    std::uint64_t min_ns = 0;
    std::uint64_t max_ns = 0;
    // [0]: 0 ns; [i]: [2^(i-1), 2^i) ns; the last one everything longer
    std::array<std::uint64_t, FHOOK_LAT_BUCKETS> buckets{};

    // One measure of `ns` added, as the module adds a call's (for
    // measures summed in userspace: the latency tracers' metrics).
    void add(std::uint64_t ns);

    // What happened between `earlier` and this read (an interval); min_ns
    // and max_ns stay this read's (since the start).
    LatencyHist since(const LatencyHist& earlier) const;
    // The q-quantile in ns as Prometheus's histogram_quantile() computes it
    // over these buckets exported (output/metrics.hpp, latency_series():
    // bucket i's upper bound 2^i - 1 ns, up to 2^34 - 1 ns or the longest
    // non-empty one): linear within the bucket where the rank falls, the
    // highest bound where it falls in the last, unbounded one; NaN without
    // calls.
    double quantile(double q) const;
    // the buckets exported: the first `exported_buckets()` (then +Inf)
    std::size_t exported_buckets() const;
};

// Bucket i's range in ns, both ends included: {0, 0}, {1, 1}, {2, 3}, ...
std::pair<std::uint64_t, std::uint64_t> latency_bucket_range(std::size_t i);

} // namespace fhook
