// `fhook bench`: the cost per hit of every way of hooking one function,
// fhook's and its peers' (the kernel's function tracer, kprobe_events,
// bpftrace, libbpf-tools), measured on the same workload in one boot
// (docs/benchmarks.md).  This header holds the results model and its
// renderings (table, JSON, SVG plot); running the mechanisms is in run().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fhook::bench {

// ns per hit of repeated measurements of one mechanism
struct Sample {
    double median = 0;
    double min = 0;
    double max = 0;
};

// The median, smallest and largest of `values` (not empty).
Sample summarize(std::vector<double> values);

struct Row {
    std::string name;        // "fhook-ops-count", "ftrace-function", "baseline"
    std::string tool;        // fhook, ftrace, kprobe_events, bpftrace, libbpf-tools, none
    std::string description; // what is attached and who consumes
    std::vector<double> ns;  // ns per hit of each repeat; empty when skipped
    std::string skipped;     // why there is no figure
    // of `ns`, the consumer processes' CPU time per hit (their tasks'
    // sum_exec_runtime, /proc/PID/task/*/schedstat), each repeat; empty
    // when nothing consumes in userspace (baseline) or not known
    std::vector<double> consumer_ns;
    // the fraction of the events its consumer never got (ring overflow),
    // where the tool says: fhook's summary, ftrace's per-CPU overruns
    std::optional<double> lost;
    bool measured() const noexcept { return !ns.empty(); }
    Sample sample() const { return summarize(ns); }
};

struct Results {
    std::string kernel;   // uname -r
    unsigned cpus = 0;    // online CPUs
    std::string workload; // kloop | read | switch | timer
    std::string function; // the hooked function
    std::uint64_t calls = 0;
    unsigned repeats = 0;
    std::string clock; // "CLOCK_MONOTONIC" or what the driver says (-icount)
    std::vector<Row> rows;

    const Row* find(std::string_view name) const;
    // median ns per hit of `name` minus the baseline's; nullopt when
    // either was not measured
    std::optional<double> overhead(std::string_view name) const;
    // overhead(name) / overhead(reference)
    std::optional<double> ratio(std::string_view name, std::string_view reference) const;
};

// The per-hit targets: overhead(row) <= limit x overhead(reference).
struct Target {
    std::string what;
    std::string row;
    std::string reference;
    double limit = 0;
    std::optional<double> ratio; // nullopt: one side not measured or lossy
    std::string lossy;           // the side that lost events ("": none)
    bool met() const noexcept { return ratio && *ratio <= limit; }
};
std::vector<Target> targets(const Results& results);

std::string render_text(const Results& results);
std::string render_json(const Results& results);
// Reads what render_json wrote; a Invalid Error naming `what` otherwise.
Results parse_json(std::string_view text, std::string_view what);
// A horizontal bar chart of the overhead per mechanism, one bar per
// results set (kernel) and mechanism.
std::string render_svg(const std::vector<Results>& sets);

// ------------------------------------------------------------------ run
struct RunOptions {
    // kloop (fhook_testmod's loop) | read (/dev/zero) | switch (a pipe
    // ping-pong with a SCHED_FIFO child: the scheduler's latency tracers)
    // | timer (a busy loop under the timer latency tracers)
    std::string workload = "kloop";
    std::string function;    // default: fhook_testmod_nop | vfs_read
    std::uint64_t calls = 0; // default: 200,000
    unsigned repeats = 3;
    int workload_cpu = 0;
    int consumer_cpu = -1;         // -1: the last online CPU
    double settle = 2;             // seconds of quiet before the first figure
    std::vector<std::string> only; // row names (globs); empty = all
    std::string fhook = "/proc/self/exe";
    std::string bpftrace = "bpftrace";
    std::string funclatency = "funclatency";
    std::string runqlat = "runqlat";
    // vmtests/bench/fhook-bench-stream (libbpf: fentry to a BPF ring buffer)
    std::string bpf_stream = "fhook-bench-stream";
    std::string trace_cmd = "trace-cmd";
    std::string tracefs; // required
    std::string clock;   // what Results::clock says
    std::function<void(std::string_view)> progress;
};

// The rows run() knows, in order: name and description.
std::vector<std::pair<std::string, std::string>> mechanisms();

// Measures every selected mechanism in turn.  Mechanisms that cannot run
// here (no bpftrace, no BTF for fentry, ...) are rows with `skipped` set;
// a broken environment (no tracefs, no workload) is a Runtime Error.
Results run(const RunOptions& options);

} // namespace fhook::bench
