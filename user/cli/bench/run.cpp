// fhook bench: attaching each mechanism in turn (mechanisms.cpp) and
// timing the workload under it.  Every consumer is pinned to the consumer
// CPU (process.cpp): on one CPU its work lands inside the workload's time,
// for fhook and peers alike.
#include <fcntl.h>
#include <fnmatch.h>
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include <fhook/bench/bench.hpp>
#include <fhook/bench/mechanisms.hpp>
#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/core/session.hpp>
#include <fhook/sys/disasm.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook::bench {

namespace {

constexpr const char* kLoopFile = "/proc/fhook_testmod_hooks";

std::uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

// One byte through a pipe end, again after a signal; false at EOF or
// on an error.
bool pass_byte(int fd, bool out) {
    char c = 0;
    for (;;) {
        const ssize_t n = out ? write(fd, &c, 1) : read(fd, &c, 1);
        if (n == 1) {
            return true;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return false;
    }
}

// A forked child, killed (if still there) and reaped on every way out.
class ForkedChild {
public:
    explicit ForkedChild(pid_t pid) : pid_(pid) {}
    ForkedChild(const ForkedChild&) = delete;
    ForkedChild& operator=(const ForkedChild&) = delete;
    ~ForkedChild() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            wait();
        }
    }
    // Its exit status (waitpid's), once it has exited.
    int wait() {
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return status;
    }

private:
    pid_t pid_;
};

// The switch workload: this process and a SCHED_FIFO child on its CPU
// pass a byte back and forth through two pipes, `switches` / 2 times:
// each pass wakes the child, which preempts at once (a wakeup_rt wakeup),
// and blocks, switching back (a wakeup of this SCHED_OTHER task); ns per
// context switch.  (Only the child is RT: RT throttling never cuts in.)
double switch_once(std::uint64_t switches) {
    int there[2], back[2];
    if (pipe2(there, O_CLOEXEC) != 0) {
        throw_runtime(std::string("switch workload: pipe: ") + std::strerror(errno), errno);
    }
    UniqueFd t0(there[0]), t1(there[1]);
    if (pipe2(back, O_CLOEXEC) != 0) {
        throw_runtime(std::string("switch workload: pipe: ") + std::strerror(errno), errno);
    }
    UniqueFd b0(back[0]), b1(back[1]);
    const std::uint64_t rounds = std::max<std::uint64_t>(1, switches / 2);
    const pid_t pid = fork();
    if (pid < 0) {
        throw_runtime(std::string("switch workload: fork: ") + std::strerror(errno), errno);
    }
    if (pid == 0) {
        // system calls and _exit only: nothing of the parent's may run here
        const sched_param sp{.sched_priority = 1};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
            _exit(3);
        }
        bool ok = pass_byte(b1.get(), true); // ready
        for (std::uint64_t i = 0; ok && i < rounds; i++) {
            ok = pass_byte(t0.get(), false) && pass_byte(b1.get(), true);
        }
        _exit(ok ? 0 : 1);
    }
    ForkedChild child(pid);
    // (the child's ends closed here: its exit is EOF, not a hang)
    t0.reset();
    b1.reset();
    bool ok = pass_byte(b0.get(), false);
    const std::uint64_t start = now_ns();
    for (std::uint64_t i = 0; ok && i < rounds; i++) {
        ok = pass_byte(t1.get(), true) && pass_byte(b0.get(), false);
    }
    const std::uint64_t ns = now_ns() - start;
    t1.reset(); // (a child still reading gets EOF)
    const int status = child.wait();
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw_runtime(WIFEXITED(status) && WEXITSTATUS(status) == 3
                          ? "switch workload: cannot make the child SCHED_FIFO (needs "
                            "CAP_SYS_NICE)"
                          : "switch workload: the ping-pong with the child broke off");
    }
    return static_cast<double>(ns) / static_cast<double>(rounds * 2);
}

