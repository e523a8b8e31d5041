// The text and JSON forms of latency histograms.
#pragma once

#include <string>
#include <string_view>

#include <fhook/core/latency.hpp>

namespace fhook {

// The unit of the text histograms (funclatency's default, -u, -m).
enum class LatencyUnit { Nsecs, Usecs, Msecs };

// libbpf-tools funclatency's layout: "     nsecs : count distribution" rows
// from the first to the last non-empty bucket, then avg, total and count
// (and min and max where the module keeps them).
// `title` goes first on its own line when not empty.  In usecs or msecs
// the module's log2 nanosecond buckets keep their exact bounds, with three
// decimals ("1.024 -> 2.047"); avg and total are whole units.
std::string format_latency_text(const LatencyHist& h, std::string_view title,
                                LatencyUnit unit = LatencyUnit::Nsecs);
// Whose histogram it is, when it is a task's: "pid" or "tgid", its id
// and name ("" once gone).
struct LatencyTask {
    std::string_view key;
    std::uint32_t id = 0;
    std::string_view comm;
};
// One JSON object (no newline): name, (the task's key and "comm"),
// count, sum_ns, avg_ns, inflight, min_ns, max_ns (0: not kept, a module
// without FHOOK_FEAT_WAKEUP or a task's histogram) and the non-empty
// buckets as {"lo": ns, "hi": ns, "count": n}.
std::string format_latency_json(const LatencyHist& h, std::string_view name,
                                const LatencyTask* task = nullptr);

} // namespace fhook
