// fhook bench: attaching each mechanism in turn and timing the workload
// under it.  fhook's own mechanisms run as `fhook count/trace/hook` child
// processes (the consumer is the real CLI), tracefs peers as tracefs
// writes plus a trace_pipe reader, eBPF peers as bpftrace and libbpf-tools
// processes.  Every consumer is pinned to the consumer CPU: on one CPU its
// work lands inside the workload's time, for fhook and peers alike.
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include <fhook/disasm.hpp>
#include <fhook/error.hpp>
#include <fhook/fd.hpp>
#include <fhook/ftrace_state.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/session.hpp>

#include <bench/bench.hpp>

namespace fhook::bench {

namespace {

constexpr const char* kLoopFile = "/proc/fhook_testmod_hooks";
constexpr const char* kForever = "86400";

void pin(pid_t pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(pid, sizeof(set), &set) != 0) {
        throw_runtime("cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno),
                      errno);
    }
}

bool in_path(const std::string& exe) {
    if (exe.find('/') != std::string::npos) {
        return access(exe.c_str(), X_OK) == 0;
    }
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (!dir.empty() && access((dir + "/" + exe).c_str(), X_OK) == 0) {
            return true;
        }
    }
    return false;
}

// A consumer or tool process, pinned to a CPU, stdout to /dev/null and
// stderr kept (a memfd) for the skip reason.  Stopped with SIGINT (the
// tools then print their summary, to /dev/null), SIGKILL after 20 s.
class Child {
public:
    Child() = default;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    Child(Child&& o) noexcept : pid_(std::exchange(o.pid_, -1)), err_(std::move(o.err_)) {}
    ~Child() { stop(); }

    // exec argv; or, when argv is empty, copy `drain` to /dev/null
    static Child start(const std::vector<std::string>& argv, const std::string& drain, int cpu) {
        Child c;
        c.err_ = UniqueFd(memfd_create("fhook-bench-stderr", MFD_CLOEXEC));
        if (!c.err_) {
            throw_runtime(std::string("memfd_create: ") + std::strerror(errno), errno);
        }
        const pid_t pid = fork();
        if (pid < 0) {
            throw_runtime(std::string("fork: ") + std::strerror(errno), errno);
        }
        if (pid == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof(set), &set);
            const int null = open("/dev/null", O_RDWR);
            dup2(null, 0);
            dup2(null, 1);
            dup2(c.err_.get(), 2);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGPIPE, SIG_DFL);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, nullptr);
            if (argv.empty()) {
                const int fd = open(drain.c_str(), O_RDONLY);
                if (fd < 0) {
                    dprintf(2, "cannot open %s: %s\n", drain.c_str(), std::strerror(errno));
                    _exit(1);
                }
                static char buf[1 << 16];
                for (;;) {
                    const ssize_t n = read(fd, buf, sizeof(buf));
                    if (n == 0 || (n < 0 && errno != EINTR)) {
                        _exit(0);
                    }
                }
            }
            std::vector<char*> args;
            for (const auto& a : argv) {
                args.push_back(const_cast<char*>(a.c_str()));
            }
            args.push_back(nullptr);
            execvp(args[0], args.data());
            dprintf(2, "cannot execute %s: %s\n", args[0], std::strerror(errno));
            _exit(127);
        }
        c.pid_ = pid;
        return c;
    }

    bool running() {
        if (pid_ < 0) {
            return false;
        }
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;
        }
        return true;
    }

    void stop() noexcept {
        if (pid_ < 0) {
            return;
        }
        kill(pid_, SIGINT);
        for (int i = 0; i < 200; i++) {
            int status;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return;
            }
            usleep(100000);
        }
        kill(pid_, SIGKILL);
        int status;
        waitpid(pid_, &status, 0);
        pid_ = -1;
    }

    pid_t pid() const noexcept { return pid_; }

    // what the process wrote on stderr (its first 64 KiB)
    std::string error_text() const {
        std::string text(65536, '\0');
        const ssize_t n = pread(err_.get(), text.data(), text.size(), 0);
        text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        return text;
    }

    // the first line of what the process wrote on stderr
    std::string first_error() const {
        const std::string text = error_text();
        // bpftrace starts with "Attaching N probes..."
        std::istringstream lines(text);
        std::string line;
        while (std::getline(lines, line)) {
            if (line.rfind("Attaching", 0) == 0 || line.empty()) {
                continue;
            }
            return line;
        }
        return "exited without a message";
    }

