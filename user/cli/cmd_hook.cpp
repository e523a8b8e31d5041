// fhook hook [options] ACTION FUNC [FIELD...] [-- COMMAND [ARGS...]]
#include <charconv>
#include <cstdlib>

#include <fhook/core/error.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kUsage =
    "Usage: fhook hook [options] ACTION FUNC [FIELD...] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Change or time the kernel function FUNC with an IPMODIFY ftrace_ops, until\n"
    "Ctrl-C, --duration or the exit of COMMAND (then only the command's processes\n"
    "are hooked).  The hook goes away with fhook.  ACTION is one of:\n"
    "  --trace-around      call FUNC and record FIELDs at entry, the return value\n"
    "                      and the duration of each call\n"
    "  --return VALUE      skip FUNC and return VALUE (fault injection; lab mode)\n"
    "  --redirect FUNC2    call FUNC2 (same prototype, checked with BTF) instead\n"
    "                      (lab mode)\n"
    "FIELDs are fetch arguments as in kprobe definitions ($arg1, +0(%si):string,\n"
    "BTF names like file->f_pos); --filter and the conditions choose the calls the\n"
    "action applies to.  Lab mode: the module loaded with lab=1 (taints the kernel).\n";

void add_hook_options(po::options_description& options) {
    options.add_options()("trace-around",
                          "call the function, record fields, return value and duration")(
        "return", po::value<std::string>()->value_name("VALUE"),
        "skip the function, return VALUE (e.g. -12 for -ENOMEM)")(
        "redirect", po::value<std::string>()->value_name("FUNC2"),
        "call FUNC2 instead (same prototype)")("comm", po::value<std::string>()->value_name("NAME"),
                                               "only calls by tasks named NAME")(
        "nth", po::value<std::string>()->value_name("N"), "only the Nth matching call")(
        "every", po::value<std::string>()->value_name("N"), "every Nth matching call")(
        "times", po::value<std::string>()->value_name("N"),
        "at most N times")("probability", po::value<std::string>()->value_name("PCT"),
                           "each matching call with PCT percent probability")(
        "record", "--return/--redirect: print each call changed")(
        "force", "--redirect when either function has no BTF: skip the prototype check");
}

std::int64_t parse_i64(std::string_view option, std::string_view text) {
    const char* end = text.data() + text.size();
    int base = 10;
    std::string_view digits = text;
    const bool neg = !digits.empty() && digits.front() == '-';
    if (neg) {
        digits.remove_prefix(1);
    }
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    }
    std::uint64_t mag = 0;
    auto r = std::from_chars(digits.data(), end, mag, base);
    if (digits.empty() || r.ec != std::errc() || r.ptr != end ||
        mag > (neg ? 0x8000000000000000ULL : 0x7fffffffffffffffULL)) {
        throw_invalid(std::string(option) + " '" + std::string(text) +
                      "' is not a 64-bit integer (decimal or 0x hex, e.g. -12)");
    }
    return neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
}

// --nth, --every, --times: at least 1 when given, 0 when not.
std::uint64_t parse_count(const po::variables_map& vm, const std::string& name) {
    if (!vm.count(name)) {
        return 0;
    }
    const std::uint64_t n = parse_u64("--" + name, vm[name].as<std::string>());
    if (n == 0) {
        throw_invalid("--" + name + " must be at least 1");
    }
    return n;
}

void parse_hook_options(const po::variables_map& vm, TraceOptions& opt) {
    const int actions =
        static_cast<int>(vm.count("trace-around") + vm.count("return") + vm.count("redirect"));
    if (actions != 1) {
        throw_invalid("give one action: --trace-around, --return VALUE or --redirect FUNC2");
    }
    HookSpec& spec = opt.spec.hook;
    fhook_hook& h = spec.hook;
    if (vm.count("trace-around")) {
        h.action = FHOOK_HOOK_AROUND;
    } else if (vm.count("return")) {
        h.action = FHOOK_HOOK_RETURN;
        h.retval = parse_i64("--return", vm["return"].as<std::string>());
    } else {
        h.action = FHOOK_HOOK_REDIRECT;
        spec.redirect = vm["redirect"].as<std::string>();
    }
    if (vm.count("record")) {
        if (h.action == FHOOK_HOOK_AROUND) {
            throw_invalid("--trace-around records every call already: drop --record");
        }
        h.flags |= FHOOK_HOOK_F_RECORD;
    }
    h.nth = parse_count(vm, "nth");
    h.every = parse_count(vm, "every");
    h.times = parse_count(vm, "times");
    if (vm.count("probability")) {
        const std::string text = vm["probability"].as<std::string>();
        char* end = nullptr;
        const double pct = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(pct > 0) || pct > 100) {
            throw_invalid("--probability '" + text + "': a percentage above 0, at most 100");
        }
        h.probability = static_cast<std::uint32_t>(pct * 10000 + 0.5);
        if (h.probability == 0) {
            h.probability = 1;
        }
    }
    if (vm.count("comm")) {
        spec.comm = vm["comm"].as<std::string>();
        if (spec.comm.empty() || spec.comm.size() >= FHOOK_COMM_LEN ||
            spec.comm.find('"') != std::string::npos) {
            throw_invalid("--comm '" + spec.comm + "': a task name of 1 to 15 characters");
        }
    }
    spec.check_prototype = vm.count("force") == 0;
    const std::vector<std::string>& probes = opt.spec.probes;
    if (probes.empty()) {
        throw_invalid("give the function to hook, e.g. fhook hook --trace-around vfs_read");
    }
    if (is_probe_definition(probes.front()) ||
        probes.front().find_first_of("*?[!") != std::string::npos) {
        throw_invalid("fhook hook takes one function name, not '" + probes.front() + "'");
    }
}

} // namespace

int cmd_hook(const Args& args) {
    TraceCommand cmd;
    cmd.name = "hook";
    cmd.usage = kUsage;
    cmd.summary = true;
    cmd.collect = Collect::Hook;
    cmd.snapshots = false;
    cmd.via = false;
    cmd.filter_help = "act only on calls where EXPR holds (on the FIELDs and the task)";
    cmd.output_help = "write the event text to FILE instead of stdout";
    cmd.format_help = "text (the kernel's trace format, default), json (NDJSON), chrome "
                      "(Chrome trace JSON for Perfetto) or otlp (OTLP/HTTP JSON logs, a line per "
                      "batch)";
    cmd.chrome = true;
    cmd.add_options = add_hook_options;
    cmd.parse_options = parse_hook_options;
    std::optional<TraceOptions> opt = parse_trace_options(args, cmd);
    if (!opt) {
        return 0; // --help
    }
    return print_events(*opt);
}

} // namespace fhook::cli
