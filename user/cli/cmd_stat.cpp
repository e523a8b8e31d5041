// fhook stat [options] PROBE... [-- COMMAND [ARGS...]]
#include <fhook/core/output.hpp>
#include <fhook/engine/sinks.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook stat [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Arm the probes like trace, count, and print per probe on stdout at the end:\n"
    "hits (recorded or lost), filtered (rejected by --pid/--cpu/COMMAND or a\n"
    "filter expression), missed (the kernel's kprobe nmissed, kretprobes without\n"
    "a free instance, recursion), events and lost events.  The events\n"
    "themselves are read and discarded.\n";

} // namespace

int cmd_stat(const Args& args) {
    TraceCommand cmd;
    cmd.name = "stat";
    cmd.usage = kUsage;
    cmd.filter_help = kRecordFilterHelp;
    cmd.output_help = "write the table to FILE instead of stdout";
    cmd.format_help = "text (a table, default) or json (one object)";
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    const UniqueFd out = open_output(opt->output);
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    SnapshotNotes notes(opt->quiet);
    tracer.run(sink, notes);
    print_to(output_fd(out), opt->format == OutputFormat::Json ? stat_json(tracer.stat_rows())
                                                               : stat_table(tracer.stat_rows()));
    return run_status(tracer);
}

} // namespace fhook::cli
