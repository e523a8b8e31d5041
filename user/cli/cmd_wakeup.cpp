// fhook wakeup [--rt | --dl] [top | hist] [options] [-- COMMAND [ARGS...]]
#include <unistd.h>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/wakeup_sink.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/output/wakeup_format.hpp>
#include <fhook/sys/preempt.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook wakeup [--rt | --dl] [top | hist] [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "The latency from a task being woken to it running: the kernel's wakeup,\n"
    "wakeup_rt (--rt) and wakeup_dl (--dl) tracers, for kernels built without\n"
    "them (CONFIG_SCHED_TRACER), until Ctrl-C, --duration or the exit of COMMAND.\n"
    "  (no mode)  each new maximum as the kernel's latency trace: the task\n"
    "             tracked (the highest-priority one woken that outranks its\n"
    "             waker), its wakeup and the switch to it; with --threshold,\n"
    "             every tracked wakeup that took that long (tracing_thresh)\n"
    "  top        every wakeup of the class (woken, or preempted while\n"
    "             runnable): count, min, avg and max per CPU, every --interval\n"
    "             (default 1 s), as rtla's top\n"
    "  hist       the same as log2 histograms at the end (BCC's runqlat), per\n"
    "             CPU, process or thread as well if asked\n";

enum class Mode { Trace, Top, Hist };

// "a,b,!c" -> {"a", "b", "!c"}, empty pieces dropped
std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        if (comma > at) {
            out.push_back(text.substr(at, comma - at));
        }
        at = comma + 1;
    }
    return out;
}

void add_wakeup_options(po::options_description& options) {
    options.add_options()("rt", "real-time and deadline tasks only (wakeup_rt)")(
        "dl", "deadline tasks only (wakeup_dl)")(
        "threshold,T", po::value<std::string>()->value_name("USEC"),
        "report every tracked wakeup of at least USEC microseconds, not only new maxima "
        "(tracing_thresh)")("per-cpu", "hist: a histogram per CPU as well as their sum")(
        "per-process",
        "hist: a histogram per process (tgid) as well, kept in the module "
        "(runqlat -P)")("per-thread", "hist: a histogram per thread (pid) as well (runqlat -L)")(
        "stack", "the waker's stack with each report, as the kernel's tracer shows it (a "
                 "stack walk per tracked wakeup)")(
        "function", po::value<std::string>()->value_name("GLOBS")->implicit_value("*"),
        "the function calls on the woken task's CPU from the wakeup to the switch with each "
        "report, as the kernel's tracer with function-trace on; --function=GLOB,... "
        "(!GLOB leaves out) traces only those")(
        "unit", po::value<std::string>()->value_name("UNIT")->default_value("us"),
        "top and hist in ns, us or ms");
}

void parse_wakeup_options(const po::variables_map& vm, TraceOptions& opt) {
    if (vm.count("rt") && vm.count("dl")) {
        throw_invalid("give --rt (wakeup_rt) or --dl (wakeup_dl), not both");
    }
    opt.spec.wakeup.wclass = vm.count("dl")   ? FHOOK_WAKEUP_DL
                             : vm.count("rt") ? FHOOK_WAKEUP_RT
                                              : FHOOK_WAKEUP_ALL;
    if (vm.count("threshold")) {
        const std::uint64_t usec = parse_u64("--threshold", vm["threshold"].as<std::string>());
        if (usec < 1 || usec > 1000000000) {
            throw_invalid("--threshold must be between 1 and 1000000000 microseconds");
        }
        opt.spec.wakeup.threshold_ns = usec * 1000;
    }
    parse_unit_option(vm, opt);
    opt.per_cpu = vm.count("per-cpu") != 0;
    if (vm.count("per-process") && vm.count("per-thread")) {
        throw_invalid("give --per-process or --per-thread, not both");
    }
    using PerTask = WakeupSpec::PerTask;
    opt.spec.wakeup.stack = vm.count("stack") != 0;
    if (vm.count("function")) {
        opt.spec.wakeup.functions = split_list(vm["function"].as<std::string>());
        if (opt.spec.wakeup.functions.empty()) {
            throw_invalid("--function takes GLOB,... (or nothing: every function)");
        }
    }
    opt.spec.wakeup.per_task = vm.count("per-process")  ? PerTask::Process
                               : vm.count("per-thread") ? PerTask::Thread
                                                        : PerTask::None;
}

