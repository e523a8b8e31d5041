// Hist triggers: the language as kernel/trace/trace_events_hist.c parses
// it (parse_hist_trigger_attrs(), parse_field(), create_sort_keys());
// the tables are in hist_table.cpp.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fhook/core/error.hpp>
#include <fhook/probe/hist.hpp>

namespace fhook {

namespace {

constexpr std::size_t kMaxKeys = 3; // TRACING_MAP_KEYS_MAX
constexpr std::size_t kMaxVals = 2; // TRACING_MAP_VALS_MAX, less hitcount
constexpr std::size_t kMaxSort = 2; // TRACING_MAP_SORT_KEYS_MAX

[[noreturn]] void bad(const std::string& what) {
    throw_invalid("hist: " + what);
}

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\n");
    if (b == std::string_view::npos) {
        return {};
    }
    return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const auto pos = s.find(sep);
        out.push_back(s.substr(0, pos));
        if (pos == std::string_view::npos) {
            return out;
        }
        s.remove_prefix(pos + 1);
    }
}

// strtoul(s, 0): decimal, 0x hex or 0 octal, the whole string
bool parse_number(std::string_view s, std::uint64_t& out) {
    const std::string text(s);
    if (text.empty() || text[0] == '-' || text[0] == '+') {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    out = std::strtoull(text.c_str(), &end, 0);
    return errno == 0 && end && *end == '\0';
}

const char* modifier_name(HistModifier m) {
    switch (m) {
    case HistModifier::Hex:
        return "hex";
    case HistModifier::Sym:
        return "sym";
    case HistModifier::SymOffset:
        return "sym-offset";
    case HistModifier::Execname:
        return "execname";
    case HistModifier::Syscall:
        return "syscall";
    case HistModifier::Log2:
        return "log2";
    case HistModifier::Buckets:
        return "buckets";
    case HistModifier::Usecs:
        return "usecs";
    case HistModifier::None:
        break;
    }
    return "";
}

// "name[.modifier]": one modifier, split at the first '.'
HistField parse_field(std::string_view token) {
    HistField f;
    if (token.empty()) {
        bad("empty field in a list");
    }
    const auto dot = token.find('.');
    f.name = std::string(token.substr(0, dot));
    if (f.name.empty()) {
        bad("field without a name: '" + std::string(token) + "'");
    }
    if (dot == std::string_view::npos) {
        return f;
    }
    const std::string_view mod = token.substr(dot + 1);
    static constexpr HistModifier kPlain[] = {
        HistModifier::Hex,     HistModifier::Sym,  HistModifier::SymOffset, HistModifier::Execname,
        HistModifier::Syscall, HistModifier::Log2, HistModifier::Usecs};
    for (HistModifier m : kPlain) {
        if (mod == modifier_name(m)) {
            f.modifier = m;
            return f;
        }
    }
    for (std::string_view prefix : {"buckets=", "bucket="}) {
        if (mod.substr(0, prefix.size()) == prefix) {
            if (!parse_number(mod.substr(prefix.size()), f.buckets) || f.buckets == 0) {
                bad("Invalid bucket size: '" + std::string(token) + "'");
            }
            f.modifier = HistModifier::Buckets;
            return f;
        }
    }
    bad("Invalid field modifier: '" + std::string(token) + "'");
}

std::vector<HistField> parse_fields(std::string_view list) {
    std::vector<HistField> out;
    for (std::string_view t : split(list, ',')) {
        out.push_back(parse_field(t));
    }
    return out;
}

std::uint32_t parse_size(std::string_view s) {
    std::uint64_t n = 0;
    if (!parse_number(s, n) || n == 0) {
        bad("size=" + std::string(s) + ": not a number of entries");
    }
    std::uint64_t size = 1;
    while (size < n && size < (std::uint64_t{1} << 40)) {
        size <<= 1; // roundup_pow_of_two()
    }
    if (size < 128 || size > 131072) {
        bad("size=" + std::string(s) + ": 128 to 131072 entries (rounded up to a power of two)");
    }
    return static_cast<std::uint32_t>(size);
}

std::vector<HistSort> parse_sort(std::string_view list) {
    std::vector<HistSort> out;
    for (std::string_view t : split(list, ',')) {
        if (t.empty()) {
            bad("Empty sort field in 'sort=" + std::string(list) + "'");
        }
        HistSort s;
        const auto dot = t.find('.');
        s.name = std::string(t.substr(0, dot));
        if (dot != std::string_view::npos) {
            const std::string_view mod = t.substr(dot + 1);
            if (mod == "descending") {
                s.descending = true;
            } else if (mod != "ascending") {
                bad("Invalid sort modifier: '" + std::string(t) +
                    "' (.descending or .ascending; sort by the field's name, without its own "
                    "modifier)");
            }
        }
        out.push_back(std::move(s));
    }
    if (out.size() > kMaxSort) {
        bad("Too many sort fields (Max = 2): 'sort=" + std::string(list) + "'");
    }
    return out;
}

bool is_common(std::string_view name) {
    return name == "common_pid" || name == "common_cpu" || name == "cpu" || name == "CPU" ||
           name == "comm" || name == "COMM" || name == "stacktrace" ||
           name == "common_stacktrace" || name == "ustacktrace";
}

bool is_stack(HistSource s) {
    return s == HistSource::Stacktrace || s == HistSource::UStacktrace;
}

} // namespace

