// fhook count [options] FUNC... [-- COMMAND [ARGS...]]
#include <chrono>
#include <ctime>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook count [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Count the calls of each FUNC (a function, or a tracefs glob counted function\n"
    "by function) until Ctrl-C, --duration or the exit of COMMAND, and print the\n"
    "functions called, most calls first: funccount and bpftrace's @[func] = count(),\n"
    "without records.  --via picks the mechanism, to compare their cost: ops (an\n"
    "ftrace_ops callback, default), direct (fhook's own counting trampoline through\n"
    "the ftrace direct-call API; a glob is one total), kprobe (a kprobe on the\n"
    "function, which the kernel puts on its fentry site).\n";

void add_count_options(po::options_description& options) {
    options.add_options()("top,T", po::value<std::string>()->value_name("N"),
                          "print only the N functions with the most calls");
}

void parse_count_options(const po::variables_map& vm, TraceOptions& opt) {
    if (vm.count("top")) {
        opt.top = parse_u64("--top", vm["top"].as<std::string>());
        if (opt.top == 0) {
            throw_invalid("--top must be at least 1");
        }
    }
}

// Prints the counts of what happened since the last print: at the end, or
// every --interval (each block under the time of day, as funccount -i).
class CountPrinter final : public TraceObserver {
public:
    CountPrinter(const Tracer& tracer, int fd, const TraceOptions& opt)
        : tracer_(tracer), fd_(fd), json_(opt.format == OutputFormat::Json), top_(opt.top),
          intervals_(opt.spec.interval.has_value()), armed_(std::chrono::steady_clock::now()) {}
    void on_interval() override { print(); }
    void print() {
        std::vector<CountRow> now = tracer_.count_rows();
        const std::vector<CountRow> shown = count_sorted(count_since(now, printed_), top_);
        printed_ = std::move(now);
        std::string text;
        if (json_) {
            const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - armed_;
            text = count_json(shown,
                              intervals_ ? std::optional<double>(elapsed.count()) : std::nullopt);
        } else {
            if (intervals_) {
                const std::time_t t = std::time(nullptr);
                char when[32];
                std::tm tm{};
                std::strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
                text = std::string(blocks_++ ? "\n" : "") + when + "\n";
            }
            text += count_table(shown);
        }
        print_to(fd_, text);
    }

private:
    const Tracer& tracer_;
    int fd_;
    bool json_;
    std::size_t top_;
    bool intervals_;
    std::chrono::steady_clock::time_point armed_;
    unsigned blocks_ = 0;
    std::vector<CountRow> printed_;
};

} // namespace

int cmd_count(const Args& args) {
    TraceCommand cmd;
    cmd.name = "count";
    cmd.usage = kUsage;
    cmd.collect = Collect::Counts;
    cmd.records = false;
    cmd.snapshots = false;
    cmd.interval = true;
    cmd.metrics = true;
    cmd.filter_help = kRecordFilterHelp;
    cmd.output_help = "write the table to FILE instead of stdout";
    cmd.format_help = "text (a table, default) or json (one object per print)";
    cmd.no_probe = "give the functions to count, e.g. fhook count vfs_read 'tcp_*'";
    cmd.add_options = add_count_options;
    cmd.parse_options = parse_count_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    CountPrinter printer(tracer, output_fd(out), *opt);
    metrics.started();
    tracer.run(sink, printer);
    printer.print();
    metrics.finish();
    if (!opt->quiet) {
        print_stderr(count_summary(tracer.stat_rows(), attach_name(opt->spec.attach)));
    }
    return run_status(tracer);
}

} // namespace fhook::cli
