// The fhook subcommands and the helpers they share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include <fhook/output/format.hpp>

namespace fhook::cli {

namespace po = boost::program_options;

using Args = std::vector<std::string>;

// Each returns the exit code; errors are thrown as fhook::Error and mapped
// to exit codes by main().
int cmd_trace(const Args& args);
int cmd_record(const Args& args);
int cmd_stat(const Args& args);
int cmd_count(const Args& args);
int cmd_hook(const Args& args);
int cmd_latency(const Args& args);
int cmd_wakeup(const Args& args);
int cmd_timerlat(const Args& args);
int cmd_hwlat(const Args& args);
int cmd_osnoise(const Args& args);
int cmd_irqsoff(const Args& args);
int cmd_preemptoff(const Args& args);
int cmd_preemptirqsoff(const Args& args);
int cmd_graph(const Args& args);
int cmd_errors(const Args& args);
int cmd_hist(const Args& args);
int cmd_explain(const Args& args);
int cmd_bench(const Args& args);
int cmd_report(const Args& args);
int cmd_list(const Args& args);
int cmd_status(const Args& args);
int cmd_doctor(const Args& args);
int cmd_vm(const Args& args);
int cmd_export(const Args& args);

// Paths, overridable through the environment for testing:
// FHOOK_DEVICE, FHOOK_TRACEFS (a directory), FHOOK_KALLSYMS.
std::string device_path();
std::string functions_path(); // "" = the default tracefs / debugfs search
std::string kallsyms_path();
std::string tracefs_dir(); // $FHOOK_TRACEFS, /sys/kernel/tracing or the debugfs one

// Runs Boost.Program_options over `args`; its exceptions become Usage Errors
// that point to "fhook <command> --help".
po::variables_map parse_args(std::string_view command, const Args& args,
                             const po::options_description& options,
                             const po::positional_options_description& positional);

// Strict number parsing with Usage Errors naming `option`.
std::uint64_t parse_u64(std::string_view option, std::string_view text);
int parse_pid(std::string_view option, std::string_view text);
// --pid values: each a PID or a comma-separated list.
std::vector<pid_t> parse_pids(const std::vector<std::string>& items);
double parse_seconds(std::string_view option, std::string_view text);
// --format text|json (|chrome for event streams); an Invalid Error otherwise.
OutputFormat parse_format(std::string_view text, bool chrome = false);

// Writes all of `text` to fd 1 (help and status output), or to fd 2.
// `text` to `fd` at once (-o FILE's or stdout), then to stdout or stderr.
void print_to(int fd, std::string_view text);
void print_stdout(std::string_view text);
void print_stderr(std::string_view text);
// `usage`, a blank line and the option table, on stdout.
void print_help(std::string_view usage, const po::options_description& options);

} // namespace fhook::cli
