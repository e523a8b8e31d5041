// fhook: command line front end of libfhook.  All errors end up here and
// become "fhook: error: <cause>: <fix>" plus the exit code of docs/cli.md.
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <fhook/error.hpp>

#include "commands.hpp"

namespace {

constexpr const char* kUsage =
    "Usage: fhook COMMAND [options] [ARGS...]\n"
    "\n"
    "Kernel function tracing with the fhook module.\n"
    "\n"
    "Commands:\n"
    "  trace [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "                        arm probes (functions, kprobes, uprobes) and stream\n"
    "                        the events\n"
    "  record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "                        the same, into a record file\n"
    "  stat [options] PROBE... [-- COMMAND [ARGS...]]\n"
    "                        count hits per probe, print a table at the end\n"
    "  count [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "                        count calls per function, no records (--via ops|direct|\n"
    "                        kprobe)\n"
    "  latency [options] FUNC... [-- COMMAND [ARGS...]]\n"
    "                        histograms of each function's duration, kept in the\n"
    "                        module (funclatency)\n"
    "  hook [options] FUNC [FIELD...] [-- COMMAND [ARGS...]]\n"
    "                        change or time a function: --trace-around, --return\n"
    "                        VALUE, --redirect FUNC2 (IPMODIFY)\n"
    "  explain [options] FUNC\n"
    "                        show how ftrace hooks FUNC: its patch site\n"
    "                        disassembled, idle and armed, and who is attached\n"
    "  bench [options]       cost per hit of every mechanism, fhook's and its\n"
    "                        peers' (ftrace, kprobe_events, bpftrace)\n"
    "  report [options] FILE print a record file, like trace would have\n"
    "  list functions [PATTERN]\n"
    "                        list the traceable functions\n"
    "  status                show the state of the fhook module\n"
    "\n"
    "Options:\n"
    "  -h, --help            this help; 'fhook COMMAND --help' for a command\n"
    "  -V, --version         print the version\n"
    "\n"
    "Exit status: 0 success, 1 runtime error, 2 usage error.\n";

int run(int argc, char** argv) {
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    const std::string command = argv[1];
    const fhook::cli::Args args(argv + 2, argv + argc);
    if (command == "-h" || command == "--help" || command == "help") {
        fhook::cli::print_stdout(kUsage);
        return 0;
    }
    if (command == "-V" || command == "--version") {
        fhook::cli::print_stdout("fhook " + std::string(fhook::version()) + "\n");
        return 0;
    }
    if (command == "trace") {
        return fhook::cli::cmd_trace(args);
    }
    if (command == "record") {
        return fhook::cli::cmd_record(args);
    }
    if (command == "stat") {
        return fhook::cli::cmd_stat(args);
    }
    if (command == "count") {
        return fhook::cli::cmd_count(args);
    }
    if (command == "latency") {
        return fhook::cli::cmd_latency(args);
    }
    if (command == "hook") {
        return fhook::cli::cmd_hook(args);
    }
    if (command == "explain") {
        return fhook::cli::cmd_explain(args);
    }
    if (command == "bench") {
        return fhook::cli::cmd_bench(args);
    }
    if (command == "report") {
        return fhook::cli::cmd_report(args);
    }
    if (command == "list") {
        return fhook::cli::cmd_list(args);
    }
    if (command == "status") {
        return fhook::cli::cmd_status(args);
    }
    fhook::throw_usage("unknown command '" + command +
                       "': use trace, record, stat, count, latency, hook, explain, report, list or "
                       "status "
                       "(see: fhook --help)");
}

void print_error(const std::string& message) {
    std::string line = "fhook: error: " + message + "\n";
    std::fputs(line.c_str(), stderr);
}

} // namespace

int main(int argc, char** argv) {
    // Writes to a closed pipe fail with EPIPE and end fhook quietly.
    std::signal(SIGPIPE, SIG_IGN);
    try {
        return run(argc, argv);
    } catch (const fhook::Error& e) {
        if (e.kind() != fhook::ErrorKind::OutputClosed) {
            print_error(e.what());
        }
        return e.exit_code();
    } catch (const std::bad_alloc&) {
        print_error("out of memory: use a smaller --buffer-size or fewer functions");
        return 1;
    } catch (const std::exception& e) {
        print_error(std::string("internal error: ") + e.what() + ": please report this bug");
        return 1;
    }
}
