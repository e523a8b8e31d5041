// fhook trace [options] PROBE... [-- COMMAND [ARGS...]]
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include <fhook/command.hpp>
#include <fhook/cpulist.hpp>
#include <fhook/error.hpp>
#include <fhook/event.hpp>
#include <fhook/fd.hpp>
#include <fhook/format.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/output.hpp>
#include <fhook/ring.hpp>
#include <fhook/session.hpp>
#include <fhook/spec.hpp>
#include <fhook/summary.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kTraceUsage =
    "Usage: fhook trace [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Arm function probes and stream the events to stdout until Ctrl-C, --duration\n"
    "or the exit of COMMAND.  With COMMAND only the command and its descendants\n"
    "are traced, from its first instruction on.\n"
    "\n"
    "PROBE: vfs_read, 'vfs_*', '*lock*', '[ab]*' (tracefs globs), '!*rcu*'\n"
    "(exclude), GLOB:mod:MODULE, :mod:MODULE.  All PROBEs form one probe.\n";

struct TraceOptions {
    std::vector<std::string> probes;
    std::vector<pid_t> pids;
    std::optional<std::set<int>> cpus;
    std::uint64_t ring_bytes = 0;
    std::optional<double> duration;
    std::string output;
    bool quiet = false;
    std::vector<std::string> command;
};

std::optional<TraceOptions> parse_trace_options(const Args& args) {
    TraceOptions opt;
    Args before = args;
    auto dashes = std::find(before.begin(), before.end(), std::string("--"));
    if (dashes != before.end()) {
        opt.command.assign(dashes + 1, before.end());
        before.erase(dashes, before.end());
        if (opt.command.empty()) {
            throw_usage("no COMMAND after '--': give the command to run, e.g. -- ls /");
        }
    }

    po::options_description options("Options");
    options.add_options()("pid,p", po::value<std::vector<std::string>>()->value_name("PID"),
                          "only these processes (repeatable; matches tgid or tid)")(
        "cpu", po::value<std::string>()->value_name("LIST"), "only these CPUs, e.g. 0 or 0,2-3")(
        "buffer-size,b", po::value<std::string>()->value_name("KB"),
        "ring size per CPU in KiB (default 1024), rounded up to a power of two, minimum 4")(
        "duration,d", po::value<std::string>()->value_name("SEC"),
        "stop after SEC seconds (fractions allowed)")(
        "output,o", po::value<std::string>()->value_name("FILE"),
        "write the event text to FILE instead of stdout")("quiet,q", "no summary on stderr")(
        "help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("probe", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("probe", -1);
    po::variables_map vm = parse_args("trace", before, all, positional);

    if (vm.count("help")) {
        print_help(kTraceUsage, options);
        return std::nullopt;
    }
    if (vm.count("probe")) {
        opt.probes = vm["probe"].as<std::vector<std::string>>();
    }
    if (vm.count("pid")) {
        for (const auto& item : vm["pid"].as<std::vector<std::string>>()) {
            std::string_view rest = item;
            for (;;) {
                std::size_t comma = rest.find(',');
                opt.pids.push_back(parse_pid("--pid", rest.substr(0, comma)));
                if (comma == std::string_view::npos) {
                    break;
                }
                rest.remove_prefix(comma + 1);
            }
        }
        if (!opt.command.empty()) {
            throw_usage("--pid cannot be combined with a COMMAND (the command's processes are "
                        "traced): drop one of them");
        }
    }
    if (vm.count("cpu")) {
        opt.cpus = parse_cpu_list(vm["cpu"].as<std::string>());
    }
    opt.ring_bytes = ring_bytes_from_kib(
        vm.count("buffer-size") ? parse_u64("--buffer-size", vm["buffer-size"].as<std::string>())
                                : FHOOK_RING_DEF_SIZE / 1024);
    if (vm.count("duration")) {
        opt.duration = parse_seconds("--duration", vm["duration"].as<std::string>());
    }
    if (vm.count("output")) {
        opt.output = vm["output"].as<std::string>();
        if (opt.output.empty()) {
            throw_usage("empty --output file name: give a path");
        }
    }
    opt.quiet = vm.count("quiet") != 0;
    return opt;
}

// Blocks the stop signals for the whole process and reads them from a
// signalfd; restores the old mask on destruction.
class SignalWatch {
public:
    SignalWatch() {
        sigemptyset(&set_);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) {
            sigaddset(&set_, sig);
        }
        if (::sigprocmask(SIG_BLOCK, &set_, &old_) < 0) {
            int err = errno;
            throw_runtime("sigprocmask failed: " + errno_text(err), err);
        }
        fd_.reset(::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC));
        if (!fd_) {
            int err = errno;
            ::sigprocmask(SIG_SETMASK, &old_, nullptr);
            throw_runtime("signalfd failed: " + errno_text(err), err);
        }
    }
    SignalWatch(const SignalWatch&) = delete;
    SignalWatch& operator=(const SignalWatch&) = delete;
    ~SignalWatch() {
        fd_.reset();
        ::sigprocmask(SIG_SETMASK, &old_, nullptr);
    }

    int fd() const { return fd_.get(); }
    // The mask in effect before, for the command fhook runs.
    const sigset_t& original_mask() const { return old_; }

    // Consumes pending signals; true when a stop signal (not SIGCHLD) came.
    bool stop_requested() {
        bool stop = false;
        signalfd_siginfo info;
        while (::read(fd_.get(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
            if (info.ssi_signo != SIGCHLD) {
                stop = true;
            }
        }
        return stop;
    }

private:
    sigset_t set_;
    sigset_t old_;
    UniqueFd fd_;
};

Ksyms load_ksyms(bool required) {
    try {
        return Ksyms::load(kallsyms_path());
    } catch (const Error&) {
        if (required) {
            throw;
        }
        return Ksyms(); // symbols print as addresses
    }
}

} // namespace

