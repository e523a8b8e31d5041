// printf-style pieces of the latency tracers' text output.  Internal to
// user/lib/output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <fhook/output/latency_format.hpp>

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

} // namespace fhook::text
