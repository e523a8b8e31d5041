// fhook trace [options] PROBE... [-- COMMAND [ARGS...]]
#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook trace [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "\n"
    "Arm function probes and stream the events to stdout until Ctrl-C, --duration\n"
    "or the exit of COMMAND.  With COMMAND only the command and its descendants\n"
    "are traced, from its first instruction on.\n"
    "\n"
    "PROBE: vfs_read, 'vfs_*', '*lock*', '[ab]*' (tracefs globs), '!*rcu*'\n"
    "(exclude), GLOB:mod:MODULE, :mod:MODULE: together they form one function\n"
    "probe.  Or a definition in the kprobe_events / uprobe_events syntax, one\n"
    "quoted argument each (fhook-probes(7), docs/probes.md):\n"
    "  'p[:[GRP/]NAME] SYM[+OFFS]|ADDR [[NAME=]FETCHARG[:TYPE]...]'\n"
    "  'r[MAXACTIVE][:[GRP/]NAME] SYM [[NAME=]FETCHARG[:TYPE]...]'  ($retval)\n"
    "  'p[:[GRP/]NAME] /PATH:SYMBOL[+OFFS]|/PATH:0xOFFSET [...]', 'r...' (uprobes)\n"
    "  't:SUBSYS:EVENT' (a trace event; also -e)\n"
    "e.g. 'p:open do_sys_openat2 dfd=%di:s32 path=+0(%si):ustring'\n"
    "\n"
    "With --overwrite the rings are a flight recorder: nothing is printed while\n"
    "tracing, the newest events are kept, and they are printed at the end and\n"
    "on every SIGUSR2 (a snapshot: the rings are frozen, read and resumed).\n";

} // namespace

int cmd_trace(const Args& args) {
    TraceCommand cmd;
    cmd.name = "trace";
    cmd.usage = kUsage;
    cmd.summary = true;
    cmd.filter_help = kRecordFilterHelp;
    cmd.output_help = "write the event text to FILE instead of stdout";
    cmd.format_help = "text (the kernel's trace format, default), json (NDJSON), chrome "
                      "(Chrome trace JSON for Perfetto) or otlp (OTLP/HTTP JSON logs, a line per "
                      "batch)";
    cmd.chrome = true;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    return print_events(*opt);
}

} // namespace fhook::cli
