// fhook irqsoff | preemptoff | preemptirqsoff [options] [-- COMMAND [ARGS...]]
#include <unistd.h>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/irqsoff_format.hpp>
#include <fhook/output/tracer_format.hpp>
#include <fhook/sys/preempt.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook irqsoff | preemptoff | preemptirqsoff [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "The longest sections with interrupts off (irqsoff), preemption off\n"
    "(preemptoff) or either (preemptirqsoff) on any CPU: the kernel's tracers of\n"
    "those names, for kernels built without them (CONFIG_IRQSOFF_TRACER,\n"
    "CONFIG_PREEMPT_TRACER) but with the tracepoints they stand on: irq_disable\n"
    "and irq_enable (CONFIG_PREEMPTIRQ_TRACEPOINTS: lockdep brings them),\n"
    "preempt_disable and preempt_enable (CONFIG_TRACE_PREEMPT_TOGGLE).  Each\n"
    "section longer than every one before (with --threshold, each one that long)\n"
    "is printed as the kernel's latency trace: where it started and ended, and the\n"
    "stack at its end.  Until Ctrl-C, --duration or the exit of COMMAND.\n";

void add_irqsoff_options(po::options_description& options) {
    options.add_options()("threshold,T", po::value<std::string>()->value_name("USEC"),
                          "every section of USEC us or more, not only new maxima");
}

void parse_irqsoff_options(const po::variables_map& vm, TraceOptions& opt) {
    if (vm.count("threshold")) {
        opt.spec.irqsoff.cfg.threshold_ns = usec_option(vm, "threshold", 1, 1000000000) * 1000;
    }
}

// Each report printed; the longest kept for the end.
class IrqsoffPrinter final : public EventSink {
public:
    IrqsoffPrinter(const Tracer& tracer, int fd, bool json, LatencyTraceHost host)
        : fd_(fd), lines_(tracer.ksyms(), std::move(host), json) {}
    void on_event(const Event& ev) override {
        if (ev.type != EventType::Irqsoff) {
            return;
        }
        const fhook_rec_irqsoff r = irqsoff_of(ev);
        print_to(fd_, lines_.format(ev));
        reports_++;
        if (r.latency_ns > worst_) {
            worst_ = r.latency_ns;
            worst_cpu_ = r.hdr.cpu;
        }
    }
    std::size_t reports() const { return reports_; }
    std::uint64_t worst_ns() const { return worst_; }
    unsigned worst_cpu() const { return worst_cpu_; }

private:
    int fd_;
    TracerPrinter lines_;
    std::size_t reports_ = 0;
    std::uint64_t worst_ = 0;
    unsigned worst_cpu_ = 0;
};

int run_irqsoff(const Args& args, const char* name, std::uint32_t kinds) {
    TraceCommand cmd;
    cmd.name = name;
    cmd.usage = kUsage;
    cmd.collect = Collect::Irqsoff;
    cmd.snapshots = false;
    cmd.via = false;
    cmd.filter_help = nullptr;
    cmd.output_help = "write the reports to FILE instead of stdout";
    cmd.record_help = "also write the reports' records to FILE, a record file that "
                      "'fhook report FILE' prints as this command did";
    cmd.format_help = "text (the kernel's latency trace; default) or json";
    cmd.metrics = true;
    cmd.add_options = add_irqsoff_options;
    cmd.parse_options = parse_irqsoff_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    if (!opt->spec.probes.empty()) {
        throw_invalid("'" + opt->spec.probes.front() + "': " + name +
                      " takes no arguments but options");
    }
    opt->spec.irqsoff.cfg.kinds = kinds;
    opt->spec.irqsoff.tracer = name;
    opt->spec.need_symbols = true;
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    IrqsoffPrinter printer(
        tracer, output_fd(out), opt->format == OutputFormat::Json,
        LatencyTraceHost{name, kernel_release(), preempt_model(),
                         static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN))});
    TraceObserver observer; // (nothing to show while it runs)
    const std::unique_ptr<FileSink> file = record_sink(*opt, tracer, args, name, name);
    tracer.start();
    metrics.started();
    TeeSink measured(printer, metrics.tracer_sink());
    TeeSink recorded(measured, file.get());
    tracer.run(recorded, observer);
    metrics.finish();
    if (!opt->quiet) {
        print_stderr(printer.reports()
                         ? "fhook: " + std::to_string(printer.reports()) +
                               " sections reported; the longest " +
                               std::to_string(printer.worst_ns() / 1000) + " us on CPU " +
                               std::to_string(printer.worst_cpu()) + "\n"
                         : "fhook: no section reported\n");
    }
    return run_status(tracer);
}

} // namespace

int cmd_irqsoff(const Args& args) {
    return run_irqsoff(args, "irqsoff", FHOOK_IRQSOFF_IRQ);
}

int cmd_preemptoff(const Args& args) {
    return run_irqsoff(args, "preemptoff", FHOOK_IRQSOFF_PREEMPT);
}

int cmd_preemptirqsoff(const Args& args) {
    return run_irqsoff(args, "preemptirqsoff", FHOOK_IRQSOFF_IRQ | FHOOK_IRQSOFF_PREEMPT);
}

} // namespace fhook::cli