bool is_hist_trigger(std::string_view text) {
    text = trim(text);
    return text == "hist" || text.substr(0, 5) == "hist:" || text.substr(0, 5) == "keys=" ||
           text.substr(0, 4) == "key=";
}

HistSpec parse_hist_trigger(std::string_view text) {
    HistSpec spec;
    spec.text = std::string(trim(text));
    std::string_view rest = trim(text);
    if (rest.substr(0, 5) == "hist:") {
        rest.remove_prefix(5);
    } else if (rest == "hist") {
        rest = {};
    }
    const auto blank = rest.find_first_of(" \t");
    std::string_view attrs = rest.substr(0, blank);
    if (blank != std::string_view::npos) {
        const std::string_view tail = trim(rest.substr(blank));
        if (tail.substr(0, 2) != "if" || (tail.size() > 2 && tail[2] != ' ' && tail[2] != '\t')) {
            bad("'" + std::string(tail) + "' after the trigger: a filter starts with 'if'");
        }
        spec.filter = std::string(trim(tail.substr(2)));
        if (spec.filter.empty()) {
            bad("'if' without a filter");
        }
    }
    bool have_keys = false, have_vals = false, have_sort = false;
    for (std::string_view attr : split(attrs, ':')) {
        if (attr.empty()) {
            bad("empty part in '" + std::string(attrs) + "'");
        }
        const auto eq = attr.find('=');
        if (eq == std::string_view::npos) {
            if (attr == "pause" || attr == "cont" || attr == "continue" || attr == "clear") {
                bad("'" + std::string(attr) +
                    "' changes a tracefs trigger that exists: not part of a trigger fhook makes");
            }
            bad("'" + std::string(attr) + "': not a part of a hist trigger (keys=, vals=, sort=, " +
                "size=, name=; actions such as onmax() are not supported)");
        }
        const std::string_view what = attr.substr(0, eq), value = attr.substr(eq + 1);
        if (value.empty()) {
            bad("Empty assignment: '" + std::string(attr) + "'");
        }
        if (what == "key" || what == "keys") {
            if (have_keys) {
                bad("keys= given twice");
            }
            have_keys = true;
            spec.keys = parse_fields(value);
            if (spec.keys.size() > kMaxKeys) {
                bad("too many keys in '" + std::string(attr) + "' (at most 3)");
            }
        } else if (what == "val" || what == "vals" || what == "values") {
            if (have_vals) {
                bad("vals= given twice");
            }
            have_vals = true;
            for (HistField& f : parse_fields(value)) {
                if (f.name != "hitcount") {
                    spec.vals.push_back(std::move(f));
                }
            }
            if (spec.vals.size() > kMaxVals) {
                bad("too many values in '" + std::string(attr) + "' (at most 2 besides hitcount)");
            }
        } else if (what == "sort") {
            if (have_sort) {
                bad("sort= given twice");
            }
            have_sort = true;
            spec.sort = parse_sort(value);
        } else if (what == "size") {
            spec.size = parse_size(value);
        } else if (what == "name") {
            spec.name = std::string(value);
        } else {
            bad("'" + std::string(attr) +
                "': variables and clock= are not supported (keys=, vals=, sort=, size=, name=)");
        }
    }
    if (!have_keys) {
        bad("no keys= in '" + spec.text +
            "' (keys=FIELD[,FIELD...] is what a histogram counts by)");
    }
    if (spec.sort.empty()) {
        spec.sort.push_back(HistSort{"hitcount", false});
    }
    return spec;
}

std::vector<std::string> hist_field_names(const KprobeDef* def) {
    std::vector<std::string> out;
    if (def) {
        for (const auto& f : def->fields) {
            out.push_back(f.name);
        }
    } else {
        out.insert(out.end(), {"ip", "parent_ip"});
    }
    out.insert(out.end(), {"common_pid", "comm", "common_cpu", "stacktrace", "ustacktrace"});
    return out;
}

