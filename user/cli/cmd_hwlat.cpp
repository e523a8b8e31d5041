// fhook hwlat [options] [-- COMMAND [ARGS...]]
#include <algorithm>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/output/hwlat_format.hpp>
#include <fhook/output/tracer_format.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook hwlat [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Time taken from the CPUs below the kernel (SMIs, the hypervisor, firmware):\n"
    "the kernel's hwlat tracer, for kernels built without it (CONFIG_HWLAT_TRACER).\n"
    "A kernel thread visits the CPUs in turn, one per --window, and spins there\n"
    "with interrupts off for --width, reading the clock; each window with a gap\n"
    "over --threshold is printed as the kernel's trace shows it.  Until Ctrl-C,\n"
    "--duration or the exit of COMMAND.  Needs CAP_SYS_ADMIN (it disables\n"
    "interrupts).\n";

void add_hwlat_options(po::options_description& options) {
    options.add_options()("window", po::value<std::string>()->value_name("USEC"),
                          "one CPU sampled per window, 1000 to 10000000 us (default 1000000)")(
        "width", po::value<std::string>()->value_name("USEC"),
        "interrupts off this long in each window, below it and at most 1000000 us "
        "(default 500000)")("threshold,T", po::value<std::string>()->value_name("USEC"),
                            "report gaps over USEC us (default 10)");
}

void parse_hwlat_options(const po::variables_map& vm, TraceOptions& opt) {
    fhook_hwlat& h = opt.spec.hwlat;
    h.window_us = vm.count("window") ? usec_option(vm, "window", FHOOK_HWLAT_MIN_WINDOW_US,
                                                   FHOOK_HWLAT_MAX_WINDOW_US)
                                     : 1000000;
    h.width_us = vm.count("width") ? usec_option(vm, "width", 1, FHOOK_HWLAT_MAX_WIDTH_US)
                                   : std::min<std::uint64_t>(500000, h.window_us / 2);
    if (h.width_us >= h.window_us) {
        throw_invalid("--width must be below --window (" + std::to_string(h.window_us) + " us)");
    }
    h.threshold_ns = vm.count("threshold") ? usec_option(vm, "threshold", 1, 1000000) * 1000 : 0;
    if ((h.threshold_ns ? h.threshold_ns : 10000) >= h.width_us * 1000) {
        throw_invalid("--threshold must be below --width (" + std::to_string(h.width_us) +
                      " us): no longer gap fits in it");
    }
}

// Each sample printed; the longest gap kept for the end.
class HwlatPrinter final : public EventSink {
public:
    HwlatPrinter(const Tracer& tracer, int fd, bool json)
        : fd_(fd), lines_(tracer.ksyms(), LatencyTraceHost{"hwlat", "", "", 0}, json) {}
    void on_event(const Event& ev) override {
        if (ev.type != EventType::Hwlat) {
            return;
        }
        samples_++;
        if (ev.duration > worst_) {
            worst_ = ev.duration;
            worst_cpu_ = ev.cpu;
        }
        print_to(fd_, lines_.format(ev));
    }
    std::size_t samples() const { return samples_; }
    std::uint64_t worst_ns() const { return worst_; }
    unsigned worst_cpu() const { return worst_cpu_; }

private:
    int fd_;
    TracerPrinter lines_;
    std::size_t samples_ = 0;
    std::uint64_t worst_ = 0;
    unsigned worst_cpu_ = 0;
};

} // namespace

int cmd_hwlat(const Args& args) {
    TraceCommand cmd;
    cmd.name = "hwlat";
    cmd.usage = kUsage;
    cmd.collect = Collect::Hwlat;
    cmd.snapshots = false;
    cmd.via = false;
    cmd.filter_help = nullptr;
    cmd.no_probe = nullptr;
    cmd.output_help = "write the samples to FILE instead of stdout";
    cmd.record_help = "also write the samples' records to FILE, a record file that "
                      "'fhook report FILE' prints as this command did";
    cmd.format_help = "text (the kernel's trace lines; default) or json";
    cmd.metrics = true;
    cmd.add_options = add_hwlat_options;
    cmd.parse_options = parse_hwlat_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    if (!opt->spec.probes.empty()) {
        throw_invalid("'" + opt->spec.probes.front() + "': hwlat takes no arguments but options");
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    MetricsOutput metrics(tracer, *opt);
    tracer.setup();
    HwlatPrinter printer(tracer, output_fd(out), opt->format == OutputFormat::Json);
    TraceObserver observer; // (nothing to show while it runs)
    const std::unique_ptr<FileSink> file = record_sink(*opt, tracer, args, "hwlat", "hwlat");
    tracer.start();
    metrics.started();
    TeeSink measured(printer, metrics.tracer_sink());
    TeeSink recorded(measured, file.get());
    tracer.run(recorded, observer);
    metrics.finish();
    if (!opt->quiet) {
        const std::uint64_t thresh_us =
            opt->spec.hwlat.threshold_ns ? opt->spec.hwlat.threshold_ns / 1000 : 10;
        print_stderr(printer.samples()
                         ? "fhook: " + std::to_string(printer.samples()) +
                               " windows with a gap over " + std::to_string(thresh_us) +
                               " us; the longest " + std::to_string(printer.worst_ns() / 1000) +
                               " us on CPU " + std::to_string(printer.worst_cpu()) + "\n"
                         : "fhook: no gap over " + std::to_string(thresh_us) + " us\n");
    }
    return run_status(tracer);
}

} // namespace fhook::cli
