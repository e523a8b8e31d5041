// `fhook export --config FILE`: several counting, timing and wakeup jobs
// as one long-running Prometheus target (docs/fleet.md), their metrics
// labelled with the job's name, reloaded in place.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fhook/engine/metrics.hpp>
#include <fhook/engine/tracer.hpp>

namespace fhook {

// One job of the file: a [[count]], [[latency]], [[wakeup]] or [[hist]] table.
struct ExportJob {
    std::string name;           // the metrics' `fhook_job` label: unique in the file
    TraceSpec spec;             // Collect::Counts, Latency, Wakeup, or Events for hist
    std::vector<HistSpec> hist; // [[hist]]: its triggers (tables the module keeps)
    // the table as read, canonical: two jobs with the same are the same
    // job (a reload keeps it armed, and its counts)
    std::string key;
};

struct ExportConfig {
    std::string listen = "127.0.0.1:9110";
    MetricsOptions metrics;
    std::vector<ExportJob> jobs;
};

// The TOML of an export file (docs/fleet.md).  An Invalid Error naming
// `origin`, the table and the key for anything it does not take.
ExportConfig parse_export_config(std::string_view toml, const std::string& origin);

// The jobs armed, each a Tracer of its own, and their metrics together.
class Exporter {
public:
    explicit Exporter(SystemPaths paths);
    ~Exporter();

    // What apply() did, by job name.
    struct Change {
        std::vector<std::string> kept, armed, dropped;
    };
    // Arms the jobs of `config` not armed yet, drops those no longer in it
    // and keeps the others as they are, counts included.  On an error
    // arming one (a Runtime or Invalid Error naming the job), the jobs
    // armed before stay as they were.
    Change apply(const ExportConfig& config);

    // Every job's metrics, each series labelled fhook_job="NAME" first
    // (Prometheus keeps `job` for the scrape's); one family per name.
    // Thread-safe; waits while apply() arms jobs.
    std::string prometheus_text();

private:
    struct Running;
    SystemPaths paths_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Running>> jobs_;
};

} // namespace fhook
