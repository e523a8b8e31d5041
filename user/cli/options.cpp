#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fhook_abi.h>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

std::string env_or(const char* name, std::string fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

} // namespace

std::string device_path() {
    return env_or("FHOOK_DEVICE", FHOOK_DEVICE_PATH);
}

std::string functions_path() {
    std::string dir = env_or("FHOOK_TRACEFS", "");
    return dir.empty() ? dir : dir + "/available_filter_functions";
}

std::string tracefs_dir() {
    std::string dir = env_or("FHOOK_TRACEFS", "");
    if (!dir.empty()) {
        return dir;
    }
    return ::access("/sys/kernel/tracing/events", F_OK) == 0 ? "/sys/kernel/tracing"
                                                             : "/sys/kernel/debug/tracing";
}

std::string kallsyms_path() {
    return env_or("FHOOK_KALLSYMS", "/proc/kallsyms");
}

po::variables_map parse_args(std::string_view command, const Args& args,
                             const po::options_description& options,
                             const po::positional_options_description& positional) {
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw_invalid(std::string(e.what()) + ": see: fhook " + std::string(command) + " --help");
    }
    return vm;
}

std::uint64_t parse_u64(std::string_view option, std::string_view text) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
        throw_invalid("invalid value '" + std::string(text) + "' for " + std::string(option) +
                      ": give a non-negative integer");
    }
    return value;
}

int parse_pid(std::string_view option, std::string_view text) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value <= 0) {
        throw_invalid("invalid pid '" + std::string(text) + "' for " + std::string(option) +
                      ": give a positive process id");
    }
    return value;
}

std::vector<pid_t> parse_pids(const std::vector<std::string>& items) {
    std::vector<pid_t> pids;
    for (const auto& item : items) {
        std::string_view rest = item;
        for (;;) {
            std::size_t comma = rest.find(',');
            pids.push_back(parse_pid("--pid", rest.substr(0, comma)));
            if (comma == std::string_view::npos) {
                break;
            }
            rest.remove_prefix(comma + 1);
        }
    }
    return pids;
}

OutputFormat parse_format(std::string_view text, bool chrome) {
    if (text == "text") {
        return OutputFormat::Text;
    }
    if (text == "json") {
        return OutputFormat::Json;
    }
    if (chrome && text == "chrome") {
        return OutputFormat::Chrome;
    }
    if (chrome && text == "otlp") {
        return OutputFormat::Otlp;
    }
    throw_invalid("unknown --format '" + std::string(text) + "': use text" +
                  (chrome ? ", json, chrome or otlp" : " or json"));
}

double parse_seconds(std::string_view option, std::string_view text) {
    const std::string copy(text);
    char* end = nullptr;
    double value = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value) || value <= 0 ||
        value > 1e9) {
        throw_invalid("invalid duration '" + copy + "' for " + std::string(option) +
                      ": give a positive number of seconds, e.g. 1.5");
    }
    return value;
}

void print_help(std::string_view usage, const po::options_description& options) {
    std::ostringstream text;
    text << usage << "\n" << options;
    std::string out = text.str();
    if (out.empty() || out.back() != '\n') {
        out += '\n';
    }
    print_stdout(out);
}

void print_to(int fd, std::string_view text) {
    OutputWriter out(fd);
    out.append(text);
    out.flush();
}

void print_stdout(std::string_view text) {
    print_to(STDOUT_FILENO, text);
}

void print_stderr(std::string_view text) {
    print_to(STDERR_FILENO, text);
}

} // namespace fhook::cli