int cmd_trace(const Args& args) {
    std::optional<TraceOptions> parsed = parse_trace_options(args);
    if (!parsed) {
        return 0; // --help
    }
    const TraceOptions& opt = *parsed;
    const std::vector<ProbeSpec> specs = parse_probe_specs(opt.probes);

    // Everything that reads files comes before the device is touched.
    const bool need_resolution = has_module_specs(specs);
    const Ksyms ksyms = load_ksyms(need_resolution);
    std::optional<FunctionList> functions;
    if (need_resolution) {
        functions = FunctionList::load(functions_path());
    }
    const ProbeRequest request =
        build_probe_request(specs, functions ? &*functions : nullptr, &ksyms);

    UniqueFd output_fd;
    if (!opt.output.empty()) {
        output_fd.reset(::open(opt.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (!output_fd) {
            int err = errno;
            throw_runtime("cannot open output file '" + opt.output + "': " + errno_text(err) +
                              ": check the path and its permissions",
                          err);
        }
    }

    SignalWatch signals;
    std::optional<HeldCommand> child;
    if (!opt.command.empty()) {
        child.emplace(opt.command, signals.original_mask());
    }

    Session session(device_path());
    const RingConfig ring = session.setup_ring(opt.ring_bytes);
    const std::uint32_t probe_id =
        session.add_function_probe(request.filters, request.excludes, request.ips);
    // fhook's own process (its output path) is never recorded.
    if (child) {
        session.set_pid_filter({child->pid()}, true, true);
    } else {
        session.set_pid_filter(opt.pids, false, true); // empty: every process
    }
    if (opt.cpus) {
        session.set_cpu_filter(*opt.cpus);
    }
    RingReader reader(session, ring);
    reader.watch(signals.fd());

    OutputWriter writer(output_fd ? output_fd.get() : STDOUT_FILENO);
    TextFormatter formatter(ksyms);
    const RecordCallback on_record = [&](const fhook_rec* rec) {
        if (std::optional<Event> event = decode(rec)) {
            formatter.format(*event, writer.buffer());
            writer.commit();
        }
    };

    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;

    session.start();
    // --duration is tracing time: it starts once every probe is armed
    // (arming '*' patches tens of thousands of call sites first).
    if (opt.duration) {
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(*opt.duration));
    }
    if (child) {
        child->release();
    }
    for (;;) {
        int timeout = RingReader::kDefaultTimeoutMs;
        if (deadline) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
            timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, timeout));
        }
        const RingReader::WaitResult woke = reader.wait(timeout);
        bool stop = woke.watched && signals.stop_requested();
        stop = stop || (child && child->exited());
        stop = stop || (deadline && Clock::now() >= *deadline);
        if (stop) {
            break;
        }
        reader.drain(on_record);
        writer.flush();
    }
    session.stop();
    reader.drain_final(on_record); // everything committed before the stop
    writer.flush();

    const bool exec_failed = child && child->exited() && child->exec_failed();
    if (!opt.quiet) {
        ProbeSummary probe{probe_id, session.stats(probe_id), describe_specs(specs)};
        std::string text;
        for (const auto& line : summary_lines(session.stats(), {probe})) {
            text += line;
            text += '\n';
        }
        OutputWriter err(STDERR_FILENO);
        err.append(text);
        err.flush();
    }
    return exec_failed ? 1 : 0;
}

} // namespace fhook::cli
