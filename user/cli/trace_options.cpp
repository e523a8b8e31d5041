#include "trace_options.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fhook/core/cpulist.hpp>
#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/otlp_sink.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/summary.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/preempt.hpp>

namespace fhook::cli {

namespace {

Attach parse_via(const std::string& text) {
    for (Attach a : {Attach::Ops, Attach::Direct, Attach::Kprobe}) {
        if (text == attach_name(a)) {
            return a;
        }
    }
    throw_invalid("--via '" + text + "': use ops, direct or kprobe");
}

po::options_description describe(const TraceCommand& cmd) {
    po::options_description options("Options");
    options.add_options()("pid,p", po::value<std::vector<std::string>>()->value_name("PID"),
                          "only these processes (repeatable; matches tgid or tid)")(
        "cpu", po::value<std::string>()->value_name("LIST"), "only these CPUs, e.g. 0 or 0,2-3");
    if (cmd.records) {
        options.add_options()("buffer-size,b", po::value<std::string>()->value_name("KB"),
                              "ring size per CPU in KiB (default 1024), rounded up to a power of "
                              "two, minimum 4")(
            "watermark", po::value<std::string>()->value_name("KB"),
            "wake the reader at KiB pending per CPU (default: a quarter of the ring)")(
            "wakeup-events", po::value<std::string>()->value_name("N"),
            "also wake the reader at N pending events per CPU")(
            "flush", po::value<std::string>()->value_name("MS"),
            "deliver events below the watermarks after at most MS ms (default 100)");
    }
    if (cmd.snapshots) {
        options.add_options()("overwrite",
                              "flight recorder: keep the newest events, print them at the end and "
                              "on SIGUSR2 (minimum --buffer-size 32)")(
            "stack", "record the stack with every event: the kernel stack, or the user stack "
                     "(frame pointers) for uprobes")(
            "trigger", po::value<std::vector<std::string>>()->value_name("EVENT=ACTION"),
            "run ACTION[:N] [if FILTER] on EVENT's hits (repeatable): traceoff, traceon, "
            "stacktrace, snapshot, enable:EVENT2, disable:EVENT2; EVENT 'func' is the function "
            "probe");
    }
    if (cmd.collect == Collect::Events) {
        options.add_options()("event,e", po::value<std::vector<std::string>>()->value_name("EVENT"),
                              "trace events, as trace-cmd and perf take them (repeatable): "
                              "SUBSYS:EVENT, SUBSYS or EVENT, globs allowed ('sched:*', "
                              "'syscalls:sys_enter_open*'); see fhook list events");
    }
    if (cmd.filter_help) {
        options.add_options()("filter", po::value<std::string>()->value_name("EXPR"),
                              cmd.filter_help);
    }
    options.add_options()("duration,d", po::value<std::string>()->value_name("SEC"),
                          "stop after SEC seconds (fractions allowed)")(
        "output,o", po::value<std::string>()->value_name("FILE"),
        cmd.output_help)("quiet,q", "no summary on stderr");
    if (cmd.record_help) {
        options.add_options()("record", po::value<std::string>()->value_name("FILE"),
                              cmd.record_help);
    }
    if (cmd.summary) {
        options.add_options()("summary-json", po::value<std::string>()->value_name("FILE"),
                              "also write the summary as one JSON object to FILE");
    }
    if (cmd.interval) {
        options.add_options()("interval,i", po::value<std::string>()->value_name("SEC"),
                              cmd.interval_help);
    }
    if (cmd.metrics) {
        add_metrics_options(options);
    }
    if (cmd.chrome) {
        add_otlp_stream_option(options, cmd.name);
    }
    if (cmd.via) {
        options.add_options()(
            "via", po::value<std::string>()->value_name("HOW"),
            "how function probes attach: ops (ftrace_ops callback, default), direct (fhook's "
            "trampoline through the direct-call API; also entry kprobes whose fields are whole "
            "registers), kprobe (one kprobe per function)");
    }
    options.add_options()("help,h", "show this help");
    if (cmd.add_options) {
        cmd.add_options(options);
    }
    if (cmd.format_help) {
        options.add_options()("format,f", po::value<std::string>()->value_name("FMT"),
                              cmd.format_help);
    }
    return options;
}

RingRequest parse_ring(const po::variables_map& vm, bool records) {
    RingRequest ring;
    ring.bytes = ring_bytes_from_kib(
        vm.count("buffer-size") ? parse_u64("--buffer-size", vm["buffer-size"].as<std::string>())
        : !records              ? FHOOK_RING_MIN_SIZE / 1024 // no records
                                : FHOOK_RING_DEF_SIZE / 1024);
    ring.overwrite = vm.count("overwrite") != 0;
    if (vm.count("watermark")) {
        const std::uint64_t kib = parse_u64("--watermark", vm["watermark"].as<std::string>());
        if (kib == 0 || kib * 1024 > ring.bytes) {
            throw_invalid("--watermark " + std::to_string(kib) + " KiB is not within the ring (" +
                          std::to_string(ring.bytes / 1024) +
                          " KiB per CPU): lower it or raise --buffer-size");
        }
        ring.watermark = static_cast<std::uint32_t>(kib * 1024);
    }
    if (vm.count("wakeup-events")) {
        const std::uint64_t n = parse_u64("--wakeup-events", vm["wakeup-events"].as<std::string>());
        if (n == 0 || n > 0xffffffffULL) {
            throw_invalid("--wakeup-events must be between 1 and 4294967295");
        }
        ring.wakeup_events = static_cast<std::uint32_t>(n);
    }
    if (vm.count("flush")) {
        const std::uint64_t ms = parse_u64("--flush", vm["flush"].as<std::string>());
        if (ms == 0 || ms > FHOOK_FLUSH_MAX_MS) {
            throw_invalid("--flush must be between 1 and " + std::to_string(FHOOK_FLUSH_MAX_MS) +
                          " ms");
        }
        ring.flush_ms = static_cast<std::uint32_t>(ms);
    }
    return ring;
}

} // namespace

const char* const kRecordFilterHelp =
    "record only hits where EXPR holds, evaluated in the kernel (probes without their own "
    "'if EXPR'; function probes: common_pid, tgid, comm, cpu)";

void add_graph_options(po::options_description& options, bool view) {
    if (!view) {
        options.add_options()("graph", "record a call graph of the FUNCs (fhook graph) instead "
                                       "of their calls alone");
    }
    options.add_options()(
        "depth,D", po::value<std::string>()->value_name("N"),
        "trace calls down to N levels below FUNC (max_graph_depth; 1 = FUNC alone, "
        "0 = no limit)")("notrace", po::value<std::vector<std::string>>()->value_name("GLOB"),
                         "leave GLOB and everything it calls out (set_graph_notrace; "
                         "repeatable)")(
        "watch", po::value<std::vector<std::string>>()->value_name("GLOB"),
        "trace only the functions GLOB matches below FUNC, not every one: fewer call sites to "
        "patch (set_ftrace_filter; repeatable)")(
        "no-irqs", "leave out what interrupts run (funcgraph-irqs 0)")(
        "threshold", po::value<std::string>()->value_name("USEC"),
        "only calls that last at least USEC microseconds, one line each (tracing_thresh)")(
        "args", "show each call's arguments by their BTF names")(
        "tasks", po::value<std::string>()->value_name("N"),
        "shadow stacks for N tasks (default 256; a task that finds none is not traced, "
        "counted as missed)");
    if (view) {
        options.add_options()("proc", "a task column (funcgraph-proc)")(
            "retval", "show return values (funcgraph-retval)")(
            "abstime", "a timestamp column (funcgraph-abstime)");
    }
}

GraphSpec parse_graph_reach(const po::variables_map& vm, const TraceOptions& opt) {
    GraphSpec graph;
    if (vm.count("depth")) {
        const std::uint64_t depth = parse_u64("--depth", vm["depth"].as<std::string>());
        if (depth > FHOOK_GRAPH_MAX_DEPTH) {
            throw_invalid("--depth must be at most " + std::to_string(FHOOK_GRAPH_MAX_DEPTH) +
                          " (0: no limit)");
        }
        graph.depth = static_cast<std::uint32_t>(depth);
    }
    if (vm.count("notrace")) {
        graph.notrace = vm["notrace"].as<std::vector<std::string>>();
    }
    for (const auto& text : opt.spec.probes) {
        if (!text.empty() && text.front() == '!') {
            throw_invalid("'" + text + "': leave functions out with --notrace " + text.substr(1));
        }
    }
    if (vm.count("watch")) {
        graph.watch = vm["watch"].as<std::vector<std::string>>();
        if (graph.depth == 1) {
            throw_invalid("--watch picks functions below the traced ones: it takes no --depth 1");
        }
        for (const std::string& glob : graph.watch) {
            if (glob.empty() || glob.starts_with('!')) {
                throw_invalid("'" + glob +
                              "': --watch takes a function or a glob (leave functions out with "
                              "--notrace)");
            }
        }
    }
    if (vm.count("tasks")) {
        const std::uint64_t tasks = parse_u64("--tasks", vm["tasks"].as<std::string>());
        if (tasks == 0 || tasks > FHOOK_GRAPH_MAX_TASKS) {
            throw_invalid("--tasks must be between 1 and " + std::to_string(FHOOK_GRAPH_MAX_TASKS));
        }
        graph.tasks = static_cast<std::uint32_t>(tasks);
    }
    return graph;
}

void parse_graph_options(const po::variables_map& vm, TraceOptions& opt, bool implied) {
    const bool any = vm.count("depth") || vm.count("notrace") || vm.count("watch") ||
                     vm.count("no-irqs") || vm.count("threshold") || vm.count("args") ||
                     vm.count("tasks");
    if (!implied && !vm.count("graph")) {
        if (any) {
            throw_invalid("--depth, --notrace, --watch, --no-irqs, --threshold, --args and "
                          "--tasks go with --graph");
        }
        return;
    }
    GraphSpec graph = parse_graph_reach(vm, opt);
    graph.no_irqs = vm.count("no-irqs") != 0;
    graph.args = vm.count("args") != 0;
    if (vm.count("threshold")) {
        const std::uint64_t usec = parse_u64("--threshold", vm["threshold"].as<std::string>());
        if (usec == 0 || usec > 1000000000ULL) {
            throw_invalid("--threshold must be between 1 and 1000000000 microseconds");
        }
        graph.threshold_ns = usec * 1000;
    }
    opt.spec.graph = graph;
    opt.graph_view.proc = vm.count("proc") != 0;
    opt.graph_view.retval = vm.count("retval") != 0;
    opt.graph_view.abstime = vm.count("abstime") != 0;
}

void TablePrinter::print() {
    print_to(fd_, json_ ? table_() + "\n" : (printed_++ ? "\n" : "") + table_());
}

TraceCommand rtla_command(const char* name, const char* usage, Collect collect,
                          const char* output_help) {
    TraceCommand cmd;
    cmd.name = name;
    cmd.usage = usage;
    cmd.collect = collect;
    cmd.snapshots = false;
    cmd.interval = true;
    cmd.interval_help = "top: print the table every SEC seconds (default 1)";
    cmd.via = false;
    cmd.filter_help = nullptr;
    cmd.output_help = output_help;
    cmd.format_help = "text (rtla's tables, the kernel's trace lines; default) or json";
    return cmd;
}

RtlaMode take_rtla_mode(TraceOptions& opt) {
    static const std::vector<std::string> kModes = {"top", "hist", "trace"};
    const int m = take_mode(opt.spec.probes, kModes, "top");
    const RtlaMode mode = m == 1 ? RtlaMode::Hist : m == 2 ? RtlaMode::Trace : RtlaMode::Top;
    if (mode == RtlaMode::Top && !opt.spec.interval) {
        opt.spec.interval = 1.0;
    }
    return mode;
}

std::uint64_t usec_option(const po::variables_map& vm, const char* name, std::uint64_t lo,
                          std::uint64_t hi) {
    const std::uint64_t v = parse_u64(std::string("--") + name, vm[name].as<std::string>());
    if (v < lo || v > hi) {
        throw_invalid(std::string("--") + name + " must be between " + std::to_string(lo) +
                      " and " + std::to_string(hi) + " microseconds");
    }
    return v;
}

std::uint32_t fifo_priority_option(const po::variables_map& vm) {
    std::string prio = vm["priority"].as<std::string>();
    if (prio.starts_with("f:")) {
        prio.erase(0, 2);
    }
    const std::uint64_t p = parse_u64("--priority", prio);
    if (p < 1 || p > 99) {
        throw_invalid("--priority takes a SCHED_FIFO priority from 1 to 99 (or f:PRIO)");
    }
    return static_cast<std::uint32_t>(p);
}

void add_bucket_options(po::options_description& options, const std::string& unit) {
    options.add_options()("bucket-size", po::value<std::string>()->value_name("N"),
                          ("hist: the buckets' width in " + unit + " (default 1)").c_str())(
        "entries,E", po::value<std::string>()->value_name("N"),
        "hist: the number of buckets, 10 to 9999999 (default 256)");
}

void parse_bucket_options(const po::variables_map& vm, TraceOptions& opt, std::uint64_t unit_ns,
                          const std::string& unit) {
    opt.bucket_ns = unit_ns;
    if (vm.count("bucket-size")) {
        const std::uint64_t n = parse_u64("--bucket-size", vm["bucket-size"].as<std::string>());
        if (n < 1 || n > 1000000) {
            throw_invalid("--bucket-size must be between 1 and 1000000 " + unit);
        }
        opt.bucket_ns = n * unit_ns;
    }
    if (vm.count("entries")) {
        const std::uint64_t n = parse_u64("--entries", vm["entries"].as<std::string>());
        if (n < 10 || n > 9999999) {
            throw_invalid("--entries must be between 10 and 9999999");
        }
        opt.entries = static_cast<std::size_t>(n);
    }
}

std::uint64_t text_unit_ns(LatencyUnit unit) {
    return unit == LatencyUnit::Msecs ? 1000000 : unit == LatencyUnit::Usecs ? 1000 : 1;
}

void parse_unit_option(const po::variables_map& vm, TraceOptions& opt) {
    const std::string unit = vm["unit"].as<std::string>();
    if (unit != "ns" && unit != "us" && unit != "ms") {
        throw_invalid("--unit takes ns, us or ms, not '" + unit + "'");
    }
    opt.unit = unit == "ns"   ? LatencyUnit::Nsecs
               : unit == "ms" ? LatencyUnit::Msecs
                              : LatencyUnit::Usecs;
}

int take_mode(std::vector<std::string>& words, const std::vector<std::string>& modes,
              const std::string& none) {
    if (words.empty()) {
        return -1;
    }
    const auto it = std::find(modes.begin(), modes.end(), words[0]);
    if (words.size() > 1 || it == modes.end()) {
        std::string list;
        for (std::size_t i = 0; i < modes.size(); i++) {
            list += (i ? i + 1 == modes.size() ? " and " : ", " : "") + modes[i];
        }
        throw_invalid("'" + words.back() + "': the modes are " + list + " (none: " + none + ")");
    }
    words.clear();
    return static_cast<int>(it - modes.begin());
}

std::optional<TraceOptions> parse_trace_options(const Args& args, const TraceCommand& cmd) {
    TraceOptions opt;
    TraceSpec& spec = opt.spec;
    spec.collect = cmd.collect;
    Args before = args;
    auto dashes = std::find(before.begin(), before.end(), std::string("--"));
    if (dashes != before.end()) {
        spec.command.assign(dashes + 1, before.end());
        before.erase(dashes, before.end());
        if (spec.command.empty()) {
            throw_invalid("no COMMAND after '--': give the command to run, e.g. -- ls /");
        }
    }
    const po::options_description options = describe(cmd);
    po::options_description hidden;
    hidden.add_options()("probe", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("probe", -1);
    const po::variables_map vm = parse_args(cmd.name, before, all, positional);
    if (vm.count("help")) {
        print_help(cmd.usage, options);
        return std::nullopt;
    }
    if (vm.count("format")) {
        opt.format = parse_format(vm["format"].as<std::string>(), cmd.chrome);
    }
    if (vm.count("via")) {
        spec.attach = parse_via(vm["via"].as<std::string>());
    }
    if (vm.count("probe")) {
        spec.probes = vm["probe"].as<std::vector<std::string>>();
    }
    if (vm.count("event")) {
        spec.events = vm["event"].as<std::vector<std::string>>();
    }
    if (vm.count("pid")) {
        spec.pids = parse_pids(vm["pid"].as<std::vector<std::string>>());
        if (!spec.command.empty()) {
            throw_invalid("--pid cannot be combined with a COMMAND (the command's processes are "
                          "traced): drop one of them");
        }
    }
    if (vm.count("cpu")) {
        spec.cpus = parse_cpu_list(vm["cpu"].as<std::string>());
    }
    spec.ring = parse_ring(vm, cmd.records);
    if (vm.count("duration")) {
        spec.duration = parse_seconds("--duration", vm["duration"].as<std::string>());
    }
    if (cmd.metrics) {
        parse_metrics_options(vm, opt);
    }
    if (cmd.chrome) {
        parse_otlp_stream_option(vm, opt, cmd.name);
    }
    if (vm.count("interval")) {
        spec.interval = parse_seconds("--interval", vm["interval"].as<std::string>());
        if (*spec.interval < 0.01) {
            throw_invalid("--interval must be at least 0.01 s");
        }
    }
    // (hook's --record is its own flag: printing each call it changed)
    if (cmd.record_help && vm.count("record")) {
        opt.record = vm["record"].as<std::string>();
        if (opt.record.empty()) {
            throw_invalid("empty --record file name: give a path");
        }
    }
    if (vm.count("output")) {
        opt.output = vm["output"].as<std::string>();
        if (opt.output.empty()) {
            throw_invalid("empty --output file name: give a path");
        }
    } else if (cmd.output_required) {
        throw_invalid("fhook " + std::string(cmd.name) +
                      " needs -o FILE: the record file to write");
    }
    opt.quiet = vm.count("quiet") != 0;
    if (vm.count("summary-json")) {
        opt.summary_json = vm["summary-json"].as<std::string>();
        if (opt.summary_json.empty()) {
            throw_invalid("empty --summary-json file name: give a path");
        }
    }
    spec.stack = vm.count("stack") != 0;
    if (vm.count("trigger")) {
        spec.triggers = vm["trigger"].as<std::vector<std::string>>();
    }
    if (vm.count("filter")) {
        spec.filter = vm["filter"].as<std::string>();
        if (spec.filter.find_first_not_of(" \t") == std::string::npos) {
            throw_invalid("empty --filter: give an expression, e.g. --filter 'comm == \"cat\"'");
        }
    }
    if (cmd.parse_options) {
        cmd.parse_options(vm, opt);
    }
    if (spec.probes.empty() && spec.events.empty() && cmd.no_probe) {
        throw_invalid(cmd.no_probe);
    }
    for (const auto& text : spec.probes) {
        if (spec.attach == Attach::Kprobe && !is_probe_definition(text) &&
            !is_tracepoint_definition(text) && text.find_first_of("*?[!:") != std::string::npos) {
            throw_invalid("--via kprobe takes function names, not '" + text +
                          "': one kprobe per function");
        }
        if ((cmd.collect == Collect::Counts || cmd.collect == Collect::Latency) &&
            is_probe_definition(text)) {
            throw_invalid("fhook " + std::string(cmd.name) +
                          " takes functions, not probe definitions: use fhook stat for '" + text +
                          "'");
        }
    }
    return opt;
}

Progress terminal_progress(bool quiet) {
    if (quiet || !::isatty(STDERR_FILENO)) {
        return {};
    }
    return [](const std::string& doing) {
        // "\r...\033[K": the same line, the rest of it erased
        print_stderr(doing.empty() ? std::string("\r\033[K") : "\rfhook: " + doing + "...\033[K");
    };
}

void note_hidden_symbols(bool quiet) {
    if (!quiet && kallsyms_addresses_hidden(kallsyms_path())) {
        print_stderr(
            "fhook: note: kernel functions print as addresses: " + kallsyms_hidden_reason() +
            " (run as root, or give fhook cap_syslog as well: docs/cli.md "
            "\"Permissions\")\n");
    }
}

SystemPaths system_paths() {
    SystemPaths paths;
    paths.device = device_path();
    paths.kallsyms = kallsyms_path();
    paths.functions = functions_path();
    paths.tracefs = tracefs_dir();
    return paths;
}

RecordWriter::Info record_info(const Tracer& tracer, const Args& args, const char* command) {
    RecordWriter::Info info;
    info.nr_cpus = static_cast<std::uint32_t>(tracer.nr_rings());
    info.kernel_release = kernel_release();
    info.preempt_model = preempt_model();
    info.online_cpus = static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN));
    info.command = std::string("fhook ") + command;
    for (const auto& a : args) {
        info.command += " " + a;
    }
    info.probes = tracer.recorded_probes();
    info.events = tracer.recorded_events();
    return info;
}