private:
    pid_t pid_ = -1;
    UniqueFd err_;
};

void write_file(const std::string& path, const std::string& text, bool append = false) {
    const int fd = open(path.c_str(), O_WRONLY | (append ? O_APPEND : O_TRUNC));
    if (fd < 0) {
        throw_runtime("cannot open " + path + ": " + std::strerror(errno), errno);
    }
    const ssize_t n = write(fd, text.data(), text.size());
    const int err = errno;
    close(fd);
    if (n != static_cast<ssize_t>(text.size())) {
        throw_runtime("writing '" + text + "' to " + path + ": " + std::strerror(err), err);
    }
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// What a mechanism leaves attached: processes first (trace_pipe readers
// must close before the tracer changes), then the tracefs writes undone
// in reverse.
struct Attachment {
    std::vector<Child> children;
    std::vector<std::pair<std::string, std::string>> undo; // (file, text), appended
    std::vector<std::pair<std::string, std::string>> undo_trunc;
    std::vector<std::string> remove; // files a tool wrote
    std::string summary;             // fhook's --summary-json file
    ~Attachment() {
        for (auto it = children.rbegin(); it != children.rend(); ++it) {
            it->stop();
        }
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
            try {
                write_file(it->first, it->second, true);
            } catch (const Error&) {
            }
        }
        for (auto it = undo_trunc.rbegin(); it != undo_trunc.rend(); ++it) {
            try {
                write_file(it->first, it->second, false);
            } catch (const Error&) {
            }
        }
        for (const auto& path : remove) {
            unlink(path.c_str());
        }
    }
};

struct Context {
    const RunOptions& opt;
    std::string function;
    std::string module; // "" for vmlinux
    std::uint64_t addr = 0;
    std::uint64_t size = 0;
    int consumer_cpu = 0;
    std::uint64_t calls = 0;                  // per repeat
    std::optional<std::uint64_t> int3_offset; // first instruction after the fentry site
    std::string int3_why;
};

// Is anything attached to the function (ftrace ops of any kind, or a
// kprobe on it)?  Used to wait for tools that attach asynchronously.
bool attached(const Context& c) {
    return !read_enabled_functions(c.opt.tracefs, c.function).empty() ||
           !read_kprobes_on(c.function).empty();
}

// Starts a tool and waits until it attached; "" or why it could not.
std::string start_tool(Context& c, Attachment& a, const std::vector<std::string>& argv,
                       std::string name = "") {
    if (name.empty()) {
        name = argv[0];
    }
    if (!in_path(argv[0])) {
        return name + " not found (install it, or pass its path)";
    }
    a.children.push_back(Child::start(argv, "", c.consumer_cpu));
    Child& child = a.children.back();
    // bpftrace compiles with LLVM first: minutes under -icount
    for (int i = 0; i < 6000; i++) {
        if (attached(c)) {
            return "";
        }
        if (!child.running()) {
            return name + ": " + child.first_error();
        }
        usleep(100000);
    }
    return name + " did not attach within 600 s";
}

