// fhook::Tracer, running: the session set up from the plan, armed, read
// until a stop, drained.
#include <algorithm>
#include <chrono>

#include <fhook/core/error.hpp>
#include <fhook/sys/ftrace_state.hpp>

#include "tracer_state.hpp"

namespace fhook {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

bool has_wildcard(const std::string& name) {
    return name.find_first_of("*?[!:") != std::string::npos;
}

} // namespace

Tracer::Tracer(TraceSpec spec, SystemPaths paths, Progress progress)
    : s_(std::make_unique<State>()) {
    s_->spec = std::move(spec);
    s_->paths = std::move(paths);
    s_->progress = std::move(progress);
    s_->plan();
    s_->say("");
}

namespace {

// 48211 -> "48,211"
std::string thousands(std::size_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); i++) {
        if (i && (digits.size() - i) % 3 == 0) {
            out += ',';
        }
        out += digits[i];
    }
    return out;
}

} // namespace

Tracer::~Tracer() = default;

const std::vector<std::string>& Tracer::skipped() const noexcept {
    return s_->skipped;
}

void Tracer::setup() {
    State& s = *s_;
    s.signals.emplace(s.spec.print_on_sigusr1);
    // (started once the stop signals are blocked: the thread inherits the
    // mask, so SIGINT still reaches the signalfd, not the loader; counts and
    // histograms format no event: they read no symbols, so that counting a
    // read path does not count fhook's own reads of /proc/kallsyms)
    const bool formats = s.spec.collect == Collect::Events || s.spec.collect == Collect::Irqsoff ||
                         (s.spec.collect == Collect::Wakeup &&
                          (s.spec.wakeup.stack || !s.spec.wakeup.functions.empty()));
    s.session.emplace(s.paths.open_device ? s.paths.open_device() : Device(s.paths.device));
    // (need_symbols, `record`: /proc/kallsyms, readable before anything is
    // armed or the command fails)
    std::optional<Ksyms> named;
    if (!s.need_resolution && formats && !s.spec.need_symbols) {
        named = module_ksyms(*s.session);
    }
    if (named) {
        s.ksyms = std::move(*named);
    } else if (!s.need_resolution && formats) {
        if (s.spec.need_symbols) {
            Ksyms::check_readable(s.paths.kallsyms); // before, not after tracing
        }
        s.ksyms_loading = std::async(std::launch::async,
                                     [path = s.paths.kallsyms, required = s.spec.need_symbols] {
                                         return load_ksyms(path, required);
                                     });
    }
    if (!s.spec.command.empty()) {
        s.child.emplace(s.spec.command, s.signals->original_mask());
    }
    s.ring = s.session->setup_ring(s.spec.ring);
    s.add_probes();
    s.add_triggers();
    s.set_filters();
    s.reader = std::make_unique<RingReader>(*s.session, s.ring);
    s.reader->watch(s.signals->fd());
}

