#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>

#include "ioctl_args.hpp"
#include "probe_errors.hpp"

namespace fhook {

using ioctl_args::probe_add;
using ioctl_args::probe_arg;
using ioctl_args::user_ptr;
using ioctl_args::zero_init;

namespace {

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) {
            out += ' ';
        }
        out += item;
    }
    return out;
}

// A definition's fetch program (entry part first) and the size of its data.
void set_program(fhook_probe_add& arg, const KprobeDef& def) {
    arg.prog = def.insns.empty() ? 0 : user_ptr(def.insns.data());
    arg.prog_len = static_cast<std::uint32_t>(def.insns.size());
    arg.entry_len = def.entry_len;
    arg.data_size = def.data_size;
}

// A filter's predicate program.
void set_pred(const Device& device, fhook_probe_add& arg, const std::vector<fhook_insn>& pred) {
    if (!pred.empty()) {
        device.require(FHOOK_FEAT_PRED, "filters");
        arg.pred = user_ptr(pred.data());
        arg.pred_len = static_cast<std::uint32_t>(pred.size());
    }
}

} // namespace

std::uint64_t ring_bytes_from_kib(std::uint64_t kib) {
    constexpr std::uint64_t max_kib = FHOOK_RING_MAX_SIZE / 1024;
    if (kib == 0) {
        throw_invalid("{} 0 is too small: give at least 4 (KiB per CPU)", Setting::RingSize);
    }
    if (kib > max_kib) {
        throw_invalid("{} " + std::to_string(kib) + " is too large: the maximum is " +
                          std::to_string(max_kib) + " (KiB per CPU)",
                      Setting::RingSize);
    }
    std::uint64_t bytes = FHOOK_RING_MIN_SIZE;
    while (bytes < kib * 1024) {
        bytes <<= 1;
    }
    return bytes;
}

Session::Session(const std::string& device_path) : device_(device_path) {}

Session::Session(Device device) : device_(std::move(device)) {}

RingConfig Session::setup_ring(std::uint64_t bytes, std::uint32_t watermark) {
    RingRequest request;
    request.bytes = bytes;
    request.watermark = watermark;
    return setup_ring(request);
}

RingConfig Session::setup_ring(const RingRequest& request) {
    device_.require(FHOOK_FEAT_RING_MMAP, "the mmap'd ring buffer");
    const std::uint64_t bytes = request.bytes;
    if (bytes != 0 && (bytes & (bytes - 1)) != 0) {
        throw_invalid("ring size " + std::to_string(bytes) + " is not a power of two: round it up");
    }
    if (request.overwrite) {
        device_.require(FHOOK_FEAT_OVERWRITE, "overwrite (flight recorder) rings");
        if (bytes != 0 && bytes < FHOOK_RING_MIN_OVERWRITE) {
            throw_invalid("overwrite rings need at least " +
                              std::to_string(FHOOK_RING_MIN_OVERWRITE / 1024) +
                              " KiB per CPU: raise the {}",
                          Setting::RingSize);
        }
    }
    if (request.wakeup_events != 0 || request.flush_ms != 0) {
        device_.require(FHOOK_FEAT_FLUSH, "the flush timer and event watermark");
    }
    if (request.flush_ms > FHOOK_FLUSH_MAX_MS) {
        throw_invalid("flush period " + std::to_string(request.flush_ms) + " ms is above the " +
                      std::to_string(FHOOK_FLUSH_MAX_MS) + " ms maximum");
    }
    if (bytes != 0 && request.watermark > bytes) {
        throw_invalid("watermark " + std::to_string(request.watermark) +
                          " bytes is above the ring size " + std::to_string(bytes) +
                          ": lower it or raise the {}",
                      Setting::RingSize);
    }
    fhook_ring_setup arg;
    zero_init(arg);
    arg.flags = request.overwrite ? FHOOK_RING_OVERWRITE : 0;
    arg.buf_size = bytes;
    arg.watermark = request.watermark;
    arg.wakeup_events = request.wakeup_events;
    arg.flush_ms = request.flush_ms;
    if (device_.ioctl(FHOOK_IOC_RING_SETUP, &arg) < 0) {
        throw_ioctl_error("setting up the ring buffer (" + std::to_string(bytes) +
                              " bytes per CPU)",
                          errno, device_.refusal(errno));
    }
    RingConfig config;
    config.buf_size = arg.buf_size;
    config.watermark = arg.watermark;
    config.nr_cpus = arg.nr_cpus;
    config.mmap_stride = arg.mmap_stride != 0 ? arg.mmap_stride : FHOOK_MMAP_STRIDE;
    config.flags = arg.flags;
    config.wakeup_events = arg.wakeup_events;
    config.flush_ms = arg.flush_ms;
    ring_ = config;
    return config;
}

