// The records of the latency tracers that print one line (or one latency
// trace) per record, timerlat, hwlat, osnoise and irqsoff, as their
// commands print them: the same for `fhook timerlat` and for `fhook
// report` of its record file.  (The wakeup tracers' reports take their
// function calls along: wakeup_format.hpp.)
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include <fhook/output/wakeup_format.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

class TracerPrinter {
public:
    // `host` names the irqsoff tracer and the machine for its latency
    // traces; `json`: one JSON object a line instead.
    TracerPrinter(const Ksyms& ksyms, LatencyTraceHost host, bool json);
    // `ev` as its command prints it: a tracer's column header before its
    // first text line, a blank line between two latency traces; "" for an
    // event of none of these tracers.
    std::string format(const Event& ev);

private:
    const Ksyms& ksyms_;
    LatencyTraceHost host_;
    bool json_;
    std::set<int> headed_; // the tracers whose header is out
    std::size_t traces_ = 0;
};

// Is `description` (a recorded probe's) one of these tracers?
bool is_line_tracer(const std::string& description);

} // namespace fhook
