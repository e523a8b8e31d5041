// fhook status
#include <optional>
#include <sstream>

#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kStatusUsage = "Usage: fhook status\n"
                                     "\n"
                                     "Show whether the fhook module is loaded, its ABI, version,\n"
                                     "features, CPUs, the number of open sessions, and the hooks\n"
                                     "other kernel modules hold with fhook's hook API (function,\n"
                                     "module, kind, hits, tasks inside now).  Exits 1 when the\n"
                                     "module is not loaded.\n";

} // namespace

int cmd_status(const Args& args) {
    po::options_description options("Options");
    options.add_options()("help,h", "show this help");
    po::positional_options_description positional;
    po::variables_map vm = parse_args("status", args, options, positional);
    if (vm.count("help")) {
        print_help(kStatusUsage, options);
        return 0;
    }

    const std::string path = device_path();
    std::optional<Device> device;
    try {
        device.emplace(path);
    } catch (const Error& e) {
        if (Device::is_not_loaded_errno(e.sys_errno())) {
            print_stdout("module: not loaded\n");
        }
        throw;
    }
    const DeviceInfo& info = device->info();
    std::ostringstream out;
    out << "module: loaded\n"
        << "device: " << path << "\n"
        << "abi: " << info.abi_version << "\n"
        << "version: " << info.version << "\n"
        << "features: " << feature_names(info.features) << "\n"
        << "cpus: " << info.nr_cpus
        << "\n"
        // nr_sessions includes the session of this status command.
        << "sessions: " << (info.nr_sessions > 0 ? info.nr_sessions - 1 : 0) << "\n";
    if (info.nr_slots != 0 && info.khook_slots != 0) {
        out << "around slots: " << info.around_used << " of " << info.nr_slots << " in use ("
            << info.khook_slots << " kept for modules' hooks)\n"
            << "direct slots: " << info.direct_used << " of " << info.nr_slots << " in use\n"
            << "per user (root: no limit): sessions "
            << (info.max_user_sessions ? std::to_string(info.max_user_sessions)
                                       : std::string("no limit"))
            << ", slots of each kind "
            << (info.max_user_slots ? std::to_string(info.max_user_slots) : std::string("no limit"))
            << ", memory "
            << (info.max_user_mem_pct
                    ? std::to_string(info.max_user_mem_pct) + "% of fhook's budget"
                    : std::string("no limit"))
            << "\n";
    } else if (info.nr_slots != 0) {
        out << "trampoline slots: " << info.nr_slots << "\n";
    }
    if (device->has(FHOOK_FEAT_KHOOK)) {
        const std::vector<ModuleHook> hooks = device->module_hooks();
        out << "module hooks: " << hooks.size() << "\n";
        for (const auto& h : hooks) {
            out << "  " << h.function << " module=" << h.owner
                << " kind=" << module_hook_kind(h.kind) << " hits=" << h.hits
                << " inside=" << h.inside << " missed=" << h.missed << "\n";
        }
    }
    print_stdout(out.str());
    return 0;
}

} // namespace fhook::cli