std::uint32_t Session::add_function_probe(const FunctionSet& functions,
                                          const FunctionProbeOptions& options) {
    if (options.count) {
        device_.require(FHOOK_FEAT_COUNT, "counting probes");
    }
    if (options.stack) {
        device_.require(FHOOK_FEAT_STACK, "stack traces");
    }
    const bool direct = options.via == FunctionProbeOptions::Via::Direct;
    std::uint32_t flags =
        (options.count ? FHOOK_PROBE_F_COUNT : 0) | (options.stack ? FHOOK_PROBE_F_STACK : 0);
    if (options.per_function) {
        device_.require(FHOOK_FEAT_COUNT_IPS, "per-function counts");
        if (!options.count || direct || functions.ips.empty() || !functions.filters.empty() ||
            !functions.excludes.empty() || functions.ips.size() > FHOOK_MAX_COUNT_IPS) {
            throw_invalid("per-function counts take a counting ftrace_ops probe on 1 to " +
                          std::to_string(FHOOK_MAX_COUNT_IPS) + " function addresses (" +
                          std::to_string(functions.ips.size()) + " given)");
        }
        flags |= FHOOK_PROBE_F_COUNT_IPS;
    }
    if (options.wakeup_cpu) {
        device_.require(FHOOK_FEAT_WAKEUP_FUNCTION, "the wakeup tracers' function calls");
        if (options.count || direct) {
            throw_invalid("the wakeup tracers' function calls are recorded by an ftrace_ops probe");
        }
        flags |= FHOOK_PROBE_F_WAKEUP_CPU;
    }
    return add_function_probe(functions, options.pred,
                              direct ? FHOOK_PROBE_DIRECT : FHOOK_PROBE_FUNC, flags, 0);
}

