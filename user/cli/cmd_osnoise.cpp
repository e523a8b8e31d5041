// fhook osnoise [top | hist | trace] [options] [-- COMMAND [ARGS...]]
#include <fhook/core/error.hpp>
#include <fhook/core/osnoise.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/osnoise_format.hpp>
#include <fhook/output/tracer_format.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook osnoise [top | hist | trace] [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "The time the kernel and the hardware take from a busy task: the kernel's\n"
    "osnoise tracer, for kernels built without it (CONFIG_OSNOISE_TRACER).  A thread\n"
    "per CPU reads the clock in a loop for --runtime of every --period; a gap of\n"
    "--threshold or more is noise, counted by what ran meanwhile (NMI, IRQ,\n"
    "softirq, another thread; none: the hardware).  Until Ctrl-C, --duration, a\n"
    "--stop or the exit of COMMAND.\n"
    "  top (default)  per CPU the runtime, noise, % of the CPU available, the\n"
    "                 longest noise and the counters, every --interval (default\n"
    "                 1 s) and at the end, as rtla osnoise top\n"
    "  hist           each gap's duration per CPU at the end, as rtla osnoise hist\n"
    "  trace          each period and each gap as the kernel's trace shows them\n"
    "Needs CAP_SYS_ADMIN (its threads take up to all of every CPU's time).\n";

using Mode = RtlaMode;

void add_osnoise_options(po::options_description& options) {
    options.add_options()("period,p", po::value<std::string>()->value_name("USEC"),
                          "one sample per period, 100 to 10000000 us (default 1000000)")(
        "runtime,r", po::value<std::string>()->value_name("USEC"),
        "the time sampled in each period, 100 us to the period (default: all of it)")(
        "threshold,T", po::value<std::string>()->value_name("USEC"),
        "a gap of USEC us or more is noise (default 5)")(
        "stop,s", po::value<std::string>()->value_name("USEC"),
        "stop at the first gap of USEC us or more")(
        "stop-total,S", po::value<std::string>()->value_name("USEC"),
        "stop at the first period with USEC us of noise or more")(
        "priority,P", po::value<std::string>()->value_name("PRIO"),
        "run the threads at SCHED_FIFO PRIO, 1 to 99, or f:PRIO as rtla (default: "
        "SCHED_OTHER)");
    add_bucket_options(options, "us");
}

void parse_osnoise_options(const po::variables_map& vm, TraceOptions& opt) {
    fhook_osnoise& o = opt.spec.osnoise;
    o.period_us =
        vm.count("period")
            ? static_cast<std::uint32_t>(usec_option(vm, "period", FHOOK_OSNOISE_MIN_RUNTIME_US,
                                                     FHOOK_OSNOISE_MAX_PERIOD_US))
            : 1000000;
    o.runtime_us = vm.count("runtime")
                       ? static_cast<std::uint32_t>(
                             usec_option(vm, "runtime", FHOOK_OSNOISE_MIN_RUNTIME_US, o.period_us))
                       : o.period_us;
    if (vm.count("threshold")) {
        o.threshold_ns = usec_option(vm, "threshold", 1, o.runtime_us) * 1000;
    }
    constexpr std::uint64_t kMaxUsec = 1000000000;
    if (vm.count("stop")) {
        o.stop_single_ns = usec_option(vm, "stop", 1, kMaxUsec) * 1000;
    }
    if (vm.count("stop-total")) {
        o.stop_total_ns = usec_option(vm, "stop-total", 1, kMaxUsec) * 1000;
    }
    if (vm.count("priority")) {
        o.prio = fifo_priority_option(vm);
        if (o.runtime_us == o.period_us) {
            throw_invalid("--priority needs a --runtime below the --period: a real-time thread "
                          "that never sleeps starves its CPU's own threads");
        }
    }
    parse_bucket_options(vm, opt, 1000, "us");
}

// Every period and gap into the summary; in trace mode, printed; done at
// a stop.
class OsnoiseSink final : public EventSink {
public:
    OsnoiseSink(const Tracer& tracer, const TraceOptions& opt, Mode mode, int fd)
        : summary_(opt.bucket_ns, opt.entries), fd_(fd), mode_(mode),
          lines_(tracer.ksyms(), LatencyTraceHost{"osnoise", "", "", 0},
                 opt.format == OutputFormat::Json) {}
    void on_event(const Event& ev) override {
        if (ev.type == EventType::Osnoise) {
            const fhook_rec_osnoise r = osnoise_of(ev);
            summary_.add(r);
            stopped(r.oflags, ev.duration, "noise in a period", r.hdr.cpu);
        } else if (ev.type == EventType::OsnoiseNoise) {
            const fhook_rec_osnoise_noise r = osnoise_noise_of(ev);
            summary_.add(r);
            stopped(r.oflags, ev.duration, "a single noise", r.hdr.cpu);
        } else {
            return;
        }
        if (mode_ == Mode::Trace) {
            print_to(fd_, lines_.format(ev));
        }
    }
    bool done() const override { return !stop_.empty(); }
    const OsnoiseSummary& summary() const { return summary_; }
    // "a single noise of N ns on CPU C", after a stop
    const std::string& stop() const { return stop_; }

private:
    void stopped(std::uint32_t oflags, std::uint64_t ns, const char* what, unsigned cpu) {
        if (oflags & FHOOK_OSNOISE_STOPPED) {
            stop_ = std::string(what) + " of " + std::to_string(ns) + " ns on CPU " +
                    std::to_string(cpu);
        }
    }

    OsnoiseSummary summary_;
    int fd_;
    Mode mode_;
    TracerPrinter lines_;
    std::string stop_;
};

} // namespace

int cmd_osnoise(const Args& args) {
    TraceCommand cmd = rtla_command("osnoise", kUsage, Collect::Osnoise,
                                    "write the tables or records to FILE instead of stdout");
    cmd.record_help = "also write every measure's record to FILE, a record file that "
                      "'fhook report FILE' prints as trace mode does (every one)";
    cmd.metrics = true;
    cmd.add_options = add_osnoise_options;
    cmd.parse_options = parse_osnoise_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    const Mode mode = take_rtla_mode(*opt);
    // (top needs the periods only; hist and trace each gap too)
    if (mode != Mode::Top) {
        opt->spec.osnoise.flags |= FHOOK_OSNOISE_EACH;
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    OsnoiseSink sink(tracer, *opt, mode, output_fd(out));
    const bool json = opt->format == OutputFormat::Json;
    TablePrinter tables(
        [&] {
            const OsnoiseSummary& s = sink.summary();
            if (mode == Mode::Hist) {
                return json ? format_osnoise_hist_json(s) : format_osnoise_hist(s);
            }
            return json ? format_osnoise_top_json(s) : format_osnoise_top(s);
        },
        output_fd(out), json, mode == Mode::Top);
    const std::unique_ptr<FileSink> file = record_sink(*opt, tracer, args, "osnoise", "osnoise");
    tracer.start();
    metrics.started();
    TeeSink measured(sink, metrics.tracer_sink());
    TeeSink recorded(measured, file.get());
    tracer.run(recorded, tables);
    metrics.finish();
    if (mode != Mode::Trace) {
        tables.print();
    }
    if (!sink.stop().empty() && !opt->quiet) {
        print_stderr("fhook: stopped: " + sink.stop() + "\n");
    }
    return run_status(tracer);
}

} // namespace fhook::cli