// The timer workload: `units` of fixed work (1,000 iterations of a loop
// the compiler keeps) on this CPU while a timer tracer interrupts it;
// ns per unit.
double timer_once(std::uint64_t units) {
    volatile std::uint64_t sink = 0;
    const std::uint64_t start = now_ns();
    for (std::uint64_t i = 0; i < units * 1000; i++) {
        sink = sink + i;
    }
    return static_cast<double>(now_ns() - start) / static_cast<double>(units);
}

// one run of the workload: ns per call (per context switch, per unit)
double workload_once(const RunOptions& opt, std::uint64_t calls) {
    if (opt.workload == "switch") {
        return switch_once(calls);
    }
    if (opt.workload == "timer") {
        return timer_once(calls);
    }
    if (opt.workload == "kloop") {
        write_file(kLoopFile, "loop " + std::to_string(calls) + "\n");
        const std::string text = read_text_file(kLoopFile);
        unsigned long long n = 0, ns = 0;
        const auto pos = text.find("loop n ");
        if (pos == std::string::npos ||
            std::sscanf(text.c_str() + pos, "loop n %llu ns %llu", &n, &ns) != 2 || n != calls) {
            throw_runtime(std::string(kLoopFile) + " did not report the loop: '" + text + "'");
        }
        return static_cast<double>(ns) / static_cast<double>(calls);
    }
    UniqueFd fd(open("/dev/zero", O_RDONLY | O_CLOEXEC));
    if (!fd) {
        throw_runtime(std::string("/dev/zero: ") + std::strerror(errno), errno);
    }
    char c;
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < calls; i++) {
        if (read(fd.get(), &c, 1) != 1) {
            throw_runtime(std::string("read /dev/zero: ") + std::strerror(errno), errno);
        }
    }
    return static_cast<double>(now_ns() - t0) / static_cast<double>(calls);
}

std::uint64_t consumers_ns(Attachment& a) {
    std::uint64_t sum = 0;
    for (const auto& child : a.children) {
        if (child.pid() > 0) {
            sum += tree_cpu_ns(child.pid());
        }
    }
    return sum;
}

// How much a CPU time grew (0 when a thread that had some exited since).
std::uint64_t grown(std::uint64_t now, std::uint64_t before) {
    return now > before ? now - before : 0;
}

// Waits until the consumers have caught up (under 1 % of a CPU for
// 200 ms, at most 120 s) and returns their CPU time meanwhile, ns.
std::uint64_t consumers_catch_up(Attachment& a) {
    const std::uint64_t start = consumers_ns(a);
    std::uint64_t last = start;
    int quiet = 0;
    for (int i = 0; i < 1200 && quiet < 2; i++) {
        usleep(100000);
        const std::uint64_t now = consumers_ns(a);
        // (an idle reader's periodic wakeups: under 1 % of a CPU)
        quiet = grown(now, last) < 1000000 ? quiet + 1 : 0;
        last = now;
    }
    return grown(last, start);
}

// Events the ftrace ring buffer dropped or overwrote so far, all CPUs.
std::uint64_t ftrace_lost(const std::string& tracefs) {
    std::uint64_t sum = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        std::ifstream in(tracefs + "/per_cpu/cpu" + std::to_string(cpu) + "/stats");
        if (!in) {
            break;
        }
        std::string line;
        while (std::getline(in, line)) {
            unsigned long long n = 0;
            if (std::sscanf(line.c_str(), "overrun: %llu", &n) == 1 ||
                std::sscanf(line.c_str(), "dropped events: %llu", &n) == 1) {
                sum += n;
            }
        }
    }
    return sum;
}

// The fraction of fhook's events lost, from the summary it wrote to
// `path` (--summary-json) when it stopped: lost / (events + lost).
std::optional<double> fhook_lost(const std::string& path) {
    std::ifstream in(path);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("events") || !j.contains("lost")) {
        return std::nullopt;
    }
    const auto events = j["events"].get<double>(), lost = j["lost"].get<double>();
    return events + lost > 0 ? std::optional<double>(lost / (events + lost)) : std::nullopt;
}

bool selected(const RunOptions& opt, const char* name) {
    if (opt.only.empty() || std::string_view(name) == "baseline") {
        return true;
    }
    for (const auto& glob : opt.only) {
        if (fnmatch(glob.c_str(), name, 0) == 0) {
            return true;
        }
    }
    return false;
}