std::uint32_t Session::add_graph_probe(const FunctionSet& functions, const GraphOptions& options) {
    device_.require(FHOOK_FEAT_GRAPH, "call graphs");
    if (!functions.excludes.empty()) {
        throw_invalid("'!" + functions.excludes.front() +
                      "': a call graph leaves functions out by its notrace patterns "
                      "(set_graph_notrace)");
    }
    if (functions.filters.empty() && functions.ips.empty()) {
        throw_invalid("a call graph needs at least one function");
    }
    if (!functions.ips.empty()) {
        device_.require(FHOOK_FEAT_FUNC_IPS, "function probes by address (:mod:)");
    }
    const std::string filter = join(functions.filters);
    const std::string notrace = join(options.notrace);
    if (filter.size() > FHOOK_MAX_PATTERN_TEXT || notrace.size() > FHOOK_MAX_PATTERN_TEXT ||
        functions.ips.size() > FHOOK_MAX_IPS) {
        throw_invalid("too many functions or patterns for one call graph");
    }
    fhook_graph graph;
    zero_init(graph);
    graph.size = sizeof(graph);
    graph.flags =
        (options.no_irqs ? FHOOK_GRAPH_F_NO_IRQS : 0) | (options.args ? FHOOK_GRAPH_F_ARGS : 0);
    if (options.errors) {
        device_.require(FHOOK_FEAT_ERRORS, "failing call chains");
        if (options.threshold_ns) {
            throw_invalid("failing call chains record no calls: no threshold");
        }
        if (options.args) {
            device_.require(FHOOK_FEAT_ERRORS_FRAMES, "the arguments of failing calls");
        }
        if (options.callsites) {
            device_.require(FHOOK_FEAT_ERRORS_FRAMES, "the call sites of failing calls");
            graph.flags |= FHOOK_GRAPH_F_CALLSITES;
        }
        graph.flags |= FHOOK_GRAPH_F_ERRORS;
        const ErrorsTypes& t = options.types;
        if (t.zero_fails.size() > FHOOK_MAX_IPS || t.never_fail.size() > FHOOK_MAX_IPS ||
            t.false_fails.size() > FHOOK_MAX_IPS) {
            throw_invalid("too many functions for the module to know the return types of");
        }
        if (!device_.has(FHOOK_FEAT_ERRORS_TYPES)) {
            // (a module before them judges errnos only, and takes no more)
            graph.size = FHOOK_GRAPH_SIZE_VER0;
        } else {
            graph.zero_ips = t.zero_fails.empty() ? 0 : user_ptr(t.zero_fails.data());
            graph.nr_zero_ips = static_cast<std::uint32_t>(t.zero_fails.size());
            graph.none_ips = t.never_fail.empty() ? 0 : user_ptr(t.never_fail.data());
            graph.nr_none_ips = static_cast<std::uint32_t>(t.never_fail.size());
            graph.false_ips = t.false_fails.empty() ? 0 : user_ptr(t.false_fails.data());
            graph.nr_false_ips = static_cast<std::uint32_t>(t.false_fails.size());
            graph.fail_pred = options.fail_pred.empty() ? 0 : user_ptr(options.fail_pred.data());
            graph.fail_pred_len = static_cast<std::uint32_t>(options.fail_pred.size());
        }
        if (options.ustack) {
            device_.require(FHOOK_FEAT_ERRORS_TYPES, "user stacks of failing call chains");
            graph.flags |= FHOOK_GRAPH_F_USTACK;
        }
        if (!options.fail_pred.empty() && !device_.has(FHOOK_FEAT_ERRORS_TYPES)) {
            throw_runtime("this fhook module judges failures by errno only: no filter on "
                          "the entry's value (load the module built with this fhook)",
                          EOPNOTSUPP);
        }
    }
    graph.max_depth = options.max_depth;
    graph.max_tasks = options.max_tasks;
    graph.threshold_ns = options.threshold_ns;

    // (a module without FHOOK_FEAT_GRAPH_ALL arms every other function at once)
    const bool below = options.below && device_.has(FHOOK_FEAT_GRAPH_ALL);
    const std::string below_names = below ? join(options.below->filters) : std::string();
    if (below) {
        if (below_names.size() > FHOOK_MAX_PATTERN_TEXT ||
            options.below->ips.size() > FHOOK_MAX_IPS) {
            throw_invalid("too many functions below the call graph's");
        }
        graph.all_filter = below_names.empty() ? 0 : user_ptr(below_names.data());
        graph.all_filter_len = static_cast<std::uint32_t>(below_names.size());
        graph.all_ips = options.below->ips.empty() ? 0 : user_ptr(options.below->ips.data());
        graph.nr_all_ips = static_cast<std::uint32_t>(options.below->ips.size());
    }

    fhook_probe_add arg = probe_arg(FHOOK_PROBE_GRAPH);
    arg.filter = filter.empty() ? 0 : user_ptr(filter.data());
    arg.filter_len = static_cast<std::uint32_t>(filter.size());
    arg.exclude = notrace.empty() ? 0 : user_ptr(notrace.data());
    arg.exclude_len = static_cast<std::uint32_t>(notrace.size());
    arg.ips = functions.ips.empty() ? 0 : user_ptr(functions.ips.data());
    arg.nr_ips = static_cast<std::uint32_t>(functions.ips.size());
    arg.hook = user_ptr(&graph);
    set_pred(device_, arg, options.pred);
    if (probe_add(device_, arg) < 0) {
        const int err = errno;
        // err_index: the functions' patterns, their addresses, then the notrace patterns
        const std::size_t first = functions.filters.size() + functions.ips.size();
        if (err == ENOENT && arg.err_index >= 0 &&
            static_cast<std::size_t>(arg.err_index) >= first &&
            static_cast<std::size_t>(arg.err_index) - first < options.notrace.size()) {
            throw_runtime("no traceable function matches set_graph_notrace '" +
                              options.notrace[arg.err_index - first] +
                              "' (see: fhook list functions)",
                          err);
        }
        throw_function_probe_error(device_, functions, FHOOK_PROBE_FUNC, 0, arg, err);
    }
    return arg.probe_id;
}

std::uint32_t Session::add_latency_probe(const FunctionSet& functions,
                                         const std::vector<fhook_insn>& pred,
                                         std::uint32_t stack_args) {
    device_.require(FHOOK_FEAT_LATENCY, "latency histograms");
    return add_function_probe(functions, pred, FHOOK_PROBE_DIRECT, FHOOK_PROBE_F_LATENCY,
                              stack_args);
}

