// The operating system noise tracer's output: each period as the kernel's
// osnoise tracer prints it in `trace`, each gap as its sample_threshold
// event, and rtla osnoise's top and hist tables from an OsnoiseSummary.
#pragma once

#include <string>
#include <string_view>

#include <fhook_abi.h>

#include <fhook/core/osnoise.hpp>

namespace fhook {

// The column legend the kernel's trace file opens with under osnoise.
std::string format_osnoise_header();
// "comm-pid [cpu] flags seconds: RUNTIME NOISE %AVAIL MAX-SINGLE HW NMI IRQ
// SIRQ THREAD" (times in us)
std::string format_osnoise_line(const fhook_rec_osnoise& r, std::string_view comm);
// "comm-pid [cpu] flags seconds: sample_threshold: start S duration N ns
// interference N", then what interfered ("irq:1 softirq:1")
std::string format_osnoise_noise_line(const fhook_rec_osnoise_noise& r, std::string_view comm);
// One JSON object (no newline) per record.
std::string format_osnoise_json(const fhook_rec_osnoise& r, std::string_view comm);
std::string format_osnoise_noise_json(const fhook_rec_osnoise_noise& r, std::string_view comm);

// rtla osnoise top: per CPU the periods, runtime, noise, % of the CPU
// available, the noisiest period's noise, the longest gap (us) and the
// interference counters, then ALL.
std::string format_osnoise_top(const OsnoiseSummary& s);
// {"tracer": "osnoise", "cpus": [{cpu, periods, runtime_ns, noise_ns,
// available_percent, max_noise_ns, max_single_ns, hw, nmi, irq, softirq,
// thread}], "all": {...}}
std::string format_osnoise_top_json(const OsnoiseSummary& s);

// rtla osnoise hist: the gaps' durations per CPU, one row per non-empty
// bucket (its lower bound in us), then over, count, min, avg, max.
std::string format_osnoise_hist(const OsnoiseSummary& s);
// {"tracer": "osnoise", "bucket_ns", "cpus": [{cpu, count, min_ns, avg_ns,
// max_ns, buckets: [{lo_ns, count}], over}], "all": {...}}
std::string format_osnoise_hist_json(const OsnoiseSummary& s);

} // namespace fhook
