// fhook hist [options] PROBE TRIGGER... [-- COMMAND [ARGS...]]
#include <algorithm>
#include <chrono>
#include <ctime>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/module_hist.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/flamegraph.hpp>
#include <fhook/output/hist_format.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook hist [options] PROBE TRIGGER... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Aggregate the hits of PROBE (a function, or a kprobe, kretprobe, uprobe or\n"
    "tracepoint definition as trace takes them) by each TRIGGER, in the tracefs\n"
    "hist trigger language ('[hist:]keys=FIELD[.MOD],...[:vals=FIELD,...]\n"
    "[:sort=FIELD[.descending]][:size=N] [if FILTER]'), until Ctrl-C, --duration or\n"
    "the exit of COMMAND, and print each histogram as the kernel's hist file does.\n"
    "Fields: the probe's own, common_pid, comm, cpu, stacktrace, ustacktrace (the\n"
    "task's user stack; and a function probe's ip and parent_ip); modifiers .hex\n"
    ".sym .sym-offset .execname .log2 /.buckets=N .usecs.  With a stack key,\n"
    "--folded prints the stacks folded and --flamegraph writes a flame graph.  Up\n"
    "to 4 triggers sharing their 'if', of numbers, the task's pid, name or CPU,\n"
    "user stacks and the kernel stacks of functions and entry kprobes, are kept in\n"
    "the module, no event crossing to user space; other triggers, strings and\n"
    "stacks are aggregated by fhook as it reads the events (the summary says if any\n"
    "were lost).  SIGUSR1 prints the histograms so far.\n";

void add_hist_options(po::options_description& options) {
    options.add_options()("folded", "with a stack key: the stacks folded (FlameGraph)")(
        "flamegraph", po::value<std::string>()->value_name("FILE.svg"),
        "with a stack key: a flame graph to FILE.svg")(
        "clear", "with --interval: start the histograms over after each print")(
        "pid-labels", "with --listen or --push: keys naming a task (common_pid, pid, tgid) as "
                      "labels (default: their entries summed over tasks)");
}

void parse_hist_options(const po::variables_map& vm, TraceOptions& opt) {
    opt.pid_labels = vm.count("pid-labels") > 0;
    // PROBE (or one -e EVENT), then the TRIGGERs
    std::vector<std::string> probes;
    for (const std::string& arg : opt.spec.probes) {
        if (is_hist_trigger(arg)) {
            opt.hist_triggers.push_back(arg);
        } else if (!opt.hist_triggers.empty() || !probes.empty()) {
            throw_invalid("'" + arg +
                          "': one PROBE, then its TRIGGERs (a trigger starts with keys= or hist:)");
        } else {
            probes.push_back(arg);
        }
    }
    opt.spec.probes = probes;
    if (probes.size() + opt.spec.events.size() > 1) {
        throw_invalid("one PROBE or one -e EVENT: a histogram is of one probe's hits");
    }
    if (opt.hist_triggers.empty()) {
        throw_invalid("no TRIGGER: give one after the probe, e.g. fhook hist vfs_read 'keys=comm'");
    }
    opt.folded = vm.count("folded") != 0;
    if (vm.count("flamegraph")) {
        opt.flamegraph = vm["flamegraph"].as<std::string>();
    }
    opt.clear = vm.count("clear") != 0;
    if (opt.clear && !opt.spec.interval) {
        throw_invalid("--clear goes with --interval");
    }
}

// Prints the histograms at the end, or every --interval: those the
// module keeps, else those of the sink; user stacks named.
class HistPrinter final : public TraceObserver {
public:
    HistPrinter(HistSink& sink, std::vector<ModuleHist>& module, const Tracer& tracer,
                const KprobeDef* def, int fd, const TraceOptions& opt)
        : sink_(sink), module_(module), tracer_(tracer), def_(def), fd_(fd), opt_(opt) {}
    void on_print_request() override { print(); }
    // (TraceSpec::tick with user stacks) the processes' mappings read
    // while they live: they are named after they exit
    void on_tick() override {
        for (const HistTable& table : tables()) {
            remember_user_stacks(table, frames_);
        }
    }
    void on_interval() override {
        print();
        if (!opt_.clear) {
            return;
        }
        if (module_.empty()) {
            sink_.clear();
        }
        for (ModuleHist& m : module_) {
            m.clear();
        }
    }
    void print() {
        std::string text;
        if (opt_.spec.interval && opt_.format == OutputFormat::Text) {
            const std::time_t t = std::time(nullptr);
            char when[32];
            std::tm tm{};
            std::strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
            text = std::string(prints_++ ? "\n" : "") + when + "\n";
        }
        const std::vector<HistTable> all = tables();
        for (std::size_t i = 0; i < all.size(); i++) {
            const HistTable table = name_user_stacks(all[i], def_, frames_);
            if (opt_.folded || !opt_.flamegraph.empty()) {
                const std::vector<FoldedStack> stacks = folded_stacks(table, tracer_.ksyms());
                if (!opt_.flamegraph.empty() && i == 0) {
                    const UniqueFd svg = open_output(opt_.flamegraph);
                    print_to(svg.get(), flamegraph_svg(stacks, "fhook hist: " + hist_trigger_info(
                                                                                    table.spec())));
                }
                if (opt_.folded) {
                    append_folded(stacks, text);
                }
            } else if (opt_.format == OutputFormat::Json) {
                append_hist_json(table, tracer_.ksyms(), text);
            } else {
                // the kernel's hist file: histograms two blank lines apart
                text += i ? "\n\n" : "";
                append_hist_text(table, tracer_.ksyms(), text);
            }
        }
        print_to(fd_, text);
    }

private:
    std::vector<HistTable> tables() const {
        if (module_.empty()) {
            return sink_.tables();
        }
        std::vector<HistTable> out;
        for (const ModuleHist& m : module_) {
            out.push_back(m.now());
        }
        return out;
    }

