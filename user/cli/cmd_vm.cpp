// fhook vm [options] [-- COMMAND [ARGS...]]: a throwaway QEMU guest with
// fhook loaded, for trying hooks (docs/vm.md).  This checks the options
// and hands them to the runner of the build or installation this fhook
// belongs to (vmtests/vm.sh), which boots the guest and exits with the
// command's status.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fhook/core/arch.hpp>
#include <fhook/core/error.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kVmUsage =
    "Usage: fhook vm [options] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Boot a kernel in a throwaway QEMU guest (KVM if it works, TCG otherwise) with\n"
    "busybox, fhook.ko loaded and the fhook CLI, copy the --add files in, and run\n"
    "COMMAND (its words joined, with sh -c, in /root) or, without one, a shell on\n"
    "this terminal.  Exits with COMMAND's status; 124 when it gave no result within\n"
    "--timeout, 125 when the guest kernel oopsed, panicked or printed a WARNING or\n"
    "BUG (those lines on stderr).  Kernels: the targets scripts/setup.sh installed,\n"
    "by release or as 6.1, 6.12, rt (6.12 PREEMPT_RT), debug; or a bzImage with\n"
    "--modules DIR holding fhook.ko built for it.  --arch arm64 boots Debian's arm64\n"
    "6.1 and 6.12 kernels under qemu-system-aarch64 (TCG) with the arm64 CLI\n"
    "(make user-arm64).\n";

// The runner beside this executable: build/user/fhook -> vmtests/vm.sh,
// PREFIX/bin/fhook -> PREFIX/lib/fhook/vmtests/vm.sh.
std::filesystem::path find_runner(const std::filesystem::path& exe) {
    const std::filesystem::path dir = exe.parent_path();
    for (const auto& cand : {dir / "../../vmtests/vm.sh", dir / "../lib/fhook/vmtests/vm.sh"}) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(cand, ec)) {
            return std::filesystem::weakly_canonical(cand, ec);
        }
    }
    throw_runtime("cannot find the VM runner (vmtests/vm.sh) beside " + exe.string() +
                      ": run the fhook of a build tree or of an installation",
                  ENOENT);
}

// The CLI a guest of another CPU runs: build/user/fhook ->
// build/user-arm64/fhook, PREFIX/bin/fhook -> PREFIX/lib/fhook/arm64/fhook.
std::filesystem::path find_guest_cli(const std::filesystem::path& exe, const std::string& arch) {
    const std::filesystem::path dir = exe.parent_path();
    for (const auto& cand :
         {dir / ("../user-" + arch) / "fhook", dir / "../lib/fhook" / arch / "fhook"}) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(cand, ec)) {
            return std::filesystem::weakly_canonical(cand, ec);
        }
    }
    throw_runtime("no " + arch + " fhook CLI beside " + exe.string() +
                      " (a build tree's is make user-" + arch + "'s build/user-" + arch + "/fhook)",
                  ENOENT);
}

} // namespace

