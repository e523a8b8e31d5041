// The irqsoff tracers' reports (FHOOK_REC_IRQSOFF) as the kernel prints
// them in `trace` under irqsoff, preemptoff and preemptirqsoff: its latency
// trace, with where the section started and ended and the stack at its end.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fhook_abi.h>

#include <fhook/output/wakeup_format.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

// "# tracer: irqsoff", the "# latency:" header, "=> started at:" and
// "=> ended at:", the legend, the lines of the section's start and end,
// then the stack where it ended (innermost first, " => name").
std::string format_irqsoff_trace(const fhook_rec_irqsoff& r, std::string_view comm,
                                 const std::vector<std::uint64_t>& stack, const Ksyms& ksyms,
                                 const LatencyTraceHost& host);
// One JSON object (no newline): tracer, latency_ns, cpu, ts_ns, seqnum,
// comm, pid, started_at, ended_at (the kernel's: the callers of what
// turned the kind off and on), start_function, end_function (those),
// stack (names).
std::string format_irqsoff_json(const fhook_rec_irqsoff& r, std::string_view comm,
                                const std::vector<std::uint64_t>& stack, const Ksyms& ksyms,
                                std::string_view tracer);

} // namespace fhook