std::unique_ptr<FileSink> record_sink(const TraceOptions& opt, const Tracer& tracer,
                                      const Args& args, const char* command,
                                      const std::string& name) {
    if (opt.record.empty()) {
        return nullptr;
    }
    RecordWriter::Info info = record_info(tracer, args, command);
    info.tracer = name;
    return std::make_unique<FileSink>(open_output(opt.record), opt.record, info, tracer.ksyms());
}

UniqueFd open_output(const std::string& path) {
    UniqueFd fd;
    if (!path.empty()) {
        fd.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (!fd) {
            int err = errno;
            throw_runtime("cannot open output file '" + path + "': " + errno_text(err) +
                              ": check the path and its permissions",
                          err);
        }
    }
    return fd;
}

void SnapshotNotes::on_snapshot(unsigned number, bool triggered, std::size_t records) {
    if (!quiet_) {
        print_stderr("fhook: snapshot " + std::to_string(number) + (triggered ? " (trigger)" : "") +
                     ": " + std::to_string(records) + " records\n");
    }
}

void print_summary(const Tracer& tracer, const TraceOptions& opt, const std::string& tail) {
    const Stats session = tracer.stats();
    if (!opt.summary_json.empty()) {
        const UniqueFd fd = open_output(opt.summary_json);
        OutputWriter json(fd.get());
        json.append(summary_json(session, tracer.probes()));
        json.flush();
    }
    if (!opt.quiet) {
        print_stderr(summary_text(session, tracer.probes()) + tail);
    }
}