void Tracer::State::add_probes() {
    const std::string if_filter = spec.filter.empty() ? "" : " if " + spec.filter;
    FunctionProbeOptions recording;
    recording.via = spec.attach == Attach::Direct ? FunctionProbeOptions::Via::Direct
                                                  : FunctionProbeOptions::Via::Ops;
    recording.stack = spec.stack;
    // (a hook's filter is on its fields: compiled with its definition)
    if (!spec.filter.empty() && !specs.empty()) {
        recording.pred = compile_filter(spec.filter, nullptr);
    }
    if (spec.collect == Collect::Wakeup) {
        static const char* const kNames[] = {"wakeup", "wakeup_rt", "wakeup_dl"};
        const std::uint32_t wclass = spec.wakeup.wclass;
        probes.push_back(ProbeSummary{
            session->add_wakeup_probe(
                wclass, spec.wakeup.threshold_ns,
                (spec.wakeup.reports ? 0 : FHOOK_WAKEUP_F_HIST_ONLY) |
                    (spec.wakeup.reports && spec.wakeup.stack ? FHOOK_WAKEUP_F_STACK : 0)),
            {},
            wclass < std::size(kNames) ? kNames[wclass] : "wakeup"});
        if (spec.wakeup.per_task != WakeupSpec::PerTask::None) {
            session->set_wakeup_task_hist(probes.back().id,
                                          spec.wakeup.per_task == WakeupSpec::PerTask::Process);
        }
        if (!specs.empty()) {
            FunctionProbeOptions calls = recording;
            calls.wakeup_cpu = true;
            probes.push_back(ProbeSummary{session->add_function_probe(request, calls),
                                          {},
                                          describe_specs(specs) + if_filter});
        }
    } else if (spec.collect == Collect::Timerlat) {
        probes.push_back(ProbeSummary{session->add_timerlat_probe(spec.timerlat), {}, "timerlat"});
    } else if (spec.collect == Collect::Hwlat) {
        probes.push_back(ProbeSummary{session->add_hwlat_probe(spec.hwlat), {}, "hwlat"});
    } else if (spec.collect == Collect::Osnoise) {
        probes.push_back(ProbeSummary{session->add_osnoise_probe(spec.osnoise), {}, "osnoise"});
    } else if (spec.collect == Collect::Irqsoff) {
        probes.push_back(
            ProbeSummary{session->add_irqsoff_probe(spec.irqsoff.cfg, spec.irqsoff.tracer),
                         {},
                         spec.irqsoff.tracer});
    } else if (spec.collect == Collect::Latency) {
        // one histogram per FUNC argument, by address: the module checks
        // each function's prototype in BTF
        for (std::size_t i = 0; i < specs.size(); i++) {
            const LatencyStackPlan& plan = latency_plans[i];
            ProbeRequest one;
            for (const auto& [name, module] : plan.timed) {
                const std::vector<std::uint64_t> at = ksyms.addresses_of(name, module);
                one.ips.insert(one.ips.end(), at.begin(), at.end());
            }
            if (one.ips.empty() && ksyms.addresses_hidden()) {
                throw_runtime("latency names the functions it times by address, and "
                              "/proc/kallsyms hides them from this user (" +
                                  kallsyms_hidden_reason() +
                                  "): run as root, or give fhook cap_syslog as well",
                              EPERM);
            }
            if (one.ips.empty()) {
                throw_runtime("no address in /proc/kallsyms for the functions of '" +
                                  specs[i].text + "'",
                              ENOENT);
            }
            probes.push_back(
                ProbeSummary{session->add_latency_probe(one, recording.pred, plan.stack_args),
                             {},
                             describe_specs({specs[i]}) + if_filter});
        }
    } else if (spec.collect == Collect::Counts) {
        // one counter per FUNC argument, and per function of a glob
        FunctionProbeOptions counting = recording;
        counting.count = true;
        counting.stack = false;
        for (const CountPlan& plan : count_plans) {
            counting.per_function = plan.per_function;
            const std::uint32_t id = session->add_function_probe(plan.request, counting);
            probes.push_back(ProbeSummary{id, {}, plan.text});
            count_probes.emplace(id, &plan);
        }
    } else if (!specs.empty() && spec.graph) {
        GraphOptions graph;
        graph.max_depth = spec.graph->depth;
        graph.notrace = spec.graph->notrace;
        graph.no_irqs = spec.graph->no_irqs;
        graph.args = spec.graph->args;
        graph.errors = spec.graph->errors;
        graph.types = errors_types;
        graph.fail_pred = fail_pred;
        graph.ustack = spec.graph->ustack;
        graph.callsites = spec.graph->callsites;
        graph.threshold_ns = spec.graph->threshold_ns;
        graph.max_tasks = spec.graph->tasks;
        graph.pred = recording.pred;
        graph.below = graph_below_request;
        probes.push_back(ProbeSummary{session->add_graph_probe(request, graph),
                                      {},
                                      (spec.graph->errors ? "errors " : "graph ") +
                                          describe_specs(specs) + if_filter});
    } else if (!specs.empty()) {
        probes.push_back(ProbeSummary{session->add_function_probe(request, recording),
                                      {},
                                      describe_specs(specs) + if_filter});
    }
    if (hook) {
        const fhook_hook& h = spec.hook.hook;
        session->device().require(FHOOK_FEAT_HOOK, "hooks");
        if (h.action != FHOOK_HOOK_AROUND && !session->device().has(FHOOK_FEAT_LAB)) {
            throw_runtime(std::string(h.action == FHOOK_HOOK_RETURN ? "returning a value from "
                                                                    : "redirecting ") +
                              hook->func +
                              " changes what the kernel does and needs lab mode: reload the "
                              "module with 'insmod fhook.ko lab=1' (it taints the kernel)",
                          EPERM);
        }
        const std::uint32_t id = session->add_hook(hook->def, hook->addr, hook->func, h);
        const std::string what = h.action == FHOOK_HOOK_AROUND ? "trace-around"
                                 : h.action == FHOOK_HOOK_RETURN
                                     ? "return " + std::to_string(h.retval)
                                     : "redirect to " + spec.hook.redirect;
        probes.push_back(ProbeSummary{id, {}, "hook " + hook->func + " (" + what + ")"});
        probe_table.add(id, std::move(hook->def));
    }
    for (auto& def : kprobes) {
        const bool counting = spec.collect == Collect::Counts;
        const KprobeHandle handle = session->add_kprobe(
            def, {.count = counting, .direct = !counting && spec.attach == Attach::Direct});
        // a count names its function, as the other mechanisms' do
        probes.push_back(ProbeSummary{handle.id, {}, counting ? def.symbol : def.text});
        canonical.emplace_back(handle.id, def.canonical);
        probe_table.add(handle.id, std::move(def));
    }
}

