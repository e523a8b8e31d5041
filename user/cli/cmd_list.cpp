// fhook list functions [PATTERN...] | fhook list events [EVENT...]
#include <unistd.h>

#include <map>
#include <optional>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/probe/spec.hpp>
#include <fhook/sys/btf.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kListUsage =
    "Usage: fhook list functions [PATTERN...]\n"
    "       fhook list events [EVENT...]      (or: fhook list tracepoints)\n"
    "\n"
    "functions: the traceable functions (tracefs available_filter_functions), one\n"
    "per line as 'name' or 'name [module]'.  PATTERN uses the PROBE grammar of\n"
    "'fhook trace' (vfs_*, '!*rcu*', GLOB:mod:MODULE, :mod:MODULE), so the\n"
    "output is exactly what 'fhook trace PATTERN' would hook.  With -v, each\n"
    "function's prototype from BTF (a module's from its own BTF) follows its\n"
    "name (the names a probe definition can use).\n"
    "events: the trace events (tracefs available_events) as SUBSYS:EVENT; EVENT\n"
    "is what 'fhook trace -e' takes: SUBSYS:EVENT, SUBSYS or EVENT, globs allowed.\n"
    "With -v, each event's fields from its format file.\n"
    "Exits 1 when nothing matches.\n";

// BTF of vmlinux and, loaded on first use, each module's (split on it).
class BtfSet {
public:
    BtfSet() : vmlinux_(KernelBtf::load()) {}
    // `name`'s prototype, or "(no BTF)".
    std::string prototype(const TraceableFunction& f) {
        const KernelBtf* btf = &vmlinux_;
        if (!f.module.empty()) {
            auto [it, fresh] = modules_.try_emplace(f.module);
            if (fresh) {
                try {
                    it->second = KernelBtf::load_split("/sys/kernel/btf/" + f.module, vmlinux_);
                } catch (const Error&) {
                    // a module built without BTF
                }
            }
            btf = it->second ? &*it->second : nullptr;
        }
        const auto fn = btf ? btf->function(f.name) : std::nullopt;
        return fn ? btf->prototype(*fn) : "(no BTF)";
    }

private:
    KernelBtf vmlinux_;
    std::map<std::string, std::optional<KernelBtf>> modules_;
};

int list_functions(const std::vector<std::string>& patterns, bool verbose) {
    std::vector<ProbeSpec> specs;
    for (const auto& text : patterns) {
        specs.push_back(parse_probe_spec(text));
    }
    const FunctionList functions = FunctionList::load(functions_path());
    const FunctionSelector selector(specs);
    if (auto idx = selector.first_unmatched(functions)) {
        throw_runtime("no traceable function matches '" + specs[*idx].text +
                          "' (see: fhook list functions)",
                      ENOENT);
    }
    std::optional<BtfSet> btf;
    if (verbose) {
        btf.emplace();
    }
    OutputWriter out(STDOUT_FILENO);
    std::size_t count = 0;
    for (const auto& f : functions.functions()) {
        if (selector.selects(f)) {
            std::string& buf = out.buffer();
            buf += f.line();
            if (btf) {
                buf += "\t" + btf->prototype(f);
            }
            buf += '\n';
            out.commit();
            count++;
        }
    }
    out.flush();
    if (count == 0) {
        if (specs.empty()) {
            throw_runtime("no traceable functions are listed: check that the kernel has "
                          "CONFIG_DYNAMIC_FTRACE and tracefs is mounted",
                          ENOENT);
        }
        throw_runtime("no traceable function matches '" + describe_specs(specs) +
                          "' (see: fhook list functions)",
                      ENOENT);
    }
    return 0;
}

int list_events(const std::vector<std::string>& patterns, bool verbose) {
    const std::string tracefs = tracefs_dir();
    const std::vector<TraceEventName> all = list_trace_events(tracefs);
    std::vector<TraceEventName> picked;
    if (patterns.empty()) {
        picked = all;
    }
    for (const auto& pattern : patterns) {
        const std::vector<TraceEventName> some = select_trace_events(all, pattern);
        if (some.empty()) {
            throw_runtime("no trace event matches '" + pattern + "' (see: fhook list events)",
                          ENOENT);
        }
        picked.insert(picked.end(), some.begin(), some.end());
    }
    if (picked.empty()) {
        throw_runtime("no trace events are listed in " + tracefs + "/available_events", ENOENT);
    }
    OutputWriter out(STDOUT_FILENO);
    for (const auto& e : picked) {
        std::string& buf = out.buffer();
        buf += e.text();
        if (verbose) {
            // the fields a filter or --format json names
            const KprobeDef def = parse_tracepoint("t:" + e.text(), tracefs);
            for (const auto& f : def.fields) {
                buf += "\n    " + f.text;
            }
        }
        buf += '\n';
        out.commit();
    }
    out.flush();
    return 0;
}

} // namespace

int cmd_list(const Args& args) {
    po::options_description options("Options");
    options.add_options()("verbose,v", "functions: prototypes from BTF; events: their fields")(
        "help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("what", po::value<std::string>())(
        "pattern", po::value<std::vector<std::string>>()->default_value({}, ""));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("what", 1).add("pattern", -1);
    po::variables_map vm = parse_args("list", args, all, positional);
    if (vm.count("help")) {
        print_help(kListUsage, options);
        return 0;
    }
    if (!vm.count("what")) {
        throw_invalid("nothing to list: use 'fhook list functions [PATTERN]' or 'fhook list "
                      "events [EVENT]'");
    }
    const auto what = vm["what"].as<std::string>();
    const auto patterns = vm["pattern"].as<std::vector<std::string>>();
    const bool verbose = vm.count("verbose") != 0;
    if (what == "functions") {
        return list_functions(patterns, verbose);
    }
    if (what == "events" || what == "tracepoints") {
        return list_events(patterns, verbose);
    }
    throw_invalid("cannot list '" + what + "': use 'fhook list functions' or 'fhook list events'");
}

} // namespace fhook::cli