void find_int3_offset(Context& c) {
    if (c.addr == 0) {
        c.int3_why = "the function's address is not in /proc/kallsyms";
        return;
    }
    try {
        Session session("/dev/fhook");
        // READ_TEXT stays inside one symbol
        const auto text = session.read_text(c.addr, std::min<std::uint64_t>(32, c.size));
        const auto insns = disassemble(text, c.addr, 8);
        const auto site = fentry_index(insns);
        if (!site || *site + 1 >= insns.size()) {
            c.int3_why = "cannot decode the function's first instructions";
            return;
        }
        c.int3_offset = insns[*site + 1].addr - c.addr;
    } catch (const Error& e) {
        c.int3_why = e.what();
    }
}

} // namespace

std::vector<std::pair<std::string, std::string>> mechanisms() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const char* workload : {"kloop", "switch", "timer"}) {
        for (const auto& m : mechanism_table(workload)) {
            if (workload == std::string_view("kloop") || std::string_view(m.name) != "baseline") {
                out.emplace_back(m.name, m.description);
            }
        }
    }
    return out;
}

// One mechanism's row: attached, warmed, timed `opt.repeats` times
// (its consumers' catching up added), its losses, then detached; the
// reason it was skipped instead.
Row measure(const Mechanism& m, Context& c, const RunOptions& opt, const Results& r) {
    Row row{m.name, m.tool, m.description, {}, "", {}, std::nullopt};
    if (opt.progress) {
        opt.progress(std::string(m.name));
    }
    {
        Attachment a;
        std::string why;
        try {
            why = m.attach(c, a);
        } catch (const Error& e) {
            why = e.what();
        }
        if (why.empty()) {
            // what a tool does right after attaching (fhook's reader
            // loading /proc/kallsyms, bpftrace's own start) would
            // otherwise fall into the first figures on one CPU
            if (opt.settle > 0) {
                std::this_thread::sleep_for(std::chrono::duration<double>(opt.settle));
            }
            const bool ftrace = !m.unread && (row.tool == "ftrace" || row.tool == "kprobe_events" ||
                                              row.tool == "trace-cmd");
            const std::uint64_t ftrace_lost0 = ftrace ? ftrace_lost(opt.tracefs) : 0;
            workload_once(opt, r.calls / 10 + 1); // warm: first records, caches
            consumers_catch_up(a);
            for (unsigned i = 0; i < opt.repeats; i++) {
                // the consumers' work during the loop is in its time;
                // what they still had to do after it is added
                const std::uint64_t before = consumers_ns(a);
                const std::uint64_t scraper_before = a.scraper ? a.scraper->cpu_ns() : 0;
                if (a.scraper) {
                    a.scraper->on(true);
                }
                double in_loop = workload_once(opt, r.calls);
                if (a.scraper) {
                    a.scraper->on(false);
                }
                if (a.scraper && opt.workload_cpu == c.consumer_cpu) {
                    // (the scrapes, client and server, shared the CPU with
                    // the loop: theirs, not the probe's)
                    in_loop -= static_cast<double>(grown(a.scraper->cpu_ns(), scraper_before) +
                                                   grown(consumers_ns(a), before)) /
                               static_cast<double>(r.calls);
                }
                const double after =
                    static_cast<double>(consumers_catch_up(a)) / static_cast<double>(r.calls);
                row.ns.push_back(in_loop + after);
                if (!a.children.empty()) {
                    const std::uint64_t scrapes =
                        a.scraper ? grown(a.scraper->cpu_ns(), scraper_before) : 0;
                    row.consumer_ns.push_back(
                        static_cast<double>(grown(consumers_ns(a), before) + scrapes) /
                        static_cast<double>(r.calls));
                }
            }
            if (ftrace) {
                const double hits = static_cast<double>(r.calls) * opt.repeats + r.calls / 10 + 1;
                row.lost = static_cast<double>(ftrace_lost(opt.tracefs) - ftrace_lost0) / hits;
            }
            if (a.scraper && (!a.scraper->error().empty() || !a.scraper->scrapes())) {
                row.ns.clear();
                row.consumer_ns.clear();
                why = "no scrape: " + a.scraper->error();
            }
            for (auto& child : a.children) {
                if (!child.running()) {
                    row.ns.clear();
                    row.consumer_ns.clear();
                    why = "the consumer exited during the measurement: " + child.first_error();
                }
            }
        }
        row.skipped = why;
        if (!a.summary.empty() && row.measured()) {
            // its summary (fhook's, fhook-bench-stream's), written when it stops
            for (auto& child : a.children) {
                child.stop();
            }
            row.lost = fhook_lost(a.summary);
        }
    }
    return row;
}

