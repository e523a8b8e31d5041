// The wakeup latency tracer's output: a tracked wakeup as the kernel's
// latency trace (what `cat trace` shows under current_tracer=wakeup_rt),
// and the per-CPU tables of rtla's top and hist modes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/latency.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

// What the latency trace's header says about the machine.
struct LatencyTraceHost {
    std::string tracer;        // "wakeup", "wakeup_rt", "wakeup_dl"
    std::string release;       // uname -r
    std::string preempt_model; // "server", "desktop", "preempt", "preempt_rt"
    unsigned online_cpus = 0;
};

// The kernel's latency-trace form of one report: "# tracer: ...", the
// "# latency: N us, #E/E, CPU#C | (M:model VP:0, KP:0, SP:0 HP:0 #P:N)"
// header, the task, the column legend, then the wakeup line, the waker's
// `stack` there (innermost first, " => name"; none: no such entry) and
// the switch line.  `prev_comm` is the name of the task switched out
// (hdr.pid).
std::string format_wakeup_trace(const fhook_rec_wakeup& w, std::string_view prev_comm,
                                const std::vector<std::uint64_t>& stack, const Ksyms& ksyms,
                                const LatencyTraceHost& host);
// One JSON object (no newline) for the same report, the waker's stack as
// "waker_stack" (names) when there is one.
std::string format_wakeup_json(const fhook_rec_wakeup& w, std::string_view prev_comm,
                               const std::vector<std::uint64_t>& stack, const Ksyms& ksyms,
                               std::string_view tracer);

// A task's state as the kernel's latency traces print it (R, S, D, T, t,
// X, Z, P, I), from TASK_* bits.
char task_state_char(std::uint32_t state);

// One CPU's histogram; cpu < 0: all of them.
struct CpuLatency {
    int cpu = -1;
    LatencyHist hist;
};

// rtla's top: one row per CPU with samples (count, min, avg, max in `unit`),
// then the total.
std::string format_latency_top(const std::vector<CpuLatency>& rows, std::string_view title,
                               LatencyUnit unit);
// The same as one JSON object: {"title", "cpus": [{cpu, count, min_ns,
// avg_ns, max_ns}...], "all": {...}}.
std::string format_latency_top_json(const std::vector<CpuLatency>& rows, std::string_view title);

} // namespace fhook
