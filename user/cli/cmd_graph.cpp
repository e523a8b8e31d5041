// fhook graph [options] FUNC... [-- COMMAND [ARGS...]]
#include <fhook/output/graph_format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/btf.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook graph [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Trace every call of each FUNC (a function or a tracefs glob) and every\n"
    "function it calls while it runs, as the function_graph tracer with\n"
    "set_graph_function does, until Ctrl-C, --duration or the exit of COMMAND:\n"
    "call trees with durations, in the kernel's function_graph format.\n"
    "\n"
    "Other probes (kprobe, uprobe and tracepoint definitions as trace takes them,\n"
    "positional or with -e) appear in the tree where they fired, as comments.\n"
    "fhook catches returns with its own return trampoline (docs/hooks.md); one\n"
    "call graph at a time.\n";

void add_options(po::options_description& options) {
    add_graph_options(options, true);
}

void parse_options(const po::variables_map& vm, TraceOptions& opt) {
    parse_graph_options(vm, opt, true);
    // -e takes probe definitions too: they go with the positional ones
    auto& events = opt.spec.events;
    for (auto it = events.begin(); it != events.end();) {
        if (is_probe_definition(*it) || is_tracepoint_definition(*it)) {
            opt.spec.probes.push_back(*it);
            it = events.erase(it);
        } else {
            ++it;
        }
    }
}

} // namespace

int cmd_graph(const Args& args) {
    TraceCommand cmd;
    cmd.name = "graph";
    cmd.usage = kUsage;
    cmd.summary = true;
    cmd.snapshots = false;
    cmd.via = false;
    cmd.filter_help = "trace only tasks for which EXPR holds when they call FUNC, evaluated in "
                      "the kernel (common_pid, tgid, comm, cpu)";
    cmd.output_help = "write the call trees to FILE instead of stdout";
    cmd.format_help =
        "text (the function_graph tracer's format, default), json (NDJSON, one "
        "object per entry and return), chrome (Chrome trace JSON for Perfetto) or otlp "
        "(OTLP/HTTP JSON logs, a line per batch)";
    cmd.chrome = true;
    cmd.no_probe = "give the functions whose calls to follow, e.g. fhook graph vfs_read";
    cmd.add_options = add_options;
    cmd.parse_options = parse_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    if (opt->format != OutputFormat::Text) {
        return print_events(*opt);
    }
    std::optional<KernelBtf> btf;
    if (opt->spec.graph->args) {
        btf = KernelBtf::load();
    }
    return print_events(*opt, [&](const Tracer& tracer) -> std::unique_ptr<Formatter> {
        GraphFormatOptions view = opt->graph_view;
        view.nr_cpus = static_cast<std::uint32_t>(tracer.nr_rings());
        view.btf = btf ? &*btf : nullptr;
        return std::make_unique<GraphFormatter>(tracer.ksyms(), view);
    });
}

} // namespace fhook::cli
