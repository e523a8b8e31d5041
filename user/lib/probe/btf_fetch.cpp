// Fetch arguments that name kernel types, resolved through BTF.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "fetch.hpp"

namespace fhook::probe_detail {

// A fetch argument that names kernel types: "$arg1->f_path.dentry",
// "file->f_pos", "$retval->x" (letters first, or $argN/$retval with -> or .).
bool is_btf_expr(std::string_view a) {
    if (a.empty()) {
        return false;
    }
    if (std::isalpha(static_cast<unsigned char>(a[0])) || a[0] == '_') {
        return true;
    }
    if (a[0] == '$' && (a.substr(1, 3) == "arg" || a.substr(1, 6) == "retval")) {
        return a.find("->") != std::string_view::npos || (a.find('.') != std::string_view::npos);
    }
    return false;
}

// The fetch type BTF suggests for a value of type `id` (read at an address
// when `in_memory`), or "" when it is not a scalar.
std::string btf_default_type(const KernelBtf& btf, std::uint32_t id, bool in_memory) {
    switch (btf.kind(id)) {
    case KernelBtf::Kind::Int:
    case KernelBtf::Kind::Enum: {
        const std::uint32_t size = btf.size(id);
        if (size != 1 && size != 2 && size != 4 && size != 8) {
            return "";
        }
        return std::string(btf.is_signed(id) ? "s" : "u") + std::to_string(size * 8);
    }
    case KernelBtf::Kind::Ptr:
        return "x64";
    case KernelBtf::Kind::Array:
        return in_memory && btf.is_char(btf.element(id)) ? "string" : "";
    default:
        return "";
    }
}

// Parses a typed fetch argument into `c`; returns the BTF type of its value
// and sets `in_memory` when the value is a member read from memory (the
// last dereference of `c` is then its address).
std::uint32_t parse_btf(std::string_view a, std::string_view token, const KernelBtf& btf,
                        const KernelBtf::Function& fn, bool is_return, Chain& c, bool& in_memory) {
    std::size_t i = 0;
    std::uint32_t type = 0;
    auto ident_end = [&](std::size_t from) {
        std::size_t e = from;
        while (e < a.size() && (std::isalnum(static_cast<unsigned char>(a[e])) || a[e] == '_')) {
            e++;
        }
        return e;
    };
    if (a.substr(0, 7) == "$retval") {
        if (!is_return) {
            bad(token, "$retval exists only in return probes (r:)");
        }
        c.load.op = FHOOK_OP_RETVAL;
        c.uses_retval = true;
        type = fn.ret;
        i = 7;
    } else {
        std::size_t n = 0;
        if (a.substr(0, 4) == "$arg") {
            const std::size_t e = ident_end(4);
            auto v = parse_uint(a.substr(4, e - 4));
            if (!v || *v == 0 || *v > fn.params.size()) {
                bad(token, fn.name + " has " + std::to_string(fn.params.size()) + " arguments");
            }
            n = *v;
            i = e;
        } else {
            const std::size_t e = ident_end(0);
            const std::string_view name = a.substr(0, e);
            for (std::size_t k = 0; k < fn.params.size(); k++) {
                if (fn.params[k].name == name) {
                    n = k + 1;
                }
            }
            if (!n) {
                std::string names;
                for (const auto& p : fn.params) {
                    names += (names.empty() ? "" : ", ") + p.name;
                }
                bad(token, fn.name + " has no argument '" + std::string(name) + "' (" + names +
                               "; BTF: " + btf.prototype(fn) + ")");
            }
            i = e;
        }
        c.load.op = FHOOK_OP_ARG;
        c.load.arg = static_cast<std::uint32_t>(n);
        c.uses_arg = true;
        type = fn.params[n - 1].type;
    }
    in_memory = false;
    while (i < a.size()) {
        const bool arrow = a.substr(i, 2) == "->";
        if (!arrow && a[i] != '.') {
            bad(token, "expected -> or . at '" + std::string(a.substr(i)) + "'");
        }
        i += arrow ? 2 : 1;
        const std::size_t e = ident_end(i);
        const std::string_view name = a.substr(i, e - i);
        if (name.empty()) {
            bad(token, "expected a member name after '" + std::string(arrow ? "->" : ".") + "'");
        }
        i = e;
        std::uint32_t record = type;
        if (arrow) {
            if (btf.kind(type) != KernelBtf::Kind::Ptr) {
                bad(token, "'->" + std::string(name) + "' on " + btf.type_name(type) +
                               ", which is not a pointer");
            }
            record = btf.pointee(type);
        } else if (!in_memory) {
            bad(token, "'." + std::string(name) + "' needs a struct reached through ->");
        }
        const auto kind = btf.kind(record);
        if (kind != KernelBtf::Kind::Struct && kind != KernelBtf::Kind::Union) {
            bad(token, "'" + std::string(name) + "' is looked up in " + btf.type_name(record) +
                           ", which is not a struct or union");
        }
        auto m = btf.member(record, name);
        if (!m) {
            std::string names;
            for (const auto& n : btf.member_names(record)) {
                names += (names.empty() ? "" : " ") + n;
            }
            if (names.size() > 300) {
                names = names.substr(0, 300) + "...";
            }
            bad(token, btf.type_name(record) + " has no member '" + std::string(name) +
                           "' (members: " + names + ")");
        }
        if (m->bitfield_bits) {
            bad(token, "'" + std::string(name) +
                           "' is a bit field: give its container with a "
                           "b<width>@<offset>/<container> type and an offset");
        }
        if (arrow) {
            c.derefs.push_back({false, static_cast<std::int64_t>(m->offset)});
            if (c.derefs.size() > FHOOK_MAX_DEREF) {
                bad(token, "more than " + std::to_string(FHOOK_MAX_DEREF) + " dereferences");
            }
        } else {
            c.derefs.back().offset += m->offset;
        }
        in_memory = true;
        type = m->type;
    }
    return type;
}

} // namespace fhook::probe_detail
