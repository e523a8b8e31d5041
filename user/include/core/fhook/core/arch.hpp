// The CPU architectures fhook runs on, and what its port to each lacks.
#pragma once

#include <cstdint>
#include <string>

#include <fhook_abi.h>

namespace fhook {

enum class Arch { X86_64, Arm64 };

// The CPU this fhook was built for: the kernel's too, as the CLI runs beside
// its module.
constexpr Arch host_arch() {
#if defined(__aarch64__)
    return Arch::Arm64;
#else
    return Arch::X86_64;
#endif
}

constexpr const char* arch_name(Arch a) {
    return a == Arch::Arm64 ? "arm64" : "x86_64";
}

// The largest $argN the module reads on `a`: x86-64 reads those past its 6
// argument registers from the stack, arm64 only its 8 registers (later
// arguments are $stack0 on there).
constexpr std::uint32_t arch_max_argn(Arch a) {
    return a == Arch::Arm64 ? 8 : FHOOK_MAX_ARGN;
}

// What a kernel's ftrace gives that fhook's ports build on.
struct FtraceHas {
    bool regs = false;         // full registers (CONFIG_DYNAMIC_FTRACE_WITH_REGS)
    bool args = false;         // the argument registers, pc (CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
    bool direct_calls = false; // CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
};

// The FHOOK_FEAT_* fhook's port to `a` lacks on a kernel with `has` (the
// module's FHOOK_ARCH_NO_FEATURES, kmod/arch/*/arch.h): its handshake leaves
// them out and it refuses them with FHOOK_R_ARCH.
constexpr std::uint64_t arch_missing_features(Arch a, FtraceHas has) {
    if (a != Arch::Arm64) {
        return 0;
    }
    return (has.direct_calls ? 0 : FHOOK_FEAT_DIRECT | FHOOK_FEAT_LATENCY) |
           (has.regs || has.args ? 0 : FHOOK_FEAT_HOOK | FHOOK_FEAT_KHOOK);
}

// Why fhook's port lacks `features` (of arch_missing_features()), in words.
inline std::string arch_missing_why(std::uint64_t features) {
    std::string why;
    if ((features & (FHOOK_FEAT_DIRECT | FHOOK_FEAT_LATENCY)) != 0) {
        why = "direct calls (direct counting and recording, latency histograms) need "
              "DYNAMIC_FTRACE_WITH_DIRECT_CALLS (arm64 kernels from 6.4)";
    }
    if ((features & (FHOOK_FEAT_HOOK | FHOOK_FEAT_KHOOK)) != 0) {
        why += std::string(why.empty() ? "" : "; ") +
               "hooks and the hook API need ftrace to change a call's registers "
               "(DYNAMIC_FTRACE_WITH_REGS or DYNAMIC_FTRACE_WITH_ARGS)";
    }
    return why;
}

} // namespace fhook
