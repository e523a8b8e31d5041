#include <fhook/core/latency.hpp>

namespace fhook {

LatencyHist LatencyHist::since(const LatencyHist& earlier) const {
    auto minus = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
    LatencyHist d;
    d.count = minus(count, earlier.count);
    d.sum_ns = minus(sum_ns, earlier.sum_ns);
    d.inflight = inflight;
    d.min_ns = min_ns;
    d.max_ns = max_ns;
    for (std::size_t i = 0; i < buckets.size(); i++) {
        d.buckets[i] = minus(buckets[i], earlier.buckets[i]);
    }
    return d;
}

std::pair<std::uint64_t, std::uint64_t> latency_bucket_range(std::size_t i) {
    if (i == 0) {
        return {0, 0};
    }
    const std::uint64_t lo = 1ULL << (i - 1);
    const std::uint64_t hi = i + 1 >= FHOOK_LAT_BUCKETS ? ~0ULL : (1ULL << i) - 1;
    return {lo, hi};
}

} // namespace fhook
