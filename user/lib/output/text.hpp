// printf-style pieces of the latency tracers' text output.  Internal to
// user/lib/output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <fhook/output/format.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/output/wakeup_format.hpp>

namespace fhook::text {

// snprintf into a string (one line of a table: 256 bytes at most).
std::string printf_string(const char* fmt, auto... args) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), fmt, args...);
    return buf;
}

// ns in `unit`, three decimals in us and ms ("12.345").
inline std::string in_unit(std::uint64_t ns, LatencyUnit unit) {
    switch (unit) {
    case LatencyUnit::Usecs:
        return printf_string("%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                             static_cast<unsigned long long>(ns % 1000));
    case LatencyUnit::Msecs:
        return printf_string("%llu.%03llu", static_cast<unsigned long long>(ns / 1000000),
                             static_cast<unsigned long long>(ns % 1000000 / 1000));
    case LatencyUnit::Nsecs:
        break;
    }
    return std::to_string(ns);
}

inline std::uint64_t unit_ns(LatencyUnit unit) {
    return unit == LatencyUnit::Msecs ? 1000000 : unit == LatencyUnit::Usecs ? 1000 : 1;
}

inline const char* unit_name(LatencyUnit unit) {
    return unit == LatencyUnit::Msecs ? "ms" : unit == LatencyUnit::Usecs ? "us" : "ns";
}

// The first lines of the kernel's trace legend under a tracer that prints
// one event per line (timerlat, hwlat): "# tracer: NAME" and the context
// columns.
inline std::string trace_legend(const char* tracer) {
    return std::string("# tracer: ") + tracer +
           "\n"
           "#\n"
           "#                                _-----=> irqs-off/BH-disabled\n"
           "#                               / _----=> need-resched\n"
           "#                              | / _---=> hardirq/softirq\n"
           "#                              || / _--=> preempt-depth\n"
           "#                              ||| / _-=> migrate-disable\n";
}

// lat_print_generic() + the timestamp: "comm-pid cpu flags   Nus%c: "
inline std::string lat_line(std::string_view comm, std::uint32_t pid, unsigned cpu,
                            std::uint8_t flags, std::uint8_t preempt, std::uint64_t at_ns,
                            std::uint64_t next_ns) {
    return printf_string("%8.8s-%-7u %3u", std::string(comm).c_str(), pid, cpu) +
           std::string(context_chars(flags, preempt).data(), 5) +
           printf_string(" %4lluus%c: ", static_cast<unsigned long long>(at_ns / 1000),
                         delay_mark(next_ns > at_ns ? next_ns - at_ns : 0));
}

// A latency trace's first lines, to its "# latency:" line and the rule
// under it: `entries` lines, on `cpu`.
inline std::string latency_header(const LatencyTraceHost& host, std::uint64_t latency_ns,
                                  unsigned entries, unsigned cpu) {
    return "# tracer: " + host.tracer + "\n#\n# " + host.tracer + " latency trace v1.1.5 on " +
           host.release +
           "\n# --------------------------------------------------------------------\n" +
           printf_string(
               "# latency: %llu us, #%u/%u, CPU#%u | (M:%s VP:0, KP:0, SP:0 HP:0 #P:%u)\n",
               static_cast<unsigned long long>(latency_ns / 1000), entries, entries, cpu,
               host.preempt_model.c_str(), host.online_cpus) +
           "#    -----------------\n";
}

// The column legend of a latency trace.
inline std::string latency_legend() {
    return "#                    _------=> CPU#            \n"
           "#                   / _-----=> irqs-off/BH-disabled\n"
           "#                  | / _----=> need-resched    \n"
           "#                  || / _---=> hardirq/softirq \n"
           "#                  ||| / _--=> preempt-depth   \n"
           "#                  |||| / _-=> migrate-disable \n"
           "#                  ||||| /     delay           \n"
           "#  cmd     pid     |||||| time  |   caller     \n"
           "#     \\   /        ||||||  \\    |    /       \n";
}

} // namespace fhook::text
