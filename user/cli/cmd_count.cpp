// fhook count [options] FUNC... [-- COMMAND [ARGS...]]
#include <fhook/output.hpp>
#include <fhook/sinks.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook count [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Count the calls of each FUNC (a function or a tracefs glob: one counter\n"
    "each) until Ctrl-C, --duration or the exit of COMMAND, and print a table:\n"
    "bpftrace's count(), without records.  --via picks the mechanism, to\n"
    "compare their cost: ops (an ftrace_ops callback, default), direct (fhook's\n"
    "own counting trampoline through the ftrace direct-call API), kprobe (a\n"
    "kprobe on the function, which the kernel puts on its fentry site).\n";

} // namespace

int cmd_count(const Args& args) {
    TraceCommand cmd;
    cmd.name = "count";
    cmd.usage = kUsage;
    cmd.collect = Collect::Counts;
    cmd.records = false;
    cmd.snapshots = false;
    cmd.filter_help = kRecordFilterHelp;
    cmd.output_help = "write the table to FILE instead of stdout";
    cmd.no_probe = "give the functions to count, e.g. fhook count vfs_read vfs_write";
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    Tracer tracer(opt->spec, system_paths());
    const UniqueFd out = open_output(opt->output);
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    SnapshotNotes notes(opt->quiet);
    tracer.run(sink, notes);
    OutputWriter table(output_fd(out));
    table.append(count_table(tracer.stat_rows(), attach_name(opt->spec.attach)));
    table.flush();
    return run_status(tracer);
}

} // namespace fhook::cli
