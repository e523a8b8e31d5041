// fhook errors [options] ENTRY... [-- COMMAND [ARGS...]]
#include <random>

#include <fhook/core/error.hpp>
#include <fhook/output/errors_format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/btf.hpp>
#include <fhook/sys/kernel_lines.hpp>
#include <fhook/sys/preempt.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook errors [options] ENTRY... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Which function returned the error: watch every call below each ENTRY (a\n"
    "function or a tracefs glob) and, each time an ENTRY returns an error (an\n"
    "errno, an ERR_PTR or NULL, as the function's type says), print the chain\n"
    "of calls that failed down to the one that failed first, until Ctrl-C,\n"
    "--duration or the exit of COMMAND.  The module keeps each task's calls\n"
    "itself: nothing is recorded while nothing fails.  Identical chains are\n"
    "printed once and counted.\n";

void add_options(po::options_description& options) {
    options.add_options()("depth,D", po::value<std::string>()->value_name("N"),
                          "watch calls down to N levels below ENTRY (1 = ENTRY alone, "
                          "0 = the module's limit, default)")(
        "notrace", po::value<std::vector<std::string>>()->value_name("GLOB"),
        "leave GLOB and everything it calls out (repeatable)")(
        "watch", po::value<std::vector<std::string>>()->value_name("GLOB"),
        "watch only the functions GLOB matches below ENTRY, not every one (repeatable)")(
        "fail-false", "count false from a function returning bool as a failure")(
        "ustack", "print each chain's task's user stack (by frame pointers)")(
        "args", "print each frame's arguments, named by its BTF prototype")(
        "lines", "print where in each frame the chain goes on, with its source line where "
                 "debug info has it")(
        "debuginfo", po::value<std::vector<std::string>>()->value_name("PATH"),
        "a vmlinux, a module's .ko or a directory of them with debug info for --lines "
        "(repeatable; implies --lines)")(
        "fail", po::value<std::string>()->value_name("EXPR"),
        "an ENTRY fails when EXPR holds for its return value 'ret', evaluated in the kernel "
        "(e.g. 'ret < 0', 'ret == 0'), instead of when its type says")(
        "tasks", po::value<std::string>()->value_name("N"),
        "watch up to N tasks inside an ENTRY at once (default 256; others are counted as "
        "missed)")("all", "print every failing chain, not only the first of identical ones")(
        "stat", "print only a table at the end: failures per entry, result and first "
                "failing function");
}

void parse_options(const po::variables_map& vm, TraceOptions& opt) {
    GraphSpec graph = parse_graph_reach(vm, opt);
    graph.errors = true;
    graph.no_irqs = true;
    graph.false_fails = vm.count("fail-false") != 0;
    graph.ustack = vm.count("ustack") != 0;
    graph.args = vm.count("args") != 0;
    graph.callsites = vm.count("lines") || vm.count("debuginfo");
    if (graph.callsites) {
        opt.errors_view.lines = std::make_shared<KernelLines>(
            vm.count("debuginfo") ? vm["debuginfo"].as<std::vector<std::string>>()
                                  : std::vector<std::string>{},
            kernel_release());
    }
    if (vm.count("fail")) {
        graph.fail = vm["fail"].as<std::string>();
        if (graph.fail.empty()) {
            throw_invalid("--fail takes a filter on 'ret', e.g. --fail 'ret < 0'");
        }
    }
    for (const auto& text : opt.spec.probes) {
        if (is_probe_definition(text) || is_tracepoint_definition(text)) {
            throw_invalid("'" + text + "': an ENTRY is a function or a glob");
        }
    }
    opt.spec.graph = graph;
    opt.errors_view.all = vm.count("all") != 0;
    opt.errors_view.stat = vm.count("stat") != 0;
    opt.errors_view.false_fails = graph.false_fails;
    opt.errors_view.entry_filtered = !graph.fail.empty();
}

} // namespace

int cmd_errors(const Args& args) {
    TraceCommand cmd;
    cmd.name = "errors";
    cmd.usage = kUsage;
    cmd.summary = true;
    cmd.snapshots = false;
    cmd.via = false;
    cmd.filter_help = "watch only tasks for which EXPR holds when they call ENTRY, evaluated in "
                      "the kernel (common_pid, tgid, comm, cpu)";
    cmd.output_help = "write the chains to FILE instead of stdout";
    cmd.format_help = "text (default), json (NDJSON: an object per chain, then one with the "
                      "counts), chrome (each chain's calls as nested spans, for Perfetto) or otlp "
                      "(a line per chain: an OTLP/HTTP JSON trace, its calls as spans)";
    cmd.chrome = true;
    cmd.no_probe = "give the functions whose failures to explain, e.g. fhook errors "
                   "do_sys_openat2";
    cmd.add_options = add_options;
    cmd.parse_options = parse_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    if (opt->format == OutputFormat::Chrome) {
        if (opt->errors_view.stat || opt->errors_view.all) {
            throw_invalid("--format chrome draws every chain: it takes neither --stat nor --all");
        }
        if (opt->spec.graph->args || opt->spec.graph->callsites) {
            throw_invalid("--format chrome draws the calls' spans: it takes neither --args nor "
                          "--lines");
        }
        return print_events(*opt);
    }
    if (opt->format == OutputFormat::Otlp && opt->errors_view.stat) {
        throw_invalid("--stat prints a table: OTLP carries the chains (drop --stat)");
    }
    return print_events(*opt, [&](const Tracer& tracer) -> std::unique_ptr<Formatter> {
        // the return types: without them, values are read as errnos
        ErrorsFormatOptions view = opt->errors_view;
        view.otlp = {std::random_device{}() * 0x100000001ULL ^ std::random_device{}(),
                     realtime_offset_now()};
        view.btf = tracer.kernel_btf();
        view.module_btf = [&tracer](const std::string& m) { return tracer.module_btf(m); };
        return std::make_unique<ErrorsFormatter>(tracer.ksyms(), opt->format, view);
    });
}

} // namespace fhook::cli
