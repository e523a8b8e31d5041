// fhook latency [options] FUNC... [-- COMMAND [ARGS...]]
#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/latency_format.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook latency [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Time every call of each FUNC (a function or a tracefs glob: one histogram\n"
    "each) from entry to return, until Ctrl-C, --duration or the exit of COMMAND,\n"
    "and print log2 histograms of the durations in nanoseconds: libbpf-tools'\n"
    "funclatency, kept in the module.  fhook's trampoline runs the function's\n"
    "body itself (a direct call, as BPF fexit does): no records, no ring.\n";

void add_latency_options(po::options_description& options) {
    options.add_options()("microseconds,u", "histograms in microseconds (funclatency -u)")(
        "milliseconds,m", "histograms in milliseconds (funclatency -m)");
}

void parse_latency_options(const po::variables_map& vm, TraceOptions& opt) {
    if (vm.count("microseconds") && vm.count("milliseconds")) {
        throw_invalid("give -u (microseconds) or -m (milliseconds), not both");
    }
    opt.unit = vm.count("milliseconds")   ? LatencyUnit::Msecs
               : vm.count("microseconds") ? LatencyUnit::Usecs
                                          : LatencyUnit::Nsecs;
}

// Prints the histograms of what happened since the last print.
class HistogramPrinter final : public TraceObserver {
public:
    HistogramPrinter(const Tracer& tracer, int fd, OutputFormat format, LatencyUnit unit)
        : tracer_(tracer), fd_(fd), json_(format == OutputFormat::Json), unit_(unit),
          printed_(tracer.probes().size()) {}
    void on_interval() override { print(false); }
    void print(bool final) {
        const auto& probes = tracer_.probes();
        std::string text;
        for (std::size_t i = 0; i < probes.size(); i++) {
            const LatencyHist now = tracer_.latency(probes[i].id);
            const LatencyHist shown = now.since(printed_[i]);
            printed_[i] = now;
            text += json_ ? format_latency_json(shown, probes[i].description) + "\n"
                          : format_latency_text(shown, probes[i].description, unit_) +
                                (final && i + 1 == probes.size() ? "" : "\n");
        }
        print_to(fd_, text);
    }

private:
    const Tracer& tracer_;
    int fd_;
    bool json_;
    LatencyUnit unit_;
    std::vector<LatencyHist> printed_;
};

} // namespace

int cmd_latency(const Args& args) {
    TraceCommand cmd;
    cmd.name = "latency";
    cmd.usage = kUsage;
    cmd.collect = Collect::Latency;
    cmd.records = false;
    cmd.snapshots = false;
    cmd.interval = true;
    cmd.metrics = true;
    cmd.via = false;
    cmd.filter_help = "time only calls where EXPR holds, evaluated in the kernel (the task: "
                      "common_pid, tgid, comm, cpu)";
    cmd.output_help = "write the histograms to FILE instead of stdout";
    cmd.format_help =
        "text (funclatency's histograms, default) or json (one object per FUNC and print)";
    cmd.no_probe = "give the functions to time, e.g. fhook latency vfs_read";
    cmd.add_options = add_latency_options;
    cmd.parse_options = parse_latency_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    if (!opt->quiet) {
        std::string text;
        for (const auto& why : tracer.skipped()) {
            text += "fhook: not timing " + why + "\n";
        }
        print_stderr(text);
    }
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    HistogramPrinter printer(tracer, output_fd(out), opt->format, opt->unit);
    metrics.started();
    tracer.run(sink, printer);
    printer.print(true);
    metrics.finish();
    return run_status(tracer);
}

} // namespace fhook::cli
