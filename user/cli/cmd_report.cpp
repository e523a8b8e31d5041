// fhook report [options] FILE
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <set>

#include <fhook/core/cpulist.hpp>
#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/replay.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/wakeup_sink.hpp>
#include <fhook/output/errors_format.hpp>
#include <fhook/output/flamegraph.hpp>
#include <fhook/output/format.hpp>
#include <fhook/output/graph_format.hpp>
#include <fhook/output/hist_format.hpp>
#include <fhook/output/summary.hpp>
#include <fhook/output/tracedat.hpp>
#include <fhook/output/tracer_format.hpp>
#include <fhook/output/wakeup_format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/probe/recorded_probes.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/sys/btf.hpp>
#include <fhook/sys/ksyms.hpp>

#include "commands.hpp"
#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kReportUsage =
    "Usage: fhook report [options] FILE\n"
    "\n"
    "Print the events of a file written by 'fhook record' exactly as 'fhook trace'\n"
    "would have printed them, on any machine: the file carries the symbols.\n"
    "--since/--until take timestamps in seconds as printed (CLOCK_MONOTONIC).\n"
    "--filter takes the filter language of trace (the fields of each probe and\n"
    "the task's common_pid, tgid, comm, cpu); --stat prints how many events each\n"
    "probe, CPU and task has instead of the events.  --to trace.dat writes the\n"
    "(filtered) events as a trace-cmd trace.dat instead, for trace-cmd report and\n"
    "KernelShark, to -o OUT or to standard output.  --graph draws the call trees\n"
    "of a recording made with 'fhook record --graph', as 'fhook graph' does.\n"
    "--hist TRIGGER aggregates the events of the probe whose fields TRIGGER names\n"
    "(the tracefs hist trigger language, as 'fhook hist') and prints the\n"
    "histogram as the kernel's hist file does; with keys=stacktrace, --folded\n"
    "prints the stacks folded (FlameGraph's stackcollapse format) and --flamegraph\n"
    "writes a flame graph SVG.\n";

// A file from before record files kept format files: said once per probe.
void warn_local_format(const std::string& probe) {
    print_stderr("fhook: " + probe +
                 ": the file has no format for this event: its fields are decoded with this "
                 "machine's tracefs format\n");
}

struct ReportOptions {
    std::string file;
    OutputFormat format = OutputFormat::Text;
    bool quiet = false;
    bool stat = false;
    bool trace_dat = false; // --to trace.dat
    std::string out;        // -o
    EventFilterSpec filter;
    std::optional<GraphFormatOptions> graph; // --graph and its view options
    std::optional<HistSpec> hist;            // --hist TRIGGER
    bool folded = false;                     // --folded
    std::string flamegraph;                  // --flamegraph FILE.svg
};

po::options_description report_options() {
    po::options_description options("Options");
    options.add_options()("format,f", po::value<std::string>()->value_name("FMT"),
                          "text (default), json (NDJSON) or chrome (Chrome trace JSON)")(
        "cpu", po::value<std::string>()->value_name("LIST"), "only these CPUs, e.g. 0 or 0,2-3")(
        "probe", po::value<std::vector<std::string>>()->value_name("ID"),
        "only this probe id (repeatable)")("since", po::value<std::string>()->value_name("SEC"),
                                           "only events at or after SEC")(
        "until", po::value<std::string>()->value_name("SEC"),
        "only events before SEC")("pid,p", po::value<std::vector<std::string>>()->value_name("PID"),
                                  "only these processes (repeatable; tid or tgid)")(
        "comm", po::value<std::vector<std::string>>()->value_name("NAME"),
        "only tasks of this name, globs allowed (repeatable)")(
        "filter", po::value<std::string>()->value_name("EXPR"),
        "only events where EXPR holds (the filter language of trace)")(
        "stat", "print the events per probe, CPU and task instead of the events")(
        "graph", "draw the call graphs of a recording made with --graph (fhook graph's trees)")(
        "hist", po::value<std::string>()->value_name("TRIGGER"),
        "a histogram of the events instead (hist trigger language, e.g. 'keys=comm')")(
        "folded", "with --hist keys=stacktrace: the stacks folded, a line each")(
        "flamegraph", po::value<std::string>()->value_name("FILE.svg"),
        "with --hist keys=stacktrace: a flame graph to FILE.svg")(
        "proc", "with --graph: a task column (funcgraph-proc)")(
        "retval", "with --graph: return values (funcgraph-retval)")(
        "abstime", "with --graph: a timestamp column (funcgraph-abstime)")(
        "to", po::value<std::string>()->value_name("FORMAT"),
        "write the events as a file of FORMAT instead: trace.dat (trace-cmd)")(
        "output,o", po::value<std::string>()->value_name("OUT"),
        "with --to: the file to write (default: standard output)")(
        "quiet,q", "no summary on stderr")("help,h", "show this help");
    return options;
}