std::uint32_t Session::add_function_probe(const FunctionSet& functions,
                                          const std::vector<fhook_insn>& pred, std::uint32_t via,
                                          std::uint32_t flags, std::uint32_t stack_args) {
    const auto& [filters, excludes, ips] = functions;
    device_.require(FHOOK_FEAT_FUNC, "function probes");
    if (via == FHOOK_PROBE_DIRECT) {
        device_.require(FHOOK_FEAT_DIRECT, "direct-call trampolines");
    }
    if (!ips.empty()) {
        device_.require(FHOOK_FEAT_FUNC_IPS, "function probes by address (:mod:)");
    }
    if (filters.empty() && ips.empty()) {
        throw_invalid("a function probe needs at least one function pattern: give a PROBE");
    }
    const std::string filter = join(filters);
    const std::string exclude = join(excludes);
    if (filter.size() > FHOOK_MAX_PATTERN_TEXT || exclude.size() > FHOOK_MAX_PATTERN_TEXT) {
        throw_invalid("the probe patterns exceed " + std::to_string(FHOOK_MAX_PATTERN_TEXT) +
                      " bytes: use fewer or shorter patterns (globs)");
    }
    if (ips.size() > FHOOK_MAX_IPS) {
        throw_invalid(std::to_string(ips.size()) + " functions resolved, the limit is " +
                      std::to_string(FHOOK_MAX_IPS) + ": use a narrower :mod: pattern");
    }

    fhook_probe_add arg = probe_arg(via);
    arg.flags = flags;
    arg.stack_args = stack_args;
    arg.filter = filter.empty() ? 0 : user_ptr(filter.data());
    arg.filter_len = static_cast<std::uint32_t>(filter.size());
    arg.exclude = exclude.empty() ? 0 : user_ptr(exclude.data());
    arg.exclude_len = static_cast<std::uint32_t>(exclude.size());
    arg.ips = ips.empty() ? 0 : user_ptr(ips.data());
    arg.nr_ips = static_cast<std::uint32_t>(ips.size());
    set_pred(device_, arg, pred);
    if (probe_add(device_, arg) < 0) {
        throw_function_probe_error(device_, functions, via, flags, arg, errno);
    }
    return arg.probe_id;
}

KprobeHandle Session::add_kprobe(const KprobeDef& def, const KprobeOptions& options) {
    if (def.is_uprobe) {
        device_.require(FHOOK_FEAT_UPROBE, "uprobes");
    } else if (def.is_tracepoint) {
        device_.require(FHOOK_FEAT_TRACEPOINT, "tracepoints");
    } else {
        device_.require(FHOOK_FEAT_KPROBE, "kprobes");
    }
    if (!def.insns.empty()) {
        device_.require(FHOOK_FEAT_FETCH, "fetch arguments");
    }
    fhook_probe_add arg =
        probe_arg(def.is_tracepoint ? FHOOK_PROBE_TRACEPOINT
                  : def.is_uprobe   ? (def.is_return ? FHOOK_PROBE_URETPROBE : FHOOK_PROBE_UPROBE)
                                    : (def.is_return ? FHOOK_PROBE_KRETPROBE : FHOOK_PROBE_KPROBE));
    if (def.is_tracepoint) {
        arg.addr = def.tp_id;
    } else {
        // a uprobe's "symbol" is its binary's path
        const std::string& symbol = def.is_uprobe ? def.path : def.symbol;
        arg.symbol = symbol.empty() ? 0 : user_ptr(symbol.data());
        arg.symbol_len = static_cast<std::uint32_t>(symbol.size());
        arg.offset = def.offset;
        arg.addr = def.addr;
    }
    arg.maxactive = def.maxactive;
    if (options.count) {
        device_.require(FHOOK_FEAT_COUNT, "counting probes");
        arg.flags |= FHOOK_PROBE_F_COUNT;
    }
    if (def.stack) {
        device_.require(FHOOK_FEAT_STACK, "stack traces");
        arg.flags |= FHOOK_PROBE_F_STACK;
    }
    // (a preference: the module falls back to its ftrace_ops, and an
    // older module's kprobes know no such flag)
    if (options.direct && !def.is_uprobe && !def.is_tracepoint && !def.is_return) {
        arg.flags |= FHOOK_PROBE_F_DIRECT;
    }
    set_program(arg, def);
    set_pred(device_, arg, def.pred);
    if (probe_add(device_, arg) < 0) {
        throw_kprobe_error(device_, def, arg, errno);
    }
    return KprobeHandle{arg.probe_id, arg.probe_addr};
}

