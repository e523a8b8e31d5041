// fhook record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]
#include <fhook/core/error.hpp>
#include <fhook/engine/sinks.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Like trace, but write the raw events to FILE (a self-describing record\n"
    "file: probes, the symbols of every address seen, statistics; see\n"
    "docs/file-format.md).  Read it with: fhook report FILE.\n"
    "With --overwrite, only the newest events at the end and at each SIGUSR2\n"
    "snapshot are written.  With --graph, the FUNCs' call graphs (fhook graph;\n"
    "fhook report --graph draws the trees); with --errors, the chains of calls\n"
    "that failed below them (fhook errors; fhook report prints them).\n";

void add_options(po::options_description& options) {
    add_graph_options(options, false);
    options.add_options()("errors",
                          "record the chains of failing calls below the FUNCs (fhook "
                          "errors) instead of their calls; with --depth, --notrace, --watch, "
                          "--args, --tasks");
}

void parse_options(const po::variables_map& vm, TraceOptions& opt) {
    if (!vm.count("errors")) {
        parse_graph_options(vm, opt, false);
        return;
    }
    if (vm.count("graph") || vm.count("threshold") || vm.count("no-irqs")) {
        throw_invalid("--errors records no calls: it takes neither --graph, --threshold nor "
                      "--no-irqs");
    }
    parse_graph_options(vm, opt, true);
    opt.spec.graph->errors = true;
    opt.spec.graph->no_irqs = true;
}

} // namespace

int cmd_record(const Args& args) {
    TraceCommand cmd;
    cmd.name = "record";
    cmd.usage = kUsage;
    cmd.summary = true;
    cmd.filter_help = kRecordFilterHelp;
    cmd.output_help = "the record file to write (required)";
    cmd.output_required = true;
    cmd.add_options = add_options;
    cmd.parse_options = parse_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    opt->spec.need_symbols = true; // the file keeps those of every address seen
    Tracer tracer(opt->spec, system_paths(), terminal_progress(opt->quiet));
    UniqueFd out = open_output(opt->output);
    tracer.setup();
    const RecordWriter::Info info = record_info(tracer, args, "record");
    FileSink sink(std::move(out), opt->output, info, tracer.ksyms());
    tracer.start();
    SnapshotNotes notes(opt->quiet);
    tracer.run(sink, notes);
    print_summary(tracer, *opt,
                  "fhook: wrote " + std::to_string(sink.records()) + " records, " +
                      std::to_string(sink.bytes_written()) + " bytes to " + opt->output + "\n");
    return run_status(tracer);
}

} // namespace fhook::cli
