#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fhook_abi.h>

#include <fhook/core/arch.hpp>
#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>
#include <fhook/sys/doctor.hpp>
#include <fhook/sys/ftrace_state.hpp>

namespace fhook {

namespace {

namespace fs = std::filesystem;

bool exists(const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
}

std::optional<std::string> first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) {
        return std::nullopt;
    }
    return line;
}

// CONFIG_X -> "y", "m", "n" (# CONFIG_X is not set), a string or number
using KernelConfig = std::map<std::string, std::string>;

void parse_config_line(const std::string& line, KernelConfig& config) {
    static const std::string kNotSet = " is not set";
    if (line.rfind("CONFIG_", 0) == 0) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) {
            config[line.substr(0, eq)] = line.substr(eq + 1);
        }
    } else if (line.rfind("# CONFIG_", 0) == 0 && line.size() > kNotSet.size() &&
               line.compare(line.size() - kNotSet.size(), kNotSet.size(), kNotSet) == 0) {
        config[line.substr(2, line.size() - 2 - kNotSet.size())] = "n";
    }
}

// /boot/config-RELEASE as Debian installs it, else /proc/config.gz
// (CONFIG_IKCONFIG_PROC); the source's name, "" when there is none.
std::string read_config(const DoctorPaths& paths, const std::string& release,
                        KernelConfig& config) {
    const std::string boot = paths.boot + "/config-" + release;
    if (std::ifstream in(boot); in) {
        for (std::string line; std::getline(in, line);) {
            parse_config_line(line, config);
        }
        return boot;
    }
    const std::string gz = paths.proc + "/config.gz";
    gzFile f = gzopen(gz.c_str(), "rb");
    if (f == nullptr) {
        return {};
    }
    std::array<char, 4096> buf;
    while (gzgets(f, buf.data(), static_cast<int>(buf.size())) != nullptr) {
        std::string line(buf.data());
        if (!line.empty() && line.back() == '\n') {
            line.pop_back();
        }
        parse_config_line(line, config);
    }
    gzclose(f);
    return config.empty() ? std::string{} : gz;
}

// Which of `names` /proc/kallsyms lists (names are shown even when
// kptr_restrict hides the addresses); nullopt when it cannot be read.
std::optional<std::set<std::string>> kallsyms_has(const std::string& path,
                                                  const std::set<std::string>& names) {
    std::ifstream in(path);
    if (!in) {
        return std::nullopt;
    }
    std::set<std::string> found;
    std::string addr, type, name;
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        if (fields >> addr >> type >> name && names.count(name) != 0) {
            found.insert(name);
        }
    }
    return found;
}

// The tracefs mount point from /proc/mounts, "" when none.
std::string tracefs_mount(const std::string& proc) {
    std::ifstream in(proc + "/mounts");
    std::string dev, dir, type;
    std::string found;
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        if (fields >> dev >> dir >> type && type == "tracefs") {
            // /sys/kernel/tracing is preferred over the debugfs automount
            if (found.empty() || dir == "/sys/kernel/tracing") {
                found = dir;
            }
        }
    }
    return found;
}

// effective capability bits of this process (/proc/self/status CapEff)
std::uint64_t effective_caps(const std::string& proc) {
    std::ifstream in(proc + "/self/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("CapEff:", 0) == 0) {
            return std::stoull(line.substr(7), nullptr, 16);
        }
    }
    return 0;
}

constexpr int kCapSysAdmin = 21;
constexpr int kCapSyslog = 34;
constexpr int kCapPerfmon = 38;

bool has_cap(std::uint64_t caps, int cap) {
    return (caps >> cap) & 1;
}

// What a kernel option gives fhook, and how to tell without the config.
struct ConfigNeed {
    const char* option;
    bool required;      // without it fhook.ko cannot work at all
    const char* gives;  // what is missing without it
    const char* symbol; // a kallsyms name that exists only with it ("" = none)
    // why it is off on the targets, for an option a tested kernel lacks:
    // then it is said, not warned of (nullptr: warn, Debian's have it); on
    // off_machine only, if one is named
    const char* off_why = nullptr;
    const char* off_machine = nullptr;
};

