// fhook::Tracer, the trace engine: from probe specs to an armed session
// whose records go to a Sink, until a stop signal, a deadline or
// the end of a command.  What `fhook trace`, `record`, `stat`, `count`,
// `latency` and `hook` share; the commands only parse their options into
// a TraceSpec and print what the Tracer collected.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/session.hpp>
#include <fhook/output/summary.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/ring/ring.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

// What a run collects.
enum class Collect {
    Events,   // records, to the sink
    Counts,   // hit counters (a glob's functions one by one), no records
    Latency,  // one duration histogram per function argument, no records
    Hook,     // an IPMODIFY hook on one function (its records to the sink)
    Wakeup,   // the wakeup latency tracer (TraceSpec::wakeup): its reports to
              // the sink, its histogram by latency()
    Timerlat, // the timer latency tracer (TraceSpec::timerlat): its measures
              // to the sink
    Hwlat,    // the hardware latency detector (TraceSpec::hwlat): its samples
              // to the sink
    Osnoise,  // the operating system noise tracer (TraceSpec::osnoise): its
              // periods (and gaps) to the sink
    Irqsoff,  // the irqsoff tracers (TraceSpec::irqsoff): their reports to
              // the sink
};

// How function arguments attach.
enum class Attach {
    Ops,    // an ftrace_ops callback
    Direct, // fhook's trampoline through the direct-call API
    Kprobe, // one kprobe per function (names only)
};
const char* attach_name(Attach attach); // "ops", "direct", "kprobe"

// Collect::Hook: the action and its conditions.
struct HookSpec {
    fhook_hook hook{};           // action, retval, nth/every/times/probability, flags
    std::string redirect;        // FHOOK_HOOK_REDIRECT: the function called instead
    std::string comm;            // only tasks of this name ("" = any)
    bool check_prototype = true; // REDIRECT: refuse unless BTF shows the same prototype
};

// Collect::Events with the function arguments as a call graph's functions
// (fhook graph) instead of a function probe.
struct GraphSpec {
    std::uint32_t depth = 0;          // max_graph_depth, 0 = no limit
    std::vector<std::string> notrace; // set_graph_notrace globs
    bool no_irqs = false;
    bool args = false;
    bool errors = false;      // no calls: the chains of calls that failed (fhook errors)
    bool false_fails = false; // ... and a bool function returning false fails
    std::string fail;         // ... or an entry fails when this filter holds ("ret < 0")
    bool ustack = false;      // ... each chain with its task's user stack
    bool callsites = false;   // ... each frame with where it was called from
    // the functions watched below the graph's (globs), empty: all
    std::vector<std::string> watch;
    std::uint64_t threshold_ns = 0;
    std::uint32_t tasks = 0; // shadow stacks, 0 = the module's default
};

// Collect::Wakeup: which tasks (the kernel's wakeup, wakeup_rt, wakeup_dl)
// and what is reported.
struct WakeupSpec {
    std::uint32_t wclass = FHOOK_WAKEUP_ALL; // enum fhook_wakeup_class
    std::uint64_t threshold_ns = 0;          // every tracked wakeup this long, 0: new maxima
    // the histogram per task as well (Tracer::task_latencies): by process
    // (tgid, runqlat -P) or thread (pid, runqlat -L)
    enum class PerTask { None, Process, Thread } per_task = PerTask::None;
    // the tracked wakeups reported; off: the histograms only (top, hist)
    bool reports = true;
    bool stack = false; // ... with their waker's stacks (named)
    // ... with the function calls on the tracked task's CPU from its wakeup
    // to the switch (the kernel tracer's function trace): these globs, as
    // a function probe's (FunctionProbeOptions::wakeup_cpu); none: off
    std::vector<std::string> functions;
};

// The kernel's name of the wakeup tracer of `wclass` (enum
// fhook_wakeup_class): "wakeup", "wakeup_rt" or "wakeup_dl".
const char* wakeup_tracer_name(std::uint32_t wclass);

