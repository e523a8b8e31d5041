// The hardware latency detector's output: each sample as the kernel's
// hwlat tracer prints it in `trace`, and a JSON form.
#pragma once

#include <string>
#include <string_view>

#include <fhook_abi.h>

namespace fhook {

// The column legend the kernel's trace file opens with under hwlat.
std::string format_hwlat_header();
// "comm-pid [cpu] flags seconds: #seq inner/outer(us): I/O ts:S.N count:C"
// (and " nmi-total:T nmi-count:N" when NMIs ran), inner and outer in
// whole microseconds as the kernel prints them.
std::string format_hwlat_line(const fhook_rec_hwlat& r, std::string_view comm);
// One JSON object (no newline): cpu, ts_ns, seqnum, inner_ns, outer_ns,
// count, nmi_count, nmi_total_ns.
std::string format_hwlat_json(const fhook_rec_hwlat& r);

} // namespace fhook
