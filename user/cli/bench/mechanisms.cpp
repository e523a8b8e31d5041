// fhook bench: the mechanisms (mechanisms.hpp).  fhook's own run as
// `fhook count/trace/record/latency/hook` child processes (the consumer
// is the real CLI), tracefs peers as tracefs writes plus a trace_pipe
// reader, eBPF peers as bpftrace and libbpf-tools processes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fhook/bench/mechanisms.hpp>
#include <fhook/core/error.hpp>
#include <fhook/sys/ftrace_state.hpp>

namespace fhook::bench {

namespace {

constexpr const char* kForever = "86400";

} // namespace

void write_file(const std::string& path, const std::string& text, bool append) {
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

bool attached(const Context& c) {
    return !read_enabled_functions(c.opt.tracefs, c.function).empty() ||
           !read_kprobes_on(c.function).empty();
}

namespace {

// How many ftrace_ops want the function's site (enabled_functions).
long ops_on(const Context& c) {
    long refs = 0;
    for (const auto& f : read_enabled_functions(c.opt.tracefs, c.function)) {
        refs = std::max(refs, f.refs);
    }
    return refs;
}

} // namespace

std::string start_tool(Context& c, Attachment& a, const std::vector<std::string>& argv,
                       const std::string& name, const std::function<bool()>& ready) {
    if (!in_path(argv[0])) {
        return name + " not found (install it, or pass its path)";
    }
    a.children.push_back(Child::start(argv, "", c.consumer_cpu));
    Child& child = a.children.back();
    // bpftrace compiles with LLVM first: minutes under -icount
    for (int i = 0; i < 6000; i++) {
        if (ready()) {
            return "";
        }
        if (!child.running()) {
            return name + ": " + child.first_error();
        }
        usleep(100000);
    }
    return name + " did not attach within 600 s";
}

namespace {

// Starts a tool and waits until it attached to the function (with `ops`
// > 1: until that many ftrace_ops want the site).
std::string start_tool(Context& c, Attachment& a, const std::vector<std::string>& argv,
                       std::string name = "", long ops = 1) {
    if (name.empty()) {
        name = argv[0];
    }
    return start_tool(c, a, argv, name,
                      [&c, ops] { return ops > 1 ? ops_on(c) >= ops : attached(c); });
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

// Where a tool writes {"events": N, "lost": M} when it stops (fhook's
// --summary-json), read for the lost column (fhook_lost).
const std::string& summary_file(Attachment& a) {
    a.summary = "/tmp/fhook-bench-summary-" + std::to_string(getpid()) + ".json";
    a.remove.push_back(a.summary);
    return a.summary;
}

std::string start_fhook(Context& c, Attachment& a, std::vector<std::string> args, long ops = 1) {
    args.insert(args.begin(), c.opt.fhook);
    if (args[1] == "trace" || args[1] == "record" || args[1] == "hook") {
        args.push_back("--buffer-size");
        args.push_back(ring_kib(c, true));
        args.push_back("--summary-json");
        args.push_back(summary_file(a));
    }
    args.push_back("--duration");
    args.push_back(kForever);
    return start_tool(c, a, args, "fhook", ops);
}

// fhook latency FUNC --listen, its endpoint fetched by a Scraper.
std::string start_scraped(Context& c, Attachment& a, const std::string& function) {
    const std::string address = "127.0.0.1:9190";
    std::string why = start_tool(
        c, a, {c.opt.fhook, "latency", "--quiet", "--listen", address, "-d", kForever, function},
        "fhook",
        [&c, function] { return !read_enabled_functions(c.opt.tracefs, function).empty(); });
    if (why.empty()) {
        a.scraper = std::make_unique<Scraper>("http://" + address, std::chrono::milliseconds(10));
    }
    return why;
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

// No reader at all (the producer's cost alone, what issue 21's peers
// pay with nothing consuming): the workload CPU's buffer holds the warm-up
// and every repeat (ftrace's lost column shows any overrun).
void keep_unread(Context& c, Attachment& a) {
    const std::string size =
        c.opt.tracefs + "/per_cpu/cpu" + std::to_string(c.opt.workload_cpu) + "/buffer_size_kb";
    if (keep_buffer_size(a, size)) {
        write_file(size, std::to_string(std::stoull(ring_kib(c)) * 4) + "\n");
    }
}

void function_tracer(Context& c, Attachment& a) {
    write_file(c.opt.tracefs + "/set_ftrace_filter", c.function + "\n");
    a.undo_trunc.emplace_back(c.opt.tracefs + "/set_ftrace_filter", "\n");
    write_file(c.opt.tracefs + "/current_tracer", "function\n");
    a.undo_trunc.emplace_back(c.opt.tracefs + "/current_tracer", "nop\n");
    write_file(c.opt.tracefs + "/tracing_on", "1\n");
}

std::string kprobe_event(Context& c, Attachment& a, const std::string& def,
                         const std::string& event, bool reader = true) {
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
    if (reader) {
        drain_trace_pipe(c, a);
    } else {
        keep_unread(c, a);
    }
    return "";
}

// A kprobe event with a hist trigger and nothing else: the trigger puts
// the event in soft-disabled mode (triggers run, nothing is written to
// the trace buffer), the way a hist user runs it.
std::string kprobe_hist(Context& c, Attachment& a, const std::string& def, const std::string& event,
                        const std::string& trigger) {
    try {
        write_file(c.opt.tracefs + "/kprobe_events", def + "\n", true);
    } catch (const Error& e) {
        return e.what();
    }
    a.undo.emplace_back(c.opt.tracefs + "/kprobe_events", "-:fhookbench/" + event + "\n");
    const std::string file = c.opt.tracefs + "/events/fhookbench/" + event + "/trigger";
    write_file(file, trigger + "\n", true);
    a.undo.emplace_back(file, "!" + trigger + "\n");
    return "";
}

// Where `fhook record` writes, as trace-cmd does (tmpfs in the VM: both
// pay for the copies into the page cache); removed afterwards.
std::string record_file(Attachment& a) {
    a.remove.emplace_back("/tmp/fhook-bench-record.fhk");
    return a.remove.back();
}

// the same fetch arguments for kprobe_events and fhook: the first two
// argument registers, the third (registers, not $argN: some rows probe
// inside the function, where kprobe_events takes no $argN), and the rows'
// words for the CPU's breakpoint and ftrace's patch site
#ifdef __aarch64__
#define BENCH_R1 "%x0"
#define BENCH_R2 "%x1"
#define BENCH_R3 "%x2"
#define BENCH_BRK "brk"
#define BENCH_SITE "patchable entry"
#else
#define BENCH_R1 "%di"
#define BENCH_R2 "%si"
#define BENCH_R3 "%dx"
#define BENCH_BRK "int3"
#define BENCH_SITE "fentry site"
#endif
constexpr const char* kTwoArgs = "a=" BENCH_R1 ":u64 b=" BENCH_R2 ":u64";
constexpr const char* kThirdArg = " n=" BENCH_R3 ":u64";

std::string qualified(const Context& c, char sep) {
    return c.module.empty() ? c.function : c.module + sep + c.function;
}

const Mechanism kMechanisms[] = {
    {"baseline", "none", "nothing attached", [](Context&, Attachment&) { return std::string(); }},
    {"ftrace-function", "ftrace", "the kernel's function tracer on FUNC, cat trace_pipe",
     [](Context& c, Attachment& a) {
         function_tracer(c, a);
         drain_trace_pipe(c, a);
         return std::string();
     }},
    {"ftrace-function-noreader", "ftrace",
     "the kernel's function tracer on FUNC, nothing reading (the writer's cost alone)",
     [](Context& c, Attachment& a) {
         function_tracer(c, a);
         keep_unread(c, a);
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
    {"ftrace-function-graph", "ftrace",
     "the kernel's function_graph tracer, set_graph_function FUNC, max_graph_depth 1, cat "
     "trace_pipe (what perf-tools funcgraph -m 1 runs)",
     [](Context& c, Attachment& a) {
         write_file(c.opt.tracefs + "/set_graph_function", c.function + "\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/set_graph_function", "\n");
         write_file(c.opt.tracefs + "/max_graph_depth", "1\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/max_graph_depth", "0\n");
         write_file(c.opt.tracefs + "/current_tracer", "function_graph\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/current_tracer", "nop\n");
         write_file(c.opt.tracefs + "/tracing_on", "1\n");
         drain_trace_pipe(c, a);
         return std::string();
     }},
    {"trace-cmd-function-graph", "trace-cmd",
     "trace-cmd record -p function_graph -g FUNC --max-graph-depth 1 (binary, to a file)",
     [](Context& c, Attachment& a) {
         keep_buffer_size(a, c.opt.tracefs + "/buffer_size_kb");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/set_graph_function", "\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/max_graph_depth", "0\n");
         a.undo_trunc.emplace_back(c.opt.tracefs + "/current_tracer", "nop\n");
         const std::string out = "/tmp/fhook-bench-trace-cmd-graph.dat";
         a.remove.push_back(out);
         return start_tool(c, a,
                           {c.opt.trace_cmd, "record", "-q", "-p", "function_graph", "-g",
                            c.function, "--max-graph-depth", "1", "-o", out},
                           "trace-cmd");
     }},
    {"kprobe-events", "kprobe_events", "kprobe_events 'p FUNC', cat trace_pipe",
     [](Context& c, Attachment& a) {
         return kprobe_event(c, a, "p:fhookbench/e " + c.function, "e");
     }},
    {"kprobe-events-2args", "kprobe_events",
     "kprobe_events 'p FUNC a=" BENCH_R1 " b=" BENCH_R2 "', cat trace_pipe",
     [](Context& c, Attachment& a) {
         return kprobe_event(c, a, "p:fhookbench/a " + c.function + " " + kTwoArgs, "a");
     }},
    {"kprobe-events-2args-noreader", "kprobe_events",
     "kprobe_events 'p FUNC a=" BENCH_R1 " b=" BENCH_R2
     "', nothing reading (the writer's cost alone)",
     [](Context& c, Attachment& a) {
         return kprobe_event(c, a, "p:fhookbench/a " + c.function + " " + kTwoArgs, "a", false);
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
    {"hist-trigger-count", "kprobe_events",
     "kprobe_events 'p FUNC' with 'hist:keys=common_pid' (the kernel's hist trigger, no reader)",
     [](Context& c, Attachment& a) {
         return kprobe_hist(c, a, "p:fhookbench/h " + c.function, "h", "hist:keys=common_pid");
     }},
    {"hist-trigger-sum", "kprobe_events",
     "kprobe_events 'p FUNC n=" BENCH_R3 "' with 'hist:keys=common_pid:vals=n'",
     [](Context& c, Attachment& a) {
         return kprobe_hist(c, a, "p:fhookbench/s " + c.function + kThirdArg, "s",
                            "hist:keys=common_pid:vals=n");
     }},
    {"hist-trigger-log2", "kprobe_events",
     "kprobe_events 'p FUNC n=" BENCH_R3 "' with 'hist:keys=n.log2'",
     [](Context& c, Attachment& a) {
         return kprobe_hist(c, a, "p:fhookbench/l " + c.function + kThirdArg, "l",
                            "hist:keys=n.log2");
     }},
    {"bpftrace-count-key", "bpftrace", "bpftrace 'kfunc:FUNC { @[pid] = count(); }'",
     [](Context& c, Attachment& a) {
         return start_tool(
             c, a,
             {c.opt.bpftrace, "-e", "kfunc:" + qualified(c, ':') + " { @n[pid] = count(); }"});
     }},
    {"bpftrace-sum-key", "bpftrace", "bpftrace 'kprobe:FUNC { @[pid] = sum(arg2); }'",
     [](Context& c, Attachment& a) {
         return start_tool(
             c, a, {c.opt.bpftrace, "-e", "kprobe:" + c.function + " { @s[pid] = sum(arg2); }"});
     }},
    {"bpftrace-hist-log2", "bpftrace", "bpftrace 'kprobe:FUNC { @ = hist(arg2); }'",
     [](Context& c, Attachment& a) {
         return start_tool(
             c, a, {c.opt.bpftrace, "-e", "kprobe:" + c.function + " { @h = hist(arg2); }"});
     }},
    {"fhook-hist-count", "fhook", "fhook hist FUNC 'keys=common_pid' (the table in the module)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"hist", "-q", c.function, "keys=common_pid"});
     }},
    {"fhook-hist-sum", "fhook",
     "fhook hist 'p FUNC n=" BENCH_R3
     ":u64' 'keys=common_pid:vals=n' (kprobe, the table in the module)",
     [](Context& c, Attachment& a) {
         return start_fhook(
             c, a,
             {"hist", "-q", "p:fhookbench/s " + c.function + kThirdArg, "keys=common_pid:vals=n"});
     }},
    {"fhook-hist-log2", "fhook",
     "fhook hist 'p FUNC n=" BENCH_R3 ":u64' 'keys=n.log2' (kprobe, the table in the module)",
     [](Context& c, Attachment& a) {
         return start_fhook(
             c, a, {"hist", "-q", "p:fhookbench/l " + c.function + kThirdArg, "keys=n.log2"});
     }},
    {"funclatency", "libbpf-tools", "libbpf-tools funclatency FUNC (entry+exit histogram)",
     [](Context& c, Attachment& a) {
         // (its MODULE:FUNC means a library's function)
         return start_tool(c, a, {c.opt.funclatency, c.function});
     }},
    {"bpf-ringbuf-stream", "libbpf",
     "libbpf: an fentry program writes 32 bytes (time, pid/tgid, ip) a call to a BPF ring "
     "buffer, read by ring_buffer__poll()",
     [](Context& c, Attachment& a) {
         return start_tool(c, a, {c.opt.bpf_stream, "-s", summary_file(a), c.function});
     }},
    {"fhook-ops-count", "fhook", "fhook count --via ops (ftrace_ops callback, per-CPU counter)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"count", "--via", "ops", c.function});
     }},
    {"fhook-direct-count", "fhook", "fhook count --via direct (counting trampoline)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"count", "--via", "direct", c.function});
     }},
    {"fhook-ops-count-shared", "fhook",
     "two fhook count --via ops: a site two ops want calls ftrace's list function, which calls "
     "both callbacks",
     [](Context& c, Attachment& a) {
         const std::vector<std::string> count = {"count", "--via", "ops", c.function};
         std::string why = start_fhook(c, a, count);
         return why.empty() ? start_fhook(c, a, count, 2) : why;
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
    {"fhook-ops-record-null", "fhook",
     "fhook record --via ops -o /dev/null (the records read and written nowhere: the reader "
     "without a file system)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"record", "-o", "/dev/null", "--via", "ops", c.function});
     }},
    {"fhook-direct-record", "fhook", "fhook trace --via direct (recording trampoline)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"trace", "--via", "direct", c.function});
     }},
    // (issue 47's "before": the direct path's binary rows)
    {"fhook-direct-record-raw", "fhook",
     "fhook record --via direct (the C recorder behind fhook's trampoline, to a file in /tmp)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"record", "-o", record_file(a), "--via", "direct", c.function});
     }},
    {"fhook-direct-record-null", "fhook",
     "fhook record --via direct -o /dev/null (the C recorder behind fhook's trampoline, read and "
     "written nowhere)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"record", "-o", "/dev/null", "--via", "direct", c.function});
     }},
    {"fhook-kprobe-2args", "fhook",
     "fhook trace 'p FUNC a=" BENCH_R1 " b=" BENCH_R2 "' (fhook's ftrace_ops at the " BENCH_SITE
     ")",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"trace", "p:fhookbench/a " + c.function + " " + kTwoArgs});
     }},
    {"fhook-kprobe-2args-raw", "fhook",
     "fhook record 'p FUNC a=" BENCH_R1 " b=" BENCH_R2 "' (to a file in /tmp, not formatted)",
     [](Context& c, Attachment& a) {
         return start_fhook(
             c, a,
             {"record", "-o", record_file(a), "p:fhookbench/a " + c.function + " " + kTwoArgs});
     }},
    {"fhook-kprobe-2args-direct-raw", "fhook",
     "fhook record --via direct 'p FUNC a=" BENCH_R1 " b=" BENCH_R2
     "' (fhook's direct trampoline: the assembly recorder, to a file in /tmp)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a,
                            {"record", "-o", record_file(a), "--via", "direct",
                             "p:fhookbench/a " + c.function + " " + kTwoArgs});
     }},
    {"fhook-kprobe-int3", "fhook",
     "fhook trace 'p FUNC+OFF a=" BENCH_R1 " b=" BENCH_R2 "' (" BENCH_BRK ", after the " BENCH_SITE
     ")",
     [](Context& c, Attachment& a) {
         if (!c.int3_offset) {
             return "no instruction after the " BENCH_SITE ": " + c.int3_why;
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
    {"scrape-baseline", "fhook",
     "nothing on FUNC: fhook latency --listen on a function never called, fetched every 10 ms "
     "during the loop (what the scrapes cost the workload: wakeups, switches, loopback TCP)",
     [](Context& c, Attachment& a) { return start_scraped(c, a, "fhook_testmod_fail_outer"); }},
    {"fhook-latency-scraped", "fhook",
     "fhook latency --listen FUNC, its /metrics fetched every 10 ms during the loop (the "
     "scrapes' CPU time in the consumer column, not in the figure; compare with scrape-baseline)",
     [](Context& c, Attachment& a) { return start_scraped(c, a, c.function); }},
    {"fhook-graph", "fhook",
     "fhook graph --depth 1 FUNC (return trampoline: entry and return records, the tree as text)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"graph", "--depth", "1", c.function});
     }},
    {"fhook-graph-raw", "fhook",
     "fhook record --graph --depth 1 FUNC (the same records to a file in /tmp, not formatted)",
     [](Context& c, Attachment& a) {
         return start_fhook(
             c, a, {"record", "-o", record_file(a), "--graph", "--depth", "1", c.function});
     }},
    {"fhook-graph-raw-all", "fhook",
     "fhook record --graph --depth 2 FUNC (every function hooked, as function_graph hooks them "
     "at any depth: the other calls pay the check)",
     [](Context& c, Attachment& a) {
         return start_fhook(
             c, a, {"record", "-o", record_file(a), "--graph", "--depth", "2", c.function});
     }},
    {"fhook-errors", "fhook",
     "fhook errors FUNC (every function hooked below it, each call's return watched; the "
     "workload never fails: nothing recorded)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"errors", c.function});
     }},
    {"fhook-errors-args", "fhook",
     "fhook errors --args --lines FUNC (the same, each call's arguments and return address "
     "kept too)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"errors", "--args", "--lines", c.function});
     }},
    {"fhook-trace-around", "fhook", "fhook hook --trace-around (IPMODIFY, record per call)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"hook", "--trace-around", c.function});
     }},
};

} // namespace

std::span<const Mechanism> mechanism_table(std::string_view workload) {
    if (workload == "switch") {
        return sched_mechanism_table();
    }
    if (workload == "timer") {
        return timer_mechanism_table();
    }
    return kMechanisms;
}

} // namespace fhook::bench
