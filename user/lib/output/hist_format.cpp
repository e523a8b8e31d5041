// Histograms as the kernel prints them: hist_trigger_print_key() and
// hist_trigger_entry_print() in kernel/trace/trace_events_hist.c (formats
// quoted beside each case), hist_show()'s header and totals.
#include <cinttypes>
#include <cstdio>
#include <map>

#include <fhook/output/format.hpp>
#include <fhook/output/hist_format.hpp>

#include "numbers.hpp"

namespace fhook {

namespace {

using numbers::put_u64;

// printf(fmt, ...) appended
template <typename... Args>
void put(std::string& out, const char* fmt, Args... args) {
    char buf[256];
    const int n = std::snprintf(buf, sizeof(buf), fmt, args...);
    if (n < 0) {
        return;
    }
    if (static_cast<std::size_t>(n) < sizeof(buf)) {
        out.append(buf, static_cast<std::size_t>(n));
        return;
    }
    std::string big(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), fmt, args...);
    out.append(big.data(), static_cast<std::size_t>(n));
}

// %ps: the symbol without offset, " [module]" for a module's, else 0x%lx
std::string symbol(const Ksyms& ksyms, std::uint64_t addr) {
    const auto s = ksyms.lookup(addr);
    if (!s) {
        char buf[24];
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
        return buf;
    }
    std::string out(s->name);
    if (!s->module.empty()) {
        out.append(" [").append(s->module).append("]");
    }
    return out;
}

// %pS: "sym+0xoff/0xsize [module]", else 0x%lx
std::string symbol_offset(const Ksyms& ksyms, std::uint64_t addr) {
    if (!ksyms.lookup(addr)) {
        char buf[24];
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
        return buf;
    }
    std::string out;
    ksyms.append_offset(addr, out);
    return out;
}

std::uint64_t number(const HistKeyPart& v) {
    const auto* n = std::get_if<std::uint64_t>(&v);
    return n ? *n : 0;
}

// One key part; true when it printed lines of its own (a stack)
bool append_key(const HistField& f, const HistKeyPart& v, const HistEntry& e, const Ksyms& ksyms,
                std::string& out) {
    const char* name = f.name.c_str();
    const auto n = static_cast<unsigned long long>(number(v));
    if (f.source == HistSource::Stacktrace) {
        // "stacktrace:\n" (6.12: "common_stacktrace:\n"), then "%*c%pS\n"
        // with 8 + 1 spaces, up to HIST_STACKTRACE_DEPTH frames, 0 ends
        out.append(f.name).append(":\n");
        const auto* stack = std::get_if<std::vector<std::uint64_t>>(&v);
        for (std::size_t i = 0; stack && i < stack->size() && i < 16 && (*stack)[i]; i++) {
            out.append(9, ' ').append(symbol_offset(ksyms, (*stack)[i])).push_back('\n');
        }
        return true;
    }
    if (f.source == HistSource::UStacktrace) {
        // as a kernel stack (the kernel has no such key)
        out.append(f.name).append(":\n");
        for (const std::string& frame : user_stack_frames(v)) {
            out.append(9, ' ').append(frame).push_back('\n');
        }
        return true;
    }
    if (f.is_string) {
        const auto* s = std::get_if<std::string>(&v);
        put(out, "%s: %-50s", name, s ? s->c_str() : "");
        return false;
    }
    switch (f.modifier) {
    case HistModifier::Hex:
        put(out, "%s: %llx", name, n);
        break;
    case HistModifier::Sym:
        put(out, "%s: [%llx] %-45s", name, n, symbol(ksyms, n).c_str());
        break;
    case HistModifier::SymOffset:
        put(out, "%s: [%llx] %-55s", name, n, symbol_offset(ksyms, n).c_str());
        break;
    case HistModifier::Execname:
        // the name saved when the entry was made; <idle> for pid 0
        put(out, "%s: %-16s[%10llu]", name, n == 0 ? "<idle>" : e.comm.c_str(), n);
        break;
    case HistModifier::Log2:
        put(out, "%s: ~ 2^%-2llu", name, n);
        break;
    case HistModifier::Buckets:
        put(out, "%s: ~ %llu-%llu", name, n, n + f.buckets - 1);
        break;
    default:
        put(out, "%s: %10llu", name, n);
        break;
    }
    return false;
}

} // namespace

std::vector<std::string> user_stack_frames(const HistKeyPart& v) {
    std::vector<std::string> out;
    if (const auto* s = std::get_if<std::string>(&v)) {
        for (std::size_t at = 0; at < s->size();) {
            const std::size_t nl = std::min(s->find('\n', at), s->size());
            out.push_back(s->substr(at, nl - at));
            at = nl + 1;
        }
    } else if (const auto* stack = std::get_if<std::vector<std::uint64_t>>(&v)) {
        for (std::size_t i = 1; i < stack->size(); i++) {
            char buf[24];
            std::snprintf(buf, sizeof(buf), "0x%" PRIx64, (*stack)[i]);
            out.emplace_back(buf);
        }
    }
    return out;
}

