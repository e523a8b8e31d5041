#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fhook_abi.h>

#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>
#include <fhook/probe/spec.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

namespace {

constexpr const char* kGrammar = "use GLOB, !GLOB, GLOB:mod:MODULE or :mod:MODULE";

std::string quote(std::string_view text) {
    return "'" + std::string(text) + "'";
}

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '$';
}

// Checks a tracefs glob; `dash_ok` allows '-' outside brackets (module
// names).  Returns an error text, or empty when the glob is fine.
std::string check_glob(std::string_view glob, bool dash_ok) {
    bool in_class = false;
    std::size_t class_start = 0;
    for (std::size_t i = 0; i < glob.size(); i++) {
        const char c = glob[i];
        if (in_class) {
            if (c == ']' && i > class_start) {
                in_class = false;
            } else if (c == '!' && i == class_start) {
                class_start++; // "[!...]" negated class
            } else if (!is_name_char(c) && c != '-') {
                return "character " + quote(std::string(1, c)) + " is not allowed in a [...] class";
            }
            continue;
        }
        if (c == '[') {
            in_class = true;
            class_start = i + 1;
        } else if (c == ']') {
            return "']' without a matching '['";
        } else if (c == '!') {
            return "'!' is only allowed at the start (exclusion) or right after '['";
        } else if (!is_name_char(c) && c != '*' && c != '?' && !(dash_ok && c == '-')) {
            return "character " + quote(std::string(1, c)) + " is not allowed";
        }
    }
    if (in_class) {
        return "'[' without a matching ']'";
    }
    return {};
}

[[noreturn]] void bad_spec(std::string_view text, const std::string& why, const char* fix) {
    throw_invalid("invalid probe " + quote(text) + ": " + why + ": " + fix);
}

std::string_view next_token(std::string_view& line) {
    std::size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) {
        line = {};
        return {};
    }
    std::size_t end = line.find_first_of(" \t\r", start);
    std::string_view token =
        line.substr(start, end == std::string_view::npos ? line.npos : end - start);
    line.remove_prefix(end == std::string_view::npos ? line.size() : end);
    return token;
}

// "name" or "name [module]"
std::optional<TraceableFunction> parse_function(std::string_view rest) {
    const std::string_view name = next_token(rest);
    if (name.empty()) {
        return std::nullopt;
    }
    const std::string_view module = next_token(rest);
    TraceableFunction f;
    f.name = std::string(name);
    if (module.size() > 2 && module.front() == '[' && module.back() == ']') {
        f.module = std::string(module.substr(1, module.size() - 2));
    }
    return f;
}

bool spec_matches(const ProbeSpec& spec, const TraceableFunction& f) {
    if (spec.module && (f.module.empty() || !glob_match(*spec.module, f.module))) {
        return false;
    }
    // (fhook's own specs only: "!(a|b)", all names but those, which no
    // user's spec can hold)
    if (spec.glob.starts_with("!(")) {
        return ::fnmatch(spec.glob.c_str(), f.name.c_str(), FNM_EXTMATCH) == 0;
    }
    return glob_match(spec.glob, f.name);
}

} // namespace

