// PROBE specs (docs/cli.md) and their resolution.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/functions.hpp>

namespace fhook {

class Ksyms;

// One parsed PROBE argument.
//   "vfs_*"            -> glob "vfs_*"
//   "!*rcu*"           -> negated, glob "*rcu*"
//   "ext4_*:mod:ext4"  -> glob "ext4_*", module "ext4"
//   ":mod:loop"        -> glob "*", module "loop"
struct ProbeSpec {
    std::string text; // as given on the command line
    bool negated = false;
    std::string glob;
    std::optional<std::string> module;

    bool is_module() const noexcept { return module.has_value(); }
};

// Throws a Invalid Error for malformed specs: empty, "!" alone, whitespace or
// characters outside [A-Za-z0-9_.$*?[]^!-], unbalanced '[', a glob or module
// longer than FHOOK_MAX_PATTERN_LEN, ":mod:" without a module, a negated
// ":mod:" (the kernel's notrace list takes no addresses) and any other
// ":cmd:" ("foo:bar:baz").
ProbeSpec parse_probe_spec(std::string_view text);
// Parses every spec; a Invalid Error when `texts` is empty.
std::vector<ProbeSpec> parse_probe_specs(const std::vector<std::string>& texts);

// tracefs glob match (ftrace_set_filter grammar: '*', '?', '[...]'), via
// fnmatch(3).
bool glob_match(std::string_view glob, std::string_view name);

// One line of available_filter_functions.
struct TraceableFunction {
    std::string name;
    std::string module; // empty for vmlinux
    // The call site's address (available_filter_functions_addrs, 6.5+),
    // else 0.
    std::uint64_t addr = 0;

    // "name" or "name [module]", as in the tracefs file.
    std::string line() const;
};

class FunctionList {
public:
    static constexpr const char* kTracefsPath = "/sys/kernel/tracing/available_filter_functions";
    static constexpr const char* kDebugfsPath =
        "/sys/kernel/debug/tracing/available_filter_functions";

    // Reads `path`, or when empty the tracefs path with the debugfs one as
    // fallback.  Throws a Runtime Error (tracefs not mounted, permission).
    static FunctionList load(const std::string& path = "");
    static FunctionList parse(std::istream& in);
    // available_filter_functions_addrs beside `path` (as load() finds it):
    // every function with its call site's address.  nullopt when the
    // kernel has no such file (before 6.5) or it cannot be read.
    static std::optional<FunctionList> load_with_addresses(const std::string& path = "");
    // Parses "addr name [module]" lines.
    static FunctionList parse_with_addresses(std::istream& in);
    // load(path), or where permission to read it is refused (tracefs is
    // root's; CAP_PERFMON is enough for fhook) the names of the text
    // symbols in the kallsyms file `kallsyms`, which every user may read:
    // more than ftrace can trace, the module refuses the others.  Throws
    // load()'s error when neither can be read.
    static FunctionList load_or_kallsyms(const std::string& path, const std::string& kallsyms);
    // Parses /proc/kallsyms's text symbols ("addr type name [module]")
    // into names, without addresses (they may be hidden).
    static FunctionList parse_kallsyms(std::istream& in);

    const std::vector<TraceableFunction>& functions() const noexcept { return functions_; }
    // Read from available_filter_functions_addrs: every function has addr.
    bool has_addresses() const noexcept {
        return !functions_.empty() && functions_.front().addr != 0;
    }

private:
    std::vector<TraceableFunction> functions_;
};

// The functions a set of specs hooks: (any positive spec matches, or there is
// no positive spec at all) and no negated spec matches.
class FunctionSelector {
public:
    explicit FunctionSelector(std::vector<ProbeSpec> specs);
    bool selects(const TraceableFunction& function) const;
    // How many functions of `functions` it selects.
    std::size_t count(const FunctionList& functions) const;
    // Index of the first spec matching no function of `functions` (ftrace
    // refuses such a pattern, in the filter and in the notrace list alike).
    std::optional<std::size_t> first_unmatched(const FunctionList& functions) const;

private:
    std::vector<ProbeSpec> specs_;
    bool has_positive_ = false;
};

// Arguments of Session::add_function_probe.
// What the specs select: filters, excludes and :mod: addresses.
using ProbeRequest = FunctionSet;

bool has_module_specs(const std::vector<ProbeSpec>& specs);

// Addresses (from kallsyms, entries tagged [MODULE]) of the functions of
// available_filter_functions that `spec` (a ":mod:" spec) selects.  Throws a
// Runtime Error when nothing matches or kallsyms hides addresses.
std::vector<std::uint64_t> resolve_module_spec(const ProbeSpec& spec, const FunctionList& functions,
                                               const Ksyms& ksyms);

// Builds the probe: positive globs -> filters, negated -> excludes, ":mod:"
// specs -> ips (needs `functions` and `ksyms`, else they may be null).  With
// no positive spec the filter is "*" (every function except the excludes).
ProbeRequest build_probe_request(const std::vector<ProbeSpec>& specs, const FunctionList* functions,
                                 const Ksyms* ksyms);

// The probe by address when `specs` select more than `more_than`
// (FHOOK_ARM_SLICE) functions, so that the module arms it a slice at a time (ftrace patches
// all sites of one filter change without yielding the CPU): the addresses
// from `functions` when it has them, else from `ksyms`; a name kallsyms
// has more text symbols of than ftrace has call sites for stays an exact
// name pattern.  nullopt when they are fewer, or when the addresses cannot
// be had (kallsyms hidden, more than FHOOK_MAX_IPS): build_probe_request()
// then.
std::optional<ProbeRequest> build_sliced_request(const std::vector<ProbeSpec>& specs,
                                                 const FunctionList& functions, const Ksyms* ksyms,
                                                 std::size_t more_than = FHOOK_ARM_SLICE);

// The spec texts joined by spaces, for the summary line.
std::string describe_specs(const std::vector<ProbeSpec>& specs);

} // namespace fhook