void resolve_hist_fields(HistSpec& spec, const KprobeDef* def) {
    const auto known = [&](HistField& f, bool is_key) {
        const std::string& n = f.name;
        int index = -1;
        if (def && !is_common(n)) {
            for (std::size_t i = 0; i < def->fields.size(); i++) {
                if (def->fields[i].name == n) {
                    index = static_cast<int>(i);
                    break;
                }
            }
        }
        if (index >= 0) {
            const ProbeField& pf = def->fields[static_cast<std::size_t>(index)];
            if (pf.type.count) {
                bad("'" + n + "' is an array: not a key or value");
            }
            f.source = HistSource::Field;
            f.field = index;
            f.is_string = pf.type.is_string() || pf.type.kind == FetchType::Kind::FixedString;
            f.is_signed = pf.type.kind == FetchType::Kind::Signed;
            f.size = pf.type.size;
        } else if (n == "common_pid") {
            f.source = HistSource::Pid;
            f.is_signed = true; // pid_t
            f.size = 4;
        } else if (n == "common_cpu" || n == "cpu" || n == "CPU") {
            f.source = HistSource::Cpu;
            f.size = 4;
        } else if (n == "comm" || n == "COMM") {
            f.source = HistSource::Comm;
            f.is_string = true;
        } else if (!def && n == "ip") {
            f.source = HistSource::Ip;
        } else if (!def && n == "parent_ip") {
            f.source = HistSource::ParentIp;
        } else if (is_key && (n == "stacktrace" || n == "common_stacktrace")) {
            if (def && def->is_uprobe) {
                bad("'" + n + "': a uprobe hits in user code, its stack is keys=ustacktrace");
            }
            f.source = HistSource::Stacktrace;
        } else if (is_key && n == "ustacktrace") {
            f.source = HistSource::UStacktrace;
        } else {
            std::string list;
            for (const auto& name : hist_field_names(def)) {
                list += (list.empty() ? "" : ", ") + name;
            }
            bad("Couldn't find field '" + n + "' (the fields here: " + list + ")");
        }
        const std::string token = n + "." + modifier_name(f.modifier);
        const HistModifier m = f.modifier;
        if (m == HistModifier::Syscall) {
            bad("'" + token + "': syscall names are not supported yet");
        }
        if (m == HistModifier::Execname && f.source != HistSource::Pid) {
            bad("Invalid field modifier: '" + token + "' (.execname is for common_pid)");
        }
        if (m != HistModifier::None && (f.is_string || is_stack(f.source))) {
            bad("Invalid field modifier: '" + token + "' (" + n + " is not a number)");
        }
        if (!is_key) {
            if (f.is_string || is_stack(f.source)) {
                bad("'" + n + "' is not a number: a value is summed");
            }
            if (m != HistModifier::None && m != HistModifier::Hex && m != HistModifier::Usecs) {
                bad("Invalid field modifier: '" + token + "' (values take .hex or .usecs)");
            }
        }
    };
    for (HistField& f : spec.keys) {
        known(f, true);
    }
    for (HistField& f : spec.vals) {
        known(f, false);
    }
    for (const HistSort& s : spec.sort) {
        const auto named = [&](const HistField& f) { return f.name == s.name; };
        if (s.name != "hitcount" && std::none_of(spec.keys.begin(), spec.keys.end(), named) &&
            std::none_of(spec.vals.begin(), spec.vals.end(), named)) {
            bad("Sort field must be a key or a val: '" + s.name + "'");
        }
    }
}

bool hist_has_stack_key(const HistSpec& spec, bool user) {
    return std::any_of(spec.keys.begin(), spec.keys.end(), [&](const HistField& k) {
        return user ? k.name == "ustacktrace"
                    : k.name == "stacktrace" || k.name == "common_stacktrace";
    });
}

std::string hist_trigger_info(const HistSpec& spec) {
    const auto field = [](const HistField& f) {
        std::string s = f.name;
        if (f.modifier != HistModifier::None) {
            s += std::string(".") + modifier_name(f.modifier);
        }
        if (f.modifier == HistModifier::Buckets) {
            s += "=" + std::to_string(f.buckets);
        }
        return s;
    };
    std::string out = "hist:";
    if (!spec.name.empty()) {
        out += "name=" + spec.name + ":";
    }
    out += "keys=";
    for (std::size_t i = 0; i < spec.keys.size(); i++) {
        out += (i ? "," : "") + field(spec.keys[i]);
    }
    out += ":vals=hitcount";
    for (const HistField& v : spec.vals) {
        out += "," + field(v);
    }
    out += ":sort=";
    for (std::size_t i = 0; i < spec.sort.size(); i++) {
        const HistSort& s = spec.sort[i];
        // printed as the field it names, with that field's modifier
        std::string name = s.name;
        for (const auto* list : {&spec.keys, &spec.vals}) {
            for (const HistField& f : *list) {
                if (f.name == s.name) {
                    name = field(f);
                }
            }
        }
        out += (i ? "," : "") + name + (s.descending ? ".descending" : "");
    }
    out += ":size=" + std::to_string(spec.size);
    if (!spec.filter.empty()) {
        out += " if " + spec.filter;
    }
    return out;
}

std::optional<std::string> hist_probe_filter(const std::vector<HistSpec>& specs,
                                             const std::string& filter) {
    const std::string& shared = specs.empty() ? filter : specs[0].filter;
    for (const HistSpec& s : specs) {
        if (s.filter != shared) {
            return std::nullopt;
        }
    }
    if (specs.empty() || shared.empty()) {
        return filter;
    }
    return filter.empty() ? shared : "(" + filter + ") && (" + shared + ")";
}

} // namespace fhook
