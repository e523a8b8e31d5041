// Latency histograms: the in-module log2 histograms of latency probes
// (FHOOK_PROBE_F_LATENCY, FHOOK_IOC_LATENCY), their text and JSON forms,
// and the stack words the latency trampoline copies for the functions a
// probe selects.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fhook_abi.h>

#include "fhook/btf.hpp"
#include "fhook/spec.hpp"

namespace fhook {

struct LatencyHist {
    std::uint64_t count = 0;    // calls timed
    std::uint64_t sum_ns = 0;   // their total duration
    std::uint64_t inflight = 0; // calls inside the function when read
    // [0]: 0 ns; [i]: [2^(i-1), 2^i) ns; the last one everything longer
    std::array<std::uint64_t, FHOOK_LAT_BUCKETS> buckets{};

    // What happened between `earlier` and this read (an interval).
    LatencyHist since(const LatencyHist& earlier) const;
};

// Bucket i's range in ns, both ends included: {0, 0}, {1, 1}, {2, 3}, ...
std::pair<std::uint64_t, std::uint64_t> latency_bucket_range(std::size_t i);

// libbpf-tools funclatency's layout: "     nsecs : count distribution" rows
// from the first to the last non-empty bucket, then avg, total and count.
// `title` goes first on its own line when not empty.
std::string format_latency_text(const LatencyHist& h, std::string_view title);
// One JSON object (no newline): name, count, sum_ns, avg_ns, inflight and
// the non-empty buckets as {"lo": ns, "hi": ns, "count": n}.
std::string format_latency_json(const LatencyHist& h, std::string_view name);

// The stack words of arguments a function's callers pass (7th argument
// on, structs over 16 bytes), from its BTF prototype.
std::uint32_t stack_arg_words(const KernelBtf& btf, const KernelBtf::Function& f);

// The functions `spec` selects in `functions` that a latency trampoline may
// time, and what it copies for them: the most stack words any of them
// takes (BTF), or FHOOK_HOOK_MAX_STACK_ARGS for one without BTF (which the
// module accepts from CAP_SYS_ADMIN only).  Variadic functions and those
// taking more than the trampoline copies are `skipped` (the caller leaves
// them out, or refuses a named one); the module checks the same in BTF.
struct LatencyStackPlan {
    std::uint32_t stack_args = 0;
    std::size_t selected = 0;         // functions the spec selects
    std::vector<std::string> skipped; // their names
    std::vector<std::string> why;     // and the reason for each
    // the functions to time: name and module ("" for vmlinux)
    std::vector<std::pair<std::string, std::string>> timed;
};
// `module_btf` gives a module's BTF (nullptr: none) for its functions.
using ModuleBtfProvider = std::function<const KernelBtf*(const std::string& module)>;
LatencyStackPlan plan_latency_stack(const ProbeSpec& spec, const FunctionList& functions,
                                    const KernelBtf* btf, const ModuleBtfProvider& module_btf = {});

} // namespace fhook