ProbeSpec parse_probe_spec(std::string_view text) {
    if (text.empty()) {
        throw_invalid("empty probe: give a function name or glob, e.g. vfs_read or 'vfs_*'");
    }
    for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c)) != 0 ||
            std::iscntrl(static_cast<unsigned char>(c)) != 0) {
            bad_spec(text, "whitespace or control characters are not allowed",
                     "give each pattern as its own argument");
        }
    }
    ProbeSpec spec;
    spec.text = std::string(text);
    std::string_view body = text;
    if (body.front() == '!') {
        spec.negated = true;
        body.remove_prefix(1);
        if (body.empty()) {
            bad_spec(text, "'!' needs a pattern to exclude", "write e.g. '!*rcu*'");
        }
    }

    std::string_view glob = body;
    std::size_t colon = body.find(':');
    if (colon != std::string_view::npos) {
        glob = body.substr(0, colon);
        std::string_view rest = body.substr(colon + 1);
        std::size_t colon2 = rest.find(':');
        if (colon2 == std::string_view::npos) {
            bad_spec(text, "a ':' must introduce a :CMD:ARG suffix", kGrammar);
        }
        std::string_view cmd = rest.substr(0, colon2);
        std::string_view module = rest.substr(colon2 + 1);
        if (cmd != "mod") {
            bad_spec(text, "unknown command " + quote(cmd) + " (only :mod: is supported)",
                     kGrammar);
        }
        if (module.empty()) {
            bad_spec(text, "missing module name after :mod:", "write e.g. ':mod:ext4'");
        }
        if (module.find(':') != std::string_view::npos) {
            bad_spec(text, "too many ':'", kGrammar);
        }
        if (spec.negated) {
            bad_spec(text, "a :mod: pattern cannot be excluded with '!'",
                     "exclude the functions by name instead, e.g. '!ext4_*'");
        }
        if (module.size() > FHOOK_MAX_PATTERN_LEN) {
            bad_spec(text,
                     "the module name is longer than " + std::to_string(FHOOK_MAX_PATTERN_LEN) +
                         " characters",
                     "shorten it");
        }
        if (std::string why = check_glob(module, true); !why.empty()) {
            bad_spec(text, "module " + quote(module) + ": " + why, "give a module name or glob");
        }
        // Module names use '_' where modprobe accepts '-' too.
        std::string normalized(module);
        bool in_class = false;
        for (char& c : normalized) {
            if (c == '[' || c == ']') {
                in_class = c == '[';
            } else if (c == '-' && !in_class) {
                c = '_';
            }
        }
        spec.module = std::move(normalized);
        if (glob.empty()) {
            glob = "*";
        }
    }
    if (glob.empty()) {
        bad_spec(text, "the function pattern is empty", kGrammar);
    }
    if (glob.size() > FHOOK_MAX_PATTERN_LEN) {
        bad_spec(text,
                 "the pattern is longer than " + std::to_string(FHOOK_MAX_PATTERN_LEN) +
                     " characters",
                 "use a shorter glob");
    }
    if (std::string why = check_glob(glob, false); !why.empty()) {
        bad_spec(text, why, "function patterns are names with the globs * ? [...]");
    }
    spec.glob = std::string(glob);
    return spec;
}

std::vector<ProbeSpec> parse_probe_specs(const std::vector<std::string>& texts) {
    if (texts.empty()) {
        throw_invalid("no probe given: name at least one function or glob, e.g. 'vfs_*'");
    }
    std::vector<ProbeSpec> specs;
    specs.reserve(texts.size());
    for (const auto& text : texts) {
        specs.push_back(parse_probe_spec(text));
    }
    return specs;
}

bool glob_match(std::string_view glob, std::string_view name) {
    // fnmatch needs NUL-terminated strings; names are short, so SSO applies.
    const std::string g(glob);
    const std::string n(name);
    return ::fnmatch(g.c_str(), n.c_str(), 0) == 0;
}

std::string TraceableFunction::line() const {
    return module.empty() ? name : name + " [" + module + "]";
}

FunctionList FunctionList::load(const std::string& path) {
    std::vector<std::string> candidates;
    if (path.empty()) {
        candidates = {kTracefsPath, kDebugfsPath};
    } else {
        candidates = {path};
    }
    int first_err = 0;
    for (const auto& candidate : candidates) {
        errno = 0;
        std::ifstream in(candidate);
        if (in) {
            FunctionList list = parse(in);
            if (in.bad()) {
                throw_runtime("cannot read " + candidate + ": I/O error: check tracefs", EIO);
            }
            return list;
        }
        if (first_err == 0) {
            first_err = errno != 0 ? errno : ENOENT;
        }
    }
    const std::string& file = candidates.front();
    if (first_err == EACCES || first_err == EPERM) {
        if (const std::string mode = kernel_lockdown(); mode == "confidentiality") {
            throw_runtime("cannot read " + file + ": tracefs is refused by kernel lockdown (" +
                              mode + "): see kernel_lockdown(7)",
                          first_err);
        }
        throw_runtime("permission denied reading " + file + ": run as root", first_err);
    }
    if (first_err == ENOENT && path.empty()) {
        throw_runtime(file + " not found: tracefs is not mounted or the kernel lacks "
                             "CONFIG_DYNAMIC_FTRACE (mount it with: mount -t tracefs nodev "
                             "/sys/kernel/tracing)",
                      first_err);
    }
    throw_runtime("cannot read " + file + ": " + errno_text(first_err) +
                      ": check that tracefs is mounted",
                  first_err);
}

FunctionList FunctionList::parse(std::istream& in) {
    FunctionList list;
    std::string line;
    while (std::getline(in, line)) {
        if (auto f = parse_function(line)) {
            list.functions_.push_back(std::move(*f));
        }
    }
    return list;
}

FunctionList FunctionList::load_or_kallsyms(const std::string& path, const std::string& kallsyms) {
    try {
        return load(path);
    } catch (const Error& e) {
        if (e.sys_errno() != EACCES && e.sys_errno() != EPERM) {
            throw;
        }
        std::ifstream in(kallsyms);
        FunctionList list = parse_kallsyms(in);
        if (list.functions_.empty()) {
            throw;
        }
        return list;
    }
}

