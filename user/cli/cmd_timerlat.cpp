// fhook timerlat [top | hist | trace] [options] [-- COMMAND [ARGS...]]
#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/core/timerlat.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/timerlat_format.hpp>
#include <fhook/output/tracer_format.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook timerlat [top | hist | trace] [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "How late timers and the threads they wake run: the kernel's timerlat tracer,\n"
    "for kernels built without it (CONFIG_TIMERLAT_TRACER).  A SCHED_FIFO thread\n"
    "per CPU arms a hard-interrupt timer every --period; the IRQ latency is how\n"
    "late the timer's handler runs, the thread latency how late the thread it\n"
    "wakes runs.  Until Ctrl-C, --duration, a --stop or the exit of COMMAND.\n"
    "  top (default)  count, last, min, avg and max per CPU, every --interval\n"
    "                 (default 1 s) and at the end, as rtla timerlat top\n"
    "  hist           histograms per CPU at the end, as rtla timerlat hist\n"
    "  trace          each measure as the kernel's trace shows it (with\n"
    "                 --threshold, those that long)\n"
    "Needs CAP_SYS_ADMIN (it runs real-time threads of its own).\n";

using Mode = RtlaMode;

void add_timerlat_options(po::options_description& options) {
    options.add_options()("period", po::value<std::string>()->value_name("USEC"),
                          "the timer's period, 100 to 1000000 us (default 1000)")(
        "priority,P", po::value<std::string>()->value_name("PRIO"),
        "the threads' SCHED_FIFO priority, 1 to 99, or f:PRIO as rtla (default 95)")(
        "stop,a", po::value<std::string>()->value_name("USEC"),
        "stop at the first IRQ or thread latency of USEC us or more")(
        "irq", po::value<std::string>()->value_name("USEC"),
        "stop at the first IRQ latency of USEC us or more")(
        "thread,T", po::value<std::string>()->value_name("USEC"),
        "stop at the first thread latency of USEC us or more")(
        "threshold", po::value<std::string>()->value_name("USEC"),
        "trace: only the measures of USEC us or more")(
        "unit", po::value<std::string>()->value_name("UNIT")->default_value("us"),
        "top and hist in ns, us or ms");
    add_bucket_options(options, "--unit");
}

void parse_timerlat_options(const po::variables_map& vm, TraceOptions& opt) {
    fhook_timerlat& t = opt.spec.timerlat;
    t.period_us =
        vm.count("period")
            ? static_cast<std::uint32_t>(usec_option(vm, "period", FHOOK_TIMERLAT_MIN_PERIOD_US,
                                                     FHOOK_TIMERLAT_MAX_PERIOD_US))
            : 1000;
    if (vm.count("priority")) {
        t.prio = fifo_priority_option(vm);
    }
    constexpr std::uint64_t kMaxUsec = 1000000000;
    if (vm.count("stop")) {
        t.stop_irq_ns = t.stop_thread_ns = usec_option(vm, "stop", 1, kMaxUsec) * 1000;
    }
    if (vm.count("irq")) {
        t.stop_irq_ns = usec_option(vm, "irq", 1, kMaxUsec) * 1000;
    }
    if (vm.count("thread")) {
        t.stop_thread_ns = usec_option(vm, "thread", 1, kMaxUsec) * 1000;
    }
    if (vm.count("threshold")) {
        opt.threshold_ns = usec_option(vm, "threshold", 1, kMaxUsec) * 1000;
    }
    parse_unit_option(vm, opt);
    parse_bucket_options(vm, opt, text_unit_ns(opt.unit), vm["unit"].as<std::string>());
}

// Every measure into the summary; in trace mode, printed; done at a stop.
class TimerlatSink final : public EventSink {
public:
    TimerlatSink(const Tracer& tracer, const TraceOptions& opt, Mode mode, int fd)
        : summary_(opt.bucket_ns, opt.entries), fd_(fd), mode_(mode),
          lines_(tracer.ksyms(), LatencyTraceHost{"timerlat", "", "", 0},
                 opt.format == OutputFormat::Json),
          threshold_ns_(opt.threshold_ns) {}
    void on_event(const Event& ev) override {
        if (ev.type != EventType::Timerlat) {
            return;
        }
        const fhook_rec_timerlat r = timerlat_of(ev);
        summary_.add(r);
        if (r.tflags & FHOOK_TIMERLAT_STOPPED) {
            stop_ = r;
            stop_comm_ = ev.comm;
        }
        if (mode_ == Mode::Trace &&
            (r.latency >= threshold_ns_ || (r.tflags & FHOOK_TIMERLAT_STOPPED))) {
            print_to(fd_, lines_.format(ev));
        }
    }
    bool done() const override { return stop_.has_value(); }
    const TimerlatSummary& summary() const { return summary_; }
    const std::optional<fhook_rec_timerlat>& stop() const { return stop_; }
    const std::string& stop_comm() const { return stop_comm_; }

private:
    TimerlatSummary summary_;
    int fd_;
    Mode mode_;
    TracerPrinter lines_;
    std::uint64_t threshold_ns_;
    std::optional<fhook_rec_timerlat> stop_;
    std::string stop_comm_;
};

} // namespace

int cmd_timerlat(const Args& args) {
    TraceCommand cmd = rtla_command("timerlat", kUsage, Collect::Timerlat,
                                    "write the tables or measures to FILE instead of stdout");
    cmd.record_help = "also write every measure's record to FILE, a record file that "
                      "'fhook report FILE' prints as trace mode does (every one)";
    cmd.metrics = true;
    cmd.add_options = add_timerlat_options;
    cmd.parse_options = parse_timerlat_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    const Mode mode = take_rtla_mode(*opt);
    if (opt->threshold_ns && mode != Mode::Trace) {
        throw_invalid("--threshold is for the trace mode (top and hist count every measure)");
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    TimerlatSink sink(tracer, *opt, mode, output_fd(out));
    const bool json = opt->format == OutputFormat::Json;
    TablePrinter tables(
        [&, unit = opt->unit] {
            const TimerlatSummary& s = sink.summary();
            if (mode == Mode::Hist) {
                return json ? format_timerlat_hist_json(s) : format_timerlat_hist(s, unit);
            }
            return json ? format_timerlat_top_json(s) : format_timerlat_top(s, unit);
        },
        output_fd(out), json, mode == Mode::Top);
    const std::unique_ptr<FileSink> file = record_sink(*opt, tracer, args, "timerlat", "timerlat");
    tracer.start();
    metrics.started();
    TeeSink measured(sink, metrics.tracer_sink());
    TeeSink recorded(measured, file.get());
    tracer.run(recorded, tables);
    metrics.finish();
    if (mode != Mode::Trace) {
        tables.print();
    }
    if (sink.stop() && !opt->quiet) {
        const fhook_rec_timerlat& r = *sink.stop();
        print_stderr(
            "fhook: stopped: " + std::string(r.context == FHOOK_TIMERLAT_IRQ ? "IRQ" : "thread") +
            " latency " + std::to_string(r.latency) + " ns on CPU " + std::to_string(r.hdr.cpu) +
            " (" + sink.stop_comm() + "-" + std::to_string(r.hdr.pid) + ")\n");
    }
    return run_status(tracer);
}

} // namespace fhook::cli
