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

// A function called on the tracked task's CPU between its wakeup and the
// switch to it (fhook wakeup --function), as its record had it.
struct WakeupCall {
    std::uint64_t ts = 0;
    std::uint64_t ip = 0;
    std::uint64_t parent_ip = 0;
    std::uint32_t pid = 0;
    std::uint16_t cpu = 0;
    std::uint8_t flags = 0;   // FHOOK_CTX_*
    std::uint8_t preempt = 0; // as fhook_rec.preempt
    std::string comm;
};

// One report of a wakeup tracer: its record, the name of the task switched
// out (rec.hdr.pid), the waker's stack and the switch's (innermost first;
// empty: none) and the function calls between the wakeup and the switch,
// oldest first.
struct WakeupReport {
    fhook_rec_wakeup rec{};
    std::string prev_comm;
    std::vector<std::uint64_t> stack;
    std::vector<WakeupCall> calls;
    std::vector<std::uint64_t> switch_stack;
};

// The kernel's latency-trace form of one report: "# tracer: ...", the
// "# latency: N us, #E/E, CPU#C | (M:model VP:0, KP:0, SP:0 HP:0 #P:N)"
// header, the task, the column legend, then the wakeup line, the waker's
// stack there (" => name"), each function call ("func <-parent"), the
// switch line and the stack there.
std::string format_wakeup_trace(const WakeupReport& report, const Ksyms& ksyms,
                                const LatencyTraceHost& host);
// One JSON object (no newline) for the same report, the stacks as
// "waker_stack" and "switch_stack" (names) and the calls as "functions"
// when there are some.
std::string format_wakeup_json(const WakeupReport& report, const Ksyms& ksyms,
                               std::string_view tracer);
// The `index`-th report of a run as `format` prints it: a latency trace
// (a blank line before all but the first) or a JSON line.
std::string format_wakeup_report(const WakeupReport& report, const Ksyms& ksyms,
                                 const LatencyTraceHost& host, bool json, std::size_t index);

// A task's state as the kernel's latency traces keep it: its index
// (__task_state_index(), 0 for running to 8 for idle) and its letter (R,
// S, D, T, t, X, Z, P, I), from TASK_* bits.
unsigned task_state_index(std::uint32_t state);
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