FunctionList FunctionList::parse_kallsyms(std::istream& in) {
    FunctionList list;
    std::string line;
    while (std::getline(in, line)) {
        std::string_view rest = line;
        next_token(rest); // the address
        const std::string_view type = next_token(rest);
        if (type.size() != 1 || std::string_view("tTwW").find(type[0]) == std::string_view::npos) {
            continue;
        }
        auto f = parse_function(rest);
        // (6.12's call-site padding and CFI preambles are no functions)
        if (f && !f->name.starts_with("__pfx_") && !f->name.starts_with("__cfi_")) {
            list.functions_.push_back(std::move(*f));
        }
    }
    return list;
}

std::optional<FunctionList> FunctionList::load_with_addresses(const std::string& path) {
    const std::vector<std::string> candidates =
        path.empty() ? std::vector<std::string>{std::string(kTracefsPath) + "_addrs",
                                                std::string(kDebugfsPath) + "_addrs"}
                     : std::vector<std::string>{path + "_addrs"};
    for (const auto& candidate : candidates) {
        std::ifstream in(candidate);
        if (in) {
            FunctionList list = parse_with_addresses(in);
            if (!in.bad() && !list.functions_.empty()) {
                return list;
            }
        }
    }
    return std::nullopt;
}

FunctionList FunctionList::parse_with_addresses(std::istream& in) {
    FunctionList list;
    std::string line;
    while (std::getline(in, line)) {
        std::string_view rest = line;
        const std::string_view addr = next_token(rest);
        std::uint64_t value = 0;
        const auto [end, ec] = std::from_chars(addr.data(), addr.data() + addr.size(), value, 16);
        auto f = parse_function(rest);
        if (f && ec == std::errc() && end == addr.data() + addr.size()) {
            f->addr = value;
            list.functions_.push_back(std::move(*f));
        }
    }
    return list;
}

std::size_t FunctionSelector::count(const FunctionList& functions) const {
    const auto& all = functions.functions();
    return static_cast<std::size_t>(
        std::count_if(all.begin(), all.end(), [this](const auto& f) { return selects(f); }));
}

FunctionSelector::FunctionSelector(std::vector<ProbeSpec> specs) : specs_(std::move(specs)) {
    for (const auto& spec : specs_) {
        has_positive_ = has_positive_ || !spec.negated;
    }
}

bool FunctionSelector::selects(const TraceableFunction& function) const {
    bool selected = !has_positive_;
    for (const auto& spec : specs_) {
        if (!selected && !spec.negated && spec_matches(spec, function)) {
            selected = true;
        }
    }
    if (!selected) {
        return false;
    }
    for (const auto& spec : specs_) {
        if (spec.negated && spec_matches(spec, function)) {
            return false;
        }
    }
    return true;
}

std::optional<std::size_t> FunctionSelector::first_unmatched(const FunctionList& functions) const {
    for (std::size_t i = 0; i < specs_.size(); i++) {
        bool found = false;
        for (const auto& f : functions.functions()) {
            if (spec_matches(specs_[i], f)) {
                found = true;
                break;
            }
        }
        if (!found) {
            return i;
        }
    }
    return std::nullopt;
}

bool has_module_specs(const std::vector<ProbeSpec>& specs) {
    for (const auto& spec : specs) {
        if (spec.is_module()) {
            return true;
        }
    }
    return false;
}

std::vector<std::uint64_t> resolve_module_spec(const ProbeSpec& spec, const FunctionList& functions,
                                               const Ksyms& ksyms) {
    if (!spec.module) {
        throw_invalid("probe " + quote(spec.text) + " has no :mod: part to resolve");
    }
    if (ksyms.addresses_hidden()) {
        throw_runtime("kernel symbol addresses are hidden in /proc/kallsyms, needed for " +
                          quote(spec.text) + ": run as root (or set kernel.kptr_restrict=0)",
                      EPERM);
    }
    std::map<std::string, std::unordered_multimap<std::string_view, std::uint64_t>, std::less<>>
        by_module;
    std::set<std::uint64_t> seen;
    std::vector<std::uint64_t> ips;
    bool matched = false;
    for (const auto& f : functions.functions()) {
        if (!spec_matches(spec, f)) {
            continue;
        }
        matched = true;
        auto it = by_module.find(f.module);
        if (it == by_module.end()) {
            std::unordered_multimap<std::string_view, std::uint64_t> index;
            for (const auto& [name, addr] : ksyms.symbols_in(f.module)) {
                index.emplace(name, addr);
            }
            it = by_module.emplace(f.module, std::move(index)).first;
        }
        auto [first, last] = it->second.equal_range(f.name);
        for (auto sym = first; sym != last; ++sym) {
            if (seen.insert(sym->second).second) {
                ips.push_back(sym->second);
            }
        }
    }
    if (!matched) {
        throw_runtime("no traceable function matches " + quote(spec.text) + " (is module " +
                          quote(*spec.module) + " loaded? see: fhook list functions)",
                      ENOENT);
    }
    if (ips.empty()) {
        throw_runtime("the functions matching " + quote(spec.text) +
                          " are missing from /proc/kallsyms: check that the module is still "
                          "loaded and run as root",
                      ENOENT);
    }
    return ips;
}

