#include <nlohmann/json.hpp>

#include <fhook/output/format.hpp>
#include <fhook/output/timerlat_format.hpp>

#include "text.hpp"

namespace fhook {

using text::in_unit;
using text::printf_string;
using text::unit_name;
using text::unit_ns;

namespace {

const char* context_name(std::uint32_t context) {
    return context == FHOOK_TIMERLAT_IRQ ? "irq" : "thread";
}

nlohmann::ordered_json side_json(const TimerlatSide& side, bool buckets, std::uint64_t bucket_ns) {
    nlohmann::ordered_json j = {{"count", side.count},
                                {"cur_ns", side.cur_ns},
                                {"min_ns", side.min_ns},
                                {"avg_ns", side.avg_ns()},
                                {"max_ns", side.max_ns}};
    if (buckets) {
        j["buckets"] = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < side.buckets.size(); i++) {
            if (side.buckets[i]) {
                j["buckets"].push_back({{"lo_ns", i * bucket_ns}, {"count", side.buckets[i]}});
            }
        }
        j["over"] = side.over;
    }
    return j;
}

std::string summary_json(const TimerlatSummary& s, bool buckets) {
    nlohmann::ordered_json j;
    j["tracer"] = "timerlat";
    if (buckets) {
        j["bucket_ns"] = s.bucket_ns();
    }
    j["cpus"] = nlohmann::ordered_json::array();
    for (const auto& [cpu, c] : s.cpus()) {
        j["cpus"].push_back({{"cpu", cpu},
                             {"irq", side_json(c.irq, buckets, s.bucket_ns())},
                             {"thread", side_json(c.thread, buckets, s.bucket_ns())}});
    }
    const TimerlatCpu all = s.all();
    j["all"] = {{"irq", side_json(all.irq, buckets, s.bucket_ns())},
                {"thread", side_json(all.thread, buckets, s.bucket_ns())}};
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string top_side(const TimerlatSide& side, LatencyUnit unit, bool cur) {
    return printf_string(" %9s %9s %9s %9s |", cur ? in_unit(side.cur_ns, unit).c_str() : "",
                         in_unit(side.min_ns, unit).c_str(), in_unit(side.avg_ns(), unit).c_str(),
                         in_unit(side.max_ns, unit).c_str());
}

} // namespace

std::string format_timerlat_header() {
    return text::trace_legend("timerlat") +
           "#                              |||| /     ACTIVATION\n"
           "#           TASK-PID     CPU#  |||||   TIMESTAMP    ID            CONTEXT"
           "                 LATENCY\n"
           "#              | |         |   |||||      |         |                  |"
           "                       |\n";
}

std::string format_timerlat_line(const fhook_rec_timerlat& r, std::string_view comm) {
    const auto ctx = context_chars(r.hdr.flags, r.hdr.preempt);
    // (the kernel's trace names pid 0 so: trace_find_cmdline())
    if (r.hdr.pid == 0) {
        comm = "<idle>";
    }
    return printf_string("%16.16s-%-7u [%03u] %.5s %5llu.%06llu: #%-5llu context %6s "
                         "timer_latency %9llu ns%s\n",
                         std::string(comm).c_str(), r.hdr.pid, r.hdr.cpu, ctx.data(),
                         static_cast<unsigned long long>(r.hdr.ts / 1000000000),
                         static_cast<unsigned long long>(r.hdr.ts % 1000000000 / 1000),
                         static_cast<unsigned long long>(r.seqnum), context_name(r.context),
                         static_cast<unsigned long long>(r.latency),
                         r.tflags & FHOOK_TIMERLAT_STOPPED ? " (stop)" : "");
}

std::string format_timerlat_json(const fhook_rec_timerlat& r, std::string_view comm) {
    nlohmann::ordered_json j = {
        {"cpu", r.hdr.cpu},        {"ts_ns", r.hdr.ts},
        {"seqnum", r.seqnum},      {"context", context_name(r.context)},
        {"latency_ns", r.latency}, {"comm", comm},
        {"pid", r.hdr.pid},        {"stopped", (r.tflags & FHOOK_TIMERLAT_STOPPED) != 0}};
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string format_timerlat_top(const TimerlatSummary& s, LatencyUnit unit) {
    const char* u = unit_name(unit);
    std::string out =
        printf_string("%-15s|%10sIRQ Timer Latency (%s)%9s|%9sThread Timer Latency (%s)%6s|\n",
                      "Timer Latency", "", u, "", "", u, "");
    out += printf_string("%-3s %-11s|", "CPU", "COUNT");
    for (int side = 0; side < 2; side++) {
        out += printf_string(" %9s %9s %9s %9s |", "cur", "min", "avg", "max");
    }
    out += "\n";
    for (const auto& [cpu, c] : s.cpus()) {
        out += printf_string("%3u #%-10llu|", cpu, static_cast<unsigned long long>(c.irq.count));
        out += top_side(c.irq, unit, true) + top_side(c.thread, unit, true) + "\n";
    }
    if (s.cpus().empty()) {
        out += "    (no measures)\n";
        return out;
    }
    const TimerlatCpu all = s.all();
    out += std::string(15, '-') + "|" + std::string(41, '-') + "|" + std::string(41, '-') + "|\n";
    out += printf_string("ALL #%-10llu|", static_cast<unsigned long long>(all.irq.count));
    out += top_side(all.irq, unit, false) + top_side(all.thread, unit, false) + "\n";
    return out;
}

std::string format_timerlat_top_json(const TimerlatSummary& s) {
    return summary_json(s, false);
}

std::string format_timerlat_hist(const TimerlatSummary& s, LatencyUnit unit) {
    std::string out = "# fhook timerlat histogram\n";
    // (--bucket-size is a whole number of units: the indexes are too)
    const std::uint64_t per = unit_ns(unit);
    out += std::string("# Time unit is ") + unit_name(unit) + ", buckets of " +
           std::to_string(s.bucket_ns() / per) + "\n";
    if (s.cpus().empty()) {
        return out + "(no measures)\n";
    }
    std::vector<const TimerlatSide*> cols;
    out += "Index ";
    for (const auto& [cpu, c] : s.cpus()) {
        out += printf_string(" %8s-%03u %8s-%03u", "IRQ", cpu, "Thr", cpu);
        cols.push_back(&c.irq);
        cols.push_back(&c.thread);
    }
    out += "\n";
    for (std::size_t i = 0; i < s.entries(); i++) {
        bool any = false;
        for (const TimerlatSide* side : cols) {
            any = any || side->buckets[i];
        }
        if (!any) {
            continue;
        }
        out += printf_string("%-6llu", static_cast<unsigned long long>(i * s.bucket_ns() / per));
        for (const TimerlatSide* side : cols) {
            out += printf_string(" %12llu", static_cast<unsigned long long>(side->buckets[i]));
        }
        out += "\n";
    }
    const auto row = [&](const char* name, auto value) {
        out += printf_string("%-6s", name);
        for (const TimerlatSide* side : cols) {
            out += printf_string(" %12s", value(*side).c_str());
        }
        out += "\n";
    };
    row("over:", [](const TimerlatSide& x) { return std::to_string(x.over); });
    row("count:", [](const TimerlatSide& x) { return std::to_string(x.count); });
    row("min:", [&](const TimerlatSide& x) { return in_unit(x.min_ns, unit); });
    row("avg:", [&](const TimerlatSide& x) { return in_unit(x.avg_ns(), unit); });
    row("max:", [&](const TimerlatSide& x) { return in_unit(x.max_ns, unit); });
    return out;
}

std::string format_timerlat_hist_json(const TimerlatSummary& s) {
    return summary_json(s, true);
}

} // namespace fhook