constexpr std::array kConfigNeeds{
    ConfigNeed{"CONFIG_FUNCTION_TRACER", true, "function tracing, the base of fhook",
               "ftrace_caller"},
    ConfigNeed{"CONFIG_DYNAMIC_FTRACE", true, "patched call sites (fhook attaches through them)",
               "ftrace_update_ftrace_func"},
    ConfigNeed{"CONFIG_DYNAMIC_FTRACE_WITH_REGS", false,
               "full registers in ftrace callbacks (kprobes at function entry through ftrace)",
               "ftrace_regs_caller",
               "arm64 from 6.2 has DYNAMIC_FTRACE_WITH_ARGS instead, through which fhook's hooks "
               "change registers",
               "aarch64"},
    ConfigNeed{"CONFIG_DYNAMIC_FTRACE_WITH_ARGS", false, "function arguments in ftrace callbacks",
               "", "arm64 before 6.2 has DYNAMIC_FTRACE_WITH_REGS instead", "aarch64"},
    ConfigNeed{"CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS", false,
               "direct trampolines (direct attachment and direct counting)",
               "register_ftrace_direct"},
    ConfigNeed{"CONFIG_KPROBES", false, "kprobes and kretprobes", "register_kprobe"},
    ConfigNeed{"CONFIG_KPROBES_ON_FTRACE", false, "cheap kprobes at function entry",
               "arch_prepare_kprobe_ftrace", "arm64 has none: a kprobe there is a BRK", "aarch64"},
    ConfigNeed{"CONFIG_UPROBES", false, "uprobes in user programs", "uprobe_register"},
    ConfigNeed{"CONFIG_DEBUG_INFO_BTF", false,
               "kernel type names in probes ($args, file->f_path...), checked prototypes", ""},
    ConfigNeed{"CONFIG_PREEMPTIRQ_TRACEPOINTS", false,
               "irq_disable and irq_enable tracepoints (fhook irqsoff)", "__tracepoint_irq_disable",
               "Debian's kernels are built without it; lockdep (CONFIG_PROVE_LOCKING) brings it, "
               "as in fhook's debug kernel"},
    ConfigNeed{"CONFIG_TRACE_PREEMPT_TOGGLE", false,
               "preempt_disable and preempt_enable tracepoints (fhook preemptoff, preemptirqsoff)",
               "__tracepoint_preempt_disable",
               "only CONFIG_PREEMPT_TRACER selects it, and a kernel with that has its own "
               "preemptoff tracer"},
};

// `enabled`: whether it is on (found or inferred)
Check config_check(const ConfigNeed& need, const KernelConfig& config, bool have_config,
                   const std::optional<std::set<std::string>>& syms, const DoctorPaths& paths,
                   const std::string& machine, bool& enabled) {
    Check c{need.option, CheckStatus::Ok, "", ""};
    std::optional<bool> on;
    std::string how;
    if (have_config) {
        const auto it = config.find(need.option);
        on = it != config.end() && (it->second == "y" || it->second == "m");
        how = on.value() ? "=" + it->second : "not set";
    } else if (std::string_view(need.option) == "CONFIG_DEBUG_INFO_BTF") {
        on = exists(paths.sys + "/kernel/btf/vmlinux");
        how = on.value() ? "inferred: /sys/kernel/btf/vmlinux exists"
                         : "inferred: no /sys/kernel/btf/vmlinux";
    } else if (std::string_view(need.option) == "CONFIG_DYNAMIC_FTRACE_WITH_ARGS") {
        // x86-64 selects HAVE_DYNAMIC_FTRACE_WITH_ARGS (5.11 on): on with DYNAMIC_FTRACE;
        // arm64's ftrace has it from 6.2, where it dropped ftrace_regs_caller
        const bool dynamic = syms && syms->count("ftrace_update_ftrace_func") != 0;
        if (machine == "x86_64" && dynamic) {
            on = true;
            how = "inferred: x86-64 with dynamic ftrace";
        } else if (machine == "aarch64" && dynamic) {
            on = syms->count("ftrace_regs_caller") == 0;
            how = std::string("inferred: arm64 dynamic ftrace ") +
                  (on.value() ? "without" : "with") + " ftrace_regs_caller";
        }
    } else if (syms) {
        on = syms->count(need.symbol) != 0;
        how = std::string("inferred: ") + need.symbol + (on.value() ? " in" : " not in") +
              " /proc/kallsyms";
    }
    if (!on) {
        c.status = CheckStatus::Warn;
        c.detail = "unknown: no kernel config (/boot/config-*, /proc/config.gz) and nothing to "
                   "infer it from";
        c.fix = std::string("if it is off, fhook lacks ") + need.gives;
        return c;
    }
    c.detail = how;
    enabled = on.value();
    if (!enabled) {
        c.detail += std::string(": no ") + need.gives;
        if (need.off_why && (!need.off_machine || machine == need.off_machine)) {
            c.detail += std::string(": ") + need.off_why;
            return c;
        }
        c.status = need.required ? CheckStatus::Fail : CheckStatus::Warn;
        c.fix = need.required ? "fhook needs a kernel built with it"
                              : "a kernel built with it (Debian's are) has this feature";
    }
    return c;
}

