// The event formats a trace.dat written by fhook declares (tracedat.cpp):
// ftrace's own events as the kernel's events/ftrace/*/format files give
// them (kernel/trace/trace_entries.h, IDs from enum trace_type), and the
// events of fhook's making.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fhook::tracedat {

// ftrace's event IDs (enum trace_type, 6.1 and 6.12)
constexpr std::uint16_t kFunctionId = 1;    // function (TRACE_FN)
constexpr std::uint16_t kSwitchId = 2;      // context_switch (TRACE_CTX)
constexpr std::uint16_t kWakeupId = 3;      // wakeup (TRACE_WAKE)
constexpr std::uint16_t kStackId = 4;       // kernel_stack (TRACE_STACK)
constexpr std::uint16_t kGraphExitId = 10;  // funcgraph_exit (TRACE_GRAPH_RET)
constexpr std::uint16_t kGraphEntryId = 11; // funcgraph_entry (TRACE_GRAPH_ENT)
constexpr std::uint16_t kHwlatId = 15;      // hwlat (TRACE_HWLAT)
constexpr std::uint16_t kOsnoiseId = 16;    // osnoise (TRACE_OSNOISE)
constexpr std::uint16_t kTimerlatId = 17;   // timerlat (TRACE_TIMERLAT)
// fhook's own
constexpr std::uint16_t kNoiseId = 0xd000;   // osnoise:sample_threshold
constexpr std::uint16_t kHookBase = 0xe000;  // fhook:hook_<probe id>
constexpr std::uint16_t kProbeBase = 0xf000; // GROUP:EVENT of a definition

// common_type, common_flags, common_preempt_count, common_pid
extern const char* const kCommonFields;

// The "ftrace" system's formats, every one of those above.
std::vector<std::string> ftrace_formats();
// osnoise:sample_threshold as fhook writes it (the kernel's fields;
// its print format without the kernel's ns-to-seconds macros).
std::string noise_format();
// fhook/hook_ID: function, caller, return value, duration, action.
std::string hook_format(std::uint32_t id);

} // namespace fhook::tracedat