    HistSink& sink_;
    std::vector<ModuleHist>& module_;
    const Tracer& tracer_;
    const KprobeDef* def_;
    UserFrames frames_;
    int fd_;
    const TraceOptions& opt_;
    unsigned prints_ = 0;
};

} // namespace

int cmd_hist(const Args& args) {
    TraceCommand cmd;
    cmd.name = "hist";
    cmd.usage = kUsage;
    cmd.snapshots = false;
    cmd.interval = true;
    cmd.interval_help = "print the histograms every SEC seconds, each time all counted so far "
                        "(--clear: what the SEC seconds counted)";
    cmd.via = false;
    cmd.summary = true;
    cmd.metrics = true;
    cmd.filter_help = "only hits where EXPR holds, for every trigger (each may add its own "
                      "'if')";
    cmd.output_help = "write the histograms to FILE instead of stdout";
    cmd.format_help = "text (the kernel's hist file, default) or json (an object per entry)";
    cmd.no_probe = "give a probe and a trigger, e.g. fhook hist vfs_read 'keys=comm'";
    cmd.add_options = add_hist_options;
    cmd.parse_options = parse_hist_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    if (opt->pid_labels && opt->listen.empty() && opt->push.empty() && opt->otlp.empty()) {
        throw_invalid("--pid-labels needs --listen, --push or --otlp");
    }
    std::vector<HistSpec> specs;
    bool stacks = false, ustacks = false;
    for (const auto& text : opt->hist_triggers) {
        specs.push_back(parse_hist_trigger(text));
        stacks |= hist_has_stack_key(specs.back(), false);
        ustacks |= hist_has_stack_key(specs.back(), true);
    }
    // the triggers' "if", when they share it, becomes the probe's filter,
    // so that the module can keep the tables
    const std::optional<std::string> shared = hist_probe_filter(specs, opt->spec.filter);
    const bool shared_if = shared.has_value();
    const std::string filter = shared.value_or(opt->spec.filter);
    opt->spec.filter = filter;
    // stacks go with the records too, for when the module cannot keep a
    // table (a uprobe's records carry its user stack)
    opt->spec.stack |= stacks || ustacks;
    opt->spec.print_on_sigusr1 = true;
    if (ustacks) {
        opt->spec.tick = 0.2; // HistPrinter::on_tick()
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    // the probe's fields are known once it is added; nothing is armed yet
    const std::uint32_t id = tracer.probes().front().id;
    const KprobeDef* def = tracer.probe_table().find(id);
    const bool one_filter = def ? def->filter == filter : opt->spec.filter == filter;
    // all of the tables in the module, or none
    std::vector<ModuleHist> module = keep_hists_in_module(tracer, specs, shared_if && one_filter);
    // fhook's own aggregation has user stacks from uprobes' records only
    if (ustacks && module.empty() && !(def && def->is_uprobe)) {
        throw_invalid("ustacktrace: only a table kept in the module has the user stacks of a "
                      "kernel probe (its triggers must share their 'if'; the module must have "
                      "hist-ustack)");
    }
    // (tables read at each scrape: only the module's can be, the sink's
    // are the reading thread's)
    if (metrics.wanted() && module.empty()) {
        throw_invalid(
            "--listen, --push and --otlp serve the tables the module keeps; these triggers are "
            "aggregated by fhook as it reads the events (their 'if' must be shared, "
            "their keys numbers, the task, stacks)");
    }
    metrics.set_hist([&module] {
        std::vector<HistTable> tables;
        for (const ModuleHist& m : module) {
            tables.push_back(m.total());
        }
        return tables;
    });
    // (with the table in the module the sink sees no records of the probe)
    HistSink sink(std::move(specs), id, def);
    if ((opt->folded || !opt->flamegraph.empty()) && sink.tables().size() != 1) {
        throw_invalid("--folded and --flamegraph take one TRIGGER");
    }
    tracer.start();
    if (!opt->quiet) {
        print_stderr("Tracing " + tracer.probes().front().description + "... Hit Ctrl-C to end.\n");
    }
    HistPrinter printer(sink, module, tracer, def, output_fd(out), *opt);
    metrics.started();
    tracer.run(sink, printer);
    printer.print();
    print_summary(tracer, *opt);
    metrics.finish();
    return run_status(tracer);
}

} // namespace fhook::cli