std::uint32_t Session::add_hook(const KprobeDef& def, std::uint64_t addr, const std::string& name,
                                const fhook_hook& hook) {
    device_.require(FHOOK_FEAT_HOOK, "hooks");
    fhook_hook params = hook;
    params.size = sizeof(params);
    fhook_probe_add arg = probe_arg(FHOOK_PROBE_HOOK);
    arg.addr = addr;
    arg.hook = user_ptr(&params);
    set_program(arg, def);
    set_pred(device_, arg, def.pred);
    if (probe_add(device_, arg) < 0) {
        throw_hook_error(device_, name, hook, arg, errno);
    }
    return arg.probe_id;
}

void Session::direct_modify(std::uint32_t probe_id, bool count) {
    device_.require(FHOOK_FEAT_DIRECT, "direct-call trampolines");
    fhook_direct_modify arg;
    zero_init(arg);
    arg.probe_id = probe_id;
    arg.flags = count ? FHOOK_PROBE_F_COUNT : 0;
    if (device_.ioctl(FHOOK_IOC_DIRECT_MODIFY, &arg) < 0) {
        throw_ioctl_error("switching the direct trampoline of probe " + std::to_string(probe_id),
                          errno, device_.refusal(errno));
    }
}

void Session::add_trigger(std::uint32_t probe_id, std::uint32_t action, std::uint32_t target_id,
                          std::uint64_t count, const std::vector<fhook_insn>& pred) {
    device_.require(FHOOK_FEAT_TRIGGER, "triggers");
    fhook_trigger arg;
    zero_init(arg);
    arg.probe_id = probe_id;
    arg.action = action;
    arg.target_id = target_id;
    arg.count = count;
    arg.pred = pred.empty() ? 0 : user_ptr(pred.data());
    arg.pred_len = static_cast<std::uint32_t>(pred.size());
    if (device_.ioctl(FHOOK_IOC_TRIGGER_ADD, &arg) < 0) {
        const int err = errno;
        if (err == ENOSPC) {
            throw_invalid("more than " + std::to_string(FHOOK_MAX_TRIGGERS) +
                          " triggers on one probe");
        }
        if (err == EOPNOTSUPP) {
            throw_invalid("stacktrace triggers do not exist on tracepoints (t:): the module has "
                          "no registers to unwind from there");
        }
        throw_ioctl_error("adding a trigger", err, device_.refusal(err));
    }
}

void Session::set_pid_filter(const std::vector<pid_t>& pids, bool follow_fork, bool ignore_self) {
    device_.require(FHOOK_FEAT_PID_FILTER, "the pid filter");
    if (pids.size() > FHOOK_MAX_FILTER_PIDS) {
        throw_invalid(std::to_string(pids.size()) + " pids given, the limit is " +
                          std::to_string(FHOOK_MAX_FILTER_PIDS) + ": give fewer {} options",
                      Setting::Pids);
    }
    std::vector<std::uint32_t> ids;
    ids.reserve(pids.size());
    for (pid_t pid : pids) {
        if (pid <= 0) {
            throw_invalid("invalid pid " + std::to_string(pid) + ": give a positive process id");
        }
        ids.push_back(static_cast<std::uint32_t>(pid));
    }
    fhook_pid_filter arg;
    zero_init(arg);
    arg.flags = FHOOK_PIDF_RESET | (follow_fork ? FHOOK_PIDF_FOLLOW_FORK : 0U) |
                (ignore_self ? FHOOK_PIDF_IGNORE_SELF : 0U);
    arg.nr_pids = static_cast<std::uint32_t>(ids.size());
    arg.pids = ids.empty() ? 0 : user_ptr(ids.data());
    if (device_.ioctl(FHOOK_IOC_PID_FILTER, &arg) < 0) {
        int err = errno;
        if (err == ESRCH) {
            throw_runtime("no such process in the pid filter: check the {} values", err,
                          Setting::Pids);
        }
        throw_ioctl_error("setting the pid filter", err, device_.refusal(err));
    }
}