// Collect::Timerlat: struct fhook_timerlat's fields (period, priority,
// stop thresholds); the session's CPUs are the CPUs measured.
using TimerlatSpec = fhook_timerlat;
// Collect::Hwlat: struct fhook_hwlat's fields (window, width, threshold);
// the session's CPUs are the CPUs sampled.
using HwlatSpec = fhook_hwlat;
// Collect::Osnoise: struct fhook_osnoise's fields (period, runtime,
// threshold, stops, priority); the session's CPUs are the CPUs measured.
using OsnoiseSpec = fhook_osnoise;
// Collect::Irqsoff: the kinds watched and the threshold, and the tracer's
// name (irqsoff, preemptoff, preemptirqsoff).
struct IrqsoffSpec {
    fhook_irqsoff cfg{};
    std::string tracer = "irqsoff";
};

// Everything a run is asked to do.
struct TraceSpec {
    Collect collect = Collect::Events;
    // Function globs (one function probe; Counts/Latency: one each) and
    // probe definitions; Hook: the function, then its fields.
    std::vector<std::string> probes;
    // Trace events by -e pattern (select_trace_events()): SUBSYS:EVENT,
    // SUBSYS or EVENT, globs allowed; each a t:SUBSYS:EVENT definition.
    std::vector<std::string> events;
    std::string filter; // for probes without their own "if"
    bool stack = false;
    bool need_symbols = false; // fail unless kallsyms can be read (a record file keeps them)
    std::vector<std::string> triggers; // "EVENT=ACTION[:N] [if FILTER]"
    std::vector<pid_t> pids;           // only these processes (empty: all)
    std::optional<std::set<int>> cpus;
    RingRequest ring;
    std::optional<double> duration; // seconds of tracing, from the arming on
    std::optional<double> interval; // TraceObserver::on_interval every SEC
    bool print_on_sigusr1 = false;  // TraceObserver::on_print_request on SIGUSR1
    std::optional<double> tick;     // TraceObserver::on_tick every SEC
    Attach attach = Attach::Ops;
    std::vector<std::string> command; // run it, trace only it and its children
    HookSpec hook;
    std::optional<GraphSpec> graph;
    WakeupSpec wakeup;
    TimerlatSpec timerlat{};
    HwlatSpec hwlat{};
    OsnoiseSpec osnoise{};
    IrqsoffSpec irqsoff;
};

// Where the system's state is read; the defaults are the live system's.
struct SystemPaths {
    std::string device = FHOOK_DEVICE_PATH;
    std::string kallsyms = "/proc/kallsyms";
    std::string functions; // available_filter_functions; "" = tracefs's
    std::string tracefs;   // "" = /sys/kernel/tracing or the debugfs one
    std::string ftrace_enabled = "/proc/sys/kernel/ftrace_enabled"; // the sysctl
    // Opens the device (a fake kernel in tests); unset: Device(device).
    std::function<Device()> open_device;
};

// Where the records of a run go (printed, written to a file, discarded).
class Sink {
public:
    virtual ~Sink() = default;
    virtual void on_record(const fhook_rec* rec) = 0;
    // A pass's records in time order (RingMerger::drain_batch()):
    // on_record() each, but for a sink that takes them faster at once.
    virtual void on_records(std::span<const fhook_rec* const> recs) {
        for (const fhook_rec* rec : recs) {
            on_record(rec);
        }
    }
    // A sink that wants a pass's records as each CPU's span of the ring
    // (unsorted, RingMerger::drain_spans) says so here; then on_pass()
    // gets the passes and on_record() only the synthetic LOST records.
    virtual bool takes_spans() const { return false; }
    virtual void on_pass(std::span<const RingSpan> spans) { (void)spans; }
    virtual void flush() {}
    // The sink has what it wanted (a tracer's stop): run() ends.
    virtual bool done() const { return false; }
    // After the last record: `probes` with their final statistics.
    virtual void finish(const Stats& session, const std::vector<ProbeSummary>& probes) {
        (void)session;
        (void)probes;
    }
};

// A sink of decoded events: on_record() decodes each record once (task
// names from COMM records, a leaf's entry and return) and gives each
// event to on_event(); a replay (replay.hpp) gives it the events it
// decoded and filtered itself.
class EventSink : public Sink {
public:
    void on_record(const fhook_rec* rec) override;
    virtual void on_event(const Event& ev) = 0;

protected:
    Decoder& decoder() noexcept { return decoder_; }

private:
    Decoder decoder_;
    Event event_; // reused: its buffers stay allocated
};