void Tracer::State::add_triggers() {
    for (const auto& text : spec.triggers) {
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
        session->add_trigger(id, t.action, target, t.count,
                             t.filter.empty() ? std::vector<fhook_insn>{}
                                              : compile_filter(t.filter, def));
    }
}

void Tracer::State::set_filters() {
    // fhook's own process (its output path) is never recorded.
    if (child) {
        session->set_pid_filter({child->pid()}, true, true);
    } else if (spec.collect != Collect::Events && spec.collect != Collect::Hook &&
               spec.pids.empty()) {
        // every caller counts, as with bpftrace's count(): fhook's own few
        // calls too (the read of its signalfd or timerfd that ends the
        // count), and with no filter at all a direct probe gets the fast
        // counting trampoline (docs/hooks.md)
        session->set_pid_filter({}, false, false);
    } else {
        session->set_pid_filter(spec.pids, false, true); // empty: every process
    }
    if (spec.cpus) {
        session->set_cpu_filter(*spec.cpus);
    }
}

std::size_t Tracer::nr_rings() const {
    return s_->reader->nr_rings();
}

const Ksyms& Tracer::ksyms() const noexcept {
    return s_->ksyms;
}

const KernelBtf* Tracer::kernel_btf() const {
    return s_->kernel_btf();
}

const KernelBtf* Tracer::module_btf(const std::string& module) const {
    return s_->module_btf(module);
}

const ProbeTable& Tracer::probe_table() const noexcept {
    return s_->probe_table;
}

const std::vector<ProbeSummary>& Tracer::probes() const noexcept {
    return s_->probes;
}

std::vector<std::pair<std::uint32_t, std::string>> Tracer::recorded_probes() const {
    std::vector<std::pair<std::uint32_t, std::string>> out;
    for (const auto& p : s_->probes) {
        std::string description = p.description;
        for (const auto& [id, text] : s_->canonical) {
            if (id == p.id) {
                description = text; // parses without BTF, binaries, kallsyms
            }
        }
        out.emplace_back(p.id, description);
    }
    return out;
}

std::vector<RecordedEvent> Tracer::recorded_events() const {
    std::vector<RecordedEvent> out;
    for (const auto& p : s_->probes) {
        // a tracepoint's format as this kernel has it, for report
        if (const KprobeDef* def = s_->probe_table.find(p.id); def && def->is_tracepoint) {
            out.push_back({def->group + ":" + def->event, def->tp_id, def->tp_format});
        }
    }
    return out;
}

