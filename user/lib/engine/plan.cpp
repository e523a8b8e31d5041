// fhook::Tracer, planning: the probes parsed and checked against the
// system (kallsyms, BTF, available_filter_functions, enabled_functions)
// before any device is touched.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include <fhook/core/error.hpp>
#include <fhook/sys/ftrace_state.hpp>

#include "tracer_state.hpp"

namespace fhook {

namespace {

// The one text symbol `name` ("MODULE:name" for a module's): its address.
std::uint64_t resolve_function(const Ksyms& ksyms, const std::string& text) {
    std::string_view name = text;
    std::string_view module;
    bool module_given = false;
    if (const std::size_t colon = name.find(':'); colon != std::string_view::npos) {
        module = name.substr(0, colon);
        name = name.substr(colon + 1);
        module_given = true;
    }
    std::vector<SymbolRef> found;
    for (const SymbolRef& s : ksyms.find_text(name)) {
        if (!module_given || s.module == module) {
            found.push_back(s);
        }
    }
    if (found.empty()) {
        throw_runtime("no kernel function '" + text +
                          "' in /proc/kallsyms: check the name (a module's must be loaded)",
                      ENOENT);
    }
    if (found.size() > 1) {
        std::string where;
        for (const auto& s : found) {
            char buf[48];
            std::snprintf(buf, sizeof(buf), " 0x%" PRIx64, s.offset);
            where += buf;
            if (!s.module.empty()) {
                where += " [" + std::string(s.module) + "]";
            }
        }
        throw_invalid("'" + text + "' names " + std::to_string(found.size()) +
                      " functions (static functions of the same name):" + where +
                      ": give MODULE:NAME for a module's");
    }
    return found.front().offset;
}

bool is_glob(const std::string& text) {
    return text.find_first_of("*?[!") != std::string::npos;
}

// Collect::Counts through ftrace_ops counts a glob's (or :mod:'s)
// functions one by one.
bool counts_per_function(const TraceSpec& spec, const std::vector<ProbeSpec>& specs) {
    return spec.collect == Collect::Counts && spec.attach == Attach::Ops &&
           std::any_of(specs.begin(), specs.end(), [](const ProbeSpec& one) {
               return !one.negated && (one.is_module() || is_glob(one.glob));
           });
}

void add_filter(KprobeDef& def, const std::string& filter) {
    if (!filter.empty() && def.filter.empty()) {
        def.filter = filter;
        def.pred = compile_filter(filter, &def);
    }
}

} // namespace

Ksyms load_ksyms(const std::string& path, bool required) {
    try {
        return Ksyms::load(path);
    } catch (const Error&) {
        if (required) {
            throw;
        }
        return Ksyms(); // symbols print as addresses
    }
}

std::optional<Ksyms> module_ksyms(const Session& session) {
    if (!session.device().has(FHOOK_FEAT_SYMBOLS)) {
        return std::nullopt;
    }
    try {
        const std::uint64_t none = 0;
        session.symbols(std::span<const std::uint64_t>(&none, 1)); // may this caller?
    } catch (const Error&) {
        return std::nullopt; // no CAP_SYSLOG: /proc/kallsyms says what it may know
    }
    return Ksyms::on_demand([&session](std::span<const std::uint64_t> addrs) {
        std::vector<Ksyms::Resolved> out;
        for (const fhook_symbol& sym : session.symbols(addrs)) {
            out.push_back(Ksyms::Resolved{
                sym.offset, sym.size, std::string(sym.name, strnlen(sym.name, sizeof(sym.name))),
                std::string(sym.module, strnlen(sym.module, sizeof(sym.module)))});
        }
        return out;
    });
}

const char* attach_name(Attach attach) {
    switch (attach) {
    case Attach::Direct:
        return "direct";
    case Attach::Kprobe:
        return "kprobe";
    default:
        return "ops";
    }
}

const KernelBtf* Tracer::State::kernel_btf() {
    if (!btf_tried) {
        btf_tried = true;
        say("reading the kernel's BTF");
        try {
            btf = KernelBtf::load();
        } catch (const Error&) {
            // the definition that needs it says so
        }
    }
    return btf ? &*btf : nullptr;
}

const KernelBtf* Tracer::State::module_btf(const std::string& module) {
    const KernelBtf* base = kernel_btf();
    if (!base) {
        return nullptr;
    }
    auto [it, fresh] = module_btfs.try_emplace(module);
    if (fresh) {
        try {
            it->second = KernelBtf::load_split("/sys/kernel/btf/" + module, *base);
        } catch (const Error&) {
            // a module built without BTF: the trampoline copies all it can
        }
    }
    return it->second ? &*it->second : nullptr;
}

// The positional PROBEs: definitions parsed into `kprobes`, function
// globs returned.
std::vector<std::string> Tracer::State::plan_probes(bool functions_only) {
    std::vector<std::string> globs;
    for (const auto& text :
         spec.collect == Collect::Hook ? std::vector<std::string>{} : spec.probes) {
        if (is_tracepoint_definition(text)) {
            kprobes.push_back(parse_tracepoint(text, paths.tracefs));
            add_filter(kprobes.back(), spec.filter);
            continue;
        }
        if (spec.attach == Attach::Kprobe && !is_probe_definition(text)) {
            // the same job as a function probe, through a kprobe
            if (text.find_first_of("*?[!:") != std::string::npos) {
                throw_invalid("attaching by kprobe takes function names, not '" + text +
                              "': one kprobe per function");
            }
            kprobes.push_back(parse_kprobe("p:fhook/" + text + " " + text, kallsyms_resolver()));
            kprobes.back().stack = spec.stack;
            continue;
        }
        if (functions_only && is_probe_definition(text)) {
            throw_invalid("'" + text + "' is a probe definition: only functions are " +
                          (spec.collect == Collect::Counts ? "counted" : "timed"));
        }
        if (is_probe_definition(text)) {
            kprobes.push_back(parse_kprobe(text, kallsyms_resolver(), btf_provider()));
            kprobes.back().stack = spec.stack;
            add_filter(kprobes.back(), spec.filter);
        } else {
            globs.push_back(text);
        }
    }
    return globs;
}

// -e: the trace events the patterns select, each a tracepoint probe.
void Tracer::State::plan_events(bool functions_only) {
    if (spec.events.empty()) {
        return;
    }
    if (functions_only || spec.collect == Collect::Hook) {
        throw_invalid("trace events (-e) are traced, recorded or counted with stat, not " +
                      std::string(spec.collect == Collect::Counts    ? "counted"
                                  : spec.collect == Collect::Latency ? "timed"
                                                                     : "hooked"));
    }
    for (const auto& pattern : spec.events) {
        select_trace_events({}, pattern); // a malformed one before tracefs is read
    }
    const std::vector<TraceEventName> all = list_trace_events(paths.tracefs);
    for (const auto& pattern : spec.events) {
        const std::vector<TraceEventName> picked = select_trace_events(all, pattern);
        if (picked.empty()) {
            throw_runtime("no trace event matches '" + pattern + "' (fhook list events)", ENOENT);
        }
        for (const auto& e : picked) {
            kprobes.push_back(parse_tracepoint("t:" + e.text(), paths.tracefs));
            add_filter(kprobes.back(), spec.filter);
        }
    }
}

void Tracer::State::plan() {
    if (paths.tracefs.empty()) {
        paths.tracefs = default_tracefs();
    }
    static const std::map<Collect, const char*> kTracers = {
        {Collect::Wakeup, "the wakeup tracer"},
        {Collect::Timerlat, "the timerlat tracer"},
        {Collect::Hwlat, "the hwlat detector"},
        {Collect::Osnoise, "the osnoise tracer"},
        {Collect::Irqsoff, "the irqsoff tracer"}};
    if (const auto it = kTracers.find(spec.collect); it != kTracers.end()) {
        if (!spec.probes.empty() || !spec.events.empty() || !spec.triggers.empty()) {
            throw_invalid(std::string(it->second) + " takes no probes, events or triggers");
        }
        if (spec.collect != Collect::Wakeup || spec.wakeup.functions.empty()) {
            return;
        }
    }
    const bool functions_only = spec.collect == Collect::Counts || spec.collect == Collect::Latency;
    if (spec.collect == Collect::Hook) {
        plan_hook();
    }
    // (the wakeup tracer's function calls: its globs, a function probe's)
    std::vector<std::string> globs =
        spec.collect == Collect::Wakeup ? spec.wakeup.functions : plan_probes(functions_only);
    plan_events(functions_only);
    if (functions_only && spec.probes.empty()) {
        throw_invalid("no functions given");
    }
    if ((kprobes.empty() && !hook) || !globs.empty()) {
        specs = parse_probe_specs(globs);
    }
    // function probes, graphs and hooks are ftrace_ops on call sites: with
    // the sysctl off, ftrace takes them and patches nothing
    if ((!specs.empty() || hook) && ftrace_switched_off(paths.ftrace_enabled)) {
        throw_runtime("function tracing is off (" + paths.ftrace_enabled +
                          " is 0): no function probe would fire; write 1 there to turn it on",
                      EPERM);
    }

    check_fail_filter();

    // Everything that reads files comes before the device is touched, but
    // /proc/kallsyms (seconds under emulation) is only needed to build the
    // request for :mod: specs; otherwise setup() starts a thread that reads
    // it while the session is set up and armed.
    const bool resolve = has_module_specs(specs) || counts_per_function(spec, specs);
    // A glob of thousands of functions goes by address, for the module to
    // arm a slice at a time: available_filter_functions(_addrs) says how
    // many (and where, since 6.5), kallsyms where before.  A call graph
    // deeper than one level traces every other function below its own:
    // those go by address, not its own.
    const bool graph_below =
        spec.collect == Collect::Events && spec.graph && spec.graph->depth != 1 && !specs.empty();
    const std::vector<ProbeSpec> below = graph_below ? graph_below_specs() : specs;
    const bool records_functions =
        spec.collect == Collect::Events || spec.collect == Collect::Wakeup;
    const bool sliceable =
        graph_below || (records_functions && !spec.graph && spec.attach == Attach::Ops &&
                        std::none_of(specs.begin(), specs.end(), [](const ProbeSpec& one) {
                            return !one.negated && !is_glob(one.glob) && !one.is_module();
                        }));
    bool slices_need_kallsyms = false;
    if (sliceable) {
        say("reading available_filter_functions");
        functions = FunctionList::load_with_addresses(paths.functions);
        try {
            if (!functions) {
                functions = FunctionList::load(paths.functions);
            }
        } catch (const Error&) {
            // the kernel matches the globs itself, in one go
        }
        slices_need_kallsyms = functions && !functions->has_addresses() &&
                               FunctionSelector(below).count(*functions) > FHOOK_ARM_SLICE;
    }
    // (fhook errors: the functions' types go by address)
    const bool errors_types = spec.collect == Collect::Events && spec.graph && spec.graph->errors;
    need_resolution = resolve || slices_need_kallsyms || errors_types;
    if (need_resolution || spec.collect == Collect::Latency) {
        say("reading " + paths.kallsyms);
        // (for slices alone, as the loader thread would: hidden addresses
        // leave the globs to the kernel)
        ksyms = load_ksyms(paths.kallsyms,
                           resolve || spec.collect == Collect::Latency || spec.need_symbols);
        if (!functions) {
            say("reading available_filter_functions");
            try {
                functions = FunctionList::load_or_kallsyms(paths.functions, paths.kallsyms);
            } catch (const Error&) {
                // (fhook errors judges errnos alone without the list)
                if (resolve || slices_need_kallsyms || spec.collect == Collect::Latency) {
                    throw;
                }
            }
        }
    }
    if (spec.collect == Collect::Latency) {
        plan_latency();
    }
    if (errors_types) {
        plan_errors_types();
        plan_fail_filter();
    }
    if (spec.collect == Collect::Counts && !specs.empty()) {
        plan_counts(); // (--via kprobe: one kprobe per name instead)
    }
    // (a count's probes have their own requests)
    if (!specs.empty() && spec.collect != Collect::Counts) {
        std::optional<ProbeRequest> sliced;
        if (sliceable && functions) {
            // (an explicit set below: by address, which fhook's notrace "fhook_*" does not
            // apply to: a user's fhook_* functions are watched as any other)
            const bool watch = graph_below && !spec.graph->watch.empty();
            sliced = build_sliced_request(below, *functions, &ksyms, watch ? 0 : FHOOK_ARM_SLICE);
        }
        if (graph_below) {
            graph_below_request = std::exchange(sliced, std::nullopt);
            // (no addresses to be had: by name, never every function)
            if (!graph_below_request && !spec.graph->watch.empty()) {
                graph_below_request =
                    build_probe_request(below, functions ? &*functions : nullptr, &ksyms);
            }
        }
        request = sliced ? std::move(*sliced)
                         : build_probe_request(specs, functions ? &*functions : nullptr, &ksyms);
    }
}

// What a call graph traces below its functions: every function but them
// (those given by name: one by address is in both, see kmod/probe_graph.c),
// its notrace ones and fhook's own but the hook API's (the module refuses
// any other of its own addresses; by name, fhook_* as its one-step ops
// leaves out).
std::vector<ProbeSpec> Tracer::State::graph_below_specs() const {
    // (fhook's own functions go by module below, not by name: a module
    // of fhook_* hooks a user wrote is traced as any other)
    std::vector<std::string> texts =
        spec.graph->watch.empty() ? std::vector<std::string>{"*"} : spec.graph->watch;
    for (const ProbeSpec& one : specs) {
        if (!one.negated && !one.is_module()) {
            texts.push_back("!" + one.glob);
        }
    }
    for (const std::string& glob : spec.graph->notrace) {
        texts.push_back("!" + glob);
    }
    std::vector<ProbeSpec> below = parse_probe_specs(texts);
    // (a spec no user may give: the kernel's notrace list takes no module,
    // but this list goes by address; the hook API's functions, which the
    // module lets a graph watch, stay)
    below.push_back(ProbeSpec{"!*:mod:fhook", true,
                              "!(" FHOOK_HOOK_API_PREFIX "*|__" FHOOK_HOOK_API_PREFIX "*)",
                              std::string("fhook")});
    return below;
}

// What each FUNC's latency trampoline copies, the functions it cannot time.
void Tracer::State::plan_latency() {
    const ModuleBtfProvider by_module = [this](const std::string& m) { return module_btf(m); };
    for (const auto& one : specs) {
        LatencyStackPlan plan = plan_latency_stack(one, *functions, kernel_btf(), by_module);
        if (plan.selected > 0 && plan.selected == plan.skipped.size()) {
            // (the functions are real: what they are, not the command, stops it)
            throw_runtime("cannot time " + plan.skipped.front() + ": " + plan.why.front(),
                          EOPNOTSUPP);
        }
        for (std::size_t k = 0; k < plan.skipped.size(); k++) {
            skipped.push_back(plan.skipped[k] + ": " + plan.why[k]);
        }
        latency_plans.push_back(std::move(plan));
    }
}

// One probe per positive FUNC argument, each with every negated one; a
// glob's functions one by one, by address.
void Tracer::State::plan_counts() {
    std::set<std::uint64_t> counted; // addresses a per-function probe has
    std::vector<ProbeSpec> negated;
    for (const auto& one : specs) {
        if (one.negated) {
            negated.push_back(one);
        }
    }
    for (const auto& one : specs) {
        if (one.negated) {
            continue;
        }
        std::vector<ProbeSpec> with = negated;
        with.insert(with.begin(), one);
        CountPlan plan;
        plan.text = one.text;
        plan.per_function = counts_per_function(spec, {one});
        if (!plan.per_function) {
            plan.request = build_probe_request(with, functions ? &*functions : nullptr, &ksyms);
            count_plans.push_back(std::move(plan));
            continue;
        }
        const FunctionSelector selector(with);
        std::size_t selected = 0, addresses = 0;
        for (const TraceableFunction& f : functions->functions()) {
            if (!selector.selects(f)) {
                continue;
            }
            selected++;
            for (const std::uint64_t ip : ksyms.addresses_of(f.name, f.module)) {
                addresses++;
                // a function two globs select is counted once, by the first
                if (counted.insert(ip).second) {
                    plan.names.emplace(ip, std::make_pair(f.name, f.module));
                    plan.request.ips.push_back(ip);
                }
            }
        }
        if (selected == 0) {
            throw_runtime("'" + one.text +
                              "' matches no function in available_filter_functions: check the "
                              "glob (fhook list functions)",
                          ENOENT);
        }
        if (addresses == 0) {
            throw_runtime("no address in /proc/kallsyms for the " + std::to_string(selected) +
                              " functions of '" + one.text + "': run as root",
                          ENOENT);
        }
        if (plan.request.ips.empty()) {
            continue; // every one counted under an earlier argument
        }
        if (plan.request.ips.size() > FHOOK_MAX_COUNT_IPS) {
            throw_invalid("'" + one.text + "' selects " + std::to_string(plan.request.ips.size()) +
                          " functions; they are counted one by one up to " +
                          std::to_string(FHOOK_MAX_COUNT_IPS) +
                          ": narrow the glob, or count them as one total through a direct probe");
        }
        count_plans.push_back(std::move(plan));
    }
    if (count_plans.empty()) {
        throw_invalid("nothing to count: '!' arguments only leave functions out; name the "
                      "functions to count");
    }
}

// The hook's definition (fields, filter) and where it goes, checked against
// what tracefs says.
namespace {

// The hooks other modules hold with fhook's hook API, to name the owner of
// a function an IPMODIFY user holds (the device is opened only then).
std::vector<ModuleHook> module_hooks_of(const SystemPaths& paths,
                                        const std::vector<EnabledFunction>& attached) {
    if (std::none_of(attached.begin(), attached.end(),
                     [](const EnabledFunction& f) { return f.ipmodify(); })) {
        return {};
    }
    try {
        const Device device = paths.open_device ? paths.open_device() : Device(paths.device);
        return device.module_hooks();
    } catch (const Error&) {
        return {}; // the conflict is still named, without its module
    }
}

} // namespace

void Tracer::State::plan_hook() {
    HookPlan plan;
    if (spec.probes.empty()) {
        throw_invalid("no function to hook");
    }
    plan.func = spec.probes.front();
    if (is_probe_definition(plan.func) || is_glob(plan.func)) {
        throw_invalid("a hook goes on one function, not '" + plan.func + "'");
    }
    const std::string bare = plan.func.substr(plan.func.find(':') + 1);
    std::string text = "p:hook/" + bare + " " + bare;
    for (std::size_t i = 1; i < spec.probes.size(); i++) {
        text += " " + spec.probes[i];
    }
    plan.def = parse_kprobe(text, kallsyms_resolver(), btf_provider());
    std::string filter = spec.filter;
    if (!spec.hook.comm.empty()) {
        const std::string by_comm = "comm == \"" + spec.hook.comm + "\"";
        filter = filter.empty() ? by_comm : "(" + filter + ") && " + by_comm;
    }
    if (!filter.empty()) {
        plan.def.filter = filter;
        plan.def.pred = compile_filter(filter, &plan.def);
    }
    ksyms = load_ksyms(paths.kallsyms, true);
    if (ksyms.addresses_hidden()) {
        throw_runtime(
            "a hook goes on " + bare + "'s address, and /proc/kallsyms hides it from this user (" +
                kallsyms_hidden_reason() + "): run as root, or give fhook cap_syslog as well",
            EPERM);
    }
    plan.addr = resolve_function(ksyms, plan.func);

    // traceable, and nobody else's IPMODIFY or direct call in the way
    const FunctionList traceable = FunctionList::load_or_kallsyms(paths.functions, paths.kallsyms);
    if (std::none_of(traceable.functions().begin(), traceable.functions().end(),
                     [&](const TraceableFunction& f) { return f.name == bare; })) {
        throw_runtime("cannot hook " + bare +
                          ": it is not in available_filter_functions (notrace, inlined, or "
                          "not a function ftrace patched): see 'fhook explain " +
                          bare + "'",
                      ENOENT);
    }
    std::string why;
    const std::vector<EnabledFunction> attached = read_enabled_functions(paths.tracefs, bare);
    for (const auto& c : hook_conflicts(attached, true, module_hooks_of(paths, attached))) {
        why += (why.empty() ? "" : "; ") + c;
    }
    if (!why.empty()) {
        throw_runtime("cannot hook " + bare + ": " + why, EBUSY);
    }

    fhook_hook& h = spec.hook.hook;
    if (h.action == FHOOK_HOOK_AROUND) {
        // the words of arguments the caller passes on the stack, which the
        // trampoline copies for the body (all it can, 8, without BTF)
        h.stack_args = FHOOK_HOOK_MAX_STACK_ARGS;
        const KernelBtf* btf = kernel_btf();
        if (auto f = btf ? btf->function(bare) : std::nullopt) {
            if (f->variadic) {
                throw_runtime("cannot run " + bare +
                                  " around a hook: a variadic function's stack arguments are "
                                  "unbounded: the trampoline cannot run its body (the module "
                                  "refuses it too)",
                              EOPNOTSUPP);
            }
            const std::uint32_t words = stack_arg_words(*btf, *f);
            if (words > FHOOK_HOOK_MAX_STACK_ARGS) {
                throw_runtime("cannot run " + bare + " around a hook: its arguments take " +
                                  std::to_string(words) + " stack words, the trampoline copies " +
                                  std::to_string(FHOOK_HOOK_MAX_STACK_ARGS),
                              EOPNOTSUPP);
            }
            h.stack_args = words;
        }
        if (plan.def.data_size > FHOOK_HOOK_AROUND_DATA) {
            throw_invalid("the fields recorded around each call take " +
                          std::to_string(plan.def.data_size) + " bytes, at most " +
                          std::to_string(FHOOK_HOOK_AROUND_DATA) + " fit: record fewer");
        }
    }
    if (h.action == FHOOK_HOOK_REDIRECT) {
        const std::string& redirect = spec.hook.redirect;
        h.redirect = resolve_function(ksyms, redirect);
        const std::string other = redirect.substr(redirect.find(':') + 1);
        const KernelBtf* btf = kernel_btf();
        std::optional<KernelBtf::Function> a, b;
        if (btf) {
            a = btf->function(bare);
            b = btf->function(other);
        }
        if (a && b) {
            if (!btf->same_prototype(*a, *b)) {
                throw_invalid("cannot redirect " + bare + " to " + other +
                              ": the prototypes differ: " + btf->prototype(*a) + " vs " +
                              btf->prototype(*b));
            }
        } else if (spec.hook.check_prototype) {
            throw_invalid("cannot check that " + bare + " and " + other +
                              " have the same prototype: " + (a ? other : bare) +
                              " is not in the kernel's BTF (a module built without BTF?); {} "
                              "redirects without the check",
                          Setting::PrototypeCheck);
        }
    }
    hook = std::move(plan);
}

} // namespace fhook
