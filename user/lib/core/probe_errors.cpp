// The refusals of FHOOK_IOC_PROBE_ADD, explained: one place for every
// errno the module returns for a probe, by kind (docs/kernel-module.md).
#include "probe_errors.hpp"

#include <cinttypes>
#include <cstdio>
#include <fstream>

#include <fhook/core/arch.hpp>
#include <fhook/core/error.hpp>

namespace fhook {

namespace {

constexpr const char* kListHint = " (see: fhook list functions)";

// The /sys/kernel/debug/kprobes/blacklist line naming `symbol`, if readable.
bool in_kprobe_blacklist(const std::string& symbol) {
    std::ifstream in("/sys/kernel/debug/kprobes/blacklist");
    std::string line;
    while (std::getline(in, line)) {
        auto tab = line.find_first_of("\t ");
        if (tab != std::string::npos) {
            std::string name = line.substr(tab + 1);
            name.erase(0, name.find_first_not_of("\t "));
            if (name == symbol) {
                return true;
            }
        }
    }
    return false;
}

} // namespace

void throw_function_probe_error(const Device& device, const FunctionSet& functions,
                                std::uint32_t via, std::uint32_t flags, const fhook_probe_add& arg,
                                int err) {
    const auto& [filters, excludes, ips] = functions;
    if (err == ENOENT && arg.err_index >= 0) {
        auto idx = static_cast<std::size_t>(arg.err_index);
        if (idx < filters.size()) {
            throw_runtime("no traceable function matches '" + filters[idx] + "'" + kListHint, err);
        }
        idx -= filters.size();
        if (idx < excludes.size()) {
            throw_runtime("no traceable function matches '!" + excludes[idx] + "'" + kListHint,
                          err);
        }
        idx -= excludes.size();
        if (idx < ips.size()) {
            char addr[32];
            std::snprintf(addr, sizeof(addr), "0x%" PRIx64, ips[idx]);
            throw_runtime(std::string("no traceable function at ") + addr + kListHint, err);
        }
    }
    if (err == ENOENT) {
        throw_runtime(std::string("a probe pattern matches no traceable function") + kListHint,
                      err);
    }
    if ((err == ENODATA || err == EOPNOTSUPP) && (flags & FHOOK_PROBE_F_LATENCY)) {
        char addr[32] = "a function";
        if (arg.err_index >= 0 && static_cast<std::size_t>(arg.err_index) < ips.size()) {
            std::snprintf(addr, sizeof(addr), "0x%" PRIx64, ips[arg.err_index]);
        }
        throw_runtime(std::string("the module will not time ") + addr + ": " +
                          (err == ENODATA ? "it has no BTF prototype to check, and only "
                                            "CAP_SYS_ADMIN may vouch for one"
                                          : "its prototype (variadic, floating point or a "
                                            "struct by value over 16 bytes) is not one a "
                                            "trampoline can pass on"),
                      err);
    }
    if (err == EBUSY && via == FHOOK_PROBE_DIRECT) {
        throw_runtime("a function of the probe already has a direct trampoline (another "
                      "session, a BPF trampoline) or an IPMODIFY hook: see 'fhook explain "
                      "FUNC'",
                      err);
    }
    if (err == ENOSPC && via == FHOOK_PROBE_DIRECT) {
        const std::uint32_t slots = device.info().nr_slots;
        throw_runtime("all " + (slots ? std::to_string(slots) + " " : std::string()) +
                          "direct trampoline slots are in use: close other sessions",
                      err);
    }
    throw_ioctl_error("adding the function probe", err, device.refusal(err));
}

void throw_kprobe_error(const Device& device, const KprobeDef& def, const fhook_probe_add& arg,
                        int err) {
    std::string where;
    if (def.is_uprobe) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), ":0x%" PRIx64, def.offset);
        where = def.path + buf;
    } else if (def.symbol.empty()) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, def.addr);
        where = buf;
    } else {
        where = def.symbol + (def.offset ? "+" + std::to_string(def.offset) : "");
    }
    const std::string probe = "probe " + def.event + ": ";
    if (def.is_uprobe) {
        switch (err) {
        case ENOENT:
        case ENOTDIR:
            throw_runtime(probe + "'" + def.path + "' does not exist", err);
        case EISDIR:
            throw_runtime(probe + "'" + def.path + "' is not a regular file", err);
        case ERANGE:
            throw_runtime(probe + "offset past the end of '" + def.path + "'", err);
        default:
            break;
        }
    }
    if (err == ENOMEM && def.is_return && !def.is_uprobe) {
        throw_runtime(probe + "out of kernel memory for its return instances: give a lower " +
                          "maxactive (rN:) or fewer return probes",
                      err);
    }
    switch (err) {
    case ENOENT:
        throw_runtime(probe + "the kernel has no symbol '" + def.symbol +
                          "': check the name in /proc/kallsyms (or the module is not loaded)",
                      err);
    case EILSEQ:
        throw_runtime(probe + where +
                          " is not on an instruction boundary: pick an offset from a "
                          "disassembly of the function",
                      err);
    case ELOOP:
        throw_runtime(probe + where + " is inside fhook itself, which cannot trace itself", err);
    case EINVAL:
        // (arm64's kprobes refuse an address that is not 4-byte aligned so)
        if (host_arch() == Arch::Arm64 && !def.is_uprobe &&
            (def.offset % 4 != 0 || def.addr % 4 != 0)) {
            throw_runtime(probe + where +
                              " is not on an instruction boundary (arm64 instructions are 4 "
                              "bytes): pick an offset from a disassembly of the function",
                          err);
        }
        if (arg.err_index >= 0) {
            const auto idx = static_cast<std::size_t>(arg.err_index);
            throw_runtime(
                probe + "the module rejected " +
                    (idx < def.insns.size()
                         ? "fetch instruction " + std::to_string(idx)
                         : "filter instruction " + std::to_string(idx - def.insns.size())) +
                    ": this is a bug in fhook, please report it",
                err);
        }
        if (!def.symbol.empty() && in_kprobe_blacklist(def.symbol)) {
            throw_runtime(probe + def.symbol +
                              " is in the kprobe blacklist (NOKPROBE_SYMBOL, noinstr or entry "
                              "code; see /sys/kernel/debug/kprobes/blacklist)",
                          err);
        }
        throw_runtime(probe + "the kernel refused to probe " + where +
                          (def.is_return ? ": a return probe needs a function entry; " : ": ") +
                          "the address must be kernel text outside the kprobe blacklist "
                          "(notrace or noinstr code, jump labels and static calls are refused)",
                      err);
    default:
        throw_ioctl_error("adding " + probe.substr(0, probe.size() - 2), err, device.refusal(err));
    }
}

