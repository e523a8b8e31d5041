// A histogram (fhook/hist.hpp) as the kernel's tracefs `hist` file prints
// it (kernel/trace/trace_events_hist.c: hist_show()), and as JSON.
#pragma once

#include <string>

#include <fhook/hist.hpp>
#include <fhook/ksyms.hpp>

namespace fhook {

// "# event histogram" and the trigger, an entry per line in the spec's
// sort order, the Totals block: byte for byte what the kernel prints for
// the same entries (entries with equal sort values in key order: the
// kernel's heapsort leaves them in an order of its own).
void append_hist_text(const HistTable& table, const Ksyms& ksyms, std::string& out);

// One JSON object per entry ({"key":{...},"hitcount":N,VAL:N...}) in the
// same order, then {"totals":{"hits":N,"entries":N,"dropped":N}}; a line
// each.
void append_hist_json(const HistTable& table, const Ksyms& ksyms, std::string& out);

} // namespace fhook
