// fhook list functions [PATTERN...]
#include <unistd.h>

#include <optional>

#include <fhook/btf.hpp>
#include <fhook/error.hpp>
#include <fhook/output.hpp>
#include <fhook/spec.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kListUsage =
    "Usage: fhook list functions [PATTERN]\n"
    "\n"
    "Print the traceable functions (tracefs available_filter_functions), one\n"
    "per line as 'name' or 'name [module]'.  PATTERN uses the PROBE grammar of\n"
    "'fhook trace' (vfs_*, '!*rcu*', GLOB:mod:MODULE, :mod:MODULE), so the\n"
    "output is exactly what 'fhook trace PATTERN' would hook.  Exits 1 when\n"
    "nothing matches.  With -v, each function's prototype from the kernel's\n"
    "BTF follows its name (the names a probe definition can use).\n";

} // namespace

int cmd_list(const Args& args) {
    po::options_description options("Options");
    options.add_options()("verbose,v", "print prototypes from BTF")("help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("what", po::value<std::string>())(
        "pattern", po::value<std::vector<std::string>>()->default_value({}, ""));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("what", 1).add("pattern", -1);
    po::variables_map vm = parse_args("list", args, all, positional);
    if (vm.count("help")) {
        print_help(kListUsage, options);
        return 0;
    }
    if (!vm.count("what")) {
        throw_invalid("nothing to list: use 'fhook list functions [PATTERN]'");
    }
    const auto what = vm["what"].as<std::string>();
    if (what != "functions") {
        throw_invalid("cannot list '" + what + "': only 'fhook list functions' exists");
    }
    const auto patterns = vm["pattern"].as<std::vector<std::string>>();
    std::vector<ProbeSpec> specs;
    for (const auto& text : patterns) {
        specs.push_back(parse_probe_spec(text));
    }

    const FunctionList functions = FunctionList::load(functions_path());
    const FunctionSelector selector(specs);
    if (auto idx = selector.first_unmatched(functions)) {
        throw_runtime("no traceable function matches '" + specs[*idx].text +
                          "' (see: fhook list functions)",
                      ENOENT);
    }
    std::optional<KernelBtf> btf;
    if (vm.count("verbose")) {
        btf = KernelBtf::load();
    }
    OutputWriter out(STDOUT_FILENO);
    std::size_t count = 0;
    for (const auto& f : functions.functions()) {
        if (selector.selects(f)) {
            std::string& buf = out.buffer();
            buf += f.name;
            if (!f.module.empty()) {
                buf += " [";
                buf += f.module;
                buf += ']';
            }
            if (btf) {
                auto fn = f.module.empty() ? btf->function(f.name) : std::nullopt;
                buf += fn ? "\t" + btf->prototype(*fn) : std::string("\t(no BTF)");
            }
            buf += '\n';
            out.commit();
            count++;
        }
    }
    out.flush();
    if (count == 0) {
        if (specs.empty()) {
            throw_runtime("no traceable functions are listed: check that the kernel has "
                          "CONFIG_DYNAMIC_FTRACE and tracefs is mounted",
                          ENOENT);
        }
        throw_runtime("no traceable function matches '" + describe_specs(specs) +
                          "' (see: fhook list functions)",
                      ENOENT);
    }
    return 0;
}

} // namespace fhook::cli