ProbeRequest build_probe_request(const std::vector<ProbeSpec>& specs, const FunctionList* functions,
                                 const Ksyms* ksyms) {
    ProbeRequest req;
    std::set<std::uint64_t> seen;
    bool positive = false;
    for (const auto& spec : specs) {
        if (spec.negated) {
            // (a module's functions cannot be left out by name: fhook's
            // own, by its "fhook_*", see kmod/probe_graph.c)
            if (!spec.is_module()) {
                req.excludes.push_back(spec.glob);
            }
            continue;
        }
        positive = true;
        if (!spec.is_module()) {
            req.filters.push_back(spec.glob);
            continue;
        }
        if (functions == nullptr || ksyms == nullptr) {
            throw_runtime("probe " + quote(spec.text) +
                              " needs available_filter_functions and /proc/kallsyms: mount "
                              "tracefs and /proc",
                          ENOENT);
        }
        for (std::uint64_t ip : resolve_module_spec(spec, *functions, *ksyms)) {
            if (seen.insert(ip).second) {
                req.ips.push_back(ip);
            }
        }
    }
    if (!positive) {
        req.filters.push_back("*"); // only exclusions: every function except them
    }
    return req;
}

std::optional<ProbeRequest> build_sliced_request(const std::vector<ProbeSpec>& specs,
                                                 const FunctionList& functions, const Ksyms* ksyms,
                                                 std::size_t more_than) {
    const FunctionSelector selector(specs);
    std::vector<const TraceableFunction*> picked;
    for (const auto& f : functions.functions()) {
        // (6.1 lists the call sites of discarded weak functions under this
        // name; ftrace's globs never match them)
        if (selector.selects(f) && !f.name.starts_with("__ftrace_invalid_address__")) {
            picked.push_back(&f);
        }
    }
    if (picked.size() <= more_than) {
        return std::nullopt;
    }
    ProbeRequest req;
    std::unordered_set<std::uint64_t> seen;
    auto add = [&](std::uint64_t ip) {
        if (seen.insert(ip).second) {
            req.ips.push_back(ip);
        }
    };
    if (functions.has_addresses()) {
        for (const TraceableFunction* f : picked) {
            add(f->addr);
        }
    } else {
        if (ksyms == nullptr || ksyms->empty() || ksyms->addresses_hidden()) {
            return std::nullopt;
        }
        // "module\0name" -> its text symbols, and ftrace's call sites of it
        auto key = [](std::string_view module, std::string_view name) {
            std::string k(module);
            k += '\0';
            k += name;
            return k;
        };
        std::unordered_map<std::string, std::pair<std::vector<std::uint64_t>, std::size_t>> sites;
        std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> by_name;
        for (const auto& f : functions.functions()) {
            sites[key(f.module, f.name)].second++;
            by_name[f.name].first++;
        }
        for (const TraceableFunction* f : picked) {
            by_name[f->name].second++;
        }
        for (const SymbolRef& s : ksyms->text_symbols()) {
            if (auto it = sites.find(key(s.module, s.name)); it != sites.end()) {
                it->second.first.push_back(s.offset);
            }
        }
        std::set<std::string_view> by_pattern;
        for (const TraceableFunction* f : picked) {
            const auto& [addrs, count] = sites[key(f->module, f->name)];
            if (addrs.size() == count) {
                std::for_each(addrs.begin(), addrs.end(), add);
                continue;
            }
            // which symbol of the name has no call site: ftrace's own
            // match by name, when it selects every function of the name
            const auto& [all, selected] = by_name[f->name];
            if (all != selected) {
                return std::nullopt;
            }
            by_pattern.insert(f->name);
        }
        std::size_t text = 0;
        for (std::string_view name : by_pattern) {
            req.filters.emplace_back(name);
            text += name.size() + 1;
        }
        if (text > FHOOK_MAX_PATTERN_TEXT) {
            return std::nullopt;
        }
    }
    if (req.ips.size() > FHOOK_MAX_IPS) {
        return std::nullopt;
    }
    return req;
}

std::string describe_specs(const std::vector<ProbeSpec>& specs) {
    std::string out;
    for (const auto& spec : specs) {
        if (!out.empty()) {
            out += ' ';
        }
        out += spec.text;
    }
    return out;
}

} // namespace fhook