// Who holds the functions, as tracefs knows it; else `e` as it is.
void Tracer::State::explain_busy(const Error& e) {
    if (spec.graph) {
        // (the module's return trampoline serves one call graph at a time)
        throw_runtime("cannot arm: another call graph is running, or one that ended still has "
                      "calls inside (the kernel log names their tasks): one at a time",
                      EBUSY);
    }
    std::vector<std::string> names;
    for (const auto& one : specs) {
        names.push_back(one.text);
    }
    if (hook) {
        names.push_back(hook->func);
    }
    std::string who;
    for (const auto& name : names) {
        if (has_wildcard(name)) {
            continue;
        }
        const std::vector<EnabledFunction> attached = read_enabled_functions(paths.tracefs, name);
        // (a latency probe is a direct trampoline: IPMODIFY users and other
        // direct trampolines are in its way, as for a hook)
        for (const auto& c :
             hook_conflicts(attached, hook.has_value() || spec.collect == Collect::Latency,
                            session->device().module_hooks())) {
            who += (who.empty() ? "" : "; ") + c;
        }
        if (spec.attach == Attach::Direct) {
            for (const auto& f : attached) {
                if (f.direct()) {
                    who += (who.empty() ? "" : "; ") + f.name +
                           " already has a direct trampoline (" + f.detail +
                           "): a function takes one at a time";
                }
            }
        }
    }
    if (who.empty()) {
        throw e;
    }
    throw_runtime("cannot arm: " + who, EBUSY);
}

void Tracer::start() {
    State& s = *s_;
    if (s.progress && !s.specs.empty()) {
        // how many call sites ftrace is about to patch
        try {
            if (!s.functions) {
                s.functions = FunctionList::load(s.paths.functions);
            }
            const std::size_t n = FunctionSelector(s.specs).count(*s.functions);
            s.say("arming " + thousands(n) + (n == 1 ? " function" : " functions"));
        } catch (const Error&) {
            s.say("arming the probes");
        }
    } else if (!s.probes.empty()) {
        s.say("arming the probes");
    }
    struct Done {
        const State& s;
        ~Done() { s.say(""); }
    } done{s};
    try {
        s.session->start();
    } catch (const Error& e) {
        if (e.sys_errno() != EBUSY) {
            throw;
        }
        s.explain_busy(e);
    }
    // (the command is released by run(), once its events can be taken)
}

void Tracer::run(Sink& sink, TraceObserver& observer) {
    State& s = *s_;
    RingReader& reader = *s.reader;
    const RecordCallback on_record = [&sink](const fhook_rec* rec) { sink.on_record(rec); };
    const BatchCallback on_batch = [&sink](std::span<const fhook_rec* const> recs) {
        sink.on_records(recs);
    };
    const SpanCallback on_pass = [&sink](std::span<const RingSpan> spans) { sink.on_pass(spans); };
    const auto drain = [&] {
        return sink.takes_spans() ? reader.drain_spans(on_pass) : reader.drain_batch(on_batch);
    };
    // The command runs once its events can be taken: at once by a sink of
    // raw spans, which needs the symbols (/proc/kallsyms: a second or more
    // under emulation) at its end only, else once they are loaded.
    if (s.ksyms_loading.valid() && !sink.takes_spans()) {
        s.ksyms = s.ksyms_loading.get();
    }
    if (s.child) {
        s.child->release();
    }
    // the duration is tracing time: it starts once every probe is armed
    // (arming '*' patches tens of thousands of call sites first)
    std::optional<Clock::time_point> deadline, next_interval, next_tick;
    if (s.spec.duration) {
        deadline = after(*s.spec.duration);
    }
    if (s.spec.interval) {
        next_interval = after(*s.spec.interval);
    }
    if (s.spec.tick) {
        next_tick = after(*s.spec.tick);
    }
    // The module's flush timer delivers data below the watermarks, so the
    // wait only needs a timeout for a module without one and for deadlines.
    const int wait_ms = s.session->device().has(FHOOK_FEAT_FLUSH) && !s.spec.ring.overwrite
                            ? 1000
                            : RingReader::kDefaultTimeoutMs;
    unsigned snapshots = 0;
    std::uint64_t triggered_seen = 0;
    for (;;) {
        int timeout = wait_ms;
        for (const auto& at : {deadline, next_interval, next_tick}) {
            if (at) {
                auto left = std::chrono::ceil<std::chrono::milliseconds>(*at - Clock::now());
                timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, timeout));
            }
        }
        const RingReader::WaitResult woke = reader.wait(timeout);
        SignalWatch::Pending sig;
        if (woke.watched) {
            sig = s.signals->consume();
        }
        if (sig.stop || (s.child && s.child->exited()) || (deadline && Clock::now() >= *deadline)) {
            break;
        }
        if (sig.print) {
            observer.on_print_request();
        }
        if (next_interval && Clock::now() >= *next_interval) {
            observer.on_interval();
            *next_interval += std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(*s.spec.interval));
        }
        if (next_tick && Clock::now() >= *next_tick) {
            observer.on_tick();
            next_tick = after(*s.spec.tick);
        }
        // SIGUSR2, or a snapshot trigger froze the session
        const std::uint64_t fired = reader.stats() ? reader.stats().snapshots() : 0;
        const bool triggered = fired != triggered_seen;
        triggered_seen = fired;
        if (sig.snapshot || triggered) {
            s.session->freeze(); // waits for writers still inside the rings
            const std::size_t n = drain();
            sink.flush();
            s.session->resume();
            observer.on_snapshot(++snapshots, triggered, n);
            continue;
        }
        if (s.spec.ring.overwrite) {
            continue; // flight recorder: read only on demand
        }
        drain();
        sink.flush();
        if (sink.done()) {
            break;
        }
    }
    s.session->stop();
    // everything committed before the stop
    if (sink.takes_spans()) {
        reader.drain_final(on_pass, on_record);
    } else {
        reader.drain_final(on_batch, on_record);
    }
    for (auto& p : s.probes) {
        p.stats = s.session->stats(p.id);
    }
    if (s.ksyms_loading.valid()) {
        s.ksyms = s.ksyms_loading.get(); // the spans' sink, at its end
    }
    sink.finish(s.session->stats(), s.probes);
}

