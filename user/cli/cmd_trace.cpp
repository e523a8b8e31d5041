// fhook trace [options] PROBE... [-- COMMAND [ARGS...]]
// fhook record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <optional>

#include <fhook/btf.hpp>
#include <fhook/command.hpp>
#include <fhook/cpulist.hpp>
#include <fhook/error.hpp>
#include <fhook/event.hpp>
#include <fhook/fd.hpp>
#include <fhook/format.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/output.hpp>
#include <fhook/probe.hpp>
#include <fhook/recfile.hpp>
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
    "(exclude), GLOB:mod:MODULE, :mod:MODULE: together they form one function\n"
    "probe.  Or a kprobe definition in the kprobe_events syntax, one quoted\n"
    "argument each (docs/probes.md):\n"
    "  'p[:[GRP/]NAME] SYM[+OFFS]|ADDR [NAME=FETCHARG[:TYPE]...]'\n"
    "  'r[MAXACTIVE][:[GRP/]NAME] SYM [NAME=FETCHARG[:TYPE]...]'  ($retval)\n"
    "e.g. 'p:open do_sys_openat2 dfd=%di:s32 path=+0(%si):ustring'\n"
    "\n"
    "With --overwrite the rings are a flight recorder: nothing is printed while\n"
    "tracing, the newest events are kept, and they are printed at the end and\n"
    "on every SIGUSR2 (a snapshot: the rings are frozen, read and resumed).\n";

constexpr const char* kRecordUsage =
    "Usage: fhook record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Like trace, but write the raw events to FILE (a self-describing record\n"
    "file: probes, the symbols of every address seen, statistics; see\n"
    "docs/file-format.md).  Read it with: fhook report FILE.\n"
    "With --overwrite, only the newest events at the end and at each SIGUSR2\n"
    "snapshot are written.\n";

constexpr const char* kStatUsage =
    "Usage: fhook stat [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Arm the probes like trace, count, and print per probe on stdout at the end:\n"
    "hits (recorded or lost), filtered (rejected by --pid/--cpu/COMMAND or a\n"
    "filter expression), missed (the kernel's kprobe nmissed, kretprobes without\n"
    "a free instance, recursion), events and lost events.  The events\n"
    "themselves are read and discarded.\n";

enum class Mode { Trace, Record, Stat };

const char* mode_name(Mode mode) {
    return mode == Mode::Record ? "record" : mode == Mode::Stat ? "stat" : "trace";
}

struct TraceOptions {
    std::vector<std::string> probes;
    std::string filter; // --filter, for probes without their own "if"
    bool stack = false; // --stack
    std::vector<std::string> triggers;
    std::vector<pid_t> pids;
    std::optional<std::set<int>> cpus;
    RingRequest ring;
    std::optional<double> duration;
    std::string output;
    bool json = false;
    bool quiet = false;
    std::vector<std::string> command;
};

