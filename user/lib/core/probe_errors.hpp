// Why the module refused a probe: the errno of FHOOK_IOC_PROBE_ADD turned
// into an Error that names the probe, the cause and the fix.  Internal to
// libfhook's core.
#pragma once

#include <cstdint>
#include <string>

#include <fhook_abi.h>

#include <fhook/core/device.hpp>
#include <fhook/core/functions.hpp>
#include <fhook/core/probe_def.hpp>

namespace fhook {

// A function probe (FHOOK_PROBE_FUNC or _DIRECT, `flags` FHOOK_PROBE_F_*).
[[noreturn]] void throw_function_probe_error(const Device& device, const FunctionSet& functions,
                                             std::uint32_t via, std::uint32_t flags,
                                             const fhook_probe_add& arg, int err);
// A kprobe, kretprobe, uprobe or tracepoint.
[[noreturn]] void throw_kprobe_error(const Device& device, const KprobeDef& def,
                                     const fhook_probe_add& arg, int err);
// A hook on `name`.
[[noreturn]] void throw_hook_error(const Device& device, const std::string& name,
                                   const fhook_hook& hook, const fhook_probe_add& arg, int err);

} // namespace fhook
