// The fetch arguments of kprobe, kretprobe, uprobe and uretprobe
// definitions, shared by their parsers (kprobe.cpp, uprobe.cpp) as the
// kernel's trace_probe.c is by trace_kprobe.c and trace_uprobe.c: `$args`,
// each NAME=FETCHARG[:TYPE][@entry] field with its BTF names, the fetch
// program, and the definition's canonical text.
#include "probe_args.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <fhook/core/error.hpp>

#include "fetch.hpp"

namespace fhook::probe_detail {

namespace {

constexpr std::string_view kEntry = "@entry";

// Removes a trailing "@entry" from `s`; true when there was one.
bool strip_entry(std::string_view& s) {
    if (s.size() > kEntry.size() && s.substr(s.size() - kEntry.size()) == kEntry) {
        s.remove_suffix(kEntry.size());
        return true;
    }
    return false;
}

// A field's name: NAME= when given, else as the kernel's
// generate_probe_arg_name(): a BTF name (`count`, `count:u32`) names its
// field, anything else is argN.  `body` becomes the rest.
std::string field_name(std::string_view tok, std::size_t nth, std::string_view& body) {
    body = tok;
    auto eq = tok.find('=');
    auto paren = tok.find('(');
    if (eq != std::string_view::npos && (paren == std::string_view::npos || eq < paren)) {
        std::string name(tok.substr(0, eq));
        if (!good_name(name)) {
            bad(tok, "bad field name '" + name + "' (letters, digits, '_')");
        }
        body = tok.substr(eq + 1);
        return name;
    }
    std::string_view stem = tok.substr(0, tok.find(':'));
    return good_name(stem) ? std::string(stem) : "arg" + std::to_string(nth);
}

// A kernel-only fetch argument naming kernel types ("file->f_pos"):
// its chain, and the BTF default type ("" when the user must give one).
std::string btf_chain(const KprobeDef& def, ProbeBtf& btf, std::string_view arg,
                      std::string_view type, std::string_view tok, Chain& chain) {
    const auto& f = btf.function(tok);
    bool in_memory = false;
    const std::uint32_t t = parse_btf(arg, tok, *btf.btf(), f, def.is_return, chain, in_memory);
    std::string btf_type = btf_default_type(*btf.btf(), t, in_memory);
    const bool wants_string = type == "string" || type == "ustring";
    if (type.empty() && btf_type.empty()) {
        bad(tok, "'" + std::string(arg) + "' is a " + btf.btf()->type_name(t) +
                     ": name one of its members, or give a type");
    }
    const bool pointer = btf.btf()->kind(t) == KernelBtf::Kind::Ptr;
    // a char pointer read from memory, printed as a string: load it first
    if (wants_string && in_memory && pointer) {
        chain.derefs.push_back({false, 0});
    }
    if (wants_string && !in_memory && !pointer) {
        bad(tok, "'" + std::string(arg) + "' is a " + btf.btf()->type_name(t) +
                     ", not a pointer to a string");
    }
    return btf_type;
}

// $argN of a kprobe on a vmlinux function with BTF at hand: typed like the
// argument ("" otherwise).
std::string arg_btf_type(const KprobeDef& def, const Chain& chain,
                         const BtfProvider& btf_provider) {
    if (def.is_uprobe || !chain.uses_arg || !chain.derefs.empty() || !btf_provider ||
        def.symbol.empty() || def.symbol.find(':') != std::string::npos) {
        return {};
    }
    const KernelBtf* b = btf_provider();
    if (b == nullptr) {
        return {};
    }
    auto f = b->function(def.symbol);
    if (!f || chain.load.arg > f->params.size()) {
        return {};
    }
    return btf_default_type(*b, f->params[chain.load.arg - 1].type, false);
}

// A uprobe's field: its memory is the probed process's, its arguments
// the calling convention's registers.
void check_uprobe_field(const KprobeDef& def, Chain& chain, bool entry_suffix,
                        std::string_view tok) {
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

// What the probe's place (entry, return, offset) lets a field fetch.
void check_place(const KprobeDef& def, const Chain& chain, bool entry_suffix,
                 std::string_view tok) {
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
}

} // namespace

ProbeBtf::ProbeBtf(const KprobeDef& def, const BtfProvider& provider)
    : def_(def), provider_(provider) {}

const KernelBtf::Function& ProbeBtf::function(std::string_view tok) {
    if (fn_) {
        return *fn_;
    }
    if (def_.is_uprobe || def_.symbol.empty() || def_.symbol.find(':') != std::string::npos) {
        bad(tok, "names of kernel types need a kprobe on a vmlinux function");
    }
    btf_ = provider_ ? provider_() : nullptr;
    if (btf_ == nullptr) {
        bad(tok, "names need the kernel's BTF (" + std::string(KernelBtf::kVmlinuxPath) +
                     "), which is not available");
    }
    fn_ = btf_->function(def_.symbol);
    if (!fn_) {
        bad(tok, "BTF has no function '" + def_.symbol + "' (inlined or renamed?)");
    }
    if (!def_.is_return && def_.offset) {
        bad(tok, "argument names need a probe at function entry (offset 0)");
    }
    return *fn_;
}

std::vector<std::string> expand_args(const std::vector<std::string_view>& args, ProbeBtf& btf) {
    std::vector<std::string> expanded;
    for (std::string_view tok : args) {
        if (tok != "$args") {
            expanded.emplace_back(tok);
            continue;
        }
        const auto& f = btf.function(tok);
        for (std::size_t k = 0; k < f.params.size(); k++) {
            const std::string name =
                f.params[k].name.empty() ? "arg" + std::to_string(k + 1) : f.params[k].name;
            expanded.push_back(name + "=$arg" + std::to_string(k + 1));
        }
    }
    return expanded;
}

ProbeField parse_field(const KprobeDef& def, std::string_view tok, std::size_t nth,
                       const SymbolResolver& resolve, const BtfProvider& btf_provider,
                       ProbeBtf& btf, Chain& chain) {
    ProbeField field;
    field.text = std::string(tok);
    std::string_view body;
    field.name = field_name(tok, nth, body);
    for (const auto& other : def.fields) {
        if (other.name == field.name) {
            bad(tok, "field name '" + field.name + "' used twice");
        }
    }
    bool entry_suffix = strip_entry(body);
    std::string_view arg = body, type;
    if (auto colon = body.find(':'); colon != std::string_view::npos) {
        arg = body.substr(0, colon);
        type = body.substr(colon + 1);
        entry_suffix = strip_entry(type) || entry_suffix;
    }
    if (def.is_uprobe && !arg.empty() && arg[0] == '@') {
        bad(tok, "@ADDR/@SYM are kernel memory: not in uprobes (use +OFFS(%REG))");
    }
    std::string btf_type;
    if (is_btf_expr(arg) && !(arg.substr(0, 4) == "$arg" && !def.is_uprobe &&
                              arg.find_first_of("-.") == std::string_view::npos)) {
        btf_type = btf_chain(def, btf, arg, type, tok, chain);
    } else {
        parse_fetcharg(arg, tok, resolve, chain);
        if (type.empty()) {
            btf_type = arg_btf_type(def, chain, btf_provider);
        }
    }
    if (def.is_uprobe) {
        check_uprobe_field(def, chain, entry_suffix, tok);
    }
    // (the default type is a std::string: `type` must not view a temporary)
    field.type = parse_type(!type.empty()       ? std::string(type)
                            : chain.comm        ? std::string("string")
                            : !btf_type.empty() ? btf_type
                                                : std::string("x64"),
                            tok);
    check_place(def, chain, entry_suffix, tok);
    field.at_entry = def.is_return && !def.is_uprobe && (entry_suffix || chain.uses_arg);
    field.raw = raw_fetcharg(chain);
    return field;
}

void parse_fields(KprobeDef& def, const std::vector<std::string_view>& args,
                  const SymbolResolver& resolve, const BtfProvider& btf_provider) {
    ProbeBtf btf(def, btf_provider);
    const std::vector<std::string> tokens = expand_args(args, btf);
    if (tokens.size() > FHOOK_MAX_FIELDS) {
        throw_invalid("probe '" + def.event + "' has more than " +
                      std::to_string(FHOOK_MAX_FIELDS) + " fetch arguments");
    }
    std::vector<fhook_insn> entry, ret;
    std::uint32_t data = 0;
    for (std::size_t f = 0; f < tokens.size(); f++) {
        const std::string_view tok = tokens[f];
        Chain chain;
        ProbeField field = parse_field(def, tok, f + 1, resolve, btf_provider, btf, chain);
        const std::uint32_t bytes = field.type.size * std::max(1U, field.type.count);
        if (data + bytes > FHOOK_MAX_DATA_SIZE) {
            bad(tok, "the fields need more than " + std::to_string(FHOOK_MAX_DATA_SIZE) + " bytes");
        }
        field.offset = static_cast<std::uint16_t>(data);
        data += bytes;
        auto code = compile_field(chain, field.type, field.offset, tok, def.is_uprobe);
        auto& part = field.at_entry ? entry : ret;
        part.insert(part.end(), code.begin(), code.end());
        def.fields.push_back(std::move(field));
    }
    // store indexes: the entry part's fields first, as the module numbers them
    std::uint32_t store = 0;
    for (const bool at_entry : {true, false}) {
        for (auto& field : def.fields) {
            if (field.at_entry == at_entry) {
                field.store = store++;
            }
        }
    }
    def.entry_len = static_cast<std::uint32_t>(entry.size());
    def.insns = std::move(entry);
    def.insns.insert(def.insns.end(), ret.begin(), ret.end());
    def.data_size = data;
}

std::string canonical_text(const KprobeDef& def) {
    char buf[48];
    std::string text = def.is_return ? "r" : "p";
    if (def.maxactive) {
        text += std::to_string(def.maxactive);
    }
    text += ":" + def.group + "/" + def.event + " ";
    if (def.is_uprobe) {
        std::snprintf(buf, sizeof(buf), ":0x%" PRIx64, def.offset);
        text += def.path + buf;
    } else if (def.symbol.empty()) {
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, def.addr);
        text += buf;
    } else {
        text += def.symbol + (def.offset ? "+" + std::to_string(def.offset) : "");
    }
    for (const auto& field : def.fields) {
        text += " " + field.name + "=" + field.raw + ":" + field.type.name +
                (field.at_entry ? "@entry" : "");
    }
    if (!def.filter.empty()) {
        text += " if " + def.filter;
    }
    return text;
}

} // namespace fhook::probe_detail
