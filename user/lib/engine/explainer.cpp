#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>
#include <fhook/engine/explainer.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/probe/spec.hpp>
#include <fhook/sys/btf.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

namespace {

constexpr std::size_t kMaxInsns = 16;

SiteView look(const Session& session, const Ksyms& ksyms, std::uint64_t addr, std::size_t len,
              const std::string& name, const std::string& tracefs) {
    SiteView v;
    v.insns = disassemble(session.read_text(addr, len), addr, kMaxInsns);
    for (const Insn& insn : v.insns) {
        std::string target;
        if (insn.target) {
            ksyms.append_offset(*insn.target, target);
        }
        v.targets.push_back(std::move(target));
    }
    v.site = fentry_index(v.insns);
    v.attached = read_enabled_functions(tracefs, name);
    v.kprobes = read_kprobes_on(name);
    for (auto& h : session.device().module_hooks()) {
        if (h.function.substr(0, h.function.find(' ')) == name) {
            v.module_hooks.push_back(std::move(h));
        }
    }
    return v;
}

// Why `name` has no kallsyms symbol.
std::string missing_reason(const std::string& name, const Ksyms& ksyms) {
    std::vector<std::string> clones;
    for (const std::string suffix : {".isra.", ".constprop.", ".part.", ".cold", ".llvm."}) {
        for (std::uint32_t i = 0; i < 8; i++) {
            for (const std::string& cand : {name + suffix + std::to_string(i), name + suffix,
                                            name + suffix.substr(0, suffix.size() - 1)}) {
                if (!ksyms.find_text(cand).empty() &&
                    std::find(clones.begin(), clones.end(), cand) == clones.end()) {
                    clones.push_back(cand);
                }
            }
        }
    }
    if (!clones.empty()) {
        std::string list;
        for (const auto& c : clones) {
            list += (list.empty() ? "" : ", ") + c;
        }
        return "the compiler emitted it only as clones (" + list +
               "): trace those names, each is its own function for ftrace";
    }
    try {
        const KernelBtf btf = KernelBtf::load();
        if (btf.function(name)) {
            return "BTF knows it but kallsyms has no symbol: it was inlined into every caller, "
                   "so there is no call to hook";
        }
    } catch (const Error&) {
    }
    return "no such kernel function (a module's functions exist only while it is loaded)";
}

void attach(Session& session, ExplainArm arm, const std::string& name, std::uint64_t addr) {
    FunctionSet function;
    function.filters = {name};
    FunctionProbeOptions counting;
    counting.count = true;
    switch (arm) {
    case ExplainArm::Ops:
        session.add_function_probe(function, counting);
        break;
    case ExplainArm::Direct:
        counting.via = FunctionProbeOptions::Via::Direct;
        session.add_function_probe(function, counting);
        break;
    case ExplainArm::Kprobe:
        session.add_kprobe(parse_kprobe("p:fhook/explain " + name, {}), {.count = true});
        break;
    default: {
        fhook_hook h{};
        h.action = FHOOK_HOOK_AROUND;
        session.add_hook(parse_kprobe("p:hook/" + name + " " + name, {}), addr, name, h);
        break;
    }
    }
}

} // namespace

Explanation explain_function(const std::string& name, ExplainArm arm, std::size_t bytes,
                             const SystemPaths& paths) {
    const std::string tracefs = paths.tracefs.empty() ? default_tracefs() : paths.tracefs;
    const Ksyms ksyms = Ksyms::load(paths.kallsyms);
    const std::vector<SymbolRef> found = ksyms.find_text(name);
    if (found.empty()) {
        throw_runtime(name + ": " + missing_reason(name, ksyms), ENOENT);
    }
    if (found.size() > 1) {
        std::string where;
        for (const auto& s : found) {
            char addr[24];
            std::snprintf(addr, sizeof(addr), "0x%" PRIx64, s.offset);
            where += " " + std::string(addr) +
                     (s.module.empty() ? "" : " [" + std::string(s.module) + "]");
        }
        throw_invalid("'" + name + "' names " + std::to_string(found.size()) +
                      " functions:" + where + ": ftrace treats each on its own");
    }
    Explanation e;
    e.name = name;
    e.addr = found.front().offset;
    e.size = ksyms.size_of(e.addr);
    e.module = std::string(found.front().module);
    const std::size_t len =
        static_cast<std::size_t>(e.size ? std::min<std::uint64_t>(e.size, bytes) : bytes);

    const FunctionList functions = FunctionList::load(paths.functions);
    e.traceable = std::any_of(functions.functions().begin(), functions.functions().end(),
                              [&](const TraceableFunction& f) { return f.name == name; });
    e.kprobe_blacklisted = in_kprobe_blacklist_file(name);
    try {
        const KernelBtf btf = KernelBtf::load();
        if (auto f = btf.function(name)) {
            e.prototype = btf.prototype(*f);
        }
    } catch (const Error&) {
    }
    const bool init_text = e.module.empty() && ksyms.in_init_text(e.addr);
    if (!e.traceable) {
        if (name.find(".cold") != std::string::npos) {
            e.why_not = "a .cold part split off a function: not an entry point";
        } else if (init_text) {
            e.why_not = "__init code, freed once the kernel had booted: ftrace dropped its "
                        "call site then";
        } else if (e.kprobe_blacklisted) {
            e.why_not = "notrace/noinstr code (it is in the kprobe blacklist too)";
        } else {
            e.why_not = "notrace, or built without the fentry call (entry code, some arch "
                        "code)";
        }
    }

    Session session(paths.device);
    session.setup_ring(FHOOK_RING_MIN_SIZE);
    try {
        e.idle = look(session, ksyms, e.addr, len, name, tracefs);
        if (!e.traceable && init_text) {
            e.why_not += " (the bytes are what the memory holds now)";
        }
    } catch (const Error&) {
        if (e.traceable || !init_text) {
            throw;
        }
        e.why_not += " (the memory is not mapped any more)"; // (arm64 unmaps it, x86-64 not)
    }
    if (arm != ExplainArm::None) {
        if (!e.traceable && arm != ExplainArm::Kprobe) {
            throw_runtime("cannot arm " + name + " through " + explain_arm_name(arm) + ": " +
                              e.why_not,
                          ENOENT);
        }
        attach(session, arm, name, e.addr);
        session.start();
        e.arm = arm;
        // kallsyms again: the ops' trampoline exists only now (ftrace lists
        // it as ftrace_trampoline [__builtin__ftrace])
        e.armed = look(session, Ksyms::load(paths.kallsyms), e.addr, len, name, tracefs);
        session.stop();
    }
    return e;
}

} // namespace fhook