std::optional<TraceOptions> parse_trace_options(const Args& args, Mode mode) {
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
        "overwrite", "flight recorder: keep the newest events, print them at the end and on "
                     "SIGUSR2 (minimum --buffer-size 32)")(
        "watermark", po::value<std::string>()->value_name("KB"),
        "wake the reader at KiB pending per CPU (default: a quarter of the ring)")(
        "wakeup-events", po::value<std::string>()->value_name("N"),
        "also wake the reader at N pending events per CPU")(
        "flush", po::value<std::string>()->value_name("MS"),
        "deliver events below the watermarks after at most MS ms (default 100)")(
        "stack", "record the stack with every event: the kernel stack, or the user stack "
                 "(frame pointers) for uprobes")(
        "trigger", po::value<std::vector<std::string>>()->value_name("EVENT=ACTION"),
        "run ACTION[:N] [if FILTER] on EVENT's hits (repeatable): traceoff, traceon, "
        "stacktrace, snapshot, enable:EVENT2, disable:EVENT2; EVENT 'func' is the function "
        "probe")(
        "filter", po::value<std::string>()->value_name("EXPR"),
        "record only hits where EXPR holds, evaluated in the kernel (probes without their own "
        "'if EXPR'; function probes: common_pid, tgid, comm, cpu)")(
        "duration,d", po::value<std::string>()->value_name("SEC"),
        "stop after SEC seconds (fractions allowed)")(
        "output,o", po::value<std::string>()->value_name("FILE"),
        mode == Mode::Record ? "the record file to write (required)"
                             : "write the event text to FILE instead of stdout")(
        "quiet,q", "no summary on stderr")("help,h", "show this help");
    if (mode == Mode::Trace) {
        options.add_options()("format,f", po::value<std::string>()->value_name("FMT"),
                              "text (the kernel's trace format, default) or json (NDJSON)");
    }
    po::options_description hidden;
    hidden.add_options()("probe", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("probe", -1);
    po::variables_map vm = parse_args(mode_name(mode), before, all, positional);

    if (vm.count("help")) {
        print_help(mode == Mode::Record ? kRecordUsage
                   : mode == Mode::Stat ? kStatUsage
                                        : kTraceUsage,
                   options);
        return std::nullopt;
    }
    if (vm.count("format")) {
        opt.json = parse_format(vm["format"].as<std::string>());
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
    opt.ring.bytes = ring_bytes_from_kib(
        vm.count("buffer-size") ? parse_u64("--buffer-size", vm["buffer-size"].as<std::string>())
                                : FHOOK_RING_DEF_SIZE / 1024);
    opt.ring.overwrite = vm.count("overwrite") != 0;
    if (vm.count("watermark")) {
        const std::uint64_t kib = parse_u64("--watermark", vm["watermark"].as<std::string>());
        if (kib == 0 || kib * 1024 > opt.ring.bytes) {
            throw_usage("--watermark " + std::to_string(kib) + " KiB is not within the ring (" +
                        std::to_string(opt.ring.bytes / 1024) +
                        " KiB per CPU): lower it or raise --buffer-size");
        }
        opt.ring.watermark = static_cast<std::uint32_t>(kib * 1024);
    }
    if (vm.count("wakeup-events")) {
        const std::uint64_t n = parse_u64("--wakeup-events", vm["wakeup-events"].as<std::string>());
        if (n == 0 || n > 0xffffffffULL) {
            throw_usage("--wakeup-events must be between 1 and 4294967295");
        }
        opt.ring.wakeup_events = static_cast<std::uint32_t>(n);
    }
    if (vm.count("flush")) {
        const std::uint64_t ms = parse_u64("--flush", vm["flush"].as<std::string>());
        if (ms == 0 || ms > FHOOK_FLUSH_MAX_MS) {
            throw_usage("--flush must be between 1 and " + std::to_string(FHOOK_FLUSH_MAX_MS) +
                        " ms");
        }
        opt.ring.flush_ms = static_cast<std::uint32_t>(ms);
    }
    if (vm.count("duration")) {
        opt.duration = parse_seconds("--duration", vm["duration"].as<std::string>());
    }
    if (vm.count("output")) {
        opt.output = vm["output"].as<std::string>();
        if (opt.output.empty()) {
            throw_usage("empty --output file name: give a path");
        }
    } else if (mode == Mode::Record) {
        throw_usage("fhook record needs -o FILE: the record file to write");
    }
    opt.quiet = vm.count("quiet") != 0;
    opt.stack = vm.count("stack") != 0;
    if (vm.count("trigger")) {
        opt.triggers = vm["trigger"].as<std::vector<std::string>>();
    }
    if (vm.count("filter")) {
        opt.filter = vm["filter"].as<std::string>();
        if (opt.filter.find_first_not_of(" \t") == std::string::npos) {
            throw_usage("empty --filter: give an expression, e.g. --filter 'comm == \"cat\"'");
        }
    }
    return opt;
}

// Blocks the stop signals for the whole process and reads them from a
// signalfd; restores the old mask on destruction.
class SignalWatch {
public:
    SignalWatch() {
        sigemptyset(&set_);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR2}) {
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

    struct Pending {
        bool stop = false;     // SIGINT, SIGTERM, SIGHUP
        bool snapshot = false; // SIGUSR2
    };
    // Consumes pending signals (SIGCHLD only wakes the loop).
    Pending consume() {
        Pending p;
        signalfd_siginfo info;
        while (::read(fd_.get(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
            if (info.ssi_signo == SIGUSR2) {
                p.snapshot = true;
            } else if (info.ssi_signo != SIGCHLD) {
                p.stop = true;
            }
        }
        return p;
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

// What happens to the records of a session: printed (trace) or written to a
// record file (record).
class Sink {
public:
    virtual ~Sink() = default;
    virtual void on_record(const fhook_rec* rec) = 0;
    virtual void flush() = 0;
    virtual void finish(const Session& session, const std::vector<ProbeSummary>& probes) = 0;
};

class PrintSink final : public Sink {
public:
    PrintSink(int fd, const Ksyms& ksyms, bool json, const ProbeTable& probes) : writer_(fd) {
        if (json) {
            formatter_ = std::make_unique<JsonFormatter>(ksyms);
        } else {
            formatter_ = std::make_unique<TextFormatter>(ksyms);
        }
        formatter_->set_probes(&probes);
    }
    void on_record(const fhook_rec* rec) override {
        if (std::optional<Event> event = decode(rec)) {
            formatter_->format(*event, writer_.buffer());
            writer_.commit();
        }
    }
    void flush() override { writer_.flush(); }
    void finish(const Session&, const std::vector<ProbeSummary>&) override { writer_.flush(); }

private:
    OutputWriter writer_;
    std::unique_ptr<Formatter> formatter_;
};

// fhook stat: the records are only counted by the module.
class DiscardSink final : public Sink {
public:
    void on_record(const fhook_rec*) override {}
    void flush() override {}
    void finish(const Session&, const std::vector<ProbeSummary>&) override {}
};

class RecordSink final : public Sink {
public:
    RecordSink(UniqueFd fd, const std::string& path, const RecordWriter::Info& info,
               const Ksyms& ksyms)
        : writer_(std::move(fd), path, info), ksyms_(ksyms), path_(path) {}
    void on_record(const fhook_rec* rec) override { writer_.add(rec); }
    void flush() override {} // the writer writes in 1 MiB chunks
    void finish(const Session& session, const std::vector<ProbeSummary>& probes) override {
        std::vector<RecordedProbe> recorded;
        for (const auto& p : probes) {
            recorded.push_back(RecordedProbe{p.id, p.description, session.stats(p.id)});
        }
        writer_.finish(ksyms_, session.stats(), recorded);
    }
    std::string done_line() const {
        return "fhook: wrote " + std::to_string(writer_.records()) + " records, " +
               std::to_string(writer_.bytes_written()) + " bytes to " + path_ + "\n";
    }

private:
    RecordWriter writer_;
    const Ksyms& ksyms_;
    std::string path_;
};

std::string kernel_release() {
    utsname u{};
    return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

int run(const Args& args, Mode mode) {
    std::optional<TraceOptions> parsed = parse_trace_options(args, mode);
    if (!parsed) {
        return 0; // --help
    }
    const TraceOptions& opt = *parsed;
    // kprobe definitions ("p:...", "r:...") and function globs
    std::vector<std::string> globs;
    std::vector<KprobeDef> kprobes;
    std::optional<KernelBtf> btf; // loaded when a definition names kernel types
    bool btf_tried = false;
    const BtfProvider btf_provider = [&]() -> const KernelBtf* {
        if (!btf_tried) {
            btf_tried = true;
            try {
                btf = KernelBtf::load();
            } catch (const Error&) {
                // the definition that needs it says so
            }
        }
        return btf ? &*btf : nullptr;
    };
    for (const auto& text : opt.probes) {
        if (is_tracepoint_definition(text)) {
            kprobes.push_back(parse_tracepoint(text, tracefs_dir()));
            if (!opt.filter.empty() && kprobes.back().filter.empty()) {
                kprobes.back().filter = opt.filter;
                kprobes.back().pred = compile_filter(opt.filter, &kprobes.back());
            }
            continue;
        }
        if (is_probe_definition(text)) {
            kprobes.push_back(parse_kprobe(
                text, [](std::string_view name) { return Ksyms::find_any(kallsyms_path(), name); },
                btf_provider));
            kprobes.back().stack = opt.stack;
            if (!opt.filter.empty() && kprobes.back().filter.empty()) {
                kprobes.back().filter = opt.filter;
                kprobes.back().pred = compile_filter(opt.filter, &kprobes.back());
            }
        } else {
            globs.push_back(text);
        }
    }
    const std::vector<ProbeSpec> specs =
        kprobes.empty() || !globs.empty() ? parse_probe_specs(globs) : std::vector<ProbeSpec>{};

    // Everything that reads files comes before the device is touched, but
    // /proc/kallsyms (seconds under emulation) is only needed to build the
    // request for :mod: specs; otherwise a thread reads it while the session
    // is set up and armed, and it is joined before the first event is
    // formatted.  record needs the symbols to store the ones events mention.
    const bool need_resolution = has_module_specs(specs);
    const bool ksyms_required = need_resolution || mode == Mode::Record;
    Ksyms ksyms; // the formatters refer to this object; filled in below
    std::future<Ksyms> ksyms_loading;
    if (need_resolution) {
        ksyms = load_ksyms(true);
    }
    std::optional<FunctionList> functions;
    if (need_resolution) {
        functions = FunctionList::load(functions_path());
    }
    const ProbeRequest request =
        specs.empty() ? ProbeRequest{}
                      : build_probe_request(specs, functions ? &*functions : nullptr, &ksyms);

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
    // (started once the stop signals are blocked: the thread inherits the
    // mask, so SIGINT still reaches the signalfd, not the loader)
    if (!need_resolution) {
        ksyms_loading =
            std::async(std::launch::async, [ksyms_required] { return load_ksyms(ksyms_required); });
    }
    std::optional<HeldCommand> child;
    if (!opt.command.empty()) {
        child.emplace(opt.command, signals.original_mask());
    }

    Session session(device_path());
    const RingConfig ring = session.setup_ring(opt.ring);
    std::vector<ProbeSummary> probes; // (stats filled in at the end)
    ProbeTable probe_table;
    if (!specs.empty()) {
        probes.push_back(ProbeSummary{
            session.add_function_probe(request.filters, request.excludes, request.ips,
                                       opt.filter.empty() ? std::vector<fhook_insn>{}
                                                          : compile_filter(opt.filter, nullptr),
                                       opt.stack),
            {},
            describe_specs(specs) + (opt.filter.empty() ? "" : " if " + opt.filter)});
    }
    std::vector<std::pair<std::uint32_t, std::string>> canonical; // for record files
    for (auto& def : kprobes) {
        const KprobeHandle handle = session.add_kprobe(def);
        probes.push_back(ProbeSummary{handle.id, {}, def.text});
        canonical.emplace_back(handle.id, def.canonical);
        probe_table.add(handle.id, std::move(def));
    }
    for (const auto& text : opt.triggers) {
        const TriggerSpec t = parse_trigger(text);
        // "func": the function probe; else a definition's event name
        auto find = [&](const std::string& event) -> std::pair<std::uint32_t, const KprobeDef*> {
            if (event == "func" && !specs.empty()) {
                return {probes.front().id, nullptr};
            }
            for (const auto& p : probes) {
                if (const KprobeDef* def = probe_table.find(p.id); def && def->event == event) {
                    return {p.id, def};
                }
            }
            throw_usage("trigger '" + text + "': no probe '" + event +
                        "' (the event names of the definitions, or func)");
        };
        const auto [id, def] = find(t.event);
        const std::uint32_t target = t.target.empty() ? 0 : find(t.target).first;
        session.add_trigger(id, t.action, target, t.count,
                            t.filter.empty() ? std::vector<fhook_insn>{}
                                             : compile_filter(t.filter, def));
    }
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

    std::unique_ptr<Sink> sink;
    RecordSink* record_sink = nullptr;
    if (mode == Mode::Record) {
        RecordWriter::Info info;
        info.nr_cpus = static_cast<std::uint32_t>(reader.nr_rings());
        info.kernel_release = kernel_release();
        for (const auto& a : args) {
            info.command += info.command.empty() ? "fhook record " : " ";
            info.command += a;
        }
        for (const auto& p : probes) {
            std::string description = p.description;
            for (const auto& [id, text] : canonical) {
                if (id == p.id) {
                    description = text; // parses without BTF, binaries, kallsyms
                }
            }
            info.probes.emplace_back(p.id, description);
        }
        auto rs = std::make_unique<RecordSink>(std::move(output_fd), opt.output, info, ksyms);
        record_sink = rs.get();
        sink = std::move(rs);
    } else if (mode == Mode::Stat) {
        sink = std::make_unique<DiscardSink>();
    } else {
        sink = std::make_unique<PrintSink>(output_fd ? output_fd.get() : STDOUT_FILENO, ksyms,
                                           opt.json, probe_table);
    }
    const RecordCallback on_record = [&](const fhook_rec* rec) { sink->on_record(rec); };

    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;

    session.start();
    if (ksyms_loading.valid()) {
        ksyms = ksyms_loading.get(); // before the command runs or an event is formatted
    }
    // --duration is tracing time: it starts once every probe is armed
    // (arming '*' patches tens of thousands of call sites first).
    if (opt.duration) {
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(*opt.duration));
    }
    if (child) {
        child->release();
    }
    // The module's flush timer delivers data below the watermarks, so the
    // wait only needs a timeout for a module without one and for --duration.
    const int wait_ms = session.device().has(FHOOK_FEAT_FLUSH) && !opt.ring.overwrite
                            ? 1000
                            : RingReader::kDefaultTimeoutMs;
    unsigned snapshots = 0;
    std::uint64_t triggered_seen = 0;
    for (;;) {
        int timeout = wait_ms;
        if (deadline) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
            timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, timeout));
        }
        const RingReader::WaitResult woke = reader.wait(timeout);
        SignalWatch::Pending sig;
        if (woke.watched) {
            sig = signals.consume();
        }
        bool stop = sig.stop;
        stop = stop || (child && child->exited());
        stop = stop || (deadline && Clock::now() >= *deadline);
        if (stop) {
            break;
        }
        // SIGUSR2, or a snapshot trigger froze the session
        const std::uint64_t fired = reader.stats() ? reader.stats().snapshots() : 0;
        const bool triggered = fired != triggered_seen;
        triggered_seen = fired;
        if (sig.snapshot || triggered) {
            session.freeze(); // waits for writers still inside the rings
            const std::size_t n = reader.drain(on_record);
            sink->flush();
            session.resume();
            snapshots++;
            if (!opt.quiet) {
                OutputWriter err(STDERR_FILENO);
                err.append("fhook: snapshot " + std::to_string(snapshots) +
                           (triggered ? " (trigger)" : "") + ": " + std::to_string(n) +
                           " records\n");
                err.flush();
            }
            continue;
        }
        if (opt.ring.overwrite) {
            continue; // flight recorder: read only on demand
        }
        reader.drain(on_record);
        sink->flush();
    }
    session.stop();
    reader.drain_final(on_record); // everything committed before the stop
    sink->finish(session, probes);

    const bool exec_failed = child && child->exited() && child->exec_failed();
    if (mode == Mode::Stat) {
        OutputWriter out(output_fd ? output_fd.get() : STDOUT_FILENO);
        std::vector<StatRow> rows;
        for (const auto& p : probes) {
            StatRow row{p.id, session.stats(p.id), 0, p.description};
            if (const StatsView view = reader.stats()) {
                for (std::uint32_t cpu = 0; cpu < view.nr_cpus(); cpu++) {
                    row.filtered += view.at(cpu, p.id).filtered;
                }
            }
            rows.push_back(std::move(row));
        }
        out.append(stat_table(rows));
        out.flush();
        return exec_failed ? 1 : 0;
    }
    if (!opt.quiet) {
        for (auto& p : probes) {
            p.stats = session.stats(p.id);
        }
        std::string text;
        for (const auto& line : summary_lines(session.stats(), probes)) {
            text += line;
            text += '\n';
        }
        if (record_sink) {
            text += record_sink->done_line();
        }
        OutputWriter err(STDERR_FILENO);
        err.append(text);
        err.flush();
    }
    return exec_failed ? 1 : 0;
}

} // namespace

int cmd_trace(const Args& args) {
    return run(args, Mode::Trace);
}

int cmd_record(const Args& args) {
    return run(args, Mode::Record);
}

int cmd_stat(const Args& args) {
    return run(args, Mode::Stat);
}

} // namespace fhook::cli
