#include <nlohmann/json.hpp>

#include <fhook/output/format.hpp>
#include <fhook/output/osnoise_format.hpp>

#include "text.hpp"

namespace fhook {

using text::printf_string;

namespace {

using ull = unsigned long long;

// "comm-pid [cpu] flags seconds: ", as the kernel's trace starts a line
std::string line_prefix(const fhook_rec& hdr, std::string_view comm) {
    const auto ctx = context_chars(hdr.flags, hdr.preempt);
    return printf_string(
        "%16.16s-%-7u [%03u] %.5s %5llu.%06llu: ", std::string(hdr.pid ? comm : "<idle>").c_str(),
        hdr.pid, hdr.cpu, ctx.data(), static_cast<ull>(hdr.ts / 1000000000),
        static_cast<ull>(hdr.ts % 1000000000 / 1000));
}

// "12.34567": the % available in 1e-5 %
std::string percent(std::uint64_t e5) {
    return printf_string("%3llu.%05llu", static_cast<ull>(e5 / 100000),
                         static_cast<ull>(e5 % 100000));
}

std::uint64_t available_e5(std::uint64_t runtime, std::uint64_t noise) {
    OsnoiseCpu c;
    c.runtime_ns = runtime;
    c.noise_ns = noise;
    return c.available_e5();
}

std::string json_dump(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json cpu_json(const OsnoiseCpu& c) {
    return {{"periods", c.periods},
            {"runtime_ns", c.runtime_ns},
            {"noise_ns", c.noise_ns},
            {"available_percent", static_cast<double>(c.available_e5()) / 100000.0},
            {"max_noise_ns", c.max_noise_ns},
            {"max_single_ns", c.max_single_ns},
            {"hw", c.hw},
            {"nmi", c.nmi},
            {"irq", c.irq},
            {"softirq", c.softirq},
            {"thread", c.thread}};
}

nlohmann::ordered_json gaps_json(const TimerlatSide& g, std::uint64_t bucket_ns) {
    nlohmann::ordered_json j = {{"count", g.count},
                                {"min_ns", g.min_ns},
                                {"avg_ns", g.avg_ns()},
                                {"max_ns", g.max_ns},
                                {"buckets", nlohmann::ordered_json::array()}};
    for (std::size_t i = 0; i < g.buckets.size(); i++) {
        if (g.buckets[i]) {
            j["buckets"].push_back({{"lo_ns", i * bucket_ns}, {"count", g.buckets[i]}});
        }
    }
    j["over"] = g.over;
    return j;
}

// top's figures per CPU and for all, or (`hist`) the gaps' histograms
std::string summary_json(const OsnoiseSummary& s, bool hist) {
    const auto figures = [&](const OsnoiseCpu& c) {
        return hist ? gaps_json(c.gaps, s.bucket_ns()) : cpu_json(c);
    };
    nlohmann::ordered_json j;
    j["tracer"] = "osnoise";
    if (hist) {
        j["bucket_ns"] = s.bucket_ns();
    }
    j["cpus"] = nlohmann::ordered_json::array();
    for (const auto& [cpu, c] : s.cpus()) {
        nlohmann::ordered_json one = {{"cpu", cpu}};
        one.update(figures(c));
        j["cpus"].push_back(one);
    }
    j["all"] = figures(s.all());
    return json_dump(j);
}

std::string top_row(const char* label, const OsnoiseCpu& c) {
    return printf_string("%3s #%-6llu %12llu %12llu  %s%12llu %12llu %12llu %12llu %12llu "
                         "%12llu %12llu\n",
                         label, static_cast<ull>(c.periods), static_cast<ull>(c.runtime_ns / 1000),
                         static_cast<ull>(c.noise_ns / 1000), percent(c.available_e5()).c_str(),
                         static_cast<ull>(c.max_noise_ns / 1000),
                         static_cast<ull>(c.max_single_ns / 1000), static_cast<ull>(c.hw),
                         static_cast<ull>(c.nmi), static_cast<ull>(c.irq),
                         static_cast<ull>(c.softirq), static_cast<ull>(c.thread));
}

} // namespace

std::string format_osnoise_header() {
    return text::trace_legend("osnoise") +
           "#                              |||| /                                      MAX\n"
           "#                              |||||                                    SINGLE"
           "      Interference counters:\n"
           "#                              |||||               RUNTIME      NOISE  % OF CPU"
           "  NOISE    +-----------------------------+\n"
           "#           TASK-PID     CPU#  |||||   TIMESTAMP    IN US       IN US  AVAILABLE"
           "  IN US     HW    NMI    IRQ   SIRQ THREAD\n"
           "#              | |         |   |||||      |           |             |    |      "
           "      |      |      |      |      |      |\n";
}

std::string format_osnoise_line(const fhook_rec_osnoise& r, std::string_view comm) {
    return line_prefix(r.hdr, comm) +
           printf_string("%llu %10llu %s %7llu %6u %6u %6u %6u %6u%s\n",
                         static_cast<ull>(r.runtime_ns / 1000), static_cast<ull>(r.noise_ns / 1000),
                         percent(available_e5(r.runtime_ns, r.noise_ns)).c_str(),
                         static_cast<ull>(r.max_single_ns / 1000), r.hw_count, r.nmi_count,
                         r.irq_count, r.softirq_count, r.thread_count,
                         r.oflags & FHOOK_OSNOISE_STOPPED ? " (stop)" : "");
}

std::string format_osnoise_noise_line(const fhook_rec_osnoise_noise& r, std::string_view comm) {
    const std::uint32_t total = r.nmi_count + r.irq_count + r.softirq_count + r.thread_count;
    std::string what;
    const auto kind = [&](const char* name, std::uint32_t n) {
        if (n) {
            what += printf_string(" %s:%u", name, n);
        }
    };
    kind("nmi", r.nmi_count);
    kind("irq", r.irq_count);
    kind("softirq", r.softirq_count);
    kind("thread", r.thread_count);
    return line_prefix(r.hdr, comm) +
           printf_string("sample_threshold: start %llu.%09llu duration %llu ns interference %u",
                         static_cast<ull>(r.start_ns / 1000000000),
                         static_cast<ull>(r.start_ns % 1000000000), static_cast<ull>(r.duration_ns),
                         total) +
           (total ? " (" + what.substr(1) + ")" : " (hw)") +
           (r.oflags & FHOOK_OSNOISE_STOPPED ? " (stop)" : "") + "\n";
}

std::string format_osnoise_json(const fhook_rec_osnoise& r, std::string_view comm) {
    return json_dump({{"event", "period"},
                      {"cpu", r.hdr.cpu},
                      {"ts_ns", r.hdr.ts},
                      {"seqnum", r.seqnum},
                      {"runtime_ns", r.runtime_ns},
                      {"noise_ns", r.noise_ns},
                      {"max_single_ns", r.max_single_ns},
                      {"hw", r.hw_count},
                      {"nmi", r.nmi_count},
                      {"irq", r.irq_count},
                      {"softirq", r.softirq_count},
                      {"thread", r.thread_count},
                      {"comm", comm},
                      {"pid", r.hdr.pid},
                      {"stopped", (r.oflags & FHOOK_OSNOISE_STOPPED) != 0}});
}

std::string format_osnoise_noise_json(const fhook_rec_osnoise_noise& r, std::string_view comm) {
    return json_dump({{"event", "noise"},
                      {"cpu", r.hdr.cpu},
                      {"start_ns", r.start_ns},
                      {"duration_ns", r.duration_ns},
                      {"nmi", r.nmi_count},
                      {"irq", r.irq_count},
                      {"softirq", r.softirq_count},
                      {"thread", r.thread_count},
                      {"comm", comm},
                      {"pid", r.hdr.pid},
                      {"stopped", (r.oflags & FHOOK_OSNOISE_STOPPED) != 0}});
}

std::string format_osnoise_top(const OsnoiseSummary& s) {
    std::string out = std::string(42, ' ') + "Operating System Noise\n";
    out += "CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single"
           "          HW          NMI          IRQ      Softirq       Thread\n";
    if (s.cpus().empty()) {
        return out + "    (no periods)\n";
    }
    for (const auto& [cpu, c] : s.cpus()) {
        out += top_row(std::to_string(cpu).c_str(), c);
    }
    return out + top_row("ALL", s.all());
}

std::string format_osnoise_top_json(const OsnoiseSummary& s) {
    return summary_json(s, false);
}

std::string format_osnoise_hist(const OsnoiseSummary& s) {
    std::string out = "# fhook osnoise histogram\n";
    out += "# Time unit is us, buckets of " + std::to_string(s.bucket_ns() / 1000) + "\n";
    if (s.cpus().empty()) {
        return out + "(no noise)\n";
    }
    std::vector<const TimerlatSide*> cols;
    out += "Index ";
    for (const auto& [cpu, c] : s.cpus()) {
        out += printf_string("   CPU-%03u", cpu);
        cols.push_back(&c.gaps);
    }
    out += "\n";
    for (std::size_t i = 0; i < s.entries(); i++) {
        bool any = false;
        for (const TimerlatSide* g : cols) {
            any = any || g->buckets[i];
        }
        if (!any) {
            continue;
        }
        out += printf_string("%-6llu", static_cast<ull>(i * s.bucket_ns() / 1000));
        for (const TimerlatSide* g : cols) {
            out += printf_string(" %9llu", static_cast<ull>(g->buckets[i]));
        }
        out += "\n";
    }
    const auto row = [&](const char* name, auto value) {
        out += printf_string("%-6s", name);
        for (const TimerlatSide* g : cols) {
            out += printf_string(" %9s", value(*g).c_str());
        }
        out += "\n";
    };
    const auto us = [](std::uint64_t ns) { return text::in_unit(ns, LatencyUnit::Usecs); };
    row("over:", [](const TimerlatSide& g) { return std::to_string(g.over); });
    row("count:", [](const TimerlatSide& g) { return std::to_string(g.count); });
    row("min:", [&](const TimerlatSide& g) { return us(g.min_ns); });
    row("avg:", [&](const TimerlatSide& g) { return us(g.avg_ns()); });
    row("max:", [&](const TimerlatSide& g) { return us(g.max_ns); });
    return out;
}

std::string format_osnoise_hist_json(const OsnoiseSummary& s) {
    return summary_json(s, true);
}

} // namespace fhook
