// fhook::Session: one kernel tracing session (one open /dev/fhook).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/device.hpp>
#include <fhook/core/functions.hpp>
#include <fhook/core/latency.hpp>
#include <fhook/core/probe_def.hpp>

namespace fhook {

struct RingConfig {
    std::uint64_t buf_size = 0;  // bytes per CPU (power of two)
    std::uint32_t watermark = 0; // wake-up threshold in bytes
    std::uint32_t nr_cpus = 0;   // number of per-CPU rings
    std::uint64_t mmap_stride = FHOOK_MMAP_STRIDE;
    std::uint32_t flags = 0;         // FHOOK_RING_*
    std::uint32_t wakeup_events = 0; // wake-up threshold in records, 0 = off
    std::uint32_t flush_ms = 0;      // flush timer period
};

// What FHOOK_IOC_RING_SETUP is asked for; 0 = the module's default.
struct RingRequest {
    std::uint64_t bytes = 0;         // per CPU, a power of two
    std::uint32_t watermark = 0;     // bytes
    std::uint32_t wakeup_events = 0; // records
    std::uint32_t flush_ms = 0;
    bool overwrite = false; // flight recorder
};

struct CpuStats {
    std::uint64_t hits = 0;
    std::uint64_t written = 0;
    std::uint64_t lost = 0;
    std::uint64_t missed = 0;
};

struct Stats {
    CpuStats total;
    std::vector<CpuStats> per_cpu; // index = CPU
};

// A kprobe the module accepted.
struct KprobeHandle {
    std::uint32_t id = 0;
    std::uint64_t addr = 0; // the address probed (past an ENDBR at sym+0)
};

// Ring size from KiB per CPU: bytes rounded up to a power of two, at least
// FHOOK_RING_MIN_SIZE.  An Invalid Error (Setting::RingSize) when 0 or above
// the maximum.
std::uint64_t ring_bytes_from_kib(std::uint64_t kib);

// How a function probe attaches and what it records.
struct FunctionProbeOptions {
    enum class Via {
        Ops,    // an ftrace_ops callback (FHOOK_PROBE_FUNC)
        Direct, // fhook's own trampoline through the direct-call API
    };
    Via via = Via::Ops;
    bool count = false; // hits only, no records (FHOOK_PROBE_F_COUNT)
    // with `count`, one counter per function as well (FHOOK_PROBE_F_COUNT_IPS,
    // read with function_counts()): the functions are given by address only
    bool per_function = false;
    bool stack = false;           // a kernel stack with each record
    std::vector<fhook_insn> pred; // a filter on the task (compile_filter(expr, nullptr))
    // records only on the CPU of the session's tracked wakeup, while it is
    // tracked (FHOOK_PROBE_F_WAKEUP_CPU: the wakeup tracers' function trace)
    bool wakeup_cpu = false;
};

// How a kprobe attaches (Session::add_kprobe()).
struct KprobeOptions {
    bool count = false; // hits only, no records (FHOOK_PROBE_F_COUNT)
    // at a function's entry: through one of fhook's direct trampolines where
    // the module can (FHOOK_PROBE_F_DIRECT: the function's one direct call)
    bool direct = false;
};

// A call graph (FHOOK_PROBE_GRAPH): what function_graph's options say.
// fhook errors: the functions for which 0 is a failure too (NULL, false),
// and those none of whose values is one (fhook_graph.zero_ips, none_ips)
struct ErrorsTypes {
    std::vector<std::uint64_t> zero_fails;
    std::vector<std::uint64_t> never_fail;
    std::vector<std::uint64_t> false_fails; // bools that fail with false (false_ips)
};

struct GraphOptions {
    std::uint32_t max_depth = 0;       // max_graph_depth, 0 = the module's limit
    std::vector<std::string> notrace;  // set_graph_notrace globs
    bool no_irqs = false;              // funcgraph-irqs 0
    bool args = false;                 // record the argument registers
    bool errors = false;               // failing call chains only (fhook errors)
    ErrorsTypes types;                 // ... judged by the functions' types
    std::vector<fhook_insn> fail_pred; // ... or the entry's by this filter
    bool ustack = false;               // ... each with the task's user stack
    bool callsites = false;            // ... each frame with where it was called from
    std::uint64_t threshold_ns = 0;    // tracing_thresh
    std::uint32_t max_tasks = 0;       // tasks inside at once, 0 = the module's default
    std::vector<fhook_insn> pred;      // a filter on the task entering the graph
    // the functions traced below the graph's (names and addresses, armed a
    // slice at a time); nullopt: every other one, armed in one step
    std::optional<FunctionSet> below;
};

// All operations map one-to-one onto the ioctls of fhook_abi.h.  Every ioctl
// struct is zero-filled and its `size` set before the call.  Closing the
// session (destructor) disarms and frees everything in the kernel.
class Session {
public:
    explicit Session(const std::string& device_path = FHOOK_DEVICE_PATH);
    explicit Session(Device device);

