// The timer latency tracer's output: each measure as the kernel's
// timerlat tracer prints it in `trace`, and rtla timerlat's top and hist
// tables from a TimerlatSummary.
#pragma once

#include <string>
#include <string_view>

#include <fhook_abi.h>

#include <fhook/core/timerlat.hpp>
#include <fhook/output/latency_format.hpp>

namespace fhook {

// The column legend the kernel's trace file opens with under timerlat.
std::string format_timerlat_header();
// "comm-pid [cpu] flags seconds: #seq context irq|thread timer_latency N ns"
std::string format_timerlat_line(const fhook_rec_timerlat& r, std::string_view comm);
// One JSON object (no newline): cpu, ts_ns, seqnum, context, latency_ns,
// comm, pid, stopped.
std::string format_timerlat_json(const fhook_rec_timerlat& r, std::string_view comm);

// rtla timerlat top: per CPU the count, then cur, min, avg and max of the
// IRQ and the thread latency in `unit`, then ALL.
std::string format_timerlat_top(const TimerlatSummary& s, LatencyUnit unit);
// {"tracer": "timerlat", "cpus": [{cpu, irq: {count, cur_ns, min_ns,
// avg_ns, max_ns}, thread: {...}}], "all": {irq, thread}}
std::string format_timerlat_top_json(const TimerlatSummary& s);

// rtla timerlat hist: one row per non-empty bucket (its lower bound in
// `unit`), IRQ and thread columns per CPU, then over, count, min, avg, max.
std::string format_timerlat_hist(const TimerlatSummary& s, LatencyUnit unit);
// The top object with each side's non-empty buckets ({lo_ns, count}) and over.
std::string format_timerlat_hist_json(const TimerlatSummary& s);

} // namespace fhook
