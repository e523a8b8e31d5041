// fhook bench: results, targets and their renderings (table, JSON, SVG).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fhook/bench/bench.hpp>
#include <fhook/core/error.hpp>

namespace fhook::bench {

Sample summarize(std::vector<double> values) {
    Sample s;
    if (values.empty()) {
        return s;
    }
    std::sort(values.begin(), values.end());
    s.min = values.front();
    s.max = values.back();
    const std::size_t n = values.size();
    s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return s;
}

const Row* Results::find(std::string_view name) const {
    for (const auto& row : rows) {
        if (row.name == name) {
            return &row;
        }
    }
    return nullptr;
}

std::optional<double> Results::overhead(std::string_view name) const {
    const Row* base = find("baseline");
    const Row* row = find(name);
    if (!base || !row || !base->measured() || !row->measured()) {
        return std::nullopt;
    }
    return row->sample().median - base->sample().median;
}

std::optional<double> Results::ratio(std::string_view name, std::string_view reference) const {
    const auto a = overhead(name);
    const auto b = overhead(reference);
    if (!a || !b || *b <= 0) {
        return std::nullopt;
    }
    return *a / *b;
}

std::vector<Target> targets(const Results& results) {
    struct Def {
        const char* what;
        const char* row;
        const char* reference;
        double limit;
        const char* workload = nullptr; // only there (nullptr: both)
    };
    static constexpr Def defs[] = {
        {"function event to the ring <= 0.5x the kernel's function tracer", "fhook-ops-record",
         "ftrace-function", 0.5},
        {"kprobe with 2 fetchargs <= 0.5x kprobe_events with the same", "fhook-kprobe-2args",
         "kprobe-events-2args", 0.5},
        // issue 21: against the strongest peers, each doing the same work
        {"function event recorded to a file <= 0.5x trace-cmd record", "fhook-ops-record-raw",
         "trace-cmd-function", 0.5},
        {"function event through fhook's reader <= 0.5x the function tracer with no reader",
         "fhook-ops-record-null", "ftrace-function-noreader", 0.5},
        {"kprobe with 2 fetchargs recorded <= 0.5x kprobe_events with no reader",
         "fhook-kprobe-2args-raw", "kprobe-events-2args-noreader", 0.5},
        {"... --via direct (the assembly recorder)", "fhook-kprobe-2args-direct-raw",
         "kprobe-events-2args-noreader", 0.5},
        {"function event through fhook's reader <= 0.5x libbpf's BPF ring buffer (fentry)",
         "fhook-ops-record-null", "bpf-ringbuf-stream", 0.5},
        {"function events as text <= 1.5x recorded (binary)", "fhook-ops-record",
         "fhook-ops-record-raw", 1.5},
        {"direct counting trampoline <= 0.25x bpftrace fentry count()", "fhook-direct-count",
         "bpftrace-fentry-count", 0.25},
        {"ops counting <= bpftrace fentry count()", "fhook-ops-count", "bpftrace-fentry-count",
         1.0},
        {"entry+exit latency histogram <= 0.5x libbpf-tools funclatency", "fhook-latency-hist",
         "funclatency", 0.5},
        {"call graph entry+return recorded <= 0.5x trace-cmd's function_graph", "fhook-graph-raw",
         "trace-cmd-function-graph", 0.5},
        // (kloop's function calls nothing: depth 2 records what depth 1 does)
        {"... with every function hooked, as function_graph does", "fhook-graph-raw-all",
         "trace-cmd-function-graph", 0.5, "kloop"},
        {"keyed hitcount <= 0.5x the kernel's hist trigger", "fhook-hist-count",
         "hist-trigger-count", 0.5},
        {"keyed hitcount <= 0.5x bpftrace @[pid] = count()", "fhook-hist-count",
         "bpftrace-count-key", 0.5},
        {"keyed sum <= 0.5x the kernel's hist trigger", "fhook-hist-sum", "hist-trigger-sum", 0.5},
        {"keyed sum <= 0.5x bpftrace @[pid] = sum(arg2)", "fhook-hist-sum", "bpftrace-sum-key",
         0.5},
        {"log2 histogram <= 0.5x the kernel's hist trigger", "fhook-hist-log2", "hist-trigger-log2",
         0.5},
        {"log2 histogram <= 0.5x bpftrace @ = hist(arg2)", "fhook-hist-log2", "bpftrace-hist-log2",
         0.5},
        {"call graph as text <= 0.5x function_graph with trace_pipe (perf-tools funcgraph)",
         "fhook-graph", "ftrace-function-graph", 0.5},
    };
    std::vector<Target> out;
    for (const auto& d : defs) {
        if (d.workload && results.workload != d.workload) {
            continue;
        }
        Target t{d.what, d.row, d.reference, d.limit, results.ratio(d.row, d.reference), {}};
        // a side that dropped events did less than the other: no ratio
        for (const char* name : {d.row, d.reference}) {
            const Row* row = results.find(name);
            if (t.lossy.empty() && row && row->lost && *row->lost > 0.001) {
                t.lossy = name;
                t.ratio.reset();
            }
        }
        out.push_back(std::move(t));
    }
    return out;
}

namespace {

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), format, v);
    return buf;
}