// /lib/modules/RELEASE/...fhook.ko* installed by DKMS or make install
std::string installed_module(const DoctorPaths& paths, const std::string& release) {
    const std::string dir = paths.lib_modules + "/" + release;
    std::error_code ec;
    for (fs::recursive_directory_iterator
             it(dir, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name == "fhook.ko" || name.rfind("fhook.ko.", 0) == 0) {
            return it->path().string();
        }
    }
    return {};
}

// SecureBoot-<EFI global variable GUID>: 4 bytes of attributes, then 0 or 1
std::optional<bool> secure_boot(const std::string& sys) {
    std::ifstream in(sys + "/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e08c0277bdc1",
                     std::ios::binary);
    std::array<char, 5> b{};
    if (!in.read(b.data(), b.size())) {
        return std::nullopt;
    }
    return b[4] == 1;
}

bool cpu_flag(const std::string& proc, const std::string& flag) {
    std::ifstream in(proc + "/cpuinfo");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("flags", 0) == 0) {
            std::istringstream words(line.substr(line.find(':') + 1));
            for (std::string w; words >> w;) {
                if (w == flag) {
                    return true;
                }
            }
            return false;
        }
    }
    return false;
}

} // namespace

const char* check_status_name(CheckStatus status) noexcept {
    switch (status) {
    case CheckStatus::Ok:
        return "ok";
    case CheckStatus::Warn:
        return "warn";
    case CheckStatus::Fail:
        break;
    }
    return "FAIL";
}

bool DoctorReport::ok() const noexcept {
    return count(CheckStatus::Fail) == 0;
}

std::size_t DoctorReport::count(CheckStatus status) const noexcept {
    return static_cast<std::size_t>(std::count_if(
        checks.begin(), checks.end(), [status](const Check& c) { return c.status == status; }));
}

