// The options the tracing commands (trace, record, stat, count, latency,
// hook) share, parsed into a TraceSpec, and the steps of their runs that
// print: skipped functions, snapshots, the summary.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <fhook/core/fd.hpp>
#include <fhook/engine/metrics.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/tracer.hpp>
#include <fhook/engine/tracer_metrics.hpp>
#include <fhook/output/errors_format.hpp>
#include <fhook/output/graph_format.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/ring/recfile.hpp>

#include "commands.hpp"

namespace fhook::cli {

struct TraceOptions {
    TraceSpec spec;
    std::string output;                       // -o FILE ("" = stdout)
    OutputFormat format = OutputFormat::Text; // --format
    bool quiet = false;                       // no summary or notes on stderr
    std::string summary_json;                 // --summary-json FILE ("" = none)
    std::size_t top = 0;                      // count --top N (0 = all)
    LatencyUnit unit = LatencyUnit::Nsecs;    // latency -u / -m
    GraphFormatOptions graph_view;            // graph --proc, --retval, --abstime
    ErrorsFormatOptions errors_view;          // errors --all, --stat
    std::vector<std::string> hist_triggers;   // hist: the TRIGGERs after PROBE
    bool folded = false;                      // hist --folded
    std::string flamegraph;                   // hist --flamegraph FILE.svg
    bool clear = false;                       // hist --clear
    bool per_cpu = false;                     // wakeup hist --per-cpu
    std::uint64_t bucket_ns = 1000;           // timerlat hist --bucket-size
    std::size_t entries = 256;                // timerlat hist --entries
    std::uint64_t threshold_ns = 0;           // timerlat trace --threshold
    std::string record;                       // wakeup --record FILE ("" = none)
    std::string listen;                       // --listen ADDR:PORT ("" = none)
    std::string push;                         // --push URL ("" = none)
    std::string otlp;                         // --otlp URL ("" = none)
    const char* otlp_path = "/v1/logs";       // event commands: where on it (errors: traces)
    std::size_t series_limit = 10000;         // --series-limit N
    bool pid_labels = false;                  // hist --pid-labels
};

// What one tracing command offers; the option table is built from it in
// one order, so that every command's --help lists the shared options alike.
struct TraceCommand {
    const char* name;
    const char* usage;
    Collect collect = Collect::Events;
    bool records = true;   // ring options (--buffer-size, --watermark...)
    bool snapshots = true; // --overwrite, --stack, --trigger
    bool interval = false; // --interval
    bool metrics = false;  // --listen, --push, --series-limit (docs/fleet.md)
    const char* interval_help = "print what each SEC seconds counted, then start afresh";
    bool via = true;                   // --via
    bool summary = false;              // a summary on stderr (and --summary-json)
    const char* filter_help = nullptr; // --filter (nullptr: none)
    const char* output_help;
    const char* record_help = nullptr; // --record FILE (nullptr: none)
    const char* format_help = nullptr; // --format (nullptr: none)
    bool chrome = false;               // --format chrome: events as a Chrome trace
    const char* no_probe = nullptr;    // the error without a PROBE (nullptr: the library's)
    bool output_required = false;
    // the command's own options (after --help) and their parsing
    void (*add_options)(po::options_description& options) = nullptr;
    void (*parse_options)(const po::variables_map& vm, TraceOptions& opt) = nullptr;
};

// --filter's help for commands that record events.
extern const char* const kRecordFilterHelp;

// The call graph options (graph; record with --graph): --depth,
// --notrace, --no-irqs, --threshold, --args, and with `view` the ones that
// only change how the tree is drawn (--proc, --retval, --abstime).
void add_graph_options(po::options_description& options, bool view);
// GraphSpec from them; `implied`: a graph even without --graph.
void parse_graph_options(const po::variables_map& vm, TraceOptions& opt, bool implied);
// The part shared with errors: --depth, --notrace, --tasks (and no
// "!GLOB" among the functions).
GraphSpec parse_graph_reach(const po::variables_map& vm, const TraceOptions& opt);

// The rtla-shaped tracers (timerlat, osnoise): their command (no probes,
// --interval for top, text or JSON) ...
TraceCommand rtla_command(const char* name, const char* usage, Collect collect,
                          const char* output_help);
// ... and their mode word (top when none; top prints every second unless
// --interval says otherwise).
enum class RtlaMode { Top, Hist, Trace };
RtlaMode take_rtla_mode(TraceOptions& opt);

// The latency tracers' --NAME USEC, between lo and hi microseconds.
std::uint64_t usec_option(const po::variables_map& vm, const char* name, std::uint64_t lo,
                          std::uint64_t hi);
// Their --priority: a SCHED_FIFO priority, 1 to 99, or f:PRIO as rtla writes it.
std::uint32_t fifo_priority_option(const po::variables_map& vm);
// hist modes' --bucket-size N (in `unit`) and --entries N: opt.bucket_ns
// (unit_ns by default) and opt.entries.
void add_bucket_options(po::options_description& options, const std::string& unit);
void parse_bucket_options(const po::variables_map& vm, TraceOptions& opt, std::uint64_t unit_ns,
                          const std::string& unit);
// ns in a LatencyUnit
std::uint64_t text_unit_ns(LatencyUnit unit);
// The latency tracers' --unit (ns, us or ms) into opt.unit.
void parse_unit_option(const po::variables_map& vm, TraceOptions& opt);
// The mode word among a tracer's arguments (taken out of `words`): its
// index in `modes`, -1 with no word; `none` says what no word means.
int take_mode(std::vector<std::string>& words, const std::vector<std::string>& modes,
              const std::string& none);

// A latency tracer's table (what `table` returns): printed every
// --interval when `repeat` (top modes) and by print() at the end; text
// tables apart by a blank line, JSON one object per line.
class TablePrinter final : public TraceObserver {
public:
    TablePrinter(std::function<std::string()> table, int fd, bool json, bool repeat)
        : table_(std::move(table)), fd_(fd), json_(json), repeat_(repeat) {}
    void on_interval() override {
        if (repeat_) {
            print();
        }
    }
    void print();

private:
    std::function<std::string()> table_;
    int fd_;
    bool json_;
    bool repeat_;
    unsigned printed_ = 0;
};

// nullopt after --help (printed).
std::optional<TraceOptions> parse_trace_options(const Args& args, const TraceCommand& command);

// The paths of the live system, or the environment's overrides.
SystemPaths system_paths();

// -o FILE opened for writing (an empty fd for "").
UniqueFd open_output(const std::string& path);
// What a record file says about the run of `tracer` by `fhook COMMAND ARGS...`.
RecordWriter::Info record_info(const Tracer& tracer, const Args& args, const char* command);
// --record FILE of the latency tracer `name` (wakeup_rt, timerlat, ...):
// the run's records written there (its samples or reports, for report,
// which prints them as the tracer did); nullptr without it.
std::unique_ptr<FileSink> record_sink(const TraceOptions& opt, const Tracer& tracer,
                                      const Args& args, const char* command,
                                      const std::string& name);
// --listen, --push, --otlp and --series-limit (metrics_options.cpp), for
// TraceCommand::metrics.
void add_metrics_options(po::options_description& options);
void parse_metrics_options(const po::variables_map& vm, TraceOptions& opt);
// The event commands' --otlp URL (TraceCommand::chrome): events as OTLP
// logs, errors' chains as OTLP traces, sent instead of printed.
void add_otlp_stream_option(po::options_description& options, const std::string& command);
void parse_otlp_stream_option(const po::variables_map& vm, TraceOptions& opt,
                              const std::string& command);

// --listen, --push and --otlp: the metrics of `tracer`.  The endpoint listens from
// construction (before the probes are armed: a taken port fails first),
// answers once started() (named on stderr unless quiet); finish() pushes.
class MetricsOutput {
public:
    MetricsOutput(const Tracer& tracer, const TraceOptions& opt);
    bool wanted() const { return collector_.has_value(); }
    // hist: its tables (MetricsCollector::set_hist()), when wanted
    void set_hist(HistTablesRead read);
    // The latency tracers: the sink summing their measures for the
    // metrics, to tee the records to (nullptr when not wanted).
    Sink* tracer_sink() { return measures_.get(); }
    void started();
    void finish();

private:
    std::optional<MetricsCollector> collector_;
    std::unique_ptr<TracerMetricsSink> measures_; // (outlives the server's threads)
    std::unique_ptr<MetricsServer> server_;
    std::string push_, otlp_;
    bool quiet_;
};
// The fd to print to: -o FILE's or stdout.
inline int output_fd(const UniqueFd& out) {
    return out ? out.get() : 1;
}

// Says on stderr "fhook: snapshot N (trigger): M records" unless quiet.
class SnapshotNotes : public TraceObserver {
public:
    explicit SnapshotNotes(bool quiet) : quiet_(quiet) {}
    void on_snapshot(unsigned number, bool triggered, std::size_t records) override;

private:
    bool quiet_;
};

// The Tracer's progress on stderr when it is a terminal and not quiet:
// one line ("fhook: arming 48,211 functions..."), rewritten, then erased.
Progress terminal_progress(bool quiet);

// Says on stderr, unless quiet, why kernel functions print as addresses
// when /proc/kallsyms hid them (a user with CAP_PERFMON but not CAP_SYSLOG).
void note_hidden_symbols(bool quiet);

// The summary lines (docs/cli.md) of a finished run on stderr, then
// `tail`, unless quiet; and its JSON form to --summary-json's FILE.
void print_summary(const Tracer& tracer, const TraceOptions& opt, const std::string& tail = {});

// The run of a command that prints events (trace, hook, graph): the
// Tracer set up, its events printed to -o FILE or stdout through
// `formatter`'s (given the set-up tracer; unset: --format's), armed, run to
// the end, the summary; returns run_status().
int print_events(const TraceOptions& opt,
                 const std::function<std::unique_ptr<Formatter>(const Tracer&)>& formatter = {});

// The exit code of a finished run: COMMAND's when it exited (128 + N when
// signal N killed it, 127 when it could not be executed), else 0.
int run_status(Tracer& tracer);

} // namespace fhook::cli