std::vector<StatRow> Tracer::stat_rows() const {
    // one row per probe: the ioctl's totals, filtered from the stats area
    std::vector<StatRow> rows;
    for (const auto& p : s_->probes) {
        StatRow row{p.id, p.stats, 0, p.description};
        if (const StatsView view = s_->reader->stats()) {
            for (std::uint32_t cpu = 0; cpu < view.nr_cpus(); cpu++) {
                row.filtered += view.at(cpu, p.id).filtered;
            }
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<CountRow> Tracer::count_rows() const {
    std::vector<CountRow> rows;
    for (const auto& p : s_->probes) {
        const auto plan = s_->count_probes.find(p.id);
        if (plan == s_->count_probes.end() || !plan->second->per_function) {
            rows.push_back(
                CountRow{p.id, p.description, {}, s_->session->stats(p.id).total.hits, true});
            continue;
        }
        for (const auto& [ip, hits] : s_->session->function_counts(p.id)) {
            const auto name = plan->second->names.find(ip);
            if (hits == 0) {
                continue;
            }
            if (name == plan->second->names.end()) {
                // not an address fhook gave: the module's answer is wrong
                throw_runtime("probe " + std::to_string(p.id) + " counted an unknown address",
                              EPROTO);
            }
            rows.push_back(CountRow{p.id, name->second.first, name->second.second, hits, false});
        }
    }
    return rows;
}

LatencyHist Tracer::latency(std::uint32_t probe_id, std::optional<unsigned> cpu) const {
    return s_->session->latency(probe_id, cpu);
}

Session::TaskLatencies Tracer::task_latencies(std::uint32_t probe_id) const {
    return s_->session->task_latencies(probe_id);
}

bool Tracer::has_feature(std::uint64_t feature) const {
    return s_->session && s_->session->device().has(feature);
}

void Tracer::set_hist(const fhook_hist_set& hist) {
    s_->session->set_hist(hist);
}

Session::HistRead Tracer::hist(std::uint32_t probe_id, std::uint32_t table) const {
    return s_->session->hist(probe_id, table);
}

const char* wakeup_tracer_name(std::uint32_t wclass) {
    return wclass == FHOOK_WAKEUP_DL   ? "wakeup_dl"
           : wclass == FHOOK_WAKEUP_RT ? "wakeup_rt"
                                       : "wakeup";
}

Stats Tracer::stats(std::uint32_t probe_id) const {
    return s_->session->stats(probe_id);
}

std::optional<int> Tracer::command_status() {
    if (!s_->child || !s_->child->exited()) {
        return std::nullopt;
    }
    return s_->child->status();
}

} // namespace fhook
