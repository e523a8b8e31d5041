// fhook bench: the latency tracers' mechanisms.  The switch workload's (a
// ping-pong through two pipes: run.cpp) are the scheduler's tracers, each
// on the sched_wakeup/sched_switch tracepoints: fhook's wakeup tracer and
// runqlat-style histogram, the kernel's wakeup_rt tracer where the kernel
// has it (CONFIG_SCHED_TRACER: Debian's PREEMPT_RT kernel), and
// libbpf-tools' runqlat (BCC's runqlat on libbpf).  The timer workload's
// (a busy loop) are the timerlat tracers on its CPU, fhook's and the
// kernel's (CONFIG_TIMERLAT_TRACER), every kTimerPeriodUs.
#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <string>

#include <fhook/bench/mechanisms.hpp>
#include <fhook/core/device.hpp>

namespace fhook::bench {

namespace {

constexpr const char* kForever = "86400";
constexpr unsigned kTimerPeriodUs = 100;

// Has another session than the one this opens come up (the tool's)?  Its
// probe is added right after: the settle time covers that.
bool other_session() {
    try {
        return Device().info().nr_sessions >= 2;
    } catch (const Error&) {
        return false;
    }
}

// How many BPF links the process holds (a libbpf tool holds one per
// attached program).
int bpf_links(pid_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(dir.c_str());
    if (!d) {
        return 0;
    }
    int n = 0;
    while (const dirent* e = readdir(d)) {
        char target[PATH_MAX];
        const ssize_t len = readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
        if (len > 0 &&
            std::string_view(target, static_cast<std::size_t>(len)) == "anon_inode:bpf_link") {
            n++;
        }
    }
    closedir(d);
    return n;
}

std::string start_fhook(Context& c, Attachment& a, std::vector<std::string> args) {
    args.insert(args.begin(), c.opt.fhook);
    args.insert(args.end(), {"--quiet", "--duration", kForever});
    return start_tool(c, a, args, "fhook", other_session);
}

// A tracefs file's value, written back when the row is done.
void keep(Attachment& a, const std::string& path) {
    const std::string old = read_text_file(path);
    a.undo_trunc.emplace_back(path, old.empty() ? "\n" : old);
}

// The kernel's tracer `name` made current and tracing on, both undone.
void start_tracer(Attachment& a, const std::string& t, const std::string& name) {
    keep(a, t + "/tracing_on");
    write_file(t + "/current_tracer", name + "\n");
    a.undo_trunc.emplace_back(t + "/current_tracer", "nop\n");
    write_file(t + "/tracing_on", "1\n");
}

// The kernel's wakeup_rt tracer without its function tracing (fhook's
// has none unless asked), every new maximum kept in its snapshot buffer.
std::string kernel_wakeup_rt(Context& c, Attachment& a) {
    const std::string& t = c.opt.tracefs;
    if (read_text_file(t + "/available_tracers").find("wakeup_rt") == std::string::npos) {
        return "the kernel has no wakeup_rt tracer (CONFIG_SCHED_TRACER)";
    }
    keep(a, t + "/options/function-trace");
    write_file(t + "/options/function-trace", "0\n");
    write_file(t + "/tracing_max_latency", "0\n");
    start_tracer(a, t, "wakeup_rt");
    return "";
}

// The kernel's timerlat tracer on the workload's CPU every
// kTimerPeriodUs, its samples left in the buffer (rtla would read them).
std::string kernel_timerlat(Context& c, Attachment& a) {
    const std::string& t = c.opt.tracefs;
    if (read_text_file(t + "/available_tracers").find("timerlat") == std::string::npos) {
        return "the kernel has no timerlat tracer (CONFIG_TIMERLAT_TRACER)";
    }
    keep(a, t + "/osnoise/cpus");
    keep(a, t + "/osnoise/timerlat_period_us");
    write_file(t + "/osnoise/cpus", std::to_string(c.opt.workload_cpu) + "\n");
    write_file(t + "/osnoise/timerlat_period_us", std::to_string(kTimerPeriodUs) + "\n");
    start_tracer(a, t, "timerlat");
    return "";
}

const Mechanism kSchedMechanisms[] = {
    {"baseline", "none", "nothing attached", [](Context&, Attachment&) { return std::string(); }},
    {"fhook-wakeup-rt", "fhook",
     "fhook wakeup --rt (the wakeup_rt tracer: the woken RT task tracked, each new maximum "
     "recorded)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"wakeup", "--rt"});
     }},
    {"fhook-wakeup-rt-stack", "fhook",
     "fhook wakeup --rt --stack (the same with the waker's stack, as the kernel's tracer always "
     "takes it)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"wakeup", "--rt", "--stack"});
     }},
    {"ftrace-wakeup-rt", "ftrace",
     "the kernel's wakeup_rt tracer, options/function-trace 0 (Debian's RT kernel has it)",
     kernel_wakeup_rt, true},
    {"fhook-wakeup-hist", "fhook",
     "fhook wakeup hist (every task's run-queue latency, a log2 histogram in the module)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a, {"wakeup", "hist"});
     }},
    {"runqlat", "libbpf-tools",
     "libbpf-tools runqlat (BCC's runqlat: every task's run-queue latency, a BPF histogram)",
     [](Context& c, Attachment& a) {
         Attachment* at = &a;
         return start_tool(c, a, {c.opt.runqlat, "99999999"}, "runqlat", [at] {
             return !at->children.empty() && bpf_links(at->children.back().pid()) >= 3;
         });
     }},
};

const Mechanism kTimerMechanisms[] = {
    {"baseline", "none", "nothing attached", [](Context&, Attachment&) { return std::string(); }},
    {"fhook-timerlat", "fhook",
     "fhook timerlat on the workload's CPU, a period of 100 us (top: its reader keeps the "
     "figures)",
     [](Context& c, Attachment& a) {
         return start_fhook(c, a,
                            {"timerlat", "--cpu", std::to_string(c.opt.workload_cpu), "--period",
                             std::to_string(kTimerPeriodUs), "--interval", kForever});
     }},
    {"ftrace-timerlat", "ftrace",
     "the kernel's timerlat tracer on the workload's CPU, 100 us, nothing reading (Debian's RT "
     "kernel has it)",
     kernel_timerlat, true},
};

} // namespace

std::span<const Mechanism> sched_mechanism_table() {
    return kSchedMechanisms;
}

std::span<const Mechanism> timer_mechanism_table() {
    return kTimerMechanisms;
}

} // namespace fhook::bench
