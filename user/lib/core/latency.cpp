#include <algorithm>
#include <bit>
#include <limits>

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

void LatencyHist::add(std::uint64_t ns) {
    min_ns = count ? std::min(min_ns, ns) : ns;
    max_ns = std::max(max_ns, ns);
    count++;
    sum_ns += ns;
    // (bucket i holds [2^(i-1), 2^i): i is the bit width of ns)
    buckets[std::min<std::size_t>(std::bit_width(ns), buckets.size() - 1)]++;
}

std::size_t LatencyHist::exported_buckets() const {
    // (always up to 2^34 - 1 ns: one bucket set over time)
    std::size_t n = 35;
    for (std::size_t i = n; i + 1 < buckets.size(); i++) {
        if (buckets[i]) {
            n = i + 1;
        }
    }
    return n;
}

double LatencyHist::quantile(double q) const {
    // (Prometheus's bucketQuantile(), promql/quantile.go, on bounds in ns)
    if (q < 0) {
        return -std::numeric_limits<double>::infinity();
    }
    if (q > 1) {
        return std::numeric_limits<double>::infinity();
    }
    if (count == 0) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    const std::size_t n = exported_buckets();
    double rank = q * static_cast<double>(count);
    double below = 0; // calls in the buckets before b
    for (std::size_t b = 0; b < n; b++) {
        const double upto = below + static_cast<double>(buckets[b]);
        if (upto >= rank) {
            const double end = static_cast<double>(latency_bucket_range(b).second);
            if (b == 0) {
                return end; // 0 ns: no bucket below it
            }
            const double start = static_cast<double>(latency_bucket_range(b - 1).second);
            return start + (end - start) * ((rank - below) / (upto - below));
        }
        below = upto;
    }
    // in +Inf: the highest finite bound
    return static_cast<double>(latency_bucket_range(n - 1).second);
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
