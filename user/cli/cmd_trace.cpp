// fhook trace [options] PROBE... [-- COMMAND [ARGS...]]
// fhook record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <optional>

#include <fhook/btf.hpp>
#include <fhook/command.hpp>
#include <fhook/cpulist.hpp>
#include <fhook/error.hpp>
#include <fhook/event.hpp>
#include <fhook/fd.hpp>
#include <fhook/format.hpp>
#include <fhook/ftrace_state.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/latency.hpp>
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

constexpr const char* kCountUsage =
    "Usage: fhook count [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Count the calls of each FUNC (a function or a tracefs glob: one counter\n"
    "each) until Ctrl-C, --duration or the exit of COMMAND, and print a table:\n"
    "bpftrace's count(), without records.  --via picks the mechanism, to\n"
    "compare their cost: ops (an ftrace_ops callback, default), direct (fhook's\n"
    "own counting trampoline through the ftrace direct-call API), kprobe (a\n"
    "kprobe on the function, which the kernel puts on its fentry site).\n";

constexpr const char* kLatencyUsage =
    "Usage: fhook latency [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Time every call of each FUNC (a function or a tracefs glob: one histogram\n"
    "each) from entry to return, until Ctrl-C, --duration or the exit of COMMAND,\n"
    "and print log2 histograms of the durations in nanoseconds: libbpf-tools'\n"
    "funclatency, kept in the module.  fhook's trampoline runs the function's\n"
    "body itself (a direct call, as BPF fexit does): no records, no ring.\n";

constexpr const char* kHookUsage =
    "Usage: fhook hook [options] ACTION FUNC [FIELD...] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Change or time the kernel function FUNC with an IPMODIFY ftrace_ops, until\n"
    "Ctrl-C, --duration or the exit of COMMAND (then only the command's processes\n"
    "are hooked).  The hook goes away with fhook.  ACTION is one of:\n"
    "  --trace-around      call FUNC and record FIELDs at entry, the return value\n"
    "                      and the duration of each call\n"
    "  --return VALUE      skip FUNC and return VALUE (fault injection; lab mode)\n"
    "  --redirect FUNC2    call FUNC2 (same prototype, checked with BTF) instead\n"
    "                      (lab mode)\n"
    "FIELDs are fetch arguments as in kprobe definitions ($arg1, +0(%si):string,\n"
    "BTF names like file->f_pos); --filter and the conditions choose the calls the\n"
    "action applies to.  Lab mode: the module loaded with lab=1 (taints the kernel).\n";

enum class Mode { Trace, Record, Stat, Count, Hook, Latency };

const char* mode_name(Mode mode) {
    switch (mode) {
    case Mode::Record:
        return "record";
    case Mode::Stat:
        return "stat";
    case Mode::Count:
        return "count";
    case Mode::Hook:
        return "hook";
    case Mode::Latency:
        return "latency";
    default:
        return "trace";
    }
}

enum class Via { Ops, Direct, Kprobe };

Via parse_via(const std::string& text) {
    if (text == "ops") {
        return Via::Ops;
    }
    if (text == "direct") {
        return Via::Direct;
    }
    if (text == "kprobe") {
        return Via::Kprobe;
    }
    throw_invalid("--via '" + text + "': use ops, direct or kprobe");
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
    std::optional<double> interval; // latency: print every SEC
    std::string output;
    bool json = false;
    bool quiet = false;
    Via via = Via::Ops;
    std::vector<std::string> command;
    // fhook hook
    fhook_hook hook{};
    std::string redirect; // --redirect FUNC2
    std::string comm;     // --comm
    bool force = false;   // redirect without a prototype check
};

std::int64_t parse_i64(std::string_view option, std::string_view text) {
    std::int64_t v = 0;
    const char* end = text.data() + text.size();
    int base = 10;
    std::string_view digits = text;
    const bool neg = !digits.empty() && digits.front() == '-';
    if (neg) {
        digits.remove_prefix(1);
    }
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    }
    std::uint64_t mag = 0;
    auto r = std::from_chars(digits.data(), end, mag, base);
    if (digits.empty() || r.ec != std::errc() || r.ptr != end ||
        mag > (neg ? 0x8000000000000000ULL : 0x7fffffffffffffffULL)) {
        throw_invalid(std::string(option) + " '" + std::string(text) +
                      "' is not a 64-bit integer (decimal or 0x hex, e.g. -12)");
    }
    v = neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
    return v;
}

