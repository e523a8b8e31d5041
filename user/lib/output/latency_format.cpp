#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include <fhook/output/latency_format.hpp>

namespace fhook {

namespace {

std::string pad_left(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

// `ns` in `unit`: whole nanoseconds, else three decimals.
std::string in_unit(std::uint64_t ns, std::uint64_t per_unit) {
    if (per_unit == 1) {
        return std::to_string(ns);
    }
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%llu.%03llu", static_cast<unsigned long long>(ns / per_unit),
                  static_cast<unsigned long long>(ns % per_unit * 1000 / per_unit));
    return buf;
}

} // namespace

std::string format_latency_text(const LatencyHist& h, std::string_view title, LatencyUnit unit) {
    const std::uint64_t per_unit = unit == LatencyUnit::Msecs   ? 1000000
                                   : unit == LatencyUnit::Usecs ? 1000
                                                                : 1;
    const char* name = unit == LatencyUnit::Msecs   ? "msecs"
                       : unit == LatencyUnit::Usecs ? "usecs"
                                                    : "nsecs";
    std::string out;
    if (!title.empty()) {
        out.append(title).append("\n");
    }
    std::size_t first = h.buckets.size(), last = 0;
    std::uint64_t peak = 0;
    for (std::size_t i = 0; i < h.buckets.size(); i++) {
        if (h.buckets[i]) {
            first = std::min(first, i);
            last = i;
            peak = std::max(peak, h.buckets[i]);
        }
    }
    if (first == h.buckets.size()) {
        out += "     (no calls)\n";
    } else {
        constexpr std::size_t kBar = 40;
        out += pad_left(name, 10) + std::string(15, ' ') + ": count    distribution\n";
        for (std::size_t i = first; i <= last; i++) {
            const auto [lo, hi] = latency_bucket_range(i);
            const std::string range = pad_left(in_unit(lo, per_unit), 20) + " -> " +
                                      (hi == ~0ULL ? std::string("...") : in_unit(hi, per_unit));
            const std::size_t stars =
                peak ? static_cast<std::size_t>((h.buckets[i] * kBar + peak - 1) / peak) : 0;
            out += pad_right(range, 40) + ": " + pad_right(std::to_string(h.buckets[i]), 8) + " |" +
                   std::string(std::min(stars, kBar), '*') +
                   std::string(kBar - std::min(stars, kBar), ' ') + "|\n";
        }
    }
    const std::uint64_t avg = h.count ? h.sum_ns / h.count : 0;
    out += "\navg = " + std::to_string(avg / per_unit) + " " + name +
           ", total: " + std::to_string(h.sum_ns / per_unit) + " " + name +
           ", count: " + std::to_string(h.count);
    if (h.max_ns) {
        out += ", min: " + in_unit(h.min_ns, per_unit) + " " + name +
               ", max: " + in_unit(h.max_ns, per_unit) + " " + name;
    }
    if (h.inflight) {
        out += ", inside now: " + std::to_string(h.inflight);
    }
    out += "\n";
    return out;
}

std::string format_latency_json(const LatencyHist& h, std::string_view name,
                                const LatencyTask* task) {
    nlohmann::ordered_json j;
    j["name"] = name;
    if (task) {
        j[std::string(task->key)] = task->id;
        j["comm"] = task->comm;
    }
    j["count"] = h.count;
    j["sum_ns"] = h.sum_ns;
    j["avg_ns"] = h.count ? h.sum_ns / h.count : 0;
    j["inflight"] = h.inflight;
    j["min_ns"] = h.min_ns;
    j["max_ns"] = h.max_ns;
    j["buckets"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < h.buckets.size(); i++) {
        if (h.buckets[i]) {
            const auto [lo, hi] = latency_bucket_range(i);
            j["buckets"].push_back({{"lo", lo}, {"hi", hi}, {"count", h.buckets[i]}});
        }
    }
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace fhook