using Json = nlohmann::ordered_json;

// `v` rounded to `decimals` places, as the text tables show it
double rounded(double v, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(v * scale) / scale;
}

Json numbers(const std::vector<double>& values) {
    Json out = Json::array();
    for (double v : values) {
        out.push_back(rounded(v, 3));
    }
    return out;
}

std::string ratio_cell(const Results& r, const Row& row, std::string_view reference) {
    const auto x = r.ratio(row.name, reference);
    return x ? fmt("%.2fx", *x) : "-";
}

} // namespace

std::string render_text(const Results& r) {
    std::string out;
    out += "fhook bench: " + r.kernel + ", " + std::to_string(r.cpus) + " CPU(s), workload " +
           r.workload + " (" + r.function + "), " + std::to_string(r.calls) +
           " calls per repeat, median of " + std::to_string(r.repeats) + ", clock " + r.clock +
           "\n";
    out += "consumers included (their catching up after each loop too): fhook reading its rings, "
           "cat trace_pipe for tracefs, bpftrace's and funclatency's own readers; 'consumer' is "
           "their CPU time per hit, 'lost' the events their rings dropped\n";
    char line[256];
    std::snprintf(line, sizeof(line), "%-24s %9s %9s %9s %9s %9s %6s %9s %9s  %s\n", "mechanism",
                  "ns/hit", "min", "max", "overhead", "consumer", "lost", "x ftrace", "x fentry",
                  "what");
    out += line;
    for (const auto& row : r.rows) {
        if (!row.measured()) {
            std::snprintf(line, sizeof(line), "%-24s %9s  skipped: ", row.name.c_str(), "-");
            out += line + row.skipped + "\n";
            continue;
        }
        const Sample s = row.sample();
        const auto ov = r.overhead(row.name);
        const std::string consumer =
            row.consumer_ns.empty() ? "-" : fmt("%.2f", summarize(row.consumer_ns).median);
        const std::string lost = row.lost ? fmt("%.1f%%", *row.lost * 100) : "-";
        std::snprintf(line, sizeof(line), "%-24s %9.2f %9.2f %9.2f %9s %9s %6s %9s %9s  ",
                      row.name.c_str(), s.median, s.min, s.max, ov ? fmt("%.2f", *ov).c_str() : "-",
                      consumer.c_str(), lost.c_str(), ratio_cell(r, row, "ftrace-function").c_str(),
                      ratio_cell(r, row, "bpftrace-fentry-count").c_str());
        out += line + row.description + "\n";
    }
    out += "targets (overhead over baseline, same run):\n";
    for (const auto& t : targets(r)) {
        std::string verdict;
        if (!t.lossy.empty()) {
            verdict = "not comparable (" + t.lossy + " lost " +
                      fmt("%.1f%%", *r.find(t.lossy)->lost * 100) + " of its events)";
        } else if (!t.ratio) {
            verdict = "not measured (" + t.row + " or " + t.reference + " has no figure)";
        } else {
            verdict = fmt("%.2fx", *t.ratio) + (t.met() ? " met" : " MISSED") + " (limit " +
                      fmt("%.2fx", t.limit) + ")";
        }
        out += "  " + t.what + ": " + verdict + "\n";
    }
    return out;
}

