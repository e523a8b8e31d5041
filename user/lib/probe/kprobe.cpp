// kprobe, kretprobe and uprobe definitions (the kernel's trace_kprobe.c
// and trace_uprobe.c): parsed and compiled to fetch programs.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/elfsym.hpp>
#include <fhook/error.hpp>

#include "fetch.hpp"

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

KprobeDef parse_kprobe(std::string_view text, const SymbolResolver& resolve,
                       const BtfProvider& btf_provider) {
    KprobeDef def;
    def.text = std::string(text);
    auto tokens = split_ws(text);
    // "... if EXPR": the rest of the text is the filter
    std::string_view filter;
    for (std::size_t t = 2; t < tokens.size(); t++) {
        if (tokens[t] == "if") {
            filter = text.substr(static_cast<std::size_t>(tokens[t].data() - text.data()) + 2);
            while (!filter.empty() && std::isspace(static_cast<unsigned char>(filter.front()))) {
                filter.remove_prefix(1);
            }
            tokens.resize(t);
            break;
        }
    }
    if (tokens.size() < 2) {
        throw_invalid("probe '" + std::string(text) +
                      "' has no place to probe: p[:[GRP/]NAME] SYM[+OFFS]|ADDR [FETCHARGS]");
    }
    // head: p | rN, then :[GRP/][EVENT]
    std::string_view head = tokens[0];
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
    if (i < head.size()) {
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

    // place: SYM[+OFFS] | ADDR | /PATH:SYMBOL[+OFFS] | /PATH:0xOFFSET
    std::string_view place = tokens[1];
    if (place.find('/') != std::string_view::npos) {
        def.is_uprobe = true;
        def.group = "uprobes";
        // the path ends at the first ':' after its last '/' (C++ names have "::")
        const auto colon = place.find(':', place.rfind('/'));
        if (place[0] != '/' || colon == std::string_view::npos || colon + 1 == place.size()) {
            bad(place, "a uprobe is /PATH:SYMBOL[+OFFS] or /PATH:0xOFFSET (absolute path)");
        }
        def.path = std::string(place.substr(0, colon));
        if (def.path.size() > FHOOK_MAX_SYMBOL_LEN) {
            bad(place, "path longer than " + std::to_string(FHOOK_MAX_SYMBOL_LEN));
        }
        std::string_view where = place.substr(colon + 1);
        if (auto v = parse_uint(where)) {
            def.offset = *v;
        } else {
            auto plus = where.find('+');
            std::string_view sym = where.substr(0, plus);
            std::uint64_t extra = 0;
            if (plus != std::string_view::npos) {
                auto o = parse_uint(where.substr(plus + 1));
                if (!o) {
                    bad(place, "bad offset after the symbol");
                }
                extra = *o;
            }
            def.symbol = std::string(sym);
            def.offset = elf_symbol_offset(def.path, sym) + extra;
        }
        if (def.is_return && def.symbol.empty() == false &&
            where.find('+') != std::string_view::npos) {
            bad(place, "a return probe goes on a function entry: no offset");
        }
    } else if (auto v = parse_uint(place)) {
        def.addr = *v;
    } else {
        if (place.find('-') != std::string_view::npos) {
            bad(place, "negative offsets are not allowed");
        }
        auto plus = place.find('+');
        std::string_view sym = place.substr(0, plus);
        if (sym.empty() || !std::all_of(sym.begin(), sym.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                       c == ':';
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
    if (def.is_uprobe && def.maxactive) {
        bad(head, "uretprobes take no MAXACTIVE");
    }
    if (def.is_return && def.offset && !def.is_uprobe) {
        bad(place, "a return probe goes on a function entry: no offset");
    }
    if (def.event.empty()) {
        char buf[64];
        if (def.is_uprobe) {
            // trace_uprobe.c: "p_" + basename up to the first of ".-_" + "_0x" + offset
            std::string tail = def.path.substr(def.path.rfind('/') + 1);
            tail = tail.substr(0, tail.find_first_of(".-_"));
            std::snprintf(buf, sizeof(buf), "_0x%" PRIx64, def.offset);
            def.event = sanitize("p_" + tail + buf);
        } else if (!def.symbol.empty()) {
            def.event = sanitize(std::string(def.is_return ? "r_" : "p_") + def.symbol + "_" +
                                 std::to_string(def.offset));
        } else {
            std::snprintf(buf, sizeof(buf), "%c_0x%" PRIx64, def.is_return ? 'r' : 'p', def.addr);
            def.event = sanitize(buf);
        }
        if (def.event.size() > kMaxEventName) {
            def.event.resize(kMaxEventName);
        }
    }

    // BTF of the probed function, loaded on first use
    const KernelBtf* btf = nullptr;
    std::optional<KernelBtf::Function> fn;
    auto need_btf = [&](std::string_view tok) -> const KernelBtf::Function& {
        if (!fn) {
            if (def.is_uprobe || def.symbol.empty() || def.symbol.find(':') != std::string::npos) {
                bad(tok, "names of kernel types need a kprobe on a vmlinux function");
            }
            btf = btf_provider ? btf_provider() : nullptr;
            if (!btf) {
                bad(tok, "names need the kernel's BTF (" + std::string(KernelBtf::kVmlinuxPath) +
                             "), which is not available");
            }
            fn = btf->function(def.symbol);
            if (!fn) {
                bad(tok, "BTF has no function '" + def.symbol + "' (inlined or renamed?)");
            }
            if (!def.is_return && def.offset) {
                bad(tok, "argument names need a probe at function entry (offset 0)");
            }
        }
        return *fn;
    };
    // $args: every argument, named and typed from BTF
    std::vector<std::string> expanded;
    for (std::size_t t = 0; t < tokens.size(); t++) {
        if (t >= 2 && tokens[t] == "$args") {
            const auto& f = need_btf(tokens[t]);
            for (std::size_t k = 0; k < f.params.size(); k++) {
                const std::string name =
                    f.params[k].name.empty() ? "arg" + std::to_string(k + 1) : f.params[k].name;
                expanded.push_back(name + "=$arg" + std::to_string(k + 1));
            }
            continue;
        }
        expanded.emplace_back(tokens[t]);
    }
    tokens.assign(expanded.begin(), expanded.end());

    // fields
    if (tokens.size() - 2 > FHOOK_MAX_FIELDS) {
        throw_invalid("probe '" + def.event + "' has more than " +
                      std::to_string(FHOOK_MAX_FIELDS) + " fetch arguments");
    }
    std::vector<fhook_insn> entry, ret;
    std::uint32_t data = 0;
    for (std::size_t f = 2; f < tokens.size(); f++) {
        std::string_view tok = tokens[f];
        ProbeField field;
        field.text = std::string(tok);
        std::string_view body = tok;
        auto eq = tok.find('=');
        auto paren = tok.find('(');
        if (eq != std::string_view::npos && (paren == std::string_view::npos || eq < paren)) {
            field.name = std::string(tok.substr(0, eq));
            if (!good_name(field.name)) {
                bad(tok, "bad field name '" + field.name + "' (letters, digits, '_')");
            }
            body = tok.substr(eq + 1);
        } else {
            // as the kernel's generate_probe_arg_name(): a BTF name
            // (`count`, `count:u32`) names its field, anything else is argN
            std::string_view stem = tok.substr(0, tok.find(':'));
            field.name = good_name(stem) ? std::string(stem) : "arg" + std::to_string(f - 1);
        }
        for (const auto& other : def.fields) {
            if (other.name == field.name) {
                bad(tok, "field name '" + field.name + "' used twice");
            }
        }
        constexpr std::string_view kEntry = "@entry";
        bool entry_suffix = false;
        if (body.size() > kEntry.size() && body.substr(body.size() - kEntry.size()) == kEntry) {
            entry_suffix = true;
            body.remove_suffix(kEntry.size());
        }
        std::string_view arg = body, type;
        if (auto colon = body.find(':'); colon != std::string_view::npos) {
            arg = body.substr(0, colon);
            type = body.substr(colon + 1);
            if (type.size() > kEntry.size() && type.substr(type.size() - kEntry.size()) == kEntry) {
                entry_suffix = true;
                type.remove_suffix(kEntry.size());
            }
        }
        Chain chain;
        if (def.is_uprobe && !arg.empty() && arg[0] == '@') {
            bad(tok, "@ADDR/@SYM are kernel memory: not in uprobes (use +OFFS(%REG))");
        }
        std::string btf_type;
        if (is_btf_expr(arg) && !(arg.substr(0, 4) == "$arg" && !def.is_uprobe &&
                                  arg.find_first_of("-.") == std::string_view::npos)) {
            const auto& f = need_btf(tok);
            bool in_memory = false;
            const std::uint32_t t = parse_btf(arg, tok, *btf, f, def.is_return, chain, in_memory);
            btf_type = btf_default_type(*btf, t, in_memory);
            const bool wants_string = type == "string" || type == "ustring";
            if (type.empty() && btf_type.empty()) {
                bad(tok, "'" + std::string(arg) + "' is a " + btf->type_name(t) +
                             ": name one of its members, or give a type");
            }
            // a char pointer read from memory, printed as a string: load it first
            if (wants_string && in_memory && btf->kind(t) == KernelBtf::Kind::Ptr) {
                chain.derefs.push_back({false, 0});
            }
            if (wants_string && !in_memory && btf->kind(t) != KernelBtf::Kind::Ptr) {
                bad(tok, "'" + std::string(arg) + "' is a " + btf->type_name(t) +
                             ", not a pointer to a string");
            }
        } else {
            parse_fetcharg(arg, tok, resolve, chain);
            // $argN with BTF at hand: typed like the argument
            if (!def.is_uprobe && chain.uses_arg && chain.derefs.empty() && type.empty() &&
                btf_provider && !def.symbol.empty() && def.symbol.find(':') == std::string::npos) {
                if (const KernelBtf* b = btf_provider()) {
                    if (auto f = b->function(def.symbol); f && chain.load.arg <= f->params.size()) {
                        btf_type = btf_default_type(*b, f->params[chain.load.arg - 1].type, false);
                    }
                }
            }
        }
        if (def.is_uprobe) {
            // a uprobe's memory is the probed process's
            for (auto& d : chain.derefs) {
                d.user = true;
            }
            if (chain.uses_arg && chain.load.arg > 6) {
                bad(tok, "uprobes have $arg1..$arg6 (the registers of the calling convention)");
            }
            if (def.is_return && (chain.uses_arg || entry_suffix)) {
                bad(tok, "uretprobes cannot carry entry values: use a uprobe on the entry");
            }
        }
        // (the default type is a std::string: `type` must not view a temporary)
        field.type = parse_type(!type.empty()       ? std::string(type)
                                : chain.comm        ? std::string("string")
                                : !btf_type.empty() ? btf_type
                                                    : std::string("x64"),
                                tok);
        if (chain.uses_retval && !def.is_return) {
            bad(tok, "$retval exists only in return probes (r:)");
        }
        if (chain.uses_retval && entry_suffix) {
            bad(tok, "$retval is not known at function entry");
        }
        if (chain.uses_arg && !def.is_return && def.offset && !def.is_uprobe) {
            bad(tok, "$argN needs a probe at function entry (offset 0)");
        }
        if (entry_suffix && !def.is_return) {
            bad(tok, "@entry belongs to return probes (r:)");
        }
        field.at_entry = def.is_return && !def.is_uprobe && (entry_suffix || chain.uses_arg);
        const std::uint32_t bytes = field.type.size * std::max(1U, field.type.count);
        if (data + bytes > FHOOK_MAX_DATA_SIZE) {
            bad(tok, "the fields need more than " + std::to_string(FHOOK_MAX_DATA_SIZE) + " bytes");
        }
        field.offset = static_cast<std::uint16_t>(data);
        data += bytes;
        field.raw = raw_fetcharg(chain);
        auto code = compile_field(chain, field.type, field.offset, tok, def.is_uprobe);
        auto& part = field.at_entry ? entry : ret;
        part.insert(part.end(), code.begin(), code.end());
        def.fields.push_back(std::move(field));
    }
    // store indexes: the entry part's fields first, as the module numbers them
    std::uint32_t store = 0;
    for (auto& field : def.fields) {
        if (field.at_entry) {
            field.store = store++;
        }
    }
    for (auto& field : def.fields) {
        if (!field.at_entry) {
            field.store = store++;
        }
    }
    def.entry_len = static_cast<std::uint32_t>(entry.size());
    def.insns = std::move(entry);
    def.insns.insert(def.insns.end(), ret.begin(), ret.end());
    def.data_size = data;
    if (!filter.empty() || text.ends_with(" if")) {
        def.filter = std::string(filter);
        def.pred = compile_filter(filter, &def);
    }
    // the same definition without names of kernel types or binary symbols
    char buf[48];
    def.canonical = def.is_return ? "r" : "p";
    if (def.maxactive) {
        def.canonical += std::to_string(def.maxactive);
    }
    def.canonical += ":" + def.group + "/" + def.event + " ";
    if (def.is_uprobe) {
        std::snprintf(buf, sizeof(buf), ":0x%" PRIx64, def.offset);
        def.canonical += def.path + buf;
    } else if (def.symbol.empty()) {
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, def.addr);
        def.canonical += buf;
    } else {
        def.canonical += def.symbol + (def.offset ? "+" + std::to_string(def.offset) : "");
    }
    for (const auto& field : def.fields) {
        def.canonical += " " + field.name + "=" + field.raw + ":" + field.type.name +
                         (field.at_entry ? "@entry" : "");
    }
    if (!def.filter.empty()) {
        def.canonical += " if " + def.filter;
    }
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