    const Device& device() const noexcept { return device_; }
    int fd() const noexcept { return device_.fd(); }

    // FHOOK_IOC_RING_SETUP; `bytes` must be a power of two (0 = default),
    // `watermark` 0 = buf_size / 4.  Returns what the module chose.
    RingConfig setup_ring(std::uint64_t bytes, std::uint32_t watermark = 0);
    RingConfig setup_ring(const RingRequest& request);
    const std::optional<RingConfig>& ring() const noexcept { return ring_; }

    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_FUNC or _DIRECT) on `functions`.  A
    // pattern matching nothing -> Runtime Error naming it.
    std::uint32_t add_function_probe(const FunctionSet& functions,
                                     const FunctionProbeOptions& options = {});

    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_GRAPH): every call of `functions`
    // and what they call.  EBUSY (another call graph is armed or draining)
    // comes back at start().
    std::uint32_t add_graph_probe(const FunctionSet& functions, const GraphOptions& options);
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_DIRECT with FHOOK_PROBE_F_LATENCY):
    // the functions' durations into an in-module histogram, read with
    // latency().  `pred` filters the task; `stack_args`: words the
    // trampoline copies for the body (plan_latency_stack()).
    std::uint32_t add_latency_probe(const FunctionSet& functions,
                                    const std::vector<fhook_insn>& pred, std::uint32_t stack_args);
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_WAKEUP): the wakeup latency tracer
    // of class `wclass` (enum fhook_wakeup_class); its tracked wakeups
    // reported as FHOOK_REC_WAKEUP records (new maxima, or every one of at
    // least `threshold_ns` when set), every wakeup into a histogram.
    // `flags`: FHOOK_WAKEUP_F_* (FHOOK_FEAT_WAKEUP_HIST): the histograms
    // alone, nothing tracked or reported; the waker's stacks.
    std::uint32_t add_wakeup_probe(std::uint32_t wclass, std::uint64_t threshold_ns,
                                   std::uint32_t flags = 0);
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_TIMERLAT): the timer latency tracer,
    // `cfg` as struct fhook_timerlat says (size set here); its measures
    // come as FHOOK_REC_TIMERLAT records.
    std::uint32_t add_timerlat_probe(fhook_timerlat cfg);
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_HWLAT): the hardware latency
    // detector, `cfg` as struct fhook_hwlat says; its windows with a gap
    // come as FHOOK_REC_HWLAT records.
    std::uint32_t add_hwlat_probe(fhook_hwlat cfg);
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_OSNOISE): the operating system
    // noise tracer, `cfg` as struct fhook_osnoise says; its periods come as
    // FHOOK_REC_OSNOISE records, its gaps (FHOOK_OSNOISE_EACH) as
    // FHOOK_REC_OSNOISE_NOISE records.
    std::uint32_t add_osnoise_probe(fhook_osnoise cfg);
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_IRQSOFF): the irqsoff tracer for
    // `cfg.kinds` (`tracer` names it in errors); its reports come as
    // FHOOK_REC_IRQSOFF records.  Where this kernel lacks the tracepoints
    // a runtime error says which and why.
    std::uint32_t add_irqsoff_probe(fhook_irqsoff cfg, const std::string& tracer);
    // FHOOK_IOC_LATENCY: a latency probe's or tracer's histogram so far,
    // summed over CPUs or `cpu`'s (FHOOK_FEAT_WAKEUP).
    LatencyHist latency(std::uint32_t probe_id, std::optional<unsigned> cpu = {}) const;

    // FHOOK_IOC_HIST_SET (before start()): the probe's hits go into a
    // table kept in the module, not to the rings; several tables of one
    // probe are set in order (hist.table 0, 1, ...).
    void set_hist(const fhook_hist_set& hist);
    // FHOOK_IOC_HIST_READ: the table so far, its entries as the module
    // lays them out (fhook_hist_read).
    struct HistRead {
        std::vector<std::uint8_t> entries; // nr x elt_size bytes
        std::uint32_t nr = 0;
        std::uint32_t key_size = 0;
        std::uint32_t elt_size = 0;
        std::uint64_t hits = 0;
        std::uint64_t drops = 0;
    };
    HistRead hist(std::uint32_t probe_id, std::uint32_t table = 0) const;

    // FHOOK_IOC_HIST_SET on a wakeup probe (FHOOK_FEAT_WAKEUP_HIST, before
    // start()): its histogram per task as well, keyed by tgid
    // (`per_process`) or pid, at most `entries` (task, bucket) pairs (a
    // power of two); read with task_latencies().
    static constexpr std::uint32_t kTaskHistEntries = 16384;
    void set_wakeup_task_hist(std::uint32_t probe_id, bool per_process,
                              std::uint32_t entries = kTaskHistEntries);
    // What set_wakeup_task_hist() kept so far: a histogram per task id
    // (ascending) with the task's name, and the samples that found the
    // table full.
    struct TaskLatency {
        std::uint32_t id = 0;
        std::string comm;
        LatencyHist hist;
    };
    struct TaskLatencies {
        std::vector<TaskLatency> tasks;
        std::uint64_t drops = 0;
    };
    TaskLatencies task_latencies(std::uint32_t probe_id) const;

    // FHOOK_IOC_COUNTS: a per-function counting probe's functions (ascending
    // addresses, as the module found them) and their hits so far.
    struct FunctionHits {
        std::uint64_t ip = 0;
        std::uint64_t hits = 0;
    };
    std::vector<FunctionHits> function_counts(std::uint32_t probe_id) const;

    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_KPROBE / _KRETPROBE) with the
    // definition's fetch program.  The kernel's refusals (unknown symbol,
    // blacklisted, not an instruction boundary, inside fhook) become a
    // Runtime Error naming the probe and the reason.
    KprobeHandle add_kprobe(const KprobeDef& def, const KprobeOptions& options = {});
    // FHOOK_IOC_PROBE_ADD (FHOOK_PROBE_HOOK) on the function at `addr`
    // (named `name` in errors), with the definition's fetch program and
    // predicate.  EBUSY (another IPMODIFY user or a direct call) and EPERM
    // (lab mode) come back as Runtime Errors with errno() set; the caller
    // explains them (it knows tracefs).
    std::uint32_t add_hook(const KprobeDef& def, std::uint64_t addr, const std::string& name,
                           const fhook_hook& hook);
    // FHOOK_IOC_DIRECT_MODIFY: an armed direct probe to the counting (true)
    // or recording trampoline.
    void direct_modify(std::uint32_t probe_id, bool count);
    // FHOOK_IOC_READ_TEXT: `len` bytes of kernel memory at `addr`.
    std::vector<std::uint8_t> read_text(std::uint64_t addr, std::size_t len) const;
    // FHOOK_IOC_SYMBOLS: the kernel's symbol of each address (%pS), in
    // order, `size` 0 where none.  A Runtime Error with errno EPERM for a
    // caller without CAP_SYSLOG; the device must have FHOOK_FEAT_SYMBOLS.
    std::vector<fhook_symbol> symbols(std::span<const std::uint64_t> addrs) const;

    // FHOOK_IOC_TRIGGER_ADD (before start()).
    void add_trigger(std::uint32_t probe_id, std::uint32_t action, std::uint32_t target_id,
                     std::uint64_t count, const std::vector<fhook_insn>& pred);

    // FHOOK_IOC_PID_FILTER with FHOOK_PIDF_RESET (replaces the set; an empty
    // set turns the pid filter off), plus FHOOK_PIDF_FOLLOW_FORK when
    // `follow_fork` and FHOOK_PIDF_IGNORE_SELF (never record the calling
    // process, i.e. the tracer's own output path) when `ignore_self`.
    void set_pid_filter(const std::vector<pid_t>& pids, bool follow_fork, bool ignore_self = true);

    // FHOOK_IOC_CPU_FILTER.  A CPU >= nr_cpus is a Invalid Error.
    void set_cpu_filter(const std::set<int>& cpus);

    void start(); // FHOOK_IOC_START: arm the probes
    void stop();  // FHOOK_IOC_STOP: disarm; afterwards a drain gets everything

    // FHOOK_IOC_SNAPSHOT: freeze (returns once no probe writes any more) and
    // resume recording.
    void freeze();
    void resume();

    // FHOOK_IOC_STATS for `probe_id` or FHOOK_STATS_SESSION.
    Stats stats(std::uint32_t probe_id = FHOOK_STATS_SESSION) const;

private:
    std::uint32_t add_function_probe(const FunctionSet& functions,
                                     const std::vector<fhook_insn>& pred, std::uint32_t type,
                                     std::uint32_t flags, std::uint32_t stack_args);

    Device device_;
    std::optional<RingConfig> ring_;
};

} // namespace fhook
