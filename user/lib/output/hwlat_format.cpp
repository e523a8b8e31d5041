#include <nlohmann/json.hpp>

#include <fhook/output/format.hpp>
#include <fhook/output/hwlat_format.hpp>

#include "text.hpp"

namespace fhook {

using text::printf_string;

std::string format_hwlat_header() {
    return text::trace_legend("hwlat") +
           "#                              |||| /     delay\n"
           "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
           "#              | |         |   |||||     |         |\n";
}

std::string format_hwlat_line(const fhook_rec_hwlat& r, std::string_view comm) {
    const auto ctx = context_chars(r.hdr.flags, r.hdr.preempt);
    const auto secs = static_cast<unsigned long long>(r.hdr.ts / 1000000000);
    const auto nsecs = static_cast<unsigned long long>(r.hdr.ts % 1000000000);
    std::string out = printf_string(
        "%16.16s-%-7u [%03u] %.5s %5llu.%06llu: #%-5llu inner/outer(us): %4llu/%-5llu "
        "ts:%llu.%09llu count:%u",
        std::string(comm).c_str(), r.hdr.pid, r.hdr.cpu, ctx.data(), secs, nsecs / 1000,
        static_cast<unsigned long long>(r.seqnum),
        static_cast<unsigned long long>(r.inner_ns / 1000),
        static_cast<unsigned long long>(r.outer_ns / 1000), secs, nsecs, r.count);
    if (r.nmi_count) {
        out += printf_string(" nmi-total:%llu nmi-count:%u",
                             static_cast<unsigned long long>(r.nmi_total_ns / 1000), r.nmi_count);
    }
    return out + "\n";
}

std::string format_hwlat_json(const fhook_rec_hwlat& r) {
    nlohmann::ordered_json j = {{"cpu", r.hdr.cpu},         {"ts_ns", r.hdr.ts},
                                {"seqnum", r.seqnum},       {"inner_ns", r.inner_ns},
                                {"outer_ns", r.outer_ns},   {"count", r.count},
                                {"nmi_count", r.nmi_count}, {"nmi_total_ns", r.nmi_total_ns}};
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace fhook