// Every record of a repeat fits in the ring, fhook's and ftrace's alike:
// a consumer that falls behind catches up after the loop (counted, see
// run()) instead of its producer dropping, which would be cheaper.  128
// bytes a call (the largest record here is ~100) and a quarter more,
// a power of two KiB.  fhook's rings are all the same size, one per
// possible CPU: `per_cpu` caps them at 1 GiB in all (a machine with many
// CPUs may then drop, which the lost column shows).  ftrace's is only
// grown on the workload's CPU.
std::string ring_kib(const Context& c, bool per_cpu = false) {
    std::uint64_t cap = std::uint64_t{256} << 10; // FHOOK_RING_MAX_SIZE
    if (per_cpu) {
        const long n = sysconf(_SC_NPROCESSORS_CONF);
        cap = std::min<std::uint64_t>(cap, (std::uint64_t{1} << 20) / std::max(1L, n));
    }
    std::uint64_t kib = 1024;
    while (kib * 1024 < c.calls * 160 && kib * 2 <= cap) {
        kib *= 2;
    }
    return std::to_string(kib);
}

std::string start_fhook(Context& c, Attachment& a, std::vector<std::string> args) {
    args.insert(args.begin(), c.opt.fhook);
    if (args[1] == "trace" || args[1] == "record" || args[1] == "hook") {
        args.push_back("--buffer-size");
        args.push_back(ring_kib(c, true));
        // its events and losses, read when it stops (fhook_lost)
        a.summary = "/tmp/fhook-bench-summary-" + std::to_string(getpid()) + ".json";
        a.remove.push_back(a.summary);
        args.push_back("--summary-json");
        args.push_back(a.summary);
    }
    args.push_back("--duration");
    args.push_back(kForever);
    return start_tool(c, a, args, "fhook");
}

// Restores a tracefs buffer_size_kb file with the attachment; true when
// its size could be read.
bool keep_buffer_size(Attachment& a, const std::string& path) {
    // "1408", or "7 (expanded: 1408)" before the buffer was first used
    std::string old = read_text_file(path);
    old.resize(std::min(old.size(), old.find_first_not_of("0123456789")));
    if (old.empty()) {
        return false;
    }
    a.undo_trunc.emplace_back(path, old + "\n");
    return true;
}

void drain_trace_pipe(Context& c, Attachment& a) {
    const std::string size =
        c.opt.tracefs + "/per_cpu/cpu" + std::to_string(c.opt.workload_cpu) + "/buffer_size_kb";
    if (keep_buffer_size(a, size)) {
        write_file(size, ring_kib(c) + "\n");
    }
    a.children.push_back(Child::start({}, c.opt.tracefs + "/trace_pipe", c.consumer_cpu));
    // The reader's own read(2)s are not traced, as fhook ignores its
    // reader: with vfs_read hooked each of them would be one more event to
    // read, and the reader would never be idle.
    const std::string pid = std::to_string(a.children.back().pid()) + "\n";
    for (const char* file : {"/set_ftrace_notrace_pid", "/set_event_notrace_pid"}) {
        write_file(c.opt.tracefs + file, pid);
        a.undo_trunc.emplace_back(c.opt.tracefs + file, "\n");
    }
}

std::string kprobe_event(Context& c, Attachment& a, const std::string& def,
                         const std::string& event) {
    try {
        write_file(c.opt.tracefs + "/kprobe_events", def + "\n", true);
    } catch (const Error& e) {
        // the kernel says why in error_log
        std::istringstream log(read_text_file(c.opt.tracefs + "/error_log"));
        std::string line, last;
        while (std::getline(log, line)) {
            if (line.find("error:") != std::string::npos) {
                last = line.substr(line.find("error:"));
            }
        }
        return std::string(e.what()) + (last.empty() ? "" : " (" + last + ")");
    }
    a.undo.emplace_back(c.opt.tracefs + "/kprobe_events", "-:fhookbench/" + event + "\n");
    write_file(c.opt.tracefs + "/events/fhookbench/" + event + "/enable", "1");
    a.undo.emplace_back(c.opt.tracefs + "/events/fhookbench/" + event + "/enable", "0");
    drain_trace_pipe(c, a);
    return "";
}

// Where `fhook record` writes, as trace-cmd does (tmpfs in the VM: both
// pay for the copies into the page cache); removed afterwards.
std::string record_file(Attachment& a) {
    a.remove.emplace_back("/tmp/fhook-bench-record.fhk");
    return a.remove.back();
}