std::string render_json(const Results& r) {
    Json j;
    j["kernel"] = r.kernel;
    j["cpus"] = r.cpus;
    j["workload"] = r.workload;
    j["function"] = r.function;
    j["calls"] = r.calls;
    j["repeats"] = r.repeats;
    j["clock"] = r.clock;
    j["rows"] = Json::array();
    for (const auto& row : r.rows) {
        Json o;
        o["name"] = row.name;
        o["tool"] = row.tool;
        o["description"] = row.description;
        o["ns"] = numbers(row.ns);
        if (!row.consumer_ns.empty()) {
            o["consumer_ns"] = numbers(row.consumer_ns);
        }
        if (row.lost) {
            o["lost"] = rounded(*row.lost, 6);
        }
        if (row.measured()) {
            const Sample s = row.sample();
            o["median"] = rounded(s.median, 3);
            o["min"] = rounded(s.min, 3);
            o["max"] = rounded(s.max, 3);
            if (const auto ov = r.overhead(row.name)) {
                o["overhead"] = rounded(*ov, 3);
            }
        } else {
            o["skipped"] = row.skipped;
        }
        j["rows"].push_back(std::move(o));
    }
    j["targets"] = Json::array();
    for (const auto& t : targets(r)) {
        Json o = {{"what", t.what},
                  {"row", t.row},
                  {"reference", t.reference},
                  {"limit", rounded(t.limit, 2)},
                  {"ratio", t.ratio ? Json(rounded(*t.ratio, 3)) : Json(nullptr)},
                  {"met", t.met()}};
        if (!t.lossy.empty()) {
            o["lossy"] = t.lossy;
        }
        j["targets"].push_back(std::move(o));
    }
    return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

Results parse_json(std::string_view text, std::string_view what) {
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        Results r;
        r.kernel = j.at("kernel").get<std::string>();
        r.cpus = j.at("cpus").get<unsigned>();
        r.workload = j.at("workload").get<std::string>();
        r.function = j.at("function").get<std::string>();
        r.calls = j.at("calls").get<std::uint64_t>();
        r.repeats = j.at("repeats").get<unsigned>();
        r.clock = j.at("clock").get<std::string>();
        for (const auto& node : j.at("rows")) {
            Row row;
            row.name = node.at("name").get<std::string>();
            row.tool = node.at("tool").get<std::string>();
            row.description = node.at("description").get<std::string>();
            row.ns = node.at("ns").get<std::vector<double>>();
            if (node.contains("consumer_ns")) {
                row.consumer_ns = node.at("consumer_ns").get<std::vector<double>>();
            }
            if (node.contains("lost")) {
                row.lost = node.at("lost").get<double>();
            }
            row.skipped = node.value("skipped", "");
            r.rows.push_back(std::move(row));
        }
        return r;
    } catch (const nlohmann::json::exception& e) {
        throw_invalid(std::string(what) + ": not fhook bench JSON: " + e.what());
    }
}

