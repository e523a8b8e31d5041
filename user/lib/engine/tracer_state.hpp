// The inside of fhook::Tracer, shared by its planning (plan.cpp) and its
// running (tracer.cpp) halves.
#pragma once

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>
#include <fhook/engine/tracer.hpp>
#include <fhook/probe/latency_plan.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/probe/spec.hpp>
#include <fhook/ring/ring.hpp>
#include <fhook/sys/btf.hpp>
#include <fhook/sys/command.hpp>
#include <fhook/sys/ksyms.hpp>
#include <fhook/sys/signals.hpp>

namespace fhook {

// Collect::Hook: the definition (fields, filter) and where it goes.
struct HookPlan {
    KprobeDef def;
    std::uint64_t addr = 0;
    std::string func;
};

// Collect::Counts: the probe of one positive FUNC argument.  A glob or
// :mod: argument through an ftrace_ops callback is counted function by
// function (the module's FHOOK_PROBE_F_COUNT_IPS); otherwise the probe's
// hits are one total.
struct CountPlan {
    std::string text;     // the argument
    ProbeRequest request; // what its probe hooks
    bool per_function = false;
    // per_function: each address given and the function at it
    std::map<std::uint64_t, std::pair<std::string, std::string>> names; // name, module
};

struct Tracer::State {
    TraceSpec spec;
    SystemPaths paths;
    Progress progress;
    void say(const std::string& doing) const {
        if (progress) {
            progress(doing);
        }
    }

    // ---- the plan (plan.cpp)
    std::optional<KernelBtf> btf; // loaded when a definition names kernel types
    bool btf_tried = false;
    std::map<std::string, std::optional<KernelBtf>> module_btfs; // split on `btf`
    std::vector<KprobeDef> kprobes;                              // definitions, in order
    std::optional<HookPlan> hook;
    std::vector<ProbeSpec> specs; // the function globs
    bool need_resolution = false; // :mod: specs, slices: kallsyms before the request
    Ksyms ksyms;                  // the formatters refer to this object
    std::future<Ksyms> ksyms_loading;
    std::optional<FunctionList> functions;
    std::vector<LatencyStackPlan> latency_plans;     // one per spec
    std::vector<CountPlan> count_plans;              // one per positive spec
    ProbeRequest request;                            // all specs as one function probe
    std::optional<ProbeRequest> graph_below_request; // a call graph's callees, sliced
    ErrorsTypes errors_types;                        // fhook errors: what fails, by type
    std::vector<fhook_insn> fail_pred;               // ... and by the entry's filter
    std::vector<std::string> skipped;

    const KernelBtf* kernel_btf();
    const KernelBtf* module_btf(const std::string& module);
    BtfProvider btf_provider() {
        return [this] { return kernel_btf(); };
    }
    SymbolResolver kallsyms_resolver() const {
        return
            [path = paths.kallsyms](std::string_view name) { return Ksyms::find_any(path, name); };
    }
    void plan();
    std::vector<std::string> plan_probes(bool functions_only);
    void plan_events(bool functions_only);
    std::vector<ProbeSpec> graph_below_specs() const;
    void plan_hook();
    void plan_latency();
    void plan_counts();
    void plan_errors_types(); // (plan_errors.cpp)
    void plan_fail_filter();
    void check_fail_filter();

    // ---- the run (tracer.cpp)
    std::optional<SignalWatch> signals;
    std::optional<HeldCommand> child;
    std::optional<Session> session;
    RingConfig ring;
    std::vector<ProbeSummary> probes;
    std::map<std::uint32_t, const CountPlan*> count_probes; // by probe id
    ProbeTable probe_table;
    std::vector<std::pair<std::uint32_t, std::string>> canonical; // for record files
    std::unique_ptr<RingReader> reader;

    void add_probes();
    void add_triggers();
    void set_filters();
    [[noreturn]] void explain_busy(const Error& e);
};

// /proc/kallsyms at `path`; an empty table (addresses print as numbers)
// when it cannot be read and is not `required`.
Ksyms load_ksyms(const std::string& path, bool required);
// The names of the addresses records carry, asked of the module as they
// are met (FHOOK_IOC_SYMBOLS) instead of read from /proc/kallsyms (seconds
// under emulation): nullopt where it cannot give them (an older module, a
// caller without CAP_SYSLOG).  Asks `session`, which must outlive it.
std::optional<Ksyms> module_ksyms(const Session& session);

} // namespace fhook
