#include <bit>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include <fhook/output/format.hpp>
#include <fhook/output/wakeup_format.hpp>

#include "text.hpp"

namespace fhook {

using text::in_unit;
using text::lat_line;
using text::printf_string;
using text::unit_name;

namespace {

std::string comm_of(const char (&comm)[FHOOK_COMM_LEN]) {
    return std::string(comm, strnlen(comm, FHOOK_COMM_LEN));
}

nlohmann::ordered_json task_json(std::string_view comm, std::uint32_t pid, std::int32_t prio) {
    return {{"comm", comm}, {"pid", pid}, {"prio", prio}};
}

// A stack trace's lines as the kernel's latency traces print them.
std::string stack_lines(const std::vector<std::uint64_t>& ips, const Ksyms& ksyms) {
    std::string out;
    for (const std::uint64_t ip : ips) {
        out += " => " + ksyms.name_of(ip) + "\n";
    }
    return out;
}

} // namespace

unsigned task_state_index(std::uint32_t state) {
    // __task_state_index(): TASK_REPORT's bits, TASK_IDLE as its own state,
    // a sleeping lock's wait (PREEMPT_RT) and a frozen task as D
    constexpr std::uint32_t kReport = 0x7f, kUninterruptible = 0x0002, kIdle = 0x0402,
                            kRtlockWait = 0x1000, kFrozen = 0x8000;
    std::uint32_t bits = state & kReport;
    if ((state & kIdle) == kIdle) {
        bits = kReport + 1;
    }
    if (state & (kRtlockWait | kFrozen)) {
        bits = kUninterruptible;
    }
    return static_cast<unsigned>(std::bit_width(bits));
}

char task_state_char(std::uint32_t state) {
    return "RSDTtXZPI"[task_state_index(state)];
}

std::string format_wakeup_trace(const WakeupReport& report, const Ksyms& ksyms,
                                const LatencyTraceHost& host) {
    const fhook_rec_wakeup& w = report.rec;
    // (the idle tasks, swapper/N, print as <idle> in the kernel's traces)
    const auto shown = [](std::string_view name, std::uint32_t pid) {
        return pid ? std::string(name) : std::string("<idle>");
    };
    const std::string comm = comm_of(w.comm), waker = shown(comm_of(w.waker_comm), w.waker_pid);
    const bool stack = !report.stack.empty();
    const auto entries =
        static_cast<unsigned>(2 + stack + !report.switch_stack.empty() + report.calls.size());
    std::string out = text::latency_header(host, w.latency, entries, w.wakeup_cpu);
    out += printf_string("#    | task: %.16s-%u (uid:%u nice:%d policy:%u rt_prio:%u)\n",
                         comm.c_str(), w.pid, w.uid, w.nice, w.policy, w.rt_priority);
    out += "#    -----------------\n#\n" + text::latency_legend();
    // each line's time from the wakeup, and the next line's for its delay mark
    const auto since = [&](std::uint64_t ts) { return ts > w.wakeup_ts ? ts - w.wakeup_ts : 0; };
    const std::uint64_t first_call = report.calls.empty() ? w.latency : since(report.calls[0].ts);
    // the wakeup (tracing_sched_wakeup_trace(): waker, then "+", the woken task)
    out += lat_line(waker, w.waker_pid, w.waker_cpu, w.waker_flags, w.waker_preempt, 0,
                    stack ? 0 : first_call);
    out += printf_string(" %7u:%3d:%c   + [%03u] %7u:%3d:%c %s\n", w.waker_pid, w.waker_prio, 'R',
                         w.wakeup_cpu, w.pid, w.prio, 'R', comm.c_str());
    // the waker's stack there (__trace_stack() in probe_wakeup())
    if (stack) {
        out += lat_line(waker, w.waker_pid, w.waker_cpu, w.waker_flags, w.waker_preempt, 0,
                        first_call) +
               "<stack trace>\n" + stack_lines(report.stack, ksyms);
    }
    // the function calls on its CPU (wakeup_tracer_call())
    for (std::size_t i = 0; i < report.calls.size(); i++) {
        const WakeupCall& c = report.calls[i];
        const std::uint64_t next =
            i + 1 < report.calls.size() ? since(report.calls[i + 1].ts) : w.latency;
        out += lat_line(c.comm.empty() ? "<...>" : shown(c.comm, c.pid), c.pid, c.cpu, c.flags,
                        c.preempt, since(c.ts), next) +
               ksyms.name_of(c.ip) + " <-" + ksyms.name_of(c.parent_ip) + "\n";
    }
    // the switch to it (tracing_sched_switch_trace()) and the stack there
    // (__trace_stack() in probe_wakeup_sched_switch())
    const std::string prev = shown(report.prev_comm, w.hdr.pid);
    out += lat_line(prev, w.hdr.pid, w.hdr.cpu, w.hdr.flags, w.hdr.preempt, w.latency, w.latency);
    out +=
        printf_string(" %7u:%3d:%c ==> [%03u] %7u:%3d:%c %s\n", w.hdr.pid, w.prev_prio,
                      task_state_char(w.prev_state), w.hdr.cpu, w.pid, w.prio, 'R', comm.c_str());
    if (!report.switch_stack.empty()) {
        out +=
            lat_line(prev, w.hdr.pid, w.hdr.cpu, w.hdr.flags, w.hdr.preempt, w.latency, w.latency) +
            "<stack trace>\n" + stack_lines(report.switch_stack, ksyms);
    }
    return out;
}

std::string format_wakeup_json(const WakeupReport& report, const Ksyms& ksyms,
                               std::string_view tracer) {
    const fhook_rec_wakeup& w = report.rec;
    nlohmann::ordered_json j;
    j["tracer"] = tracer;
    j["latency_ns"] = w.latency;
    j["new_max"] = (w.wflags & FHOOK_WAKEUP_NEW_MAX) != 0;
    j["max_ns"] = w.max;
    j["nr"] = w.nr;
    j["wakeup_ts"] = w.wakeup_ts;
    j["switch_ts"] = w.hdr.ts;
    j["cpu"] = w.hdr.cpu;
    j["wakeup_cpu"] = w.wakeup_cpu;
    nlohmann::ordered_json task = task_json(comm_of(w.comm), w.pid, w.prio);
    task["tgid"] = w.tgid;
    task["policy"] = w.policy;
    task["rt_priority"] = w.rt_priority;
    task["nice"] = w.nice;
    task["uid"] = w.uid;
    task["forked"] = (w.wflags & FHOOK_WAKEUP_NEW_TASK) != 0;
    j["task"] = task;
    nlohmann::ordered_json waker = task_json(comm_of(w.waker_comm), w.waker_pid, w.waker_prio);
    waker["cpu"] = w.waker_cpu;
    j["waker"] = waker;
    nlohmann::ordered_json prev = task_json(report.prev_comm, w.hdr.pid, w.prev_prio);
    prev["state"] = std::string(1, task_state_char(w.prev_state));
    j["prev"] = prev;
    const auto names = [&](const std::vector<std::uint64_t>& ips) {
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (const std::uint64_t ip : ips) {
            a.push_back(ksyms.name_of(ip));
        }
        return a;
    };
    if (!report.stack.empty()) {
        j["waker_stack"] = names(report.stack);
    }
    if (!report.switch_stack.empty()) {
        j["switch_stack"] = names(report.switch_stack);
    }
    if (!report.calls.empty()) {
        j["calls_from_ns"] = w.calls_from;
        j["functions"] = nlohmann::ordered_json::array();
        for (const WakeupCall& c : report.calls) {
            j["functions"].push_back({{"ts", c.ts},
                                      {"cpu", c.cpu},
                                      {"pid", c.pid},
                                      {"comm", c.comm},
                                      {"function", ksyms.name_of(c.ip)},
                                      {"parent", ksyms.name_of(c.parent_ip)}});
        }
    }
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string format_wakeup_report(const WakeupReport& report, const Ksyms& ksyms,
                                 const LatencyTraceHost& host, bool json, std::size_t index) {
    return json ? format_wakeup_json(report, ksyms, host.tracer) + "\n"
                : (index ? "\n" : "") + format_wakeup_trace(report, ksyms, host);
}

namespace {

nlohmann::ordered_json top_row_json(const LatencyHist& h) {
    return {{"count", h.count},
            {"min_ns", h.min_ns},
            {"avg_ns", h.count ? h.sum_ns / h.count : 0},
            {"max_ns", h.max_ns}};
}

} // namespace

std::string format_latency_top(const std::vector<CpuLatency>& rows, std::string_view title,
                               LatencyUnit unit) {
    std::string out = std::string(title) + " (" + unit_name(unit) + ")\n";
    out += printf_string("%-5s %12s %12s %12s %12s\n", "CPU", "COUNT", "MIN", "AVG", "MAX");
    bool any = false;
    for (const CpuLatency& r : rows) {
        const LatencyHist& h = r.hist;
        if (!h.count && r.cpu >= 0) {
            continue;
        }
        any = any || h.count;
        const std::string cpu = r.cpu < 0 ? "ALL" : std::to_string(r.cpu);
        out +=
            printf_string("%-5s %12llu %12s %12s %12s\n", cpu.c_str(),
                          static_cast<unsigned long long>(h.count), in_unit(h.min_ns, unit).c_str(),
                          in_unit(h.count ? h.sum_ns / h.count : 0, unit).c_str(),
                          in_unit(h.max_ns, unit).c_str());
    }
    if (!any) {
        out += "     (no wakeups)\n";
    }
    return out;
}

std::string format_latency_top_json(const std::vector<CpuLatency>& rows, std::string_view title) {
    nlohmann::ordered_json j;
    j["title"] = title;
    j["cpus"] = nlohmann::ordered_json::array();
    for (const CpuLatency& r : rows) {
        if (r.cpu < 0) {
            j["all"] = top_row_json(r.hist);
        } else if (r.hist.count) {
            nlohmann::ordered_json row = top_row_json(r.hist);
            row["cpu"] = r.cpu;
            j["cpus"].push_back(row);
        }
    }
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace fhook
