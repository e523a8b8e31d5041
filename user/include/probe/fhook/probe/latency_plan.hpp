// The stack words the latency trampoline copies for the functions a probe
// selects (from BTF).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fhook_abi.h>

#include <fhook/probe/spec.hpp>
#include <fhook/sys/btf.hpp>

namespace fhook {

// The stack words of arguments a function's callers pass (7th argument
// on, structs over 16 bytes), from its BTF prototype.
std::uint32_t stack_arg_words(const KernelBtf& btf, const KernelBtf::Function& f);

// The functions `spec` selects in `functions` that a latency trampoline may
// time, and what it copies for them: the most stack words any of them
// takes (BTF), or FHOOK_HOOK_MAX_STACK_ARGS for one without BTF (which the
// module accepts from CAP_SYS_ADMIN only).  Variadic functions and those
// taking more than the trampoline copies are `skipped` (the caller leaves
// them out, or refuses a named one); the module checks the same in BTF.
struct LatencyStackPlan {
    std::uint32_t stack_args = 0;
    std::size_t selected = 0;         // functions the spec selects
    std::vector<std::string> skipped; // their names
    std::vector<std::string> why;     // and the reason for each
    // the functions to time: name and module ("" for vmlinux)
    std::vector<std::pair<std::string, std::string>> timed;
};
// `module_btf` gives a module's BTF (nullptr: none) for its functions.
using ModuleBtfProvider = std::function<const KernelBtf*(const std::string& module)>;
LatencyStackPlan plan_latency_stack(const ProbeSpec& spec, const FunctionList& functions,
                                    const KernelBtf* btf, const ModuleBtfProvider& module_btf = {});

} // namespace fhook