void throw_hook_error(const Device& device, const std::string& name, const fhook_hook& hook,
                      const fhook_probe_add& arg, int err) {
    const std::string what = "hook on " + name + ": ";
    switch (err) {
    case ENOENT:
        throw_runtime(what +
                          "not a traceable function (not in available_filter_functions: "
                          "notrace, inlined or not a function start): see 'fhook explain " +
                          name + "'",
                      err);
    case EPERM:
        if (hook.action == FHOOK_HOOK_AROUND) {
            throw_ioctl_error("adding the " + what.substr(0, what.size() - 2), err,
                              device.refusal(err));
        }
        if (const std::string mode = kernel_lockdown(); !mode.empty()) {
            throw_runtime(what +
                              "changing what the kernel does is refused by kernel "
                              "lockdown (" +
                              mode + "): see kernel_lockdown(7)",
                          err);
        }
        if (!device.has(FHOOK_FEAT_LAB)) {
            throw_runtime(what + "overriding returns and redirecting calls change what the "
                                 "kernel does and need lab mode: load the module with "
                                 "'insmod fhook.ko lab=1' (it taints the kernel)",
                          err);
        }
        throw_runtime(what + "overriding returns and redirecting calls change what the "
                             "kernel does and need CAP_SYS_ADMIN (CAP_PERFMON only observes)",
                      err);
    case ELOOP:
        throw_runtime(what + "a function cannot be redirected to itself", err);
    case ENODATA:
        throw_runtime(what + "no BTF prototype for it: the module runs a body from its "
                             "trampoline on a prototype it checked in BTF, or one "
                             "CAP_SYS_ADMIN vouches for",
                      err);
    case EOPNOTSUPP:
        // (the module names it where it is not the prototype: FHOOK_R_HOOK_REGS)
        if (const std::string why = device.refusal(err); !why.empty()) {
            throw_runtime(what + why, err);
        }
        throw_runtime(what +
                          "its prototype (variadic, floating point, a struct by value over "
                          "16 bytes, or more than " +
                          std::to_string(FHOOK_HOOK_MAX_STACK_ARGS) +
                          " stack words) is not one the trampoline can pass on",
                      err);
    case E2BIG:
        throw_runtime(what + "the entry fields of a trace-around hook take more than " +
                          std::to_string(FHOOK_HOOK_AROUND_DATA) + " bytes: record fewer",
                      err);
    case ENOSPC:
        throw_runtime(what + "all trace-around trampoline slots are in use", err);
    case EINVAL:
        if (arg.err_index >= 0) {
            throw_runtime(what + "the module rejected instruction " +
                              std::to_string(arg.err_index) +
                              ": this is a bug in fhook, please report it",
                          err);
        }
        throw_runtime(what + "the kernel refused the target (the redirect target must be "
                             "kernel text outside the kprobe blacklist)",
                      err);
    default:
        throw_ioctl_error("adding the " + what.substr(0, what.size() - 2), err,
                          device.refusal(err));
    }
}

} // namespace fhook
