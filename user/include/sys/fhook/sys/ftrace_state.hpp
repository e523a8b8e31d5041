// What the kernel's ftrace and kprobes say about one function: who is
// attached to it (tracefs enabled_functions), whether it is traceable
// (available_filter_functions) and which kprobes sit on it.  Read by
// `fhook hook` (conflicts before arming) and `fhook explain`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fhook/core/device.hpp>

namespace fhook {

// One line of tracefs enabled_functions:
//   "vfs_read (2) R I  \ttramp: 0xffffffffc0... (fhook_hook_callback+0x0/0x1e0 [fhook])"
struct EnabledFunction {
    std::string name;   // "vfs_read" (a module's: "name [mod]" as printed)
    long refs = 0;      // ftrace_ops attached
    std::string flags;  // the flag letters: R (regs) I (ipmodify) D (direct) O M ...
    std::string detail; // the rest of the line (trampoline, direct target)
    std::string line;   // the line as read
    bool ipmodify() const { return flags.find('I') != std::string::npos; }
    bool direct() const { return flags.find('D') != std::string::npos; }
};

// The sysctl kernel.ftrace_enabled (`path`) reads 0: ftrace registers ops
// but patches no call site, so no function hook fires.  False when the
// file cannot be read (a kernel without it).
bool ftrace_switched_off(const std::string& path);

// What an enabled_functions flag letter means, for people learning ftrace.
const char* enabled_flag_meaning(char flag);

// How the site reaches its ops, from the line's trampoline part: a
// trampoline of one ops' own, the list function of several, or "" when
// the line does not say.
const char* enabled_dispatch_meaning(const EnabledFunction& f);

// Parses enabled_functions text; keeps the lines of `function` (all lines
// when empty).
std::vector<EnabledFunction> parse_enabled_functions(std::string_view text,
                                                     std::string_view function);
// /sys/kernel/tracing when tracefs is mounted there, else the debugfs one.
std::string default_tracefs();

// Reads TRACEFS/enabled_functions; empty when unreadable.
std::vector<EnabledFunction> read_enabled_functions(const std::string& tracefs,
                                                    std::string_view function);

// Lines of /sys/kernel/debug/kprobes/list on `function` ("ffff... k vfs_read+0x0 [FTRACE]").
std::vector<std::string>
read_kprobes_on(std::string_view function,
                const std::string& path = "/sys/kernel/debug/kprobes/list");

// True when `function` is in /sys/kernel/debug/kprobes/blacklist.
bool in_kprobe_blacklist_file(std::string_view function,
                              const std::string& path = "/sys/kernel/debug/kprobes/blacklist");

// Why a hook on `function` cannot be armed now, one sentence per foreign
// IPMODIFY or direct user (empty: nothing in the way); `want_ipmodify`: a
// direct trampoline conflicts too.  `module_hooks`: the hooks other
// modules hold with fhook's hook API (Device::module_hooks()), named as
// the owner of a function they hold.
std::vector<std::string> hook_conflicts(const std::vector<EnabledFunction>& attached,
                                        bool want_ipmodify,
                                        const std::vector<ModuleHook>& module_hooks = {});

} // namespace fhook