void Session::set_cpu_filter(const std::set<int>& cpus) {
    device_.require(FHOOK_FEAT_CPU_FILTER, "the CPU filter");
    if (cpus.empty()) {
        throw_invalid("empty CPU list: give at least one CPU, e.g. {} 0", Setting::Cpus);
    }
    const std::uint32_t nr_cpus = device_.info().nr_cpus;
    if (*cpus.begin() < 0) {
        throw_invalid("invalid CPU " + std::to_string(*cpus.begin()) +
                      ": CPUs are numbered from 0");
    }
    const auto max_cpu = static_cast<std::uint32_t>(*cpus.rbegin());
    if (nr_cpus != 0 && max_cpu >= nr_cpus) {
        throw_invalid("CPU " + std::to_string(max_cpu) +
                      " does not exist: this system has CPUs 0-" + std::to_string(nr_cpus - 1));
    }
    const std::uint32_t nr_bits = nr_cpus != 0 ? nr_cpus : max_cpu + 1;
    if (nr_bits > 8 * FHOOK_MAX_CPUMASK) {
        throw_invalid("CPU " + std::to_string(max_cpu) + " is beyond the supported " +
                      std::to_string(8 * FHOOK_MAX_CPUMASK) + " CPUs");
    }
    std::vector<std::uint64_t> mask((nr_bits + 63) / 64, 0);
    for (int cpu : cpus) {
        mask[static_cast<std::size_t>(cpu) / 64] |= std::uint64_t{1} << (cpu % 64);
    }
    fhook_cpu_filter arg;
    zero_init(arg);
    arg.nr_bits = nr_bits;
    arg.mask = user_ptr(mask.data());
    if (device_.ioctl(FHOOK_IOC_CPU_FILTER, &arg) < 0) {
        throw_ioctl_error("setting the CPU filter", errno, device_.refusal(errno));
    }
}

void Session::start() {
    if (device_.ioctl(FHOOK_IOC_START, nullptr) < 0) {
        const int err = errno;
        if (err == EBUSY) {
            throw_runtime("arming the probes: a function is taken (an IPMODIFY user such as a "
                          "livepatch or another hook, or a direct trampoline, conflicts with "
                          "this probe): see 'fhook explain FUNC' for who is attached",
                          err);
        }
        throw_ioctl_error("arming the probes", err, device_.refusal(err));
    }
}

void Session::stop() {
    if (device_.ioctl(FHOOK_IOC_STOP, nullptr) < 0) {
        throw_ioctl_error("disarming the probes", errno, device_.refusal(errno));
    }
}

namespace {

void snapshot_op(const Device& device, std::uint32_t op, const char* what) {
    fhook_snapshot arg;
    zero_init(arg);
    arg.op = op;
    if (device.ioctl(FHOOK_IOC_SNAPSHOT, &arg) < 0) {
        throw_ioctl_error(what, errno, device.refusal(errno));
    }
}

} // namespace

void Session::freeze() {
    device_.require(FHOOK_FEAT_SNAPSHOT, "snapshots");
    snapshot_op(device_, FHOOK_SNAPSHOT_FREEZE, "freezing the rings for a snapshot");
}

void Session::resume() {
    device_.require(FHOOK_FEAT_SNAPSHOT, "snapshots");
    snapshot_op(device_, FHOOK_SNAPSHOT_RESUME, "resuming after a snapshot");
}

Stats Session::stats(std::uint32_t probe_id) const {
    std::vector<fhook_cpu_stats> cpus(device_.info().nr_cpus);
    fhook_stats arg;
    zero_init(arg);
    arg.probe_id = probe_id;
    arg.nr_cpus = static_cast<std::uint32_t>(cpus.size());
    arg.cpus = cpus.empty() ? 0 : user_ptr(cpus.data());
    if (device_.ioctl(FHOOK_IOC_STATS, &arg) < 0) {
        throw_ioctl_error(probe_id == FHOOK_STATS_SESSION
                              ? std::string("reading the session statistics")
                              : "reading the statistics of probe " + std::to_string(probe_id),
                          errno, device_.refusal(errno));
    }
    auto convert = [](const fhook_cpu_stats& s) {
        return CpuStats{s.hits, s.written, s.lost, s.missed};
    };
    Stats out;
    out.total = convert(arg.total);
    const std::size_t n = std::min<std::size_t>(arg.nr_cpus, cpus.size());
    out.per_cpu.reserve(n);
    for (std::size_t i = 0; i < n; i++) {
        out.per_cpu.push_back(convert(cpus[i]));
    }
    return out;
}

} // namespace fhook