namespace {

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace

std::string render_svg(const std::vector<Results>& sets) {
    // mechanisms in first-seen order, baseline left out (overhead 0)
    std::vector<std::string> names;
    for (const auto& r : sets) {
        for (const auto& row : r.rows) {
            if (row.name != "baseline" &&
                std::find(names.begin(), names.end(), row.name) == names.end()) {
                names.push_back(row.name);
            }
        }
    }
    // a log scale: the overheads span 5 to 15,000 instructions
    double top = 10;
    for (const auto& r : sets) {
        for (const auto& n : names) {
            if (const auto ov = r.overhead(n)) {
                top = std::max(top, *ov);
            }
        }
    }
    const int decades = static_cast<int>(std::ceil(std::log10(top) - 1e-9));
    static constexpr const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                              "#d62728", "#9467bd", "#8c564b"};
    const int label_w = 200, plot_w = 520, bar_h = 12, gap = 8, head = 60;
    const int group_h = static_cast<int>(sets.size()) * bar_h + gap;
    const int height = head + static_cast<int>(names.size()) * group_h + 50;
    const int width = label_w + plot_w + 90;
    std::string out;
    out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
           "\" height=\"" + std::to_string(height) + "\" font-family=\"sans-serif\" " +
           "font-size=\"11\">\n";
    out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    out += "<text x=\"10\" y=\"18\" font-size=\"14\">fhook bench: overhead per hit over the "
           "baseline (" +
           xml_escape(sets.empty() ? "" : sets.front().workload + ", " + sets.front().function) +
           ")</text>\n";
    int legend_x = 10;
    for (std::size_t i = 0; i < sets.size(); i++) {
        const char* c = colours[i % std::size(colours)];
        out += "<rect x=\"" + std::to_string(legend_x) + "\" y=\"30\" width=\"10\" height=\"10\" " +
               "fill=\"" + c + "\"/>";
        const std::string label = sets[i].kernel + " (" + sets[i].clock + ")";
        out += "<text x=\"" + std::to_string(legend_x + 14) + "\" y=\"39\">" + xml_escape(label) +
               "</text>\n";
        legend_x += 30 + static_cast<int>(label.size()) * 7;
    }
    // one grid line a decade, labelled at the bottom
    for (int d = 0; d <= decades; d++) {
        const int x = label_w + d * plot_w / decades;
        static constexpr const char* kDecade[] = {"1", "10", "100", "1k", "10k", "100k", "1M"};
        out += "<line x1=\"" + std::to_string(x) + "\" y1=\"" + std::to_string(head - 6) +
               "\" x2=\"" + std::to_string(x) + "\" y2=\"" + std::to_string(height - 30) +
               "\" stroke=\"#ddd\"/><text x=\"" + std::to_string(x) + "\" y=\"" +
               std::to_string(height - 20) + "\" text-anchor=\"middle\" fill=\"#444\">" +
               (d < static_cast<int>(std::size(kDecade)) ? kDecade[d] : "") + "</text>\n";
    }
    int y = head;
    for (const auto& n : names) {
        out += "<text x=\"" + std::to_string(label_w - 6) + "\" y=\"" +
               std::to_string(y + group_h / 2) + "\" text-anchor=\"end\">" + xml_escape(n) +
               "</text>\n";
        for (std::size_t i = 0; i < sets.size(); i++) {
            const auto ov = sets[i].overhead(n);
            const int by = y + static_cast<int>(i) * bar_h;
            if (!ov) {
                out += "<text x=\"" + std::to_string(label_w + 4) + "\" y=\"" +
                       std::to_string(by + bar_h - 2) + "\" fill=\"#888\">not measured</text>\n";
                continue;
            }
            const double lg = std::log10(std::max(1.0, *ov));
            const int w = std::max(1, static_cast<int>(std::lround(lg / decades * plot_w)));
            out += "<rect x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(by) +
                   "\" width=\"" + std::to_string(w) + "\" height=\"" + std::to_string(bar_h - 2) +
                   "\" fill=\"" + colours[i % std::size(colours)] + "\"/>";
            out += "<text x=\"" + std::to_string(label_w + w + 4) + "\" y=\"" +
                   std::to_string(by + bar_h - 2) + "\">" + fmt("%.0f", *ov) + "</text>\n";
        }
        y += group_h;
    }
    out += "<text x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(height - 10) +
           "\" fill=\"#444\">ns per hit over nothing attached, log scale (under -icount: "
           "guest instructions)</text>\n";
    out += "</svg>\n";
    return out;
}

} // namespace fhook::bench