namespace {

// Appends a check to a report: add(name, status, detail[, fix]).
struct CheckAdder {
    DoctorReport& r;
    void operator()(std::string name, CheckStatus st, std::string detail,
                    std::string fix = {}) const {
        r.checks.push_back({std::move(name), st, std::move(detail), std::move(fix)});
    }
};

// The kernel: its release, tracefs, the ftrace switch, its configuration
// (or what can be inferred of it), module BTF.
void kernel_checks(DoctorReport& r, const DoctorPaths& paths, const std::string& machine) {
    const CheckAdder add{r};
    // the kernel
    const bool tested = r.release.rfind("6.1.", 0) == 0 || r.release.rfind("6.12.", 0) == 0;
    if (tested) {
        add("kernel", CheckStatus::Ok, r.release + ": a tested target (6.1, 6.12)");
    } else {
        add("kernel", CheckStatus::Warn, r.release + ": not a tested target (6.1, 6.12)",
            "fhook builds from headers and may work; report what does not");
    }
    // tracefs: function names, event formats
    const std::string tracefs = tracefs_mount(paths.proc);
    if (!tracefs.empty()) {
        add("tracefs", CheckStatus::Ok, "mounted at " + tracefs);
    } else {
        add("tracefs", CheckStatus::Fail,
            "not mounted (fhook reads function names and event formats there)",
            "mount -t tracefs nodev /sys/kernel/tracing");
    }

    // the function tracing switch (kernel.ftrace_enabled)
    const std::string switch_path = paths.proc + "/sys/kernel/ftrace_enabled";
    if (ftrace_switched_off(switch_path)) {
        add("ftrace_enabled", CheckStatus::Warn,
            "0: function probes, graphs and hooks are refused (ftrace patches no call site); "
            "trace events, kprobes off function entries and uprobes work",
            "echo 1 > " + switch_path);
    }

    // the kernel's configuration, or what can be inferred of it
    KernelConfig config;
    r.config_source = read_config(paths, r.release, config);
    std::set<std::string> wanted;
    for (const auto& need : kConfigNeeds) {
        if (*need.symbol != '\0') {
            wanted.insert(need.symbol);
        }
    }
    const auto syms = kallsyms_has(paths.proc + "/kallsyms", wanted);
    std::set<std::string> enabled;
    for (const auto& need : kConfigNeeds) {
        bool on = false;
        r.checks.push_back(
            config_check(need, config, !r.config_source.empty(), syms, paths, machine, on));
        if (on) {
            enabled.insert(need.option);
        }
    }

    // the CPU: what fhook's port to it lacks on this kernel
    const std::uint64_t missing = arch_missing_features(
        host_arch(), FtraceHas{enabled.count("CONFIG_DYNAMIC_FTRACE_WITH_REGS") != 0,
                               enabled.count("CONFIG_DYNAMIC_FTRACE_WITH_ARGS") != 0,
                               enabled.count("CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS") != 0});
    if (missing == 0) {
        add("cpu", CheckStatus::Ok, std::string(arch_name(host_arch())) + ": every fhook feature");
    } else {
        add("cpu", CheckStatus::Warn,
            std::string(arch_name(host_arch())) + ": " + arch_missing_why(missing) +
                " (missing here: " + feature_names(missing) + ")",
            "use a newer kernel, or an x86-64 machine or guest");
    }

    // BTF of modules: type names of module functions
    std::error_code ec;
    std::size_t module_btf = 0;
    for (fs::directory_iterator it(paths.sys + "/kernel/btf", ec), end; !ec && it != end;
         it.increment(ec)) {
        module_btf += it->path().filename() != "vmlinux";
    }
    if (module_btf > 0) {
        add("module BTF", CheckStatus::Ok,
            std::to_string(module_btf) + " modules with BTF in /sys/kernel/btf");
    } else if (!r.config_source.empty() && config.count("CONFIG_DEBUG_INFO_BTF_MODULES") != 0 &&
               config["CONFIG_DEBUG_INFO_BTF_MODULES"] == "y") {
        add("module BTF", CheckStatus::Ok,
            "CONFIG_DEBUG_INFO_BTF_MODULES=y (no module loaded yet)");
    } else {
        add("module BTF", CheckStatus::Warn,
            "no module has BTF in /sys/kernel/btf: types of module functions are not known",
            "probes on module functions take registers and offsets (%di, +8(%si))");
    }
}

// The module: loaded (which ABI), lockdown, Secure Boot, IBT.
void module_checks(DoctorReport& r, const DoctorPaths& paths, const ModuleStatus& mod) {
    const CheckAdder add{r};
    // the module
    const std::string lockdown = kernel_lockdown(paths.sys); // "" = none
    const std::string file = installed_module(paths, r.release);
    if (mod.loaded && mod.abi_version == FHOOK_ABI_VERSION) {
        add("module", CheckStatus::Ok,
            "fhook.ko " + mod.version + " loaded, ABI " + std::to_string(mod.abi_version));
    } else if (mod.loaded) {
        add("module", CheckStatus::Fail,
            "fhook.ko " + mod.version + " loaded, ABI " +
                (mod.abi_version ? std::to_string(mod.abi_version)
                                 : std::string("unknown (older)")) +
                "; this fhook speaks ABI " + std::to_string(FHOOK_ABI_VERSION),
            "rmmod fhook, then load the fhook.ko of this fhook's version (" +
                std::string(version()) + ")");
    } else if (!lockdown.empty()) {
        add("module", CheckStatus::Fail,
            "not loaded, and lockdown (" + lockdown + ") lets only signed modules in",
            "load a signed fhook.ko: DKMS signs it with /var/lib/dkms/mok.key; enrol that key "
            "(its public half /var/lib/dkms/mok.pub) with mokutil and reboot: docs/install.md");
    } else if (!file.empty()) {
        add("module", CheckStatus::Fail, "not loaded; installed as " + file, "modprobe fhook");
    } else {
        add("module", CheckStatus::Fail, "not loaded, and not installed for " + r.release,
            "install fhook-dkms (or fhook's source with dkms), or insmod a fhook.ko built for "
            "this kernel");
    }

    // lockdown: what it refuses once the module is in
    if (lockdown.empty()) {
        add("lockdown", CheckStatus::Ok, "none");
    } else if (lockdown == "integrity") {
        add("lockdown", CheckStatus::Warn,
            "integrity: unsigned modules and hooks that change the kernel's behaviour are "
            "refused; tracing works",
            "see kernel_lockdown(7)");
    } else {
        add("lockdown", CheckStatus::Warn,
            "confidentiality: kprobes and reads of kernel memory are refused too; function "
            "events and tracepoints work",
            "see kernel_lockdown(7)");
    }

    // Secure Boot: only signed modules
    const auto sb = secure_boot(paths.sys);
    if (!sb) {
        add("secure boot", CheckStatus::Ok, "not an EFI boot with Secure Boot variables");
    } else if (!*sb) {
        add("secure boot", CheckStatus::Ok, "off");
    } else if (mod.loaded) {
        add("secure boot", CheckStatus::Ok, "on; fhook.ko is loaded (signed)");
    } else {
        add("secure boot", CheckStatus::Warn, "on: the kernel loads only signed modules",
            "DKMS signs fhook.ko with /var/lib/dkms/mok.key: enrol /var/lib/dkms/mok.pub with "
            "mokutil and reboot (docs/install.md)");
    }

    // IBT: fhook's trampolines are reached by direct calls and returns only
    const bool ibt_cpu = cpu_flag(paths.proc, "ibt");
    add("IBT", CheckStatus::Ok,
        ibt_cpu ? "the CPU has IBT; fhook's trampolines are entered by direct calls only"
                : "the CPU has no IBT");
}

// Who may use it: the device node, capabilities, kallsyms addresses, KVM,
// perf_event_paranoid.
void access_checks(DoctorReport& r, const DoctorPaths& paths, const ModuleStatus& mod) {
    const CheckAdder add{r};
    // the device and who may use it
    const std::string devnode = paths.dev + "/fhook";
    const std::uint64_t caps = effective_caps(paths.proc);
    const bool root_like = has_cap(caps, kCapPerfmon) || has_cap(caps, kCapSysAdmin);
    if (mod.loaded) {
        if (!exists(devnode)) {
            add("device", CheckStatus::Fail, devnode + " missing although the module is loaded",
                "check udev, or: mknod from /sys/class/misc/fhook/dev");
        } else if (::access(devnode.c_str(), R_OK | W_OK) != 0) {
            add("device", CheckStatus::Warn, devnode + ": this user may not open it",
                "run as root, or join group fhook (udev rule 60-fhook.rules)");
        } else {
            add("device", CheckStatus::Ok, devnode + " can be opened by this user");
        }
    }
    if (root_like) {
        add("privileges", CheckStatus::Ok,
            std::string(has_cap(caps, kCapSysAdmin) ? "CAP_SYS_ADMIN" : "CAP_PERFMON") +
                ": may trace" +
                (has_cap(caps, kCapSysAdmin) ? " and (in lab mode) change the kernel" : ""));
    } else {
        add("privileges", CheckStatus::Warn,
            "no CAP_PERFMON: the module refuses to trace for this user",
            "run as root, or give the fhook binary cap_perfmon and cap_syslog (setcap)");
    }

    // addresses in /proc/kallsyms: fhook names functions with them
    const std::string kptr = first_line(paths.proc + "/sys/kernel/kptr_restrict").value_or("?");
    if (kptr == "0" || (kptr == "1" && has_cap(caps, kCapSyslog))) {
        add("kptr_restrict", CheckStatus::Ok,
            kptr + ": /proc/kallsyms shows addresses to this user");
    } else if (kptr == "?") {
        add("kptr_restrict", CheckStatus::Warn, "cannot read /proc/sys/kernel/kptr_restrict");
    } else {
        add("kptr_restrict", CheckStatus::Warn,
            kptr + ": /proc/kallsyms hides addresses from this user; events show raw addresses",
            kptr == "2" ? "sysctl kernel.kptr_restrict=1 (2 hides them even from root)"
                        : "run as root or give fhook CAP_SYSLOG");
    }
    r.checks.push_back(kvm_check(paths));
    const std::string paranoid =
        first_line(paths.proc + "/sys/kernel/perf_event_paranoid").value_or("?");
    add("perf_event_paranoid", CheckStatus::Ok,
        paranoid +
            ": fhook does not use perf events (the perf and BPF peers of its benchmarks do)");
}

} // namespace

DoctorReport doctor(const DoctorPaths& paths) {
    DoctorReport r;
    utsname uts{};
    ::uname(&uts);
    r.release = paths.release.empty() ? std::string(uts.release) : paths.release;
    const ModuleStatus mod = module_status(paths.sys);
    kernel_checks(r, paths, uts.machine);
    module_checks(r, paths, mod);
    access_checks(r, paths, mod);
    return r;
}

} // namespace fhook
