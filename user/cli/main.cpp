// fhook: command line front end of libfhook.  All errors end up here and
// become "fhook: error: <cause>: <fix>" plus the exit code of docs/cli.md.
#include <csignal>
#include <cstdio>
#include <exception>
#include <iterator>
#include <new>
#include <string>

#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>

#include "commands.hpp"

namespace {

using Handler = int (*)(const fhook::cli::Args&);

struct Command {
    const char* name;
    Handler run;
    // its lines of the usage text: synopsis, then the description indented
    // (nullptr: a variant the command before describes)
    const char* help;
};

// The commands, in the order of the usage text and the unknown-command
// message.
constexpr Command kCommands[] = {
    {"trace", fhook::cli::cmd_trace,
     "  trace [options] PROBE... [-- COMMAND [ARGS...]]\n"
     "                        arm probes (functions, kprobes, uprobes) and stream\n"
     "                        the events\n"},
    {"record", fhook::cli::cmd_record,
     "  record -o FILE [options] PROBE... [-- COMMAND [ARGS...]]\n"
     "                        arm probes as trace does and write the events\n"
     "                        into a record file (binary, for fhook report)\n"},
    {"stat", fhook::cli::cmd_stat,
     "  stat [options] PROBE... [-- COMMAND [ARGS...]]\n"
     "                        count hits per probe, print a table at the end\n"},
    {"count", fhook::cli::cmd_count,
     "  count [options] FUNC... [-- COMMAND [ARGS...]]\n"
     "                        count calls per function, no records (--via ops|direct|\n"
     "                        kprobe)\n"},
    {"hist", fhook::cli::cmd_hist,
     "  hist [options] PROBE TRIGGER... [-- COMMAND [ARGS...]]\n"
     "                        histograms in the tracefs hist trigger language (keys,\n"
     "                        values, sort; stacks folded or as a flame graph)\n"},
    {"latency", fhook::cli::cmd_latency,
     "  latency [options] FUNC... [-- COMMAND [ARGS...]]\n"
     "                        histograms of each function's duration, kept in the\n"
     "                        module (funclatency)\n"},
    {"export", fhook::cli::cmd_export,
     "  export --config FILE [--listen ADDR:PORT]\n"
     "                        run the jobs of FILE as a Prometheus exporter (a\n"
     "                        service; SIGHUP reloads)\n"},
    {"wakeup", fhook::cli::cmd_wakeup,
     "  wakeup [--rt | --dl] [top | hist] [options] [-- COMMAND [ARGS...]]\n"
     "                        wakeup latency: the kernel's wakeup, wakeup_rt and\n"
     "                        wakeup_dl tracers, rtla-style top and hist modes\n"},
    {"timerlat", fhook::cli::cmd_timerlat,
     "  timerlat [top | hist | trace] [options] [-- COMMAND [ARGS...]]\n"
     "                        timer IRQ and thread latency per CPU: the kernel's\n"
     "                        timerlat tracer, rtla-style top and hist modes\n"},
    {"hwlat", fhook::cli::cmd_hwlat,
     "  hwlat [options] [-- COMMAND [ARGS...]]\n"
     "                        time taken from the CPUs below the kernel (SMIs,\n"
     "                        hypervisor): the kernel's hwlat tracer\n"},
    {"osnoise", fhook::cli::cmd_osnoise,
     "  osnoise [top | hist | trace] [options] [-- COMMAND [ARGS...]]\n"
     "                        the time the kernel and hardware take from a busy\n"
     "                        task per CPU: the kernel's osnoise tracer\n"},
    {"irqsoff", fhook::cli::cmd_irqsoff,
     "  irqsoff | preemptoff | preemptirqsoff [options] [-- COMMAND [ARGS...]]\n"
     "                        the longest sections with interrupts (preemption)\n"
     "                        off, where the kernel has their tracepoints\n"},
    {"preemptoff", fhook::cli::cmd_preemptoff, nullptr},
    {"preemptirqsoff", fhook::cli::cmd_preemptirqsoff, nullptr},
    {"graph", fhook::cli::cmd_graph,
     "  graph [options] FUNC... [-- COMMAND [ARGS...]]\n"
     "                        call trees under FUNC with durations (function_graph)\n"},
    {"errors", fhook::cli::cmd_errors,
     "  errors [options] ENTRY... [-- COMMAND [ARGS...]]\n"
     "                        which function returned the error: the chain of\n"
     "                        failing calls below ENTRY, kept in the module\n"},
    {"hook", fhook::cli::cmd_hook,
     "  hook [options] ACTION FUNC [FIELD...] [-- COMMAND [ARGS...]]\n"
     "                        change or time a function: --trace-around, --return\n"
     "                        VALUE, --redirect FUNC2 (IPMODIFY)\n"},
    {"explain", fhook::cli::cmd_explain,
     "  explain [options] FUNC\n"
     "                        show how ftrace hooks FUNC: its patch site\n"
     "                        disassembled, idle and armed, and who is attached\n"},
    {"bench", fhook::cli::cmd_bench,
     "  bench [options]       cost per hit of every mechanism, fhook's and its\n"
     "                        peers' (ftrace, kprobe_events, bpftrace)\n"},
    {"report", fhook::cli::cmd_report,
     "  report [options] FILE print a record file, like trace would have\n"},
    {"list", fhook::cli::cmd_list,
     "  list functions [PATTERN...] | list events [EVENT...]\n"
     "                        list the traceable functions or the trace events\n"},
    {"status", fhook::cli::cmd_status,
     "  status                show the state of the fhook module\n"},
    {"doctor", fhook::cli::cmd_doctor,
     "  doctor [--format json]\n"
     "                        will fhook work here, and if not, why (kernel\n"
     "                        options, tracefs, lockdown, module, privileges)\n"},
    {"vm", fhook::cli::cmd_vm,
     "  vm [options] [-- COMMAND]\n"
     "                        run COMMAND (or a shell) in a throwaway QEMU guest\n"
     "                        with fhook loaded (host command)\n"},
};

std::string usage() {
    std::string text = "Usage: fhook COMMAND [options] [ARGS...]\n"
                       "\n"
                       "Kernel function tracing with the fhook module.\n"
                       "\n"
                       "Commands:\n";
    for (const auto& c : kCommands) {
        text += c.help ? c.help : ""; // (nullptr: said in the line before)
    }
    text += "\n"
            "Options:\n"
            "  -h, --help            this help; 'fhook help COMMAND' or 'fhook COMMAND\n"
            "                        --help' for a command\n"
            "  -V, --version         print the version of fhook and of the loaded module\n"
            "\n"
            "Exit status: 0 success, 1 runtime error, 2 usage error.\n";
    return text;
}

// The CLI's version and ABI, and the loaded module's: one line each.
std::string version_text() {
    const std::string abi = std::to_string(FHOOK_ABI_VERSION);
    std::string text = "fhook " + std::string(fhook::version()) + " (ABI " + abi + ")\n";
    const fhook::ModuleStatus mod = fhook::module_status();
    if (!mod.loaded) {
        return text + "module: not loaded\n";
    }
    text += "module: fhook.ko " + (mod.version.empty() ? "?" : mod.version);
    if (mod.abi_version == 0) {
        return text + " (ABI not shown: older than this fhook), loaded\n";
    }
    text += " (ABI " + std::to_string(mod.abi_version) + "), loaded";
    if (mod.abi_version != FHOOK_ABI_VERSION) {
        text += ": another ABI, use the fhook built with it";
    }
    return text + "\n";
}

// "trace, record, ... or status"
std::string command_names() {
    std::string names;
    const std::size_t n = std::size(kCommands);
    for (std::size_t i = 0; i < n; i++) {
        names += i == 0 ? "" : i + 1 == n ? " or " : ", ";
        names += kCommands[i].name;
    }
    return names;
}

int run(int argc, char** argv) {
    if (argc < 2) {
        std::fputs(usage().c_str(), stderr);
        return 2;
    }
    const std::string command = argv[1];
    const fhook::cli::Args args(argv + 2, argv + argc);
    if (command == "help" && !args.empty()) {
        // fhook help CMD: that command's --help
        for (const auto& c : kCommands) {
            if (args.front() == c.name) {
                return c.run({"--help"});
            }
        }
        fhook::throw_invalid("no command '" + args.front() + "': use " + command_names() +
                             " (see: fhook --help)");
    }
    if (command == "-h" || command == "--help" || command == "help") {
        fhook::cli::print_stdout(usage());
        return 0;
    }
    if (command == "-V" || command == "--version") {
        fhook::cli::print_stdout(version_text());
        return 0;
    }
    for (const auto& c : kCommands) {
        if (command == c.name) {
            return c.run(args);
        }
    }
    fhook::throw_invalid("unknown command '" + command + "': use " + command_names() +
                         " (see: fhook --help)");
}

// The option a user sets for what the library calls a Setting.
std::string_view option_name(fhook::Setting setting) {
    switch (setting) {
    case fhook::Setting::RingSize:
        return "--buffer-size";
    case fhook::Setting::Pids:
        return "--pid";
    case fhook::Setting::Cpus:
        return "--cpu";
    case fhook::Setting::PrototypeCheck:
        return "--force";
    case fhook::Setting::None:
        break;
    }
    return "";
}

// docs/cli.md: 0 success, 1 runtime error, 2 usage error.
int exit_code(fhook::ErrorKind kind) {
    switch (kind) {
    case fhook::ErrorKind::Invalid:
        return 2;
    case fhook::ErrorKind::OutputClosed:
        return 0;
    case fhook::ErrorKind::Runtime:
        break;
    }
    return 1;
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
            print_error(e.text(option_name(e.setting())));
        }
        return exit_code(e.kind());
    } catch (const std::bad_alloc&) {
        print_error("out of memory: use a smaller --buffer-size or fewer functions");
        return 1;
    } catch (const std::exception& e) {
        print_error(std::string("internal error: ") + e.what() + ": please report this bug");
        return 1;
    }
}