void parse_hook_options(const po::variables_map& vm, TraceOptions& opt) {
    const int actions =
        static_cast<int>(vm.count("trace-around") + vm.count("return") + vm.count("redirect"));
    if (actions != 1) {
        throw_invalid("give one action: --trace-around, --return VALUE or --redirect FUNC2");
    }
    fhook_hook& h = opt.hook;
    if (vm.count("trace-around")) {
        h.action = FHOOK_HOOK_AROUND;
    } else if (vm.count("return")) {
        h.action = FHOOK_HOOK_RETURN;
        h.retval = parse_i64("--return", vm["return"].as<std::string>());
    } else {
        h.action = FHOOK_HOOK_REDIRECT;
        opt.redirect = vm["redirect"].as<std::string>();
    }
    if (vm.count("record")) {
        if (h.action == FHOOK_HOOK_AROUND) {
            throw_invalid("--trace-around records every call already: drop --record");
        }
        h.flags |= FHOOK_HOOK_F_RECORD;
    }
    auto count = [&](const char* name) -> std::uint64_t {
        if (!vm.count(name)) {
            return 0;
        }
        const std::uint64_t n = parse_u64(std::string("--") + name, vm[name].as<std::string>());
        if (n == 0) {
            throw_invalid(std::string("--") + name + " must be at least 1");
        }
        return n;
    };
    h.nth = count("nth");
    h.every = count("every");
    h.times = count("times");
    if (vm.count("probability")) {
        const std::string text = vm["probability"].as<std::string>();
        char* end = nullptr;
        const double pct = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(pct > 0) || pct > 100) {
            throw_invalid("--probability '" + text + "': a percentage above 0, at most 100");
        }
        h.probability = static_cast<std::uint32_t>(pct * 10000 + 0.5);
        if (h.probability == 0) {
            h.probability = 1;
        }
    }
    if (vm.count("comm")) {
        opt.comm = vm["comm"].as<std::string>();
        if (opt.comm.empty() || opt.comm.size() >= FHOOK_COMM_LEN ||
            opt.comm.find('"') != std::string::npos) {
            throw_invalid("--comm '" + opt.comm + "': a task name of 1 to 15 characters");
        }
    }
    opt.force = vm.count("force") != 0;
    if (opt.probes.empty()) {
        throw_invalid("give the function to hook, e.g. fhook hook --trace-around vfs_read");
    }
}