int cmd_vm(const Args& args) {
    po::options_description options("Options");
    options.add_options()("help,h", "show this help")(
        "arch", po::value<std::string>()->value_name("A"),
        "the guest's CPU: x86_64 or arm64 (default: this machine's)")(
        "kernel", po::value<std::string>()->default_value("6.12")->value_name("K"),
        "RELEASE, 6.1, 6.12, rt, debug, or the path of a bzImage")(
        "modules", po::value<std::string>()->value_name("DIR"),
        "with a bzImage: the directory of its fhook.ko (and other .ko to copy)")(
        "add", po::value<std::vector<std::string>>()->value_name("HOST[:GUEST]"),
        "copy a file or directory into the guest (default: /root/NAME); repeatable")(
        "smp", po::value<std::string>()->default_value("2")->value_name("N"), "vCPUs")(
        "mem", po::value<std::string>()->default_value("1024")->value_name("MB"),
        "memory")("timeout", po::value<std::string>()->value_name("SEC"),
                  "give up after SEC seconds (default: 600 with a COMMAND, none for a shell)")(
        "module-args", po::value<std::string>()->value_name("ARGS"),
        "fhook.ko's parameters, e.g. 'lab=1'")("no-load", "do not load fhook.ko")(
        "keep-log", po::value<std::string>()->value_name("FILE"),
        "keep the guest's kernel console log in FILE")(
        "accel", po::value<std::string>()->default_value("auto")->value_name("A"),
        "auto (KVM, again under TCG if KVM fails before the guest starts), kvm or tcg")(
        "out", po::value<std::string>()->value_name("DIR"),
        "the guest's /out is DIR on the host: what the command writes there stays, "
        "also after a guest panic");
    po::options_description hidden;
    hidden.add_options()("command", po::value<std::vector<std::string>>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("command", -1);
    po::variables_map vm = parse_args("vm", args, all, positional);
    if (vm.count("help")) {
        print_help(kVmUsage, options);
        return 0;
    }

    const std::vector<std::string> command = vm.count("command")
                                                 ? vm["command"].as<std::vector<std::string>>()
                                                 : std::vector<std::string>{};
    const std::uint64_t smp = parse_u64("--smp", vm["smp"].as<std::string>());
    const std::uint64_t mem = parse_u64("--mem", vm["mem"].as<std::string>());
    if (smp == 0 || smp > 64) {
        throw_invalid("--smp takes 1 to 64 vCPUs, not " + vm["smp"].as<std::string>());
    }
    if (mem < 128) {
        throw_invalid("--mem takes at least 128 (MiB), not " + vm["mem"].as<std::string>());
    }
    std::uint64_t timeout = command.empty() ? 0 : 600;
    if (vm.count("timeout")) {
        timeout = parse_u64("--timeout", vm["timeout"].as<std::string>());
        if (timeout == 0) {
            throw_invalid("--timeout takes a number of seconds above 0");
        }
    }
    const std::string accel = vm["accel"].as<std::string>();
    if (accel != "auto" && accel != "kvm" && accel != "tcg") {
        throw_invalid("--accel takes auto, kvm or tcg, not '" + accel + "'");
    }
    const std::string host = host_arch() == Arch::Arm64 ? "arm64" : "x86_64";
    const std::string arch = vm.count("arch") ? vm["arch"].as<std::string>() : host;
    if (arch != "x86_64" && arch != "arm64") {
        throw_invalid("--arch takes x86_64 or arm64, not '" + arch + "'");
    }
    if (arch != host && accel == "kvm") {
        throw_invalid("--accel kvm: an " + arch + " guest on this " + host +
                      " machine is emulated (TCG) only");
    }
    const std::string kernel = vm["kernel"].as<std::string>();
    if (kernel.find('/') != std::string::npos && !std::filesystem::is_regular_file(kernel)) {
        throw_invalid("--kernel " + kernel + ": no such file");
    }

    const std::vector<std::string> adds =
        vm.count("add") ? vm["add"].as<std::vector<std::string>>() : std::vector<std::string>{};
    for (const auto& spec : adds) {
        const std::size_t colon = spec.find(':');
        const std::string host = spec.substr(0, colon);
        std::error_code missing;
        if (!std::filesystem::exists(host, missing)) {
            throw_invalid("--add " + spec + ": " + host + ": no such file or directory");
        }
        if (colon != std::string::npos && (colon + 1 == spec.size() || spec[colon + 1] != '/')) {
            throw_invalid("--add " + spec + ": the guest path must be absolute");
        }
    }

    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        throw_runtime("cannot find this program's path (/proc/self/exe): " + ec.message(),
                      ec.value());
    }
    const std::filesystem::path runner = find_runner(exe);
    const std::filesystem::path cli = arch == host ? exe : find_guest_cli(exe, arch);
    std::vector<std::string> argv = {"bash",      runner.string(),
                                     "--cli",     cli,
                                     "--arch",    arch,
                                     "--kernel",  kernel,
                                     "--smp",     std::to_string(smp),
                                     "--mem",     std::to_string(mem),
                                     "--timeout", std::to_string(timeout),
                                     "--accel",   accel};
    if (vm.count("modules")) {
        argv.insert(argv.end(), {"--modules", vm["modules"].as<std::string>()});
    }
    for (const auto& spec : adds) {
        argv.insert(argv.end(), {"--add", spec});
    }
    if (vm.count("module-args")) {
        argv.insert(argv.end(), {"--module-args", vm["module-args"].as<std::string>()});
    }
    if (vm.count("out")) {
        argv.insert(argv.end(), {"--out", vm["out"].as<std::string>()});
    }
    if (vm.count("no-load")) {
        argv.emplace_back("--no-load");
    }
    if (vm.count("keep-log")) {
        argv.insert(argv.end(), {"--keep-log", vm["keep-log"].as<std::string>()});
    }
    if (!command.empty()) {
        argv.emplace_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
    }
    std::vector<char*> cargv;
    for (auto& a : argv) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    execvp("bash", cargv.data());
    throw_runtime(std::string("cannot run bash for the VM runner: ") + std::strerror(errno), errno);
}

} // namespace fhook::cli
