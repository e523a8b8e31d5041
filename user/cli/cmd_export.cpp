// fhook export --config FILE [--listen ADDR:PORT]
#include <signal.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include <fhook/core/error.hpp>
#include <fhook/engine/export.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook export --config FILE [--listen ADDR:PORT]\n"
    "\n"
    "Run the counting, timing, wakeup and hist jobs of FILE (TOML: [[count]],\n"
    "[[latency]], [[wakeup]], [[hist]] tables) until SIGINT or SIGTERM, and serve\n"
    "their metrics for Prometheus on http://ADDR:PORT/metrics, each labelled with\n"
    "its job's name: a long-running exporter, as node_exporter and ebpf_exporter\n"
    "are (the unit fhook-export.service runs it).  SIGHUP reads FILE again: jobs\n"
    "that did not change keep running, and their counts; a FILE that does not\n"
    "parse or arm leaves the running jobs as they were.  docs/fleet.md.\n";

ExportConfig read_config(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        const int err = errno;
        throw_runtime("cannot read '" + path + "': " + errno_text(err), err);
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse_export_config(text.str(), path);
}

std::string names(const std::vector<std::string>& jobs) {
    std::string out;
    for (const auto& j : jobs) {
        out += (out.empty() ? "" : ", ") + j;
    }
    return out.empty() ? "-" : out;
}

} // namespace

int cmd_export(const Args& args) {
    po::options_description options("Options");
    options.add_options()("config,c", po::value<std::string>()->value_name("FILE"),
                          "the jobs (TOML; docs/fleet.md)")(
        "listen", po::value<std::string>()->value_name("ADDR:PORT"),
        "serve there instead of the file's listen (default 127.0.0.1:9110)")(
        "quiet,q", "no notes on stderr")("help,h", "show this help");
    po::positional_options_description positional;
    po::variables_map vm = parse_args("export", args, options, positional);
    if (vm.count("help")) {
        print_help(kUsage, options);
        return 0;
    }
    if (!vm.count("config")) {
        throw_invalid("give the jobs' file: fhook export --config /etc/fhook/export.toml");
    }
    const std::string path = vm["config"].as<std::string>();
    const bool quiet = vm.count("quiet") > 0;
    ExportConfig config = read_config(path);
    const std::string listen = vm.count("listen") ? vm["listen"].as<std::string>() : config.listen;
    // (blocked before any thread starts: every thread inherits the mask,
    // and sigwait() below takes them)
    sigset_t wanted;
    sigemptyset(&wanted);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        sigaddset(&wanted, sig);
    }
    pthread_sigmask(SIG_BLOCK, &wanted, nullptr);
    Exporter exporter(system_paths());
    std::atomic<bool> armed = false; // (read by the server's threads)
    MetricsServer server(
        [&]() -> std::optional<std::string> {
            if (!armed) {
                return std::nullopt;
            }
            return exporter.prometheus_text();
        },
        listen);
    const Exporter::Change first = exporter.apply(config);
    armed = true;
    if (!quiet) {
        print_stderr("fhook: " + std::to_string(first.armed.size()) + " job(s) (" +
                     names(first.armed) + "); metrics on " + server.url() + "\n");
    }
    for (;;) {
        int sig = 0;
        sigwait(&wanted, &sig);
        if (sig != SIGHUP) {
            return 0;
        }
        try {
            const Exporter::Change c = exporter.apply(read_config(path));
            if (!quiet) {
                print_stderr("fhook: reloaded " + path + ": kept " + names(c.kept) + "; armed " +
                             names(c.armed) + "; dropped " + names(c.dropped) + "\n");
            }
        } catch (const Error& e) {
            print_stderr("fhook: error: " + std::string(e.what()) +
                         " (the running jobs stay as they were)\n");
        }
    }
}

} // namespace fhook::cli
