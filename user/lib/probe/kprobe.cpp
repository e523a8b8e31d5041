// Probe definitions: kprobes and kretprobes (the kernel's trace_kprobe.c),
// and parse_kprobe(), which takes uprobes too (uprobe.cpp) and parses every
// kind's fetch arguments (probe_args.cpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/core/error.hpp>

#include "probe_args.hpp"

namespace fhook {

using namespace probe_detail;

bool is_tracepoint_definition(std::string_view arg) {
    return arg.size() > 2 && arg.substr(0, 2) == "t:";
}

bool is_probe_definition(std::string_view arg) {
    if (is_tracepoint_definition(arg)) {
        return true;
    }
    if (arg.size() < 2 || (arg[0] != 'p' && arg[0] != 'r')) {
        return false;
    }
    std::size_t i = 1;
    if (arg[0] == 'r') {
        while (i < arg.size() && std::isdigit(static_cast<unsigned char>(arg[i]))) {
            i++;
        }
    }
    return i < arg.size() && (arg[i] == ':' || std::isspace(static_cast<unsigned char>(arg[i])));
}

namespace {

// "... if EXPR": the rest of the text is the filter, the tokens end before it.
std::string_view split_filter(std::string_view text, std::vector<std::string_view>& tokens) {
    for (std::size_t t = 2; t < tokens.size(); t++) {
        if (tokens[t] == "if") {
            std::string_view filter =
                text.substr(static_cast<std::size_t>(tokens[t].data() - text.data()) + 2);
            while (!filter.empty() && std::isspace(static_cast<unsigned char>(filter.front()))) {
                filter.remove_prefix(1);
            }
            tokens.resize(t);
            return filter;
        }
    }
    return {};
}

// p | rN, then :[GRP/][EVENT]
void parse_head(KprobeDef& def, std::string_view head) {
    def.is_return = head[0] == 'r';
    std::size_t i = 1;
    while (i < head.size() && std::isdigit(static_cast<unsigned char>(head[i]))) {
        i++;
    }
    if (i > 1) {
        if (!def.is_return) {
            bad(head, "only return probes (r) take MAXACTIVE");
        }
        auto n = parse_uint(head.substr(1, i - 1));
        if (!n || *n == 0 || *n > FHOOK_MAX_MAXACTIVE) {
            bad(head, "MAXACTIVE must be 1.." + std::to_string(FHOOK_MAX_MAXACTIVE));
        }
        def.maxactive = static_cast<std::uint32_t>(*n);
    }
    if (i == head.size()) {
        return;
    }
    if (head[i] != ':') {
        bad(head, "expected p[:[GRP/]NAME] or r[MAXACTIVE][:[GRP/]NAME]");
    }
    std::string_view name = head.substr(i + 1);
    if (auto slash = name.find('/'); slash != std::string_view::npos) {
        def.group = std::string(name.substr(0, slash));
        if (!good_name(def.group)) {
            bad(head, "bad group name '" + def.group + "' (letters, digits, '_')");
        }
        name.remove_prefix(slash + 1);
    }
    if (!name.empty()) {
        def.event = std::string(name);
        if (!good_name(def.event)) {
            bad(head, "bad event name '" + def.event + "' (letters, digits, '_')");
        }
    }
}

// SYM[+OFFS] | ADDR
void parse_kernel_place(KprobeDef& def, std::string_view place) {
    if (auto v = parse_uint(place)) {
        def.addr = *v;
        return;
    }
    if (place.find('-') != std::string_view::npos) {
        bad(place, "negative offsets are not allowed");
    }
    auto plus = place.find('+');
    std::string_view sym = place.substr(0, plus);
    if (sym.empty() || !std::all_of(sym.begin(), sym.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':';
        })) {
        bad(place, "expected SYMBOL[+OFFS] or an address");
    }
    if (sym.size() > 255) {
        bad(place, "symbol longer than 255");
    }
    def.symbol = std::string(sym);
    if (plus != std::string_view::npos) {
        auto o = parse_uint(place.substr(plus + 1));
        if (!o || *o > static_cast<std::uint64_t>(INT32_MAX)) {
            bad(place, "bad offset");
        }
        def.offset = *o;
    }
}

// trace_kprobe.c's name for a probe without one: p_SYM_OFFS, r_SYM_OFFS, p_0xADDR
std::string kprobe_event_name(const KprobeDef& def) {
    if (!def.symbol.empty()) {
        return sanitize(std::string(def.is_return ? "r_" : "p_") + def.symbol + "_" +
                        std::to_string(def.offset));
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%c_0x%" PRIx64, def.is_return ? 'r' : 'p', def.addr);
    return sanitize(buf);
}

} // namespace

KprobeDef parse_kprobe(std::string_view text, const SymbolResolver& resolve,
                       const BtfProvider& btf_provider) {
    KprobeDef def;
    def.text = std::string(text);
    auto tokens = split_ws(text);
    const std::string_view filter = split_filter(text, tokens);
    if (tokens.size() < 2) {
        throw_invalid("probe '" + std::string(text) +
                      "' has no place to probe: p[:[GRP/]NAME] SYM[+OFFS]|ADDR [FETCHARGS]");
    }
    parse_head(def, tokens[0]);
    // a path names a binary: a uprobe (trace_uprobe.c), else a kprobe
    const std::string_view place = tokens[1];
    if (place.find('/') != std::string_view::npos) {
        parse_uprobe_place(def, place);
    } else {
        parse_kernel_place(def, place);
    }
    if (def.is_uprobe && def.maxactive) {
        bad(tokens[0], "uretprobes take no MAXACTIVE");
    }
    if (def.is_return && def.offset && !def.is_uprobe) {
        bad(place, "a return probe goes on a function entry: no offset");
    }
    if (def.event.empty()) {
        def.event = def.is_uprobe ? uprobe_event_name(def) : kprobe_event_name(def);
        if (def.event.size() > kMaxEventName) {
            def.event.resize(kMaxEventName);
        }
    }
    parse_fields(def, {tokens.begin() + 2, tokens.end()}, resolve, btf_provider);
    if (!filter.empty() || text.ends_with(" if")) {
        def.filter = std::string(filter);
        def.pred = compile_filter(filter, &def);
    }
    def.canonical = canonical_text(def);
    return def;
}

void ProbeTable::add(std::uint32_t id, KprobeDef def) {
    probes_.emplace_back(id, std::move(def));
}

const KprobeDef* ProbeTable::find(std::uint32_t id) const noexcept {
    for (const auto& [pid, def] : probes_) {
        if (pid == id) {
            return &def;
        }
    }
    return nullptr;
}

} // namespace fhook
