#include <nlohmann/json.hpp>

#include <fhook/output/irqsoff_format.hpp>

#include "text.hpp"

namespace fhook {

namespace {

// where a section started and ended: the caller of what turned the kind
// off (on), or without frame pointers (parent_ip 0) that function (the
// kernel's critical_start = parent_ip ? : ip)
std::uint64_t started_at(const fhook_rec_irqsoff& r) {
    return r.start_parent_ip ? r.start_parent_ip : r.start_ip;
}

std::uint64_t ended_at(const fhook_rec_irqsoff& r) {
    return r.end_parent_ip ? r.end_parent_ip : r.end_ip;
}

// the functions the tracepoints fire in, as the kernel's trace names them
const char* off_function(std::string_view tracer) {
    return tracer == "preemptoff" ? "preempt_count_add" : "trace_hardirqs_off";
}

const char* on_function(std::string_view tracer) {
    return tracer == "preemptoff" ? "preempt_count_sub" : "trace_hardirqs_on";
}

} // namespace

std::string format_irqsoff_trace(const fhook_rec_irqsoff& r, std::string_view comm,
                                 const std::vector<std::uint64_t>& stack, const Ksyms& ksyms,
                                 const LatencyTraceHost& host) {
    if (r.hdr.pid == 0) {
        comm = "<idle>";
    }
    std::string out = text::latency_header(host, r.latency_ns, 3, r.hdr.cpu);
    out += text::printf_string("#    | task: %.16s-%u\n", std::string(comm).c_str(), r.hdr.pid);
    out += "#    -----------------\n";
    out += "#  => started at: " + ksyms.name_of(started_at(r)) + "\n";
    out += "#  => ended at:   " + ksyms.name_of(ended_at(r)) + "\n#\n#\n";
    out += text::latency_legend();
    // the start, the end, the stack: the kernel's three entries (its
    // context columns at the end, where the record was taken)
    const auto line = [&](std::uint64_t at, std::uint64_t next) {
        return text::lat_line(comm, r.hdr.pid, r.hdr.cpu, r.hdr.flags, r.hdr.preempt, at, next);
    };
    out += line(0, r.latency_ns) + off_function(host.tracer) + " <-" +
           ksyms.name_of(started_at(r)) + "\n";
    out += line(r.latency_ns, r.latency_ns) + on_function(host.tracer) + " <-" +
           ksyms.name_of(ended_at(r)) + "\n";
    out += line(r.latency_ns, r.latency_ns) + "<stack trace>\n";
    for (const std::uint64_t ip : stack) {
        out += " => " + ksyms.name_of(ip) + "\n";
    }
    return out;
}

std::string format_irqsoff_json(const fhook_rec_irqsoff& r, std::string_view comm,
                                const std::vector<std::uint64_t>& stack, const Ksyms& ksyms,
                                std::string_view tracer) {
    nlohmann::ordered_json j = {{"tracer", tracer},
                                {"latency_ns", r.latency_ns},
                                {"cpu", r.hdr.cpu},
                                {"ts_ns", r.hdr.ts},
                                {"seqnum", r.seqnum},
                                {"comm", comm},
                                {"pid", r.hdr.pid},
                                {"started_at", ksyms.name_of(started_at(r))},
                                {"ended_at", ksyms.name_of(ended_at(r))},
                                {"start_function", ksyms.name_of(r.start_ip)},
                                {"end_function", ksyms.name_of(r.end_ip)},
                                {"stack", nlohmann::ordered_json::array()}};
    for (const std::uint64_t ip : stack) {
        j["stack"].push_back(ksyms.name_of(ip));
    }
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace fhook