// the same two fetch arguments for kprobe_events and fhook
constexpr const char* kTwoArgs = "a=%di:u64 b=%si:u64";

std::string qualified(const Context& c, char sep) {
    return c.module.empty() ? c.function : c.module + sep + c.function;
}

struct Mechanism {
    const char* name;
    const char* tool;
    const char* description;
    std::string (*attach)(Context&, Attachment&); // "" or why skipped
};

const Mechanism kMechanisms[] = {
    {"baseline", "none", "nothing attached", [](Context&, Attachment&) { return std::string(); }},
    {"ftrace-function", "ftrace", "the kernel's function tracer on FUNC, cat trace_pipe",
     [](Context& c, Attachment& a) {
         write_file(c.opt.tracefs + "/set_ftrace_filter", c.function + "\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/set_ftrace_filter", "\n");
         write_file(c.opt.tracefs + "/current_tracer", "function\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/current_tracer", "nop\n");
         write_file(c.opt.tracefs + "/tracing_on", "1\n");
         drain_trace_pipe(c, a);
         return std::string();
     }},
    {"trace-cmd-function", "trace-cmd",
     "trace-cmd record -p function -l FUNC (binary: splice from trace_pipe_raw to a file)",
     [](Context& c, Attachment& a) {
         keep_buffer_size(a, c.opt.tracefs + "/buffer_size_kb");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/set_ftrace_filter", "\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/current_tracer", "nop\n");
         // Its default buffer (-b unset): its recorders sleep until a CPU's
         // buffer is buffer_percent (50 %) full and then splice whole
         // pages, so that a buffer holding every event would only be read
         // when trace-cmd exits, outside the figures.  In steady state each
         // loop's worth is read during or right after it; the lost column
         // shows that nothing overflows.  (tmpfs in the VM: the file costs
         // memory copies.)
         const std::string out = "/tmp/fhook-bench-trace-cmd.dat";
         a.remove.push_back(out);
         return start_tool(
             c, a, {c.opt.trace_cmd, "record", "-q", "-p", "function", "-l", c.function, "-o", out},
             "trace-cmd");
     }},
    {"kprobe-events", "kprobe_events", "kprobe_events 'p FUNC', cat trace_pipe",
     [](Context& c, Attachment& a) {
         return kprobe_event(c, a, "p:fhookbench/e " + c.function, "e");
     }},
    {"kprobe-events-2args", "kprobe_events", "kprobe_events 'p FUNC a=%di b=%si', cat trace_pipe",
     [](Context& c, Attachment& a) {
         return kprobe_event(c, a, "p:fhookbench/a " + c.function + " " + kTwoArgs, "a");
     }},
    {"kretprobe-events", "kprobe_events", "kprobe_events 'r FUNC ret=$retval', cat trace_pipe",
     [](Context& c, Attachment& a) {
         return kprobe_event(c, a, "r:fhookbench/r " + c.function + " ret=$retval:s64", "r");
     }},
    {"bpftrace-fentry-count", "bpftrace", "bpftrace 'kfunc:FUNC { @ = count(); }'",
     [](Context& c, Attachment& a) {
         return start_tool(
             c, a, {c.opt.bpftrace, "-e", "kfunc:" + qualified(c, ':') + " { @n = count(); }"});
     }},
    {"bpftrace-kprobe-count", "bpftrace", "bpftrace 'kprobe:FUNC { @ = count(); }'",
     [](Context& c, Attachment& a) {
         return start_tool(c, a,
                           {c.opt.bpftrace, "-e", "kprobe:" + c.function + " { @n = count(); }"});
     }},
    {"bpftrace-kprobe-hist", "bpftrace", "bpftrace 'kprobe:FUNC { @ = hist(arg1); }'",
     [](Context& c, Attachment& a) {
         return start_tool(
             c, a, {c.opt.bpftrace, "-e", "kprobe:" + c.function + " { @h = hist(arg1); }"});
     }},
    {"funclatency", "libbpf-tools", "libbpf-tools funclatency FUNC (entry+exit histogram)",
     [](Context& c, Attachment& a) {
         // (its MODULE:FUNC means a library's function)
         return start_tool(c, a, {c.opt.funclatency, c.function});
     }},
    {"fhook-ops-count", "fhook", "fhook count --via ops (ftrace_ops callback, per-CPU counter)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"count", "--via", "ops", c.function});
     }},
    {"fhook-direct-count", "fhook", "fhook count --via direct (counting trampoline)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"count", "--via", "direct", c.function});
     }},
    {"fhook-kprobe-count", "fhook", "fhook count --via kprobe",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"count", "--via", "kprobe", c.function});
     }},
    {"fhook-ops-record", "fhook", "fhook trace --via ops (ts, pid, ip, parent to the ring)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"trace", "--via", "ops", c.function});
     }},
    {"fhook-ops-record-raw", "fhook",
     "fhook record --via ops (the same records to a file in /tmp, not formatted)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"record", "-o", record_file(a), "--via", "ops", c.function});
     }},
    {"fhook-direct-record", "fhook", "fhook trace --via direct (recording trampoline)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"trace", "--via", "direct", c.function});
     }},
    {"fhook-kprobe-2args", "fhook", "fhook trace 'p FUNC a=%di b=%si' (kprobe on ftrace)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"trace", "p:fhookbench/a " + c.function + " " + kTwoArgs});
     }},
    {"fhook-kprobe-2args-raw", "fhook",
     "fhook record 'p FUNC a=%di b=%si' (to a file in /tmp, not formatted)",
     [](Context& c, Attachment& a) {
         return start_fhook(
             c, a,
             {"record", "-o", record_file(a), "p:fhookbench/a " + c.function + " " + kTwoArgs});
     }},
    {"fhook-kprobe-int3", "fhook",
     "fhook trace 'p FUNC+OFF a=%di b=%si' (int3, after the fentry site)",
     [](Context& c, Attachment& a) {
         if (!c.int3_offset) {
             return "no instruction after the fentry site: " + c.int3_why;
         }
         char off[32];
         std::snprintf(off, sizeof(off), "+0x%llx",
                       static_cast<unsigned long long>(*c.int3_offset));
         return start_fhook(c, a, {"trace", "p:fhookbench/i " + c.function + off + " " + kTwoArgs});
     }},
    {"fhook-kretprobe", "fhook", "fhook trace 'r FUNC ret=$retval'",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"trace", "r:fhookbench/r " + c.function + " ret=$retval:s64"});
     }},
    {"fhook-latency-hist", "fhook",
     "fhook latency FUNC (in-module entry+exit histogram, direct trampoline)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"latency", c.function});
     }},
    {"fhook-trace-around", "fhook", "fhook hook --trace-around (IPMODIFY, record per call)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"hook", "--trace-around", c.function});
     }},
};

