// fhook explain [options] FUNC
#include <fhook/core/error.hpp>
#include <fhook/engine/explainer.hpp>

#include "commands.hpp"
#include "trace_options.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kExplainUsage =
    "Usage: fhook explain [options] FUNC\n"
    "\n"
    "Show how ftrace hooks the kernel function FUNC: whether it can be traced\n"
    "and why not; its address and size; its first instructions disassembled\n"
    "(capstone), with the 5-byte ftrace call site that is a NOP while nothing\n"
    "traces the function; who is attached (tracefs enabled_functions: flags,\n"
    "trampolines, direct calls) and which kprobes sit on it.  With --arm, fhook\n"
    "attaches itself the chosen way and shows the same bytes while armed: the\n"
    "call into ftrace_caller/ftrace_regs_caller, a trampoline, fhook's direct\n"
    "trampoline or the int3 of a kprobe, its target symbolized.\n";

ExplainArm parse_arm(const std::string& text) {
    for (ExplainArm arm :
         {ExplainArm::Ops, ExplainArm::Direct, ExplainArm::Kprobe, ExplainArm::Hook}) {
        if (text == explain_arm_name(arm)) {
            return arm;
        }
    }
    throw_invalid("--arm '" + text + "': use ops, direct, kprobe or hook");
}

} // namespace

int cmd_explain(const Args& args) {
    po::options_description options("Options");
    options.add_options()("arm", po::value<std::string>()->value_name("HOW"),
                          "also show the bytes while fhook is attached: ops, direct, kprobe or "
                          "hook")("bytes", po::value<std::string>()->value_name("N"),
                                  "bytes of the function to disassemble (default 32)")(
        "format,f", po::value<std::string>()->value_name("FMT"),
        "text (default) or json")("help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("function", po::value<std::string>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("function", 1);
    po::variables_map vm = parse_args("explain", args, all, positional);
    if (vm.count("help")) {
        print_help(kExplainUsage, options);
        return 0;
    }
    if (!vm.count("function")) {
        throw_invalid("give the function to explain, e.g. fhook explain vfs_read");
    }
    const ExplainArm arm =
        vm.count("arm") ? parse_arm(vm["arm"].as<std::string>()) : ExplainArm::None;
    const OutputFormat format =
        vm.count("format") ? parse_format(vm["format"].as<std::string>()) : OutputFormat::Text;
    std::size_t bytes = 32;
    if (vm.count("bytes")) {
        bytes = parse_u64("--bytes", vm["bytes"].as<std::string>());
        if (bytes == 0 || bytes > FHOOK_MAX_READ_TEXT) {
            throw_invalid("--bytes must be between 1 and " + std::to_string(FHOOK_MAX_READ_TEXT));
        }
    }
    const Explanation e =
        explain_function(vm["function"].as<std::string>(), arm, bytes, system_paths());
    print_stdout(format == OutputFormat::Json ? explain_json(e) : explain_text(e));
    return 0;
}

} // namespace fhook::cli