// What happens while a run goes on, for a front end to show.
class TraceObserver {
public:
    virtual ~TraceObserver() = default;
    // A snapshot (SIGUSR2, or a snapshot trigger when `triggered`) read
    // `records` records.
    virtual void on_snapshot(unsigned number, bool triggered, std::size_t records) {
        (void)number;
        (void)triggered;
        (void)records;
    }
    // TraceSpec::interval elapsed.
    virtual void on_interval() {}
    // SIGUSR1 came (TraceSpec::print_on_sigusr1): show what there is so far.
    virtual void on_print_request() {}
    // TraceSpec::tick elapsed: a look at what there is, nothing printed.
    virtual void on_tick() {}
};

// What a run is doing while it takes long (reading kallsyms or BTF,
// arming tens of thousands of functions), for a front end to show: a
// phrase ("arming 48,211 functions"), then "" once it is done.
using Progress = std::function<void(const std::string& doing)>;

class Tracer {
public:
    // Plans the run: parses the probes and reads what they need (BTF,
    // kallsyms, available_filter_functions, tracefs) before any device is
    // touched.  Invalid or Runtime Errors name the probe and why.
    // `progress` (optional) hears about the slow steps up to start().
    Tracer(TraceSpec spec, SystemPaths paths, Progress progress = {});
    ~Tracer();
    Tracer(const Tracer&) = delete;
    Tracer& operator=(const Tracer&) = delete;

    // Functions a latency probe leaves out ("NAME: why"), known once planned.
    const std::vector<std::string>& skipped() const noexcept;

    // Opens the session, adds the probes, triggers and filters, maps the
    // rings; the command (if any) is forked and held.  Stop signals are
    // blocked from here on and read by run().
    void setup();
    // The number of per-CPU rings (after setup()).
    std::size_t nr_rings() const;
    // Symbols for formatting: complete once start() returned.
    const Ksyms& ksyms() const noexcept;
    const ProbeTable& probe_table() const noexcept;
    // The kernel's BTF and a module's (split on it), read once; null where
    // there is none.
    const KernelBtf* kernel_btf() const;
    const KernelBtf* module_btf(const std::string& module) const;
    // Each probe with its description (canonical definitions for record
    // files) and, for tracepoints, the event format.
    const std::vector<ProbeSummary>& probes() const noexcept;
    std::vector<std::pair<std::uint32_t, std::string>> recorded_probes() const;
    std::vector<RecordedEvent> recorded_events() const;

    // Arms the probes (EBUSY explained from tracefs: who holds the
    // functions), releases the command; --duration starts now.
    void start();
    // Streams records to `sink` until a stop signal, the deadline, the
    // command's exit or the sink's done(); then disarms, drains everything and calls
    // sink.finish().
    void run(Sink& sink, TraceObserver& observer);

    // After run(): per probe totals (filtered from the stats area).
    std::vector<StatRow> stat_rows() const;
    // Collect::Counts, live: each function's hits so far (a glob's
    // functions one by one, those with hits; a name's or --via direct's
    // probe one row, its total, even 0), in probe order.
    std::vector<CountRow> count_rows() const;
    // A latency probe's or tracer's histogram now, summed over CPUs or
    // `cpu`'s.
    LatencyHist latency(std::uint32_t probe_id, std::optional<unsigned> cpu = {}) const;
    // The wakeup tracer's histograms per task (WakeupSpec::per_task).
    Session::TaskLatencies task_latencies(std::uint32_t probe_id) const;
    // Whether the module has a feature (after setup()).
    bool has_feature(std::uint64_t feature) const;
    // Between setup() and start(): the probe's hits go into a table in the
    // module (Session::set_hist); hist() reads it, any time after.
    void set_hist(const fhook_hist_set& hist);
    Session::HistRead hist(std::uint32_t probe_id, std::uint32_t table = 0) const;
    Stats stats(std::uint32_t probe_id = FHOOK_STATS_SESSION) const;
    // The command's wait status (waitpid(2)) once it has exited (127 when it
    // could not be executed); nullopt without a command or while it runs.
    std::optional<int> command_status();

private:
    struct State;
    std::unique_ptr<State> s_;
};

} // namespace fhook