Results run(const RunOptions& opt) {
    if (opt.workload != "kloop" && opt.workload != "read" && opt.workload != "switch" &&
        opt.workload != "timer") {
        throw_invalid("--workload must be kloop, read, switch or timer, not '" + opt.workload +
                      "'");
    }
    // the latency tracers' workloads: no function hooked
    const bool sched = opt.workload == "switch" || opt.workload == "timer";
    if (opt.workload == "kloop" && access(kLoopFile, W_OK) != 0) {
        throw_runtime(std::string("workload kloop needs the test module's ") + kLoopFile +
                      " (insmod vmtests' fhook_testmod.ko, or use --workload read)");
    }
    if (access((opt.tracefs + "/enabled_functions").c_str(), R_OK) != 0) {
        throw_runtime("tracefs not found at '" + opt.tracefs +
                      "' (mount -t tracefs nodev /sys/kernel/tracing)");
    }
    Results r;
    utsname u{};
    uname(&u);
    r.kernel = u.release;
    r.cpus = static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
    r.workload = opt.workload;
    r.function = opt.workload == "timer"   ? "timer every 100 us"
                 : sched                   ? "sched_wakeup+sched_switch"
                 : !opt.function.empty()   ? opt.function
                 : opt.workload == "kloop" ? "fhook_testmod_nop"
                                           : "vfs_read";
    r.calls = opt.calls ? opt.calls : 200000;
    r.repeats = opt.repeats;
    r.clock = opt.clock.empty() ? "CLOCK_MONOTONIC ns" : opt.clock;

    Context c{.opt = opt, .function = r.function, .module = {}, .int3_offset = {}, .int3_why = {}};
    c.consumer_cpu = opt.consumer_cpu >= 0 ? opt.consumer_cpu : last_cpu();
    c.calls = r.calls;
    const Ksyms ksyms = Ksyms::load("/proc/kallsyms");
    if (sched) {
        // (the tracepoints: nothing to find, nothing to check)
    } else if (const auto refs = ksyms.find_text(r.function); !refs.empty()) {
        c.module = std::string(refs.front().module);
        const auto addrs = ksyms.addresses_of(r.function, c.module);
        if (!addrs.empty()) {
            c.addr = addrs.front();
            c.size = ksyms.size_of(c.addr);
        }
    } else {
        throw_runtime("unknown function '" + r.function + "' (not in /proc/kallsyms)");
    }
    if (!sched) {
        find_int3_offset(c);
    }
    if (!sched && attached(c)) {
        throw_runtime("something is attached to " + r.function +
                      " already (tracefs enabled_functions, kprobes/list): the baseline "
                      "would not be one");
    }
    pin(0, opt.workload_cpu);
    if (opt.settle > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(opt.settle));
    }
    for (const auto& m : mechanism_table(opt.workload)) {
        if (!selected(opt, m.name)) {
            continue;
        }
        Row row = measure(m, c, opt, r);
        // tools detach asynchronously (a BPF link goes with its last fd):
        // the next row must start from nothing attached (the switch
        // workload's tools are gone with their processes)
        bool gone = sched;
        for (int i = 0; i < 600 && !gone && !(gone = !attached(c)); i++) {
            usleep(100000);
        }
        if (!gone) {
            throw_runtime(std::string(m.name) + " left something attached to " + r.function +
                          " for 60 s");
        }
        r.rows.push_back(std::move(row));
    }
    return r;
}

} // namespace fhook::bench