int run_status(Tracer& tracer) {
    // the command's, as the shell gives it (perf stat, time)
    const std::optional<int> status = tracer.command_status();
    if (status && WIFEXITED(*status)) {
        return WEXITSTATUS(*status);
    }
    if (status && WIFSIGNALED(*status)) {
        return 128 + WTERMSIG(*status);
    }
    return 0;
}

int print_events(const TraceOptions& opt,
                 const std::function<std::unique_ptr<Formatter>(const Tracer&)>& formatter) {
    Tracer tracer(opt.spec, system_paths(), terminal_progress(opt.quiet));
    const UniqueFd out = open_output(opt.output);
    tracer.setup();
    std::unique_ptr<Formatter> events =
        formatter ? formatter(tracer) : make_formatter(opt.format, tracer.ksyms());
    std::unique_ptr<EventSink> sink;
    if (!opt.otlp.empty()) {
        sink = std::make_unique<OtlpSink>(opt.otlp, opt.otlp_path, std::move(events),
                                          tracer.probe_table());
    } else {
        sink = std::make_unique<PrintSink>(output_fd(out), std::move(events), tracer.probe_table());
    }
    tracer.start();
    note_hidden_symbols(opt.quiet);
    SnapshotNotes notes(opt.quiet);
    tracer.run(*sink, notes);
    print_summary(tracer, opt);
    return run_status(tracer);
}

} // namespace fhook::cli