// The histogram per CPU (and all), as top's table or hist's histograms.
std::string wakeup_tables(const Tracer& tracer, const TraceOptions& opt, Mode mode) {
    const bool json = opt.format == OutputFormat::Json;
    const std::string title = std::string(wakeup_tracer_name(opt.spec.wakeup.wclass)) + " latency";
    const std::uint32_t id = tracer.probes().front().id;
    std::vector<CpuLatency> rows;
    for (unsigned cpu = 0; cpu < tracer.nr_rings(); cpu++) {
        rows.push_back(CpuLatency{static_cast<int>(cpu), tracer.latency(id, cpu)});
    }
    rows.push_back(CpuLatency{-1, tracer.latency(id)});
    if (mode == Mode::Top) {
        return json ? format_latency_top_json(rows, title)
                    : format_latency_top(rows, title, opt.unit);
    }
    std::string text;
    for (const CpuLatency& r : rows) {
        if (r.cpu >= 0 && (!opt.per_cpu || !r.hist.count)) {
            continue;
        }
        const std::string name = r.cpu < 0 ? title : title + ", CPU " + std::to_string(r.cpu);
        text += (text.empty() ? "" : "\n") + (json ? format_latency_json(r.hist, name)
                                                   : format_latency_text(r.hist, name, opt.unit));
    }
    if (opt.spec.wakeup.per_task != WakeupSpec::PerTask::None) {
        const bool process = opt.spec.wakeup.per_task == WakeupSpec::PerTask::Process;
        const Session::TaskLatencies tasks = tracer.task_latencies(id);
        for (const Session::TaskLatency& t : tasks.tasks) {
            const std::string name = title + (process ? ", tgid " : ", pid ") +
                                     std::to_string(t.id) + " (" + t.comm + ")";
            const LatencyTask task{process ? "tgid" : "pid", t.id, t.comm};
            text += "\n" + (json ? format_latency_json(t.hist, name, &task)
                                 : format_latency_text(t.hist, name, opt.unit));
        }
        if (tasks.drops && !opt.quiet) {
            print_stderr("fhook: " + std::to_string(tasks.drops) +
                         " wakeups found the per-task table full (" +
                         std::to_string(Session::kTaskHistEntries) +
                         " task and bucket pairs): not in the histograms per task\n");
        }
    }
    return text;
}

} // namespace

int cmd_wakeup(const Args& args) {
    TraceCommand cmd;
    cmd.name = "wakeup";
    cmd.usage = kUsage;
    cmd.collect = Collect::Wakeup;
    cmd.snapshots = false;
    cmd.interval = true;
    cmd.interval_help = "top: print the table every SEC seconds (default 1)";
    cmd.via = false;
    cmd.metrics = true;
    cmd.filter_help = nullptr;
    cmd.output_help = "write the reports or tables to FILE instead of stdout";
    cmd.record_help = "write each report's records (its function calls too) to FILE, a record "
                      "file that 'fhook report FILE' prints as wakeup did";
    cmd.format_help = "text (the kernel's latency traces, rtla's tables; default) or json";
    cmd.add_options = add_wakeup_options;
    cmd.parse_options = parse_wakeup_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    static const std::vector<std::string> kModes = {"top", "hist"};
    const int m = take_mode(opt->spec.probes, kModes, "each new maximum");
    const Mode mode = m < 0 ? Mode::Trace : m == 0 ? Mode::Top : Mode::Hist;
    if (mode != Mode::Hist && opt->spec.wakeup.per_task != WakeupSpec::PerTask::None) {
        throw_invalid("--per-process and --per-thread are options of 'fhook wakeup hist'");
    }
    if (mode != Mode::Trace &&
        (opt->spec.wakeup.stack || !opt->spec.wakeup.functions.empty() || !opt->record.empty())) {
        throw_invalid("--stack, --function and --record are for the reports of 'fhook wakeup' "
                      "(no mode)");
    }
    opt->spec.wakeup.reports = mode == Mode::Trace;
    if (mode == Mode::Top && !opt->spec.interval) {
        opt->spec.interval = 1.0;
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    const LatencyTraceHost host{wakeup_tracer_name(opt->spec.wakeup.wclass), kernel_release(),
                                preempt_model(),
                                static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN))};
    const std::unique_ptr<FileSink> file = record_sink(*opt, tracer, args, "wakeup", host.tracer);
    const bool json = opt->format == OutputFormat::Json;
    WakeupSink reports(
        [&](const WakeupReport& r) {
            print_to(output_fd(out),
                     format_wakeup_report(r, tracer.ksyms(), host, json, reports.reports()));
        },
        file.get());
    TablePrinter tables([&] { return wakeup_tables(tracer, *opt, mode); }, output_fd(out),
                        opt->format == OutputFormat::Json, mode == Mode::Top);
    tracer.start();
    metrics.started();
    if (mode == Mode::Trace) {
        tracer.run(reports, tables);
        if (!reports.reports() && !opt->quiet) {
            print_stderr("fhook: no " + host.tracer + " wakeup was tracked\n");
        }
        // the calls a report may lack: missed (recursion), lost (ring full)
        if (!opt->spec.wakeup.functions.empty() && !opt->quiet) {
            const CpuStats calls = tracer.stats(tracer.probes().back().id).total;
            if (calls.missed || calls.lost) {
                print_stderr("fhook: function calls missed " + std::to_string(calls.missed) +
                             ", lost " + std::to_string(calls.lost) + ": reports may lack some\n");
            }
        }
    } else {
        DiscardSink discard;
        tracer.run(discard, tables);
        tables.print();
    }
    metrics.finish();
    return run_status(tracer);
}

} // namespace fhook::cli