std::uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

// one run of the workload: ns per call
double workload_once(const RunOptions& opt, std::uint64_t calls) {
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

// CPU time of a process's threads so far, ns (sum_exec_runtime: under
// -icount, guest instructions), from /proc/PID/task/*/schedstat
std::uint64_t cpu_ns(pid_t pid) {
    std::uint64_t sum = 0;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d) {
        return 0;
    }
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        std::ifstream in(dir + "/" + e->d_name + "/schedstat");
        std::uint64_t ns = 0;
        if (in >> ns) {
            sum += ns;
        }
    }
    closedir(d);
    return sum;
}

// ... and of its descendants (trace-cmd forks a recorder per CPU)
std::uint64_t tree_cpu_ns(pid_t pid, int depth = 0) {
    std::uint64_t sum = cpu_ns(pid);
    if (depth > 4) {
        return sum;
    }
    std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                           "/children");
    pid_t child = 0;
    while (children >> child) {
        sum += tree_cpu_ns(child, depth + 1);
    }
    return sum;
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
        quiet = now - last < 1000000 ? quiet + 1 : 0;
        last = now;
    }
    return last - start;
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

int last_cpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 0;
    }
    int last = 0;
    for (int i = 0; i < CPU_SETSIZE; i++) {
        if (CPU_ISSET(i, &set)) {
            last = i;
        }
    }
    return last;
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
    for (const auto& m : kMechanisms) {
        out.emplace_back(m.name, m.description);
    }
    return out;
}