// --cpu, --probe, --since, --until, --pid, --comm, --filter
EventFilterSpec parse_filter_options(const po::variables_map& vm) {
    EventFilterSpec f;
    if (vm.count("cpu")) {
        f.cpus = parse_cpu_list(vm["cpu"].as<std::string>());
    }
    if (vm.count("probe")) {
        f.probes.emplace();
        for (const auto& p : vm["probe"].as<std::vector<std::string>>()) {
            std::uint64_t id = parse_u64("--probe", p);
            if (id > 0xffffffffULL) {
                throw_invalid("--probe " + p + " is not a probe id");
            }
            f.probes->insert(static_cast<std::uint32_t>(id));
        }
    }
    const auto ns = [](double sec) { return static_cast<std::uint64_t>(sec * 1e9 + 0.5); };
    if (vm.count("since")) {
        f.since_ns = ns(parse_seconds("--since", vm["since"].as<std::string>()));
    }
    if (vm.count("until")) {
        f.until_ns = ns(parse_seconds("--until", vm["until"].as<std::string>()));
    }
    if (vm.count("pid")) {
        for (const pid_t pid : parse_pids(vm["pid"].as<std::vector<std::string>>())) {
            f.pids.insert(static_cast<std::uint32_t>(pid));
        }
    }
    if (vm.count("comm")) {
        for (const auto& c : vm["comm"].as<std::vector<std::string>>()) {
            f.comms.insert(c);
        }
    }
    if (vm.count("filter")) {
        f.expr = vm["filter"].as<std::string>();
        if (f.expr.find_first_not_of(" \t") == std::string::npos) {
            throw_invalid("empty --filter: give an expression, e.g. --filter 'comm == \"cat\"'");
        }
    }
    return f;
}