std::optional<TraceOptions> parse_trace_options(const Args& args, Mode mode) {
    TraceOptions opt;
    Args before = args;
    auto dashes = std::find(before.begin(), before.end(), std::string("--"));
    if (dashes != before.end()) {
        opt.command.assign(dashes + 1, before.end());
        before.erase(dashes, before.end());
        if (opt.command.empty()) {
            throw_invalid("no COMMAND after '--': give the command to run, e.g. -- ls /");
        }
    }

    po::options_description options("Options");
    // count and latency write no records
    const bool records = mode != Mode::Count && mode != Mode::Latency;
    options.add_options()("pid,p", po::value<std::vector<std::string>>()->value_name("PID"),
                          "only these processes (repeatable; matches tgid or tid)")(
        "cpu", po::value<std::string>()->value_name("LIST"), "only these CPUs, e.g. 0 or 0,2-3");
    if (records) {
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
    if (records && mode != Mode::Hook) {
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
    options.add_options()(
        "filter", po::value<std::string>()->value_name("EXPR"),
        mode == Mode::Hook      ? "act only on calls where EXPR holds (on the FIELDs and the task)"
        : mode == Mode::Latency ? "time only calls where EXPR holds, evaluated in the kernel "
                                  "(the task: common_pid, tgid, comm, cpu)"
                                : "record only hits where EXPR holds, evaluated in the kernel "
                                  "(probes without their own 'if EXPR'; function probes: "
                                  "common_pid, tgid, comm, cpu)")(
        "duration,d", po::value<std::string>()->value_name("SEC"),
        "stop after SEC seconds (fractions allowed)")(
        "output,o", po::value<std::string>()->value_name("FILE"),
        mode == Mode::Record  ? "the record file to write (required)"
        : mode == Mode::Count ? "write the table to FILE instead of stdout"
        : mode == Mode::Latency
            ? "write the histograms to FILE instead of stdout"
            : "write the event text to FILE instead of stdout")("quiet,q", "no summary on stderr");
    if (mode == Mode::Latency) {
        options.add_options()("interval,i", po::value<std::string>()->value_name("SEC"),
                              "print the histograms of each SEC seconds, then start afresh");
    }
    if (mode != Mode::Hook && mode != Mode::Latency) {
        options.add_options()(
            "via", po::value<std::string>()->value_name("HOW"),
            "how function probes attach: ops (ftrace_ops callback, default), direct (fhook's "
            "trampoline through the direct-call API), kprobe (one kprobe per function)");
    }
    options.add_options()("help,h", "show this help");
    if (mode == Mode::Hook) {
        options.add_options()("trace-around",
                              "call the function, record fields, return value and "
                              "duration")("return", po::value<std::string>()->value_name("VALUE"),
                                          "skip the function, return VALUE (e.g. -12 for -ENOMEM)")(
            "redirect", po::value<std::string>()->value_name("FUNC2"),
            "call FUNC2 instead (same prototype)")(
            "comm", po::value<std::string>()->value_name("NAME"), "only calls by tasks named NAME")(
            "nth", po::value<std::string>()->value_name("N"), "only the Nth matching call")(
            "every", po::value<std::string>()->value_name("N"), "every Nth matching call")(
            "times", po::value<std::string>()->value_name("N"),
            "at most N times")("probability", po::value<std::string>()->value_name("PCT"),
                               "each matching call with PCT percent probability")(
            "record", "--return/--redirect: print each call changed")(
            "force", "--redirect without BTF for both functions: skip the prototype check; "
                     "--trace-around of a variadic function");
    }
    if (mode == Mode::Trace || mode == Mode::Hook || mode == Mode::Latency) {
        options.add_options()("format,f", po::value<std::string>()->value_name("FMT"),
                              mode == Mode::Latency
                                  ? "text (funclatency's histograms, default) or json (one "
                                    "object per FUNC and print)"
                                  : "text (the kernel's trace format, default) or json (NDJSON)");
    }
    po::options_description hidden;
    hidden.add_options()("probe", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("probe", -1);
    po::variables_map vm = parse_args(mode_name(mode), before, all, positional);

    if (vm.count("help")) {
        print_help(mode == Mode::Record    ? kRecordUsage
                   : mode == Mode::Stat    ? kStatUsage
                   : mode == Mode::Count   ? kCountUsage
                   : mode == Mode::Hook    ? kHookUsage
                   : mode == Mode::Latency ? kLatencyUsage
                                           : kTraceUsage,
                   options);
        return std::nullopt;
    }
    if (vm.count("format")) {
        opt.json = parse_format(vm["format"].as<std::string>());
    }
    if (vm.count("via")) {
        opt.via = parse_via(vm["via"].as<std::string>());
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
            throw_invalid("--pid cannot be combined with a COMMAND (the command's processes are "
                          "traced): drop one of them");
        }
    }
    if (vm.count("cpu")) {
        opt.cpus = parse_cpu_list(vm["cpu"].as<std::string>());
    }
    opt.ring.bytes = ring_bytes_from_kib(
        vm.count("buffer-size") ? parse_u64("--buffer-size", vm["buffer-size"].as<std::string>())
        : !records              ? FHOOK_RING_MIN_SIZE / 1024 // no records
                                : FHOOK_RING_DEF_SIZE / 1024);
    opt.ring.overwrite = vm.count("overwrite") != 0;
    if (vm.count("watermark")) {
        const std::uint64_t kib = parse_u64("--watermark", vm["watermark"].as<std::string>());
        if (kib == 0 || kib * 1024 > opt.ring.bytes) {
            throw_invalid("--watermark " + std::to_string(kib) + " KiB is not within the ring (" +
                          std::to_string(opt.ring.bytes / 1024) +
                          " KiB per CPU): lower it or raise --buffer-size");
        }
        opt.ring.watermark = static_cast<std::uint32_t>(kib * 1024);
    }
    if (vm.count("wakeup-events")) {
        const std::uint64_t n = parse_u64("--wakeup-events", vm["wakeup-events"].as<std::string>());
        if (n == 0 || n > 0xffffffffULL) {
            throw_invalid("--wakeup-events must be between 1 and 4294967295");
        }
        opt.ring.wakeup_events = static_cast<std::uint32_t>(n);
    }
    if (vm.count("flush")) {
        const std::uint64_t ms = parse_u64("--flush", vm["flush"].as<std::string>());
        if (ms == 0 || ms > FHOOK_FLUSH_MAX_MS) {
            throw_invalid("--flush must be between 1 and " + std::to_string(FHOOK_FLUSH_MAX_MS) +
                          " ms");
        }
        opt.ring.flush_ms = static_cast<std::uint32_t>(ms);
    }
    if (vm.count("duration")) {
        opt.duration = parse_seconds("--duration", vm["duration"].as<std::string>());
    }
    if (vm.count("interval")) {
        opt.interval = parse_seconds("--interval", vm["interval"].as<std::string>());
        if (*opt.interval < 0.01) {
            throw_invalid("--interval must be at least 0.01 s");
        }
    }
    if (vm.count("output")) {
        opt.output = vm["output"].as<std::string>();
        if (opt.output.empty()) {
            throw_invalid("empty --output file name: give a path");
        }
    } else if (mode == Mode::Record) {
        throw_invalid("fhook record needs -o FILE: the record file to write");
    }
    opt.quiet = vm.count("quiet") != 0;
    opt.stack = vm.count("stack") != 0;
    if (vm.count("trigger")) {
        opt.triggers = vm["trigger"].as<std::vector<std::string>>();
    }
    if (vm.count("filter")) {
        opt.filter = vm["filter"].as<std::string>();
        if (opt.filter.find_first_not_of(" \t") == std::string::npos) {
            throw_invalid("empty --filter: give an expression, e.g. --filter 'comm == \"cat\"'");
        }
    }
    if (mode == Mode::Hook) {
        parse_hook_options(vm, opt);
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
    // the records of a pass were all delivered: their memory goes back to
    // the producers after this (RingMerger::set_batch_end)
    virtual void end_batch() {}
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
        if (decode(rec, event_)) {
            formatter_->format(event_, writer_.buffer());
            writer_.commit();
        }
    }
    void flush() override { writer_.flush(); }
    void finish(const Session&, const std::vector<ProbeSummary>&) override { writer_.flush(); }

private:
    OutputWriter writer_;
    std::unique_ptr<Formatter> formatter_;
    Event event_; // reused: its buffers stay allocated
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
    // copied by the span, at the end of each pass
    void on_record(const fhook_rec* rec) override { writer_.add_in_place(rec); }
    void end_batch() override { writer_.end_span(); }
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

// The one text symbol `name` ("MODULE:name" for a module's): its address.
std::uint64_t resolve_function(const Ksyms& ksyms, const std::string& text) {
    std::string_view name = text;
    std::string_view module;
    bool module_given = false;
    if (const std::size_t colon = name.find(':'); colon != std::string_view::npos) {
        module = name.substr(0, colon);
        name = name.substr(colon + 1);
        module_given = true;
    }
    std::vector<SymbolRef> found;
    for (const SymbolRef& s : ksyms.find_text(name)) {
        if (!module_given || s.module == module) {
            found.push_back(s);
        }
    }
    if (found.empty()) {
        throw_runtime("no kernel function '" + text +
                          "' in /proc/kallsyms: check the name (a module's must be loaded)",
                      ENOENT);
    }
    if (found.size() > 1) {
        std::string where;
        for (const auto& s : found) {
            char buf[48];
            std::snprintf(buf, sizeof(buf), " 0x%" PRIx64, s.offset);
            where += buf;
            if (!s.module.empty()) {
                where += " [" + std::string(s.module) + "]";
            }
        }
        throw_invalid("'" + text + "' names " + std::to_string(found.size()) +
                      " functions (static functions of the same name):" + where +
                      ": give MODULE:NAME for a module's");
    }
    return found.front().offset;
}

// fhook hook: the definition (fields, filter) and where it goes, checked
// against what tracefs says before the device is touched.
struct HookPlan {
    KprobeDef def;
    std::uint64_t addr = 0;
    std::string func;
};

HookPlan plan_hook(TraceOptions& opt, Ksyms& ksyms, const BtfProvider& btf_provider) {
    HookPlan plan;
    plan.func = opt.probes.front();
    if (is_probe_definition(plan.func) || plan.func.find_first_of("*?[!") != std::string::npos) {
        throw_invalid("fhook hook takes one function name, not '" + plan.func + "'");
    }
    const std::string bare = plan.func.substr(plan.func.find(':') + 1);
    std::string text = "p:hook/" + bare + " " + bare;
    for (std::size_t i = 1; i < opt.probes.size(); i++) {
        text += " " + opt.probes[i];
    }
    plan.def = parse_kprobe(
        text, [](std::string_view name) { return Ksyms::find_any(kallsyms_path(), name); },
        btf_provider);
    std::string filter = opt.filter;
    if (!opt.comm.empty()) {
        const std::string by_comm = "comm == \"" + opt.comm + "\"";
        filter = filter.empty() ? by_comm : "(" + filter + ") && " + by_comm;
    }
    if (!filter.empty()) {
        plan.def.filter = filter;
        plan.def.pred = compile_filter(filter, &plan.def);
    }
    ksyms = load_ksyms(true);
    plan.addr = resolve_function(ksyms, plan.func);

    // traceable, and nobody else's IPMODIFY or direct call in the way
    const FunctionList functions = FunctionList::load(functions_path());
    const bool traceable = std::any_of(functions.functions().begin(), functions.functions().end(),
                                       [&](const TraceableFunction& f) { return f.name == bare; });
    if (!traceable) {
        throw_runtime("cannot hook " + bare +
                          ": it is not in available_filter_functions (notrace, inlined, or "
                          "not a function ftrace patched): see 'fhook explain " +
                          bare + "'",
                      ENOENT);
    }
    std::vector<std::string> conflicts =
        hook_conflicts(read_enabled_functions(tracefs_dir(), bare), true);
    if (!conflicts.empty()) {
        std::string why;
        for (const auto& c : conflicts) {
            why += (why.empty() ? "" : "; ") + c;
        }
        throw_runtime("cannot hook " + bare + ": " + why, EBUSY);
    }

    if (opt.hook.action == FHOOK_HOOK_AROUND) {
        // the words of arguments the caller passes on the stack, which the
        // trampoline copies for the body (all it can, 8, without BTF)
        opt.hook.stack_args = FHOOK_HOOK_MAX_STACK_ARGS;
        const KernelBtf* btf = btf_provider();
        if (auto f = btf ? btf->function(bare) : std::nullopt) {
            if (f->variadic) {
                throw_runtime("--trace-around " + bare +
                                  ": a variadic function's stack arguments are unbounded: the "
                                  "trampoline cannot run its body (the module refuses it too)",
                              EOPNOTSUPP);
            }
            const std::uint32_t words = stack_arg_words(*btf, *f);
            if (words > FHOOK_HOOK_MAX_STACK_ARGS) {
                throw_runtime("--trace-around " + bare + ": its arguments take " +
                                  std::to_string(words) + " stack words, the trampoline copies " +
                                  std::to_string(FHOOK_HOOK_MAX_STACK_ARGS),
                              EOPNOTSUPP);
            }
            opt.hook.stack_args = words;
        }
    }
    if (opt.hook.action == FHOOK_HOOK_REDIRECT) {
        opt.hook.redirect = resolve_function(ksyms, opt.redirect);
        const std::string other = opt.redirect.substr(opt.redirect.find(':') + 1);
        const KernelBtf* btf = btf_provider();
        std::optional<KernelBtf::Function> a, b;
        if (btf) {
            a = btf->function(bare);
            b = btf->function(other);
        }
        if (a && b) {
            auto shape = [&](const KernelBtf::Function& f) {
                std::string out = f.ret ? btf->type_name(f.ret) : "void";
                out += "(";
                for (const auto& p : f.params) {
                    out += btf->type_name(p.type) + ",";
                }
                return out + (f.variadic ? "...)" : ")");
            };
            if (shape(*a) != shape(*b)) {
                throw_invalid("cannot redirect " + bare + " to " + other +
                              ": the prototypes differ: " + btf->prototype(*a) + " vs " +
                              btf->prototype(*b));
            }
        } else if (!opt.force) {
            throw_invalid("cannot check that " + bare + " and " + other +
                          " have the same prototype: " + (a ? other : bare) +
                          " is not in the kernel's BTF (a module built without BTF?); --force "
                          "redirects without the check");
        }
    }
    return plan;
}

std::string kernel_release() {
    utsname u{};
    return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

int run(const Args& args, Mode mode) {
    std::optional<TraceOptions> parsed = parse_trace_options(args, mode);
    if (!parsed) {
        return 0; // --help
    }
    TraceOptions& opt = *parsed;
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
    Ksyms ksyms; // the formatters refer to this object; filled in below
    std::optional<HookPlan> hook;
    if (mode == Mode::Hook) {
        hook = plan_hook(opt, ksyms, btf_provider);
    }
    for (const auto& text : mode == Mode::Hook ? std::vector<std::string>{} : opt.probes) {
        if (is_tracepoint_definition(text)) {
            kprobes.push_back(parse_tracepoint(text, tracefs_dir()));
            if (!opt.filter.empty() && kprobes.back().filter.empty()) {
                kprobes.back().filter = opt.filter;
                kprobes.back().pred = compile_filter(opt.filter, &kprobes.back());
            }
            continue;
        }
        if (opt.via == Via::Kprobe && !is_probe_definition(text)) {
            // the same job as a function probe, through a kprobe
            if (text.find_first_of("*?[!:") != std::string::npos) {
                throw_invalid("--via kprobe takes function names, not '" + text +
                              "': one kprobe per function");
            }
            kprobes.push_back(
                parse_kprobe("p:fhook/" + text + " " + text, [](std::string_view name) {
                    return Ksyms::find_any(kallsyms_path(), name);
                }));
            kprobes.back().stack = opt.stack;
            continue;
        }
        if ((mode == Mode::Count || mode == Mode::Latency) && is_probe_definition(text)) {
            throw_invalid(std::string("fhook ") + mode_name(mode) +
                          " takes functions, not probe definitions: use fhook stat for '" + text +
                          "'");
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
    if (mode == Mode::Count && opt.probes.empty()) {
        throw_invalid("give the functions to count, e.g. fhook count vfs_read vfs_write");
    }
    if (mode == Mode::Latency && opt.probes.empty()) {
        throw_invalid("give the functions to time, e.g. fhook latency vfs_read");
    }
    const std::vector<ProbeSpec> specs = (kprobes.empty() && !hook) || !globs.empty()
                                             ? parse_probe_specs(globs)
                                             : std::vector<ProbeSpec>{};
    if (opt.via == Via::Direct && (opt.stack || !opt.triggers.empty()) && mode == Mode::Count) {
        throw_invalid("fhook count records nothing: --stack and --trigger do not apply");
    }

    // Everything that reads files comes before the device is touched, but
    // /proc/kallsyms (seconds under emulation) is only needed to build the
    // request for :mod: specs; otherwise a thread reads it while the session
    // is set up and armed, and it is joined before the first event is
    // formatted.  record needs the symbols to store the ones events mention.
    const bool need_resolution = has_module_specs(specs);
    const bool ksyms_required = need_resolution || mode == Mode::Record;
    std::future<Ksyms> ksyms_loading;
    if (need_resolution || mode == Mode::Latency) {
        ksyms = load_ksyms(true);
    }
    std::optional<FunctionList> functions;
    if (need_resolution || mode == Mode::Latency) {
        functions = FunctionList::load(functions_path());
    }
    // latency: what each FUNC's trampoline copies, the functions it cannot time
    std::vector<LatencyStackPlan> latency_plans;
    std::map<std::string, std::optional<KernelBtf>> module_btfs; // (split on `btf`)
    const ModuleBtfProvider module_btf = [&](const std::string& module) -> const KernelBtf* {
        const KernelBtf* base = btf_provider();
        if (!base) {
            return nullptr;
        }
        auto [it, fresh] = module_btfs.try_emplace(module);
        if (fresh) {
            try {
                it->second = KernelBtf::load_split("/sys/kernel/btf/" + module, *base);
            } catch (const Error&) {
                // a module built without BTF: the trampoline copies all it can
            }
        }
        return it->second ? &*it->second : nullptr;
    };
    if (mode == Mode::Latency) {
        for (const auto& spec : specs) {
            LatencyStackPlan plan =
                plan_latency_stack(spec, *functions, btf_provider(), module_btf);
            if (plan.selected > 0 && plan.selected == plan.skipped.size()) {
                throw_invalid("cannot time " + plan.skipped.front() + ": " + plan.why.front());
            }
            latency_plans.push_back(std::move(plan));
        }
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
    // (count formats no event: it reads no symbols, so that counting a
    // read path does not count fhook's own reads of /proc/kallsyms)
    if (!need_resolution && !hook && mode != Mode::Count && mode != Mode::Latency) {
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
    FunctionProbeOptions recording;
    recording.via =
        opt.via == Via::Direct ? FunctionProbeOptions::Via::Direct : FunctionProbeOptions::Via::Ops;
    recording.stack = opt.stack;
    // (a hook's --filter is on its fields: compiled with its definition)
    const std::vector<fhook_insn> task_pred = opt.filter.empty() || specs.empty()
                                                  ? std::vector<fhook_insn>{}
                                                  : compile_filter(opt.filter, nullptr);
    recording.pred = task_pred;
    FunctionProbeOptions counting = recording;
    counting.count = true;
    counting.stack = false;
    if (mode == Mode::Latency) {
        // one histogram per FUNC argument
        for (std::size_t i = 0; i < specs.size(); i++) {
            // by address: the module checks each function's prototype in BTF
            const LatencyStackPlan& plan = latency_plans[i];
            ProbeRequest one;
            for (const auto& [name, module] : plan.timed) {
                const std::vector<std::uint64_t> at = ksyms.addresses_of(name, module);
                one.ips.insert(one.ips.end(), at.begin(), at.end());
            }
            if (one.ips.empty()) {
                throw_runtime("no address in /proc/kallsyms for the functions of '" +
                                  specs[i].text + "': run as root",
                              ENOENT);
            }
            if (!plan.skipped.empty() && !opt.quiet) {
                OutputWriter err(STDERR_FILENO);
                for (std::size_t k = 0; k < plan.skipped.size(); k++) {
                    err.append("fhook: not timing " + plan.skipped[k] + ": " + plan.why[k] + "\n");
                }
                err.flush();
            }
            probes.push_back(ProbeSummary{
                session.add_latency_probe(one, task_pred, plan.stack_args),
                {},
                describe_specs({specs[i]}) + (opt.filter.empty() ? "" : " if " + opt.filter)});
        }
    } else if (mode == Mode::Count) {
        // one counter per FUNC argument
        for (const auto& spec : specs) {
            const ProbeRequest one =
                build_probe_request({spec}, functions ? &*functions : nullptr, &ksyms);
            probes.push_back(ProbeSummary{
                session.add_function_probe(one, counting), {}, describe_specs({spec})});
        }
    } else if (!specs.empty()) {
        probes.push_back(
            ProbeSummary{session.add_function_probe(request, recording),
                         {},
                         describe_specs(specs) + (opt.filter.empty() ? "" : " if " + opt.filter)});
    }
    if (hook) {
        if (hook->def.data_size + 0 > FHOOK_HOOK_AROUND_DATA &&
            opt.hook.action == FHOOK_HOOK_AROUND) {
            throw_invalid("the fields of --trace-around take " +
                          std::to_string(hook->def.data_size) + " bytes, at most " +
                          std::to_string(FHOOK_HOOK_AROUND_DATA) + " fit: record fewer");
        }
        if (opt.hook.action != FHOOK_HOOK_AROUND && !session.device().has(FHOOK_FEAT_LAB)) {
            throw_runtime(
                std::string(opt.hook.action == FHOOK_HOOK_RETURN ? "--return" : "--redirect") +
                    " changes what the kernel does and needs lab mode: reload the "
                    "module with 'insmod fhook.ko lab=1' (it taints the kernel)",
                EPERM);
        }
        const std::uint32_t id = session.add_hook(hook->def, hook->addr, hook->func, opt.hook);
        std::string what = opt.hook.action == FHOOK_HOOK_AROUND ? "trace-around"
                           : opt.hook.action == FHOOK_HOOK_RETURN
                               ? "return " + std::to_string(opt.hook.retval)
                               : "redirect to " + opt.redirect;
        probes.push_back(ProbeSummary{id, {}, "hook " + hook->func + " (" + what + ")"});
        probe_table.add(id, std::move(hook->def));
    }
    std::vector<std::pair<std::uint32_t, std::string>> canonical; // for record files
    for (auto& def : kprobes) {
        const KprobeHandle handle = session.add_kprobe(def, mode == Mode::Count);
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
            throw_invalid("trigger '" + text + "': no probe '" + event +
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
    } else if ((mode == Mode::Count || mode == Mode::Latency) && opt.pids.empty()) {
        // every caller counts, as with bpftrace's count(): fhook's own few
        // calls too (the read of its signalfd or timerfd that ends the
        // count), and with no filter at all a direct probe gets the fast
        // counting trampoline (docs/hooks.md)
        session.set_pid_filter({}, false, false);
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
            // a tracepoint's format as this kernel has it, for report
            if (const KprobeDef* def = probe_table.find(p.id); def && def->is_tracepoint) {
                info.events.push_back({def->group + ":" + def->event, def->tp_id, def->tp_format});
            }
        }
        auto rs = std::make_unique<RecordSink>(std::move(output_fd), opt.output, info, ksyms);
        record_sink = rs.get();
        sink = std::move(rs);
    } else if (mode == Mode::Stat || mode == Mode::Count || mode == Mode::Latency) {
        sink = std::make_unique<DiscardSink>();
    } else {
        sink = std::make_unique<PrintSink>(output_fd ? output_fd.get() : STDOUT_FILENO, ksyms,
                                           opt.json, probe_table);
    }
    const RecordCallback on_record = [&](const fhook_rec* rec) { sink->on_record(rec); };
    reader.set_batch_end([&] { sink->end_batch(); });

    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;

    try {
        session.start();
    } catch (const Error& e) {
        if (e.sys_errno() != EBUSY) {
            throw;
        }
        // who holds the functions: tracefs knows
        std::vector<std::string> names;
        for (const auto& spec : specs) {
            names.push_back(spec.text);
        }
        if (hook) {
            names.push_back(hook->func);
        }
        std::string who;
        for (const auto& name : names) {
            if (name.find_first_of("*?[!:") != std::string::npos) {
                continue;
            }
            // (a latency probe is a direct trampoline: IPMODIFY users and
            // other direct trampolines are in its way, as for a hook)
            for (const auto& c : hook_conflicts(read_enabled_functions(tracefs_dir(), name),
                                                hook.has_value() || mode == Mode::Latency)) {
                who += (who.empty() ? "" : "; ") + c;
            }
            if (opt.via == Via::Direct) {
                for (const auto& f : read_enabled_functions(tracefs_dir(), name)) {
                    if (f.direct()) {
                        who += (who.empty() ? "" : "; ") + f.name +
                               " already has a direct trampoline (" + f.detail +
                               "): a function takes one at a time";
                    }
                }
            }
        }
        if (who.empty()) {
            throw;
        }
        throw_runtime("cannot arm: " + who, EBUSY);
    }
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
    // latency: the histograms as last printed, and when to print next
    std::vector<LatencyHist> printed(probes.size());
    const auto print_latency = [&](bool final) {
        std::string text;
        for (std::size_t i = 0; i < probes.size(); i++) {
            const LatencyHist now = session.latency(probes[i].id);
            const LatencyHist shown = now.since(printed[i]);
            printed[i] = now;
            text += opt.json ? format_latency_json(shown, probes[i].description) + "\n"
                             : format_latency_text(shown, probes[i].description) +
                                   (final && i + 1 == probes.size() ? "" : "\n");
        }
        OutputWriter out(output_fd ? output_fd.get() : STDOUT_FILENO);
        out.append(text);
        out.flush();
    };
    std::optional<Clock::time_point> next_print;
    if (mode == Mode::Latency && opt.interval) {
        next_print = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(*opt.interval));
    }
    for (;;) {
        int timeout = wait_ms;
        for (const auto& at : {deadline, next_print}) {
            if (at) {
                auto left = std::chrono::ceil<std::chrono::milliseconds>(*at - Clock::now());
                timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, timeout));
            }
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
        if (next_print && Clock::now() >= *next_print) {
            print_latency(false);
            *next_print += std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(*opt.interval));
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
    if (mode == Mode::Latency) {
        print_latency(true);
        return exec_failed ? 1 : 0;
    }
    if (mode == Mode::Count || mode == Mode::Stat) {
        // one row per probe: the ioctl's totals, filtered from the stats area
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
        OutputWriter out(output_fd ? output_fd.get() : STDOUT_FILENO);
        out.append(mode == Mode::Stat ? stat_table(rows)
                                      : count_table(rows, opt.via == Via::Direct   ? "direct"
                                                          : opt.via == Via::Kprobe ? "kprobe"
                                                                                   : "ops"));
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

int cmd_count(const Args& args) {
    return run(args, Mode::Count);
}

int cmd_hook(const Args& args) {
    return run(args, Mode::Hook);
}

int cmd_latency(const Args& args) {
    return run(args, Mode::Latency);
}

} // namespace fhook::cli