void remember_user_stacks(const HistTable& table, UserFrames& frames) {
    const HistSpec& spec = table.spec();
    for (const HistEntry& e : table.sorted()) {
        for (std::size_t i = 0; i < spec.keys.size(); i++) {
            const auto* stack = std::get_if<std::vector<std::uint64_t>>(&e.key[i]);
            if (spec.keys[i].source == HistSource::UStacktrace && stack && !stack->empty()) {
                frames.remember(static_cast<std::uint32_t>((*stack)[0]));
            }
        }
    }
}

HistTable name_user_stacks(const HistTable& table, const KprobeDef* def, UserFrames& frames) {
    const HistSpec& spec = table.spec();
    // an entry uprobe's stacks start where it hit
    const bool at_probe = def && def->is_uprobe && !def->is_return;
    std::map<std::vector<HistKeyPart>, HistEntry> named;
    for (HistEntry& e : table.sorted()) {
        for (std::size_t i = 0; i < spec.keys.size(); i++) {
            const auto* stack = std::get_if<std::vector<std::uint64_t>>(&e.key[i]);
            if (spec.keys[i].source != HistSource::UStacktrace || !stack || stack->empty()) {
                continue;
            }
            const auto tgid = static_cast<std::uint32_t>((*stack)[0]);
            const std::uint64_t probe_ip = at_probe && stack->size() > 1 ? (*stack)[1] : 0;
            std::string lines;
            for (std::size_t j = 1; j < stack->size(); j++) {
                frames.append(tgid, probe_ip, def, (*stack)[j], lines);
                lines.push_back('\n');
            }
            e.key[i] = std::move(lines);
        }
        auto [it, fresh] = named.try_emplace(e.key, e);
        if (!fresh) {
            it->second.hitcount += e.hitcount;
            for (std::size_t i = 0; i < e.sums.size(); i++) {
                it->second.sums[i] += e.sums[i];
            }
        }
    }
    std::vector<HistEntry> entries;
    for (auto& [key, e] : named) {
        entries.push_back(std::move(e));
    }
    HistTable out(spec);
    out.set(std::move(entries), table.hits(), table.dropped());
    return out;
}

void append_hist_text(const HistTable& table, const Ksyms& ksyms, std::string& out) {
    const HistSpec& spec = table.spec();
    out.append("# event histogram\n#\n# trigger info: ");
    out.append(hist_trigger_info(spec)).append(" [active]\n");
    out.append("#\n\n");
    const std::vector<HistEntry> entries = table.sorted();
    for (const HistEntry& e : entries) {
        out.append("{ ");
        bool multiline = false;
        for (std::size_t i = 0; i < spec.keys.size(); i++) {
            if (i) {
                out.append(", ");
            }
            multiline |= append_key(spec.keys[i], e.key[i], e, ksyms, out);
        }
        if (!multiline) {
            out.push_back(' ');
        }
        out.push_back('}');
        put(out, " hitcount: %10llu", static_cast<unsigned long long>(e.hitcount));
        for (std::size_t i = 0; i < spec.vals.size(); i++) {
            const auto v = static_cast<unsigned long long>(e.sums[i]);
            put(out, spec.vals[i].modifier == HistModifier::Hex ? "  %s: %10llx" : "  %s: %10llu",
                spec.vals[i].name.c_str(), v);
        }
        out.push_back('\n');
    }
    put(out, "\nTotals:\n    Hits: %llu\n    Entries: %u\n    Dropped: %llu\n",
        static_cast<unsigned long long>(table.hits()), static_cast<unsigned>(entries.size()),
        static_cast<unsigned long long>(table.dropped()));
}

