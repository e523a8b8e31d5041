// What `fhook explain` shows about one kernel function, and its text and
// JSON forms.  fhook::explain_function() (engine) fills it in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fhook/core/device.hpp>
#include <fhook/sys/disasm.hpp>
#include <fhook/sys/ftrace_state.hpp>

namespace fhook {

// How explain_function() attaches to show the armed bytes.
enum class ExplainArm { None, Ops, Direct, Kprobe, Hook };
const char* explain_arm_name(ExplainArm arm); // "ops", ..., "none"
// What that attachment is, in the kernel's terms.
const char* explain_arm_text(ExplainArm arm);

// A function's first instructions and who is attached, at one moment.
struct SiteView {
    std::vector<Insn> insns;
    std::vector<std::string> targets;      // per insn: its call/jmp target as SYM+OFF, or ""
    std::optional<std::size_t> site;       // the ftrace call site among insns
    std::vector<EnabledFunction> attached; // tracefs enabled_functions
    std::vector<std::string> kprobes;      // debugfs kprobes/list
    std::vector<ModuleHook> module_hooks;  // fhook's hook API users on it
};

struct Explanation {
    std::string name;
    std::uint64_t addr = 0;
    std::uint64_t size = 0;
    std::string module; // "" = vmlinux
    bool traceable = false;
    std::string why_not; // when not traceable
    bool kprobe_blacklisted = false;
    std::string prototype; // from BTF, "" when unknown
    SiteView idle;
    ExplainArm arm = ExplainArm::None;
    std::optional<SiteView> armed;
};

// The text `fhook explain` prints.
std::string explain_text(const Explanation& e);
// One JSON object (with a newline).
std::string explain_json(const Explanation& e);

} // namespace fhook
