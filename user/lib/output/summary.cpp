#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include <fhook/output/summary.hpp>

namespace fhook {

std::vector<std::string> summary_lines(const Stats& session,
                                       const std::vector<ProbeSummary>& probes) {
    std::vector<std::string> lines;
    char buf[256];
    std::snprintf(buf, sizeof(buf), "fhook: events %" PRIu64 " lost %" PRIu64,
                  session.total.written, session.total.lost);
    lines.emplace_back(buf);
    for (std::size_t cpu = 0; cpu < session.per_cpu.size(); cpu++) {
        const CpuStats& s = session.per_cpu[cpu];
        std::snprintf(buf, sizeof(buf), "fhook: cpu %zu events %" PRIu64 " lost %" PRIu64, cpu,
                      s.written, s.lost);
        lines.emplace_back(buf);
    }
    for (const auto& probe : probes) {
        const CpuStats& t = probe.stats.total;
        std::snprintf(buf, sizeof(buf),
                      "fhook: probe %" PRIu32 " hits %" PRIu64 " events %" PRIu64 " lost %" PRIu64
                      " missed %" PRIu64 ": ",
                      probe.id, t.hits, t.written, t.lost, t.missed);
        lines.emplace_back(std::string(buf) + probe.description);
    }
    return lines;
}

std::string summary_text(const Stats& session, const std::vector<ProbeSummary>& probes) {
    std::string text;
    for (const auto& line : summary_lines(session, probes)) {
        text += line;
        text += '\n';
    }
    return text;
}

std::string summary_json(const Stats& session, const std::vector<ProbeSummary>& probes) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["events"] = session.total.written;
    j["lost"] = session.total.lost;
    j["cpus"] = Json::array();
    for (std::size_t cpu = 0; cpu < session.per_cpu.size(); cpu++) {
        const CpuStats& s = session.per_cpu[cpu];
        j["cpus"].push_back({{"cpu", cpu}, {"events", s.written}, {"lost", s.lost}});
    }
    j["probes"] = Json::array();
    for (const auto& probe : probes) {
        const CpuStats& t = probe.stats.total;
        j["probes"].push_back({{"id", probe.id},
                               {"hits", t.hits},
                               {"events", t.written},
                               {"lost", t.lost},
                               {"missed", t.missed},
                               {"probe", probe.description}});
    }
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string stat_table(const std::vector<StatRow>& rows) {
    std::string out;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%5s %12s %12s %10s %12s %10s  %s\n", "probe", "hits",
                  "filtered", "missed", "events", "lost", "definition");
    out += buf;
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof(buf),
                      "%5" PRIu32 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64
                      " %10" PRIu64 "  ",
                      r.id, r.stats.total.hits, r.filtered, r.stats.total.missed,
                      r.stats.total.written, r.stats.total.lost);
        out += buf;
        out += r.description;
        out += '\n';
    }
    return out;
}

std::vector<CountRow> count_since(const std::vector<CountRow>& rows,
                                  const std::vector<CountRow>& before) {
    std::map<std::tuple<std::uint32_t, std::string, std::string>, std::uint64_t> seen;
    for (const auto& r : before) {
        seen[{r.probe, r.function, r.module}] = r.hits;
    }
    std::vector<CountRow> out;
    for (CountRow r : rows) {
        const auto it = seen.find({r.probe, r.function, r.module});
        r.hits -= it == seen.end() ? 0 : std::min(it->second, r.hits);
        if (r.hits != 0 || r.total) {
            out.push_back(std::move(r));
        }
    }
    return out;
}

std::vector<CountRow> count_sorted(std::vector<CountRow> rows, std::size_t top) {
    std::stable_sort(rows.begin(), rows.end(), [](const CountRow& a, const CountRow& b) {
        return a.hits != b.hits ? a.hits > b.hits : a.function < b.function;
    });
    if (top != 0 && rows.size() > top) {
        rows.resize(top);
    }
    return rows;
}

std::string count_table(const std::vector<CountRow>& rows) {
    std::string out;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%14s  %s\n", "hits", "function");
    out += buf;
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof(buf), "%14" PRIu64 "  ", r.hits);
        out += buf;
        out += r.function;
        if (!r.module.empty()) {
            out += " [" + r.module + "]";
        }
        out += '\n';
    }
    if (rows.empty()) {
        out += "     (no calls)\n"; // (as latency's histograms say it)
    }
    return out;
}

std::string count_json(const std::vector<CountRow>& rows, std::optional<double> elapsed) {
    using Json = nlohmann::ordered_json;
    Json j;
    if (elapsed) {
        j["elapsed"] = std::round(*elapsed * 1000) / 1000;
    }
    j["functions"] = Json::array();
    for (const auto& r : rows) {
        j["functions"].push_back(
            {{"function", r.function}, {"module", r.module}, {"probe", r.probe}, {"hits", r.hits}});
    }
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string count_summary(const std::vector<StatRow>& rows, const std::string& via) {
    std::string out;
    char buf[200];
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof(buf),
                      "fhook: probe %" PRIu32 " hits %" PRIu64 " filtered %" PRIu64
                      " missed %" PRIu64 " via %s: ",
                      r.id, r.stats.total.hits, r.filtered, r.stats.total.missed, via.c_str());
        out += buf;
        out += r.description;
        out += '\n';
    }
    return out;
}

std::string stat_json(const std::vector<StatRow>& rows) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["probes"] = Json::array();
    for (const auto& r : rows) {
        j["probes"].push_back({{"id", r.id},
                               {"probe", r.description},
                               {"hits", r.stats.total.hits},
                               {"filtered", r.filtered},
                               {"missed", r.stats.total.missed},
                               {"events", r.stats.total.written},
                               {"lost", r.stats.total.lost}});
    }
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void EventCounts::add(const Event& event) {
    if (event.type == EventType::Lost) {
        lost_ += event.lost;
        return;
    }
    probes_[event.probe_id]++;
    cpus_[event.cpu]++;
    tasks_[{event.pid == 0 ? "<idle>" : event.comm, event.pid}]++;
}

std::string EventCounts::text(const std::function<std::string(std::uint32_t)>& describe) const {
    std::string out = "events per probe:\n";
    char buf[64];
    for (const auto& [id, n] : probes_) {
        std::snprintf(buf, sizeof(buf), "%14" PRIu64 "  %" PRIu32 " ", n, id);
        out += buf + describe(id) + "\n";
    }
    out += "events per CPU:\n";
    for (const auto& [cpu, n] : cpus_) {
        std::snprintf(buf, sizeof(buf), "%14" PRIu64 "  %u\n", n, static_cast<unsigned>(cpu));
        out += buf;
    }
    out += "events per task:\n";
    std::vector<std::pair<std::uint64_t, std::string>> tasks;
    for (const auto& [task, n] : tasks_) {
        tasks.emplace_back(n, task.first + "-" + std::to_string(task.second));
    }
    std::stable_sort(tasks.begin(), tasks.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [n, task] : tasks) {
        std::snprintf(buf, sizeof(buf), "%14" PRIu64 "  ", n);
        out += buf + task + "\n";
    }
    std::snprintf(buf, sizeof(buf), "lost: %" PRIu64 "\n", lost_);
    return out + buf;
}

} // namespace fhook