void append_hist_json(const HistTable& table, const Ksyms& ksyms, std::string& out) {
    const HistSpec& spec = table.spec();
    const std::vector<HistEntry> entries = table.sorted();
    for (const HistEntry& e : entries) {
        out.append("{\"key\":{");
        for (std::size_t i = 0; i < spec.keys.size(); i++) {
            const HistField& f = spec.keys[i];
            const HistKeyPart& v = e.key[i];
            if (i) {
                out.push_back(',');
            }
            append_json_string(f.name, out);
            out.push_back(':');
            const std::uint64_t n = number(v);
            if (f.source == HistSource::UStacktrace) {
                out.push_back('[');
                const std::vector<std::string> frames = user_stack_frames(v);
                for (std::size_t j = 0; j < frames.size(); j++) {
                    out.append(j ? "," : "");
                    append_json_string(frames[j], out);
                }
                out.push_back(']');
            } else if (const auto* s = std::get_if<std::string>(&v)) {
                append_json_string(*s, out);
            } else if (const auto* stack = std::get_if<std::vector<std::uint64_t>>(&v)) {
                out.push_back('[');
                for (std::size_t j = 0; j < stack->size() && j < 16 && (*stack)[j]; j++) {
                    out.append(j ? "," : "");
                    append_json_string(symbol_offset(ksyms, (*stack)[j]), out);
                }
                out.push_back(']');
            } else if (f.modifier == HistModifier::Execname) {
                out.append("{\"pid\":");
                put_u64(n, out);
                out.append(",\"comm\":");
                append_json_string(n == 0 ? std::string("<idle>") : e.comm, out);
                out.push_back('}');
            } else if (f.modifier == HistModifier::Sym || f.modifier == HistModifier::SymOffset) {
                append_json_string(f.modifier == HistModifier::Sym ? symbol(ksyms, n)
                                                                   : symbol_offset(ksyms, n),
                                   out);
            } else if (f.modifier == HistModifier::Hex) {
                std::string hex;
                numbers::put_hex(n, hex);
                append_json_string(hex, out);
            } else if (f.modifier == HistModifier::Log2) {
                out.append("{\"log2\":");
                put_u64(n, out);
                out.push_back('}');
            } else if (f.modifier == HistModifier::Buckets) {
                out.append("{\"from\":");
                put_u64(n, out);
                out.append(",\"to\":");
                put_u64(n + f.buckets - 1, out);
                out.push_back('}');
            } else if (f.is_signed) {
                numbers::put_i64(static_cast<std::int64_t>(n), out);
            } else {
                put_u64(n, out);
            }
        }
        out.append("},\"hitcount\":");
        put_u64(e.hitcount, out);
        for (std::size_t i = 0; i < spec.vals.size(); i++) {
            out.push_back(',');
            append_json_string(spec.vals[i].name, out);
            out.push_back(':');
            put_u64(e.sums[i], out);
        }
        out.append("}\n");
    }
    out.append("{\"totals\":{\"hits\":");
    put_u64(table.hits(), out);
    out.append(",\"entries\":");
    put_u64(entries.size(), out);
    out.append(",\"dropped\":");
    put_u64(table.dropped(), out);
    out.append("}}\n");
}

std::vector<std::pair<std::string, std::string>>
hist_key_labels(const HistSpec& spec, const HistEntry& entry, const Ksyms& ksyms, bool pids) {
    std::vector<std::pair<std::string, std::string>> labels;
    for (std::size_t i = 0; i < spec.keys.size() && i < entry.key.size(); i++) {
        const HistField& f = spec.keys[i];
        const HistKeyPart& v = entry.key[i];
        const std::uint64_t n = number(v);
        const bool task = f.source == HistSource::Pid ||
                          (f.source == HistSource::Field && (f.name == "pid" || f.name == "tgid"));
        std::string value;
        const auto join = [&](const std::vector<std::string>& frames) {
            for (const std::string& frame : frames) {
                value += (value.empty() ? "" : ";") + frame;
            }
        };
        if (f.source == HistSource::UStacktrace) {
            join(user_stack_frames(v));
        } else if (const auto* str = std::get_if<std::string>(&v)) {
            value = *str;
        } else if (const auto* stack = std::get_if<std::vector<std::uint64_t>>(&v)) {
            std::vector<std::string> frames;
            for (std::size_t j = 0; j < stack->size() && (*stack)[j]; j++) {
                frames.push_back(symbol(ksyms, (*stack)[j]));
            }
            join(frames);
        } else if (f.modifier == HistModifier::Execname) {
            labels.emplace_back("comm", n == 0 ? std::string("<idle>") : entry.comm);
            if (!pids) {
                continue;
            }
            value = std::to_string(n);
        } else if (task && !pids) {
            continue;
        } else if (f.modifier == HistModifier::Sym || f.modifier == HistModifier::SymOffset) {
            value = f.modifier == HistModifier::Sym ? symbol(ksyms, n) : symbol_offset(ksyms, n);
        } else if (f.modifier == HistModifier::Hex) {
            numbers::put_hex(n, value);
        } else if (f.modifier == HistModifier::Log2) {
            value = "2^" + std::to_string(n);
        } else if (f.modifier == HistModifier::Buckets) {
            value = std::to_string(n) + "-" + std::to_string(n + f.buckets - 1);
        } else if (f.is_signed) {
            value = std::to_string(static_cast<std::int64_t>(n));
        } else {
            value = std::to_string(n);
        }
        labels.emplace_back(f.name, std::move(value));
    }
    return labels;
}

} // namespace fhook
