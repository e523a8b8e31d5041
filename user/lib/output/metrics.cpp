#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include <fhook/core/error.hpp>
#include <fhook/output/metrics.hpp>

namespace fhook {

namespace {

// A sample value as Prometheus parses it: the shortest decimal that reads
// back the same double, +Inf, -Inf or NaN.
std::string number(double v) {
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "+Inf" : "-Inf";
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, r.ptr);
}

// A label value between double quotes: backslash, quote and newline escaped.
void append_quoted(std::string& out, std::string_view value) {
    out += '"';
    for (const char c : value) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    out += '"';
}

void append_labels(std::string& out, const MetricLabels& labels, const char* le = nullptr) {
    if (labels.empty() && !le) {
        return;
    }
    out += '{';
    bool first = true;
    for (const auto& [name, value] : labels) {
        out += first ? "" : ",";
        first = false;
        out += name;
        out += '=';
        append_quoted(out, value);
    }
    if (le) {
        out += first ? "le=" : ",le=";
        append_quoted(out, le);
    }
    out += '}';
}

// HELP text: backslash and newline escaped.
std::string help_text(std::string_view help) {
    std::string out;
    for (const char c : help) {
        out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    }
    return out;
}

} // namespace

MetricSeries latency_series(const LatencyHist& h, MetricLabels labels) {
    MetricSeries s;
    s.labels = std::move(labels);
    s.count = h.count;
    s.sum = static_cast<double>(h.sum_ns) / 1e9;
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < h.exported_buckets(); i++) {
        below += h.buckets[i];
        s.buckets.emplace_back(static_cast<double>(latency_bucket_range(i).second) / 1e9, below);
    }
    return s;
}

std::string metric_name(std::string_view name, bool label) {
    std::string out(name);
    for (std::size_t i = 0; i < out.size(); i++) {
        const char c = out[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                        (c == ':' && !label) || (i > 0 && c >= '0' && c <= '9');
        if (!ok) {
            out[i] = '_';
        }
    }
    return out.empty() ? "_" : out;
}

std::string prometheus_text(const std::vector<MetricFamily>& families) {
    std::string out;
    for (const MetricFamily& f : families) {
        if (f.series.empty()) {
            continue;
        }
        const char* type = f.type == MetricType::Counter     ? "counter"
                           : f.type == MetricType::Histogram ? "histogram"
                                                             : "gauge";
        const std::string sample = f.type == MetricType::Counter ? f.name + "_total" : f.name;
        out += "# HELP " + sample + " " + help_text(f.help) + "\n";
        out += "# TYPE " + sample + " " + type + "\n";
        for (const MetricSeries& s : f.series) {
            if (f.type != MetricType::Histogram) {
                out += sample;
                append_labels(out, s.labels);
                out += " " + number(s.value) + "\n";
                continue;
            }
            for (const auto& [le, below] : s.buckets) {
                out += f.name + "_bucket";
                append_labels(out, s.labels, number(le).c_str());
                out += " " + std::to_string(below) + "\n";
            }
            out += f.name + "_bucket";
            append_labels(out, s.labels, "+Inf");
            out += " " + std::to_string(s.count) + "\n";
            out += f.name + "_sum";
            append_labels(out, s.labels);
            out += " " + number(s.sum) + "\n";
            out += f.name + "_count";
            append_labels(out, s.labels);
            out += " " + std::to_string(s.count) + "\n";
        }
    }
    return out;
}

namespace {

using Json = nlohmann::ordered_json;

Json otlp_attributes(const MetricLabels& labels) {
    Json a = Json::array();
    for (const auto& [k, v] : labels) {
        a.push_back({{"key", k}, {"value", {{"stringValue", v}}}});
    }
    return a;
}

} // namespace

std::string otlp_metrics_json(const std::vector<MetricFamily>& families,
                              const MetricLabels& resource, std::uint64_t start_ns,
                              std::uint64_t now_ns) {
    const std::string start = std::to_string(start_ns), now = std::to_string(now_ns);
    Json metrics = Json::array();
    for (const MetricFamily& f : families) {
        if (f.series.empty()) {
            continue;
        }
        // (counters of seconds, osnoise's: fractions, not integers)
        const bool seconds = f.name.ends_with("_seconds");
        Json points = Json::array();
        for (const MetricSeries& s : f.series) {
            Json p = {{"attributes", otlp_attributes(s.labels)},
                      {"startTimeUnixNano", start},
                      {"timeUnixNano", now}};
            if (f.type == MetricType::Counter && seconds) {
                p["asDouble"] = s.value;
            } else if (f.type == MetricType::Counter) {
                p["asInt"] = std::to_string(static_cast<std::uint64_t>(s.value));
            } else if (f.type == MetricType::Gauge) {
                p["asDouble"] = s.value;
            } else {
                Json counts = Json::array(), bounds = Json::array();
                std::uint64_t below = 0;
                for (const auto& [le, cumulative] : s.buckets) {
                    bounds.push_back(le);
                    counts.push_back(std::to_string(cumulative - below));
                    below = cumulative;
                }
                counts.push_back(std::to_string(s.count - below));
                p["count"] = std::to_string(s.count);
                p["sum"] = s.sum;
                p["bucketCounts"] = std::move(counts);
                p["explicitBounds"] = std::move(bounds);
            }
            points.push_back(std::move(p));
        }
        Json m = {{"name", f.name}, {"description", f.help}};
        if (f.type == MetricType::Counter) {
            m["unit"] = seconds ? "s" : "1";
            m["sum"] = {{"dataPoints", std::move(points)},
                        {"aggregationTemporality", 2}, // CUMULATIVE
                        {"isMonotonic", true}};
        } else if (f.type == MetricType::Gauge) {
            m["gauge"] = {{"dataPoints", std::move(points)}};
        } else {
            m["unit"] = "s";
            m["histogram"] = {{"dataPoints", std::move(points)}, {"aggregationTemporality", 2}};
        }
        metrics.push_back(std::move(m));
    }
    MetricLabels attributes{{"service.name", "fhook"}};
    attributes.insert(attributes.end(), resource.begin(), resource.end());
    const Json doc = {
        {"resourceMetrics",
         Json::array({{{"resource", {{"attributes", otlp_attributes(attributes)}}},
                       {"scopeMetrics",
                        Json::array({{{"scope", {{"name", "fhook"}, {"version", version()}}},
                                      {"metrics", std::move(metrics)}}})}}})}};
    return doc.dump();
}

} // namespace fhook