std::optional<ReportOptions> parse_report_options(const Args& args) {
    ReportOptions opt;
    const po::options_description options = report_options();
    po::options_description hidden;
    hidden.add_options()("file", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("file", -1);
    po::variables_map vm = parse_args("report", args, all, positional);
    if (vm.count("help")) {
        print_help(kReportUsage, options);
        return std::nullopt;
    }
    if (!vm.count("file")) {
        throw_invalid("no FILE: give a file written by fhook record");
    }
    const auto files = vm["file"].as<std::vector<std::string>>();
    if (files.size() != 1) {
        throw_invalid("one FILE at a time (got " + std::to_string(files.size()) + ")");
    }
    opt.file = files.front();
    if (vm.count("format")) {
        opt.format = parse_format(vm["format"].as<std::string>(), true);
    }
    opt.filter = parse_filter_options(vm);
    opt.stat = vm.count("stat") != 0;
    opt.quiet = vm.count("quiet") != 0;
    if (vm.count("graph")) {
        if (opt.format != OutputFormat::Text || opt.stat) {
            throw_invalid("--graph draws text trees: it takes neither --format nor --stat");
        }
        GraphFormatOptions view;
        view.proc = vm.count("proc") != 0;
        view.retval = vm.count("retval") != 0;
        view.abstime = vm.count("abstime") != 0;
        opt.graph = view;
    } else if (vm.count("proc") || vm.count("retval") || vm.count("abstime")) {
        throw_invalid("--proc, --retval and --abstime go with --graph");
    }
    if (vm.count("hist")) {
        if (opt.stat || opt.graph || vm.count("to") || opt.format == OutputFormat::Chrome) {
            throw_invalid("--hist prints a histogram: it takes neither --stat, --graph, --to nor "
                          "--format chrome");
        }
        opt.hist = parse_hist_trigger(vm["hist"].as<std::string>());
        opt.folded = vm.count("folded") != 0;
        if (vm.count("flamegraph")) {
            opt.flamegraph = vm["flamegraph"].as<std::string>();
        }
    } else if (vm.count("folded") || vm.count("flamegraph")) {
        throw_invalid(
            "--folded and --flamegraph go with --hist 'keys=stacktrace' (or ustacktrace)");
    }
    if (vm.count("to")) {
        if (vm["to"].as<std::string>() != "trace.dat") {
            throw_invalid("unknown --to '" + vm["to"].as<std::string>() +
                          "': the format fhook writes is trace.dat");
        }
        if (opt.stat || vm.count("format")) {
            throw_invalid("--to trace.dat writes a file: it takes neither --stat nor --format");
        }
        opt.trace_dat = true;
    }
    if (vm.count("output")) {
        if (!opt.trace_dat) {
            throw_invalid("-o OUT goes with --to trace.dat (the text goes to standard output)");
        }
        opt.out = vm["output"].as<std::string>();
    }
    return opt;
}

// --hist: the table as the kernel's hist file, JSON, folded stacks or a
// flame graph.
void print_hist(const ReportOptions& opt, const HistTable& table, const Ksyms& ksyms,
                OutputWriter& out) {
    if (opt.folded || !opt.flamegraph.empty()) {
        const std::vector<FoldedStack> stacks = folded_stacks(table, ksyms);
        if (!opt.flamegraph.empty()) {
            const UniqueFd svg = open_output(opt.flamegraph);
            print_to(svg.get(),
                     flamegraph_svg(stacks, "fhook: " + hist_trigger_info(table.spec())));
        }
        if (opt.folded) {
            append_folded(stacks, out.buffer());
        }
    } else {
        (opt.format == OutputFormat::Json ? append_hist_json : append_hist_text)(table, ksyms,
                                                                                 out.buffer());
    }
    out.commit();
    out.flush();
}

// The latency tracer a file of its command's --record was made by
// (wakeup, wakeup_rt, wakeup_dl; the line tracers: is_line_tracer()), ""
// for another file: as its Info says, or in files from before that key,
// as its probes' descriptions say.
std::string tracer_of(const RecordFile& file) {
    if (const std::string& tracer = file.info("tracer"); !tracer.empty()) {
        return tracer;
    }
    for (const auto& p : file.probes()) {
        if (p.description == "wakeup" || p.description == "wakeup_rt" ||
            p.description == "wakeup_dl" || is_line_tracer(p.description)) {
            return p.description;
        }
    }
    return "";
}

bool is_wakeup_tracer(const std::string& tracer) {
    return tracer.starts_with("wakeup");
}

// What the latency traces of a tracer's file say about the traced machine
// (its online CPUs; a file without them: its rings').
LatencyTraceHost recorded_host(const RecordFile& file, const std::string& tracer) {
    const std::string& model = file.info("preempt_model");
    const std::string& online = file.info("online_cpus");
    unsigned cpus = file.header().nr_cpus;
    std::from_chars(online.data(), online.data() + online.size(), cpus);
    return {tracer, file.info("kernel_release"), model.empty() ? "unknown" : model, cpus};
}

// --to trace.dat: the events that pass the filter, to -o OUT or stdout.
void write_trace_dat(const ReportOptions& opt, const Replay& replay) {
    UniqueFd out;
    int fd = STDOUT_FILENO;
    if (!opt.out.empty()) {
        out = open_output(opt.out);
        fd = out.get();
    } else if (::isatty(STDOUT_FILENO)) {
        throw_invalid(
            "--to trace.dat writes binary data: give -o OUT, or redirect standard output");
    }
    std::vector<TraceDatWriter::Probe> list;
    for (const auto& p : replay.file().probes()) {
        list.push_back({p.id, replay.probes().find(p.id)});
    }
    if (is_wakeup_tracer(tracer_of(replay.file()))) {
        // each report as the kernel's wakeup tracers write it
        TraceDatWriter writer(std::string(replay.file().ksyms_text()), std::move(list));
        WakeupSink sink([&](const WakeupReport& r) { writer.add(r); });
        replay.run(sink, opt.filter);
        writer.finish(fd);
        if (!opt.quiet) {
            print_stderr("fhook: " + std::to_string(sink.reports()) +
                         " wakeup reports written to " +
                         (opt.out.empty() ? "standard output" : opt.out) + " (trace.dat)\n");
        }
        return;
    }
    TraceDatSink sink(fd, std::string(replay.file().ksyms_text()), std::move(list));
    replay.run(sink, opt.filter);
    if (!opt.quiet) {
        print_stderr("fhook: " + std::to_string(sink.events() - sink.too_large()) +
                     " events written to " + (opt.out.empty() ? "standard output" : opt.out) +
                     " (trace.dat)\n");
    }
    if (sink.too_large()) {
        print_stderr("fhook: " + std::to_string(sink.too_large()) +
                     " events left out: larger than a trace.dat page (4080 bytes)\n");
    }
}

// --hist: the one probe whose fields the trigger names, aggregated.
void report_hist(const ReportOptions& opt, const Replay& replay) {
    const std::uint32_t id =
        hist_probe_of(*opt.hist, replay.probes(),
                      opt.filter.probes ? std::vector<std::uint32_t>(opt.filter.probes->begin(),
                                                                     opt.filter.probes->end())
                                        : replay.probe_ids());
    const KprobeDef* def = replay.probes().find(id);
    HistSink sink({*opt.hist}, id, def);
    replay.run(sink, opt.filter);
    // user stacks: the processes are long gone, their frames named
    // through the uprobe's binary
    UserFrames frames;
    OutputWriter out(STDOUT_FILENO);
    print_hist(opt, name_user_stacks(sink.tables().front(), def, frames), replay.ksyms(), out);
}

// A recording of fhook errors (record --errors): its probe says so.
bool recorded_errors(const RecordFile& file) {
    const auto& probes = file.probes();
    return std::any_of(probes.begin(), probes.end(),
                       [](const auto& p) { return p.description.starts_with("errors "); });
}

// The events printed (text, JSON, Chrome, call trees) or counted (--stat).
void report_events(const ReportOptions& opt, const Replay& replay) {
    if (opt.stat) {
        StatSink sink;
        replay.run(sink, opt.filter);
        OutputWriter out(STDOUT_FILENO);
        out.append(sink.counts().text([&](std::uint32_t id) {
            for (const auto& p : replay.file().probes()) {
                if (p.id == id) {
                    return p.description;
                }
            }
            return std::string("?");
        }));
        out.flush();
        return;
    }
    if (const std::string tracer = tracer_of(replay.file());
        !tracer.empty() && !opt.graph && opt.format != OutputFormat::Chrome) {
        // a latency tracer's --record: printed as the tracer printed it
        const LatencyTraceHost host = recorded_host(replay.file(), tracer);
        const bool json = opt.format == OutputFormat::Json;
        if (is_wakeup_tracer(tracer)) {
            WakeupSink sink([&](const WakeupReport& r) {
                print_to(STDOUT_FILENO,
                         format_wakeup_report(r, replay.ksyms(), host, json, sink.reports()));
            });
            replay.run(sink, opt.filter);
            return;
        }
        TracerPrinter lines(replay.ksyms(), host, json);
        CallbackSink sink([&](const Event& ev) { print_to(STDOUT_FILENO, lines.format(ev)); });
        replay.run(sink, opt.filter);
        return;
    }
    std::unique_ptr<Formatter> formatter;
    std::optional<KernelBtf> btf;
    if (opt.format != OutputFormat::Chrome && !opt.graph && recorded_errors(replay.file())) {
        // (this machine's BTF names the return types: the recording's
        // kernel, or one near it)
        try {
            btf = KernelBtf::load();
        } catch (const Error&) {
        }
        ErrorsFormatOptions view;
        view.btf = btf ? &*btf : nullptr;
        // (OTLP: the recording's realtime clock; its ids the same at each report)
        const RecFileHeader& h = replay.file().header();
        view.otlp = {h.start_real_ns, static_cast<std::int64_t>(h.start_real_ns - h.start_mono_ns)};
        formatter = std::make_unique<ErrorsFormatter>(replay.ksyms(), opt.format, view);
    } else if (opt.graph) {
        GraphFormatOptions view = *opt.graph;
        view.nr_cpus = replay.file().header().nr_cpus;
        formatter = std::make_unique<GraphFormatter>(replay.ksyms(), view);
    } else if (opt.format == OutputFormat::Chrome) {
        auto chrome = std::make_unique<ChromeFormatter>(replay.ksyms());
        chrome->set_tracer(tracer_of(replay.file()));
        formatter = std::move(chrome);
    } else {
        // (a recording's stamps on the realtime clock of its own start)
        const RecFileHeader& h = replay.file().header();
        formatter = make_formatter(opt.format, replay.ksyms(),
                                   static_cast<std::int64_t>(h.start_real_ns - h.start_mono_ns));
    }
    PrintSink sink(STDOUT_FILENO, std::move(formatter), replay.probes());
    replay.run(sink, opt.filter);
}

} // namespace

int cmd_report(const Args& args) {
    std::optional<ReportOptions> parsed = parse_report_options(args);
    if (!parsed) {
        return 0;
    }
    const ReportOptions& opt = *parsed;
    const Replay replay(opt.file, tracefs_dir());
    for (const auto& probe : replay.local_formats()) {
        warn_local_format(probe);
    }
    if (opt.trace_dat) {
        write_trace_dat(opt, replay);
        return 0;
    }
    if (opt.hist) {
        report_hist(opt, replay);
        return 0;
    }
    report_events(opt, replay);
    if (!opt.quiet && replay.file().has_stats()) {
        print_stderr(summary_text(replay.file().session_stats(), replay.summaries()));
    }
    if (replay.file().truncated()) {
        throw_runtime(opt.file + " is truncated (" + replay.file().truncation() +
                      "): the events up to there were printed; was the recording interrupted?");
    }
    return 0;
}

} // namespace fhook::cli