Results run(const RunOptions& opt) {
    if (opt.workload != "kloop" && opt.workload != "read") {
        throw_invalid("--workload must be kloop or read, not '" + opt.workload + "'");
    }
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
    r.function = !opt.function.empty()     ? opt.function
                 : opt.workload == "kloop" ? "fhook_testmod_nop"
                                           : "vfs_read";
    r.calls = opt.calls ? opt.calls : 200000;
    r.repeats = opt.repeats;
    r.clock = opt.clock.empty() ? "CLOCK_MONOTONIC ns" : opt.clock;

    Context c{.opt = opt, .function = r.function, .module = {}, .int3_offset = {}, .int3_why = {}};
    c.consumer_cpu = opt.consumer_cpu >= 0 ? opt.consumer_cpu : last_cpu();
    c.calls = r.calls;
    const Ksyms ksyms = Ksyms::load("/proc/kallsyms");
    if (const auto refs = ksyms.find_text(r.function); !refs.empty()) {
        c.module = std::string(refs.front().module);
        const auto addrs = ksyms.addresses_of(r.function, c.module);
        if (!addrs.empty()) {
            c.addr = addrs.front();
            c.size = ksyms.size_of(c.addr);
        }
    } else {
        throw_runtime("unknown function '" + r.function + "' (not in /proc/kallsyms)");
    }
    find_int3_offset(c);

    if (attached(c)) {
        throw_runtime("something is attached to " + r.function +
                      " already (tracefs enabled_functions, kprobes/list): the baseline "
                      "would not be one");
    }
    pin(0, opt.workload_cpu);
    if (opt.settle > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(opt.settle));
    }
    for (const auto& m : kMechanisms) {
        if (!selected(opt, m.name)) {
            continue;
        }
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
                const bool ftrace =
                    row.tool == "ftrace" || row.tool == "kprobe_events" || row.tool == "trace-cmd";
                const std::uint64_t ftrace_lost0 = ftrace ? ftrace_lost(opt.tracefs) : 0;
                workload_once(opt, r.calls / 10 + 1); // warm: first records, caches
                consumers_catch_up(a);
                for (unsigned i = 0; i < opt.repeats; i++) {
                    // the consumers' work during the loop is in its time;
                    // what they still had to do after it is added
                    const std::uint64_t before = consumers_ns(a);
                    const double in_loop = workload_once(opt, r.calls);
                    const double after =
                        static_cast<double>(consumers_catch_up(a)) / static_cast<double>(r.calls);
                    row.ns.push_back(in_loop + after);
                    if (!a.children.empty()) {
                        row.consumer_ns.push_back(static_cast<double>(consumers_ns(a) - before) /
                                                  static_cast<double>(r.calls));
                    }
                }
                if (ftrace) {
                    const double hits =
                        static_cast<double>(r.calls) * opt.repeats + r.calls / 10 + 1;
                    row.lost = static_cast<double>(ftrace_lost(opt.tracefs) - ftrace_lost0) / hits;
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
            if (row.tool == "fhook" && row.measured()) {
                // its summary, printed when it stops
                for (auto& child : a.children) {
                    child.stop();
                }
                if (!a.summary.empty()) {
                    row.lost = fhook_lost(a.summary);
                }
            }
        }
        // tools detach asynchronously (a BPF link goes with its last fd):
        // the next row must start from nothing attached
        bool gone = false;
        for (int i = 0; i < 600 && !(gone = !attached(c)); i++) {
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
