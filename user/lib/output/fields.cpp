// The fields of probe records as text and JSON (the kernel's
// trace_output.c for probe events), and the session's table of probes.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/output/fields.hpp>
#include <fhook/output/format.hpp>

#include "numbers.hpp"

namespace fhook {

namespace {

// x86-64: little-endian.  A fixed size per case: a memcpy of a variable
// size is a call.
std::uint64_t load_le(const std::uint8_t* p, unsigned size) {
    switch (size) {
    case 1:
        return *p;
    case 2: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    case 8: {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    default: {
        std::uint64_t v = 0;
        std::memcpy(&v, p, std::min(size, 8U));
        return v;
    }
    }
}

std::int64_t sign_extend(std::uint64_t v, unsigned size) {
    const unsigned shift = 64 - size * 8;
    return static_cast<std::int64_t>(v << shift) >> shift;
}

// Numbers with std::to_chars: snprintf costs hundreds of instructions a
// field, and a reader formats every field of every event (docs/benchmarks.md).
template <typename T>
void put_num(std::string& out, T v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

// One element; `json` renders numbers as JSON values.
void append_scalar(const FetchType& t, const std::uint8_t* p, NameCache& names, bool json,
                   std::string& out) {
    const std::uint64_t raw = load_le(p, t.size);
    switch (t.kind) {
    case FetchType::Kind::Unsigned:
        put_num(out, raw);
        break;
    case FetchType::Kind::Signed:
        put_num(out, sign_extend(raw, t.size));
        break;
    case FetchType::Kind::Hex:
        if (json) {
            out.push_back('"');
        }
        numbers::put_hex(raw, out);
        if (json) {
            out.push_back('"');
        }
        break;
    case FetchType::Kind::Char:
        if (json) {
            append_json_string(std::string_view(reinterpret_cast<const char*>(p), 1), out);
        } else {
            out.push_back('\'');
            out.push_back(static_cast<char>(raw));
            out.push_back('\'');
        }
        break;
    case FetchType::Kind::Symbol: {
        std::string sym;
        names.append_offset(raw, sym);
        if (json) {
            append_json_string(sym, out);
        } else {
            out.append(sym);
        }
        break;
    }
    case FetchType::Kind::Bitfield: {
        const unsigned bits = t.size * 8;
        std::uint64_t v = raw << (64 - bits) >> (64 - bits); // the container
        v = (v << (64 - t.bf_width - t.bf_offset)) >> (64 - t.bf_width);
        put_num(out, v);
        break;
    }
    default:
        break;
    }
}

void append_field(const ProbeField& f, const Event& ev, NameCache& names, bool json,
                  std::string& out) {
    const bool fault = f.store < 64 && (ev.faults >> f.store & 1);
    const auto& data = ev.data;
    const std::size_t bytes = f.type.size * std::max(1U, f.type.count);
    if (f.offset + bytes > data.size()) {
        out.append(json ? "null" : "(bad)");
        return;
    }
    const std::uint8_t* p = data.data() + f.offset;
    if (f.type.kind == FetchType::Kind::FixedString) {
        const char* str = reinterpret_cast<const char*>(p);
        const std::string_view text(str, ::strnlen(str, f.type.size));
        if (json) {
            append_json_string(text, out);
        } else {
            out.push_back('"');
            out.append(text);
            out.push_back('"');
        }
        return;
    }
    if (f.type.is_string()) {
        const std::uint32_t loc = static_cast<std::uint32_t>(load_le(p, 4));
        const std::size_t len = FHOOK_LOC_LEN(loc), off = FHOOK_LOC_OFF(loc);
        const bool cut = loc & FHOOK_LOC_CUT;
        if (fault || (len == 0 && !cut) || off + len > data.size()) {
            out.append(json ? "null" : "(fault)");
            return;
        }
        const char* s = reinterpret_cast<const char*>(data.data() + off);
        std::string_view str(s, ::strnlen(s, len));
        if (json) {
            append_json_string(str, out);
        } else {
            // cut at FHOOK_MAX_STRING (as tracefs) or the record's room: said so
            out.push_back('"');
            out.append(str);
            out.push_back('"');
            out.append(cut ? "(cut)" : "");
        }
        return;
    }
    if (fault) {
        out.append(json ? "null" : "(fault)");
        return;
    }
    if (!f.type.count) {
        append_scalar(f.type, p, names, json, out);
        return;
    }
    out.push_back(json ? '[' : '{');
    for (unsigned i = 0; i < f.type.count; i++) {
        if (i) {
            out.push_back(',');
        }
        append_scalar(f.type, p + i * f.type.size, names, json, out);
    }
    out.push_back(json ? ']' : '}');
}

} // namespace

void append_probe_fields(const KprobeDef& def, const Event& ev, NameCache& names,
                         std::string& out) {
    for (const auto& f : def.fields) {
        out.push_back(' ');
        out.append(f.name);
        out.push_back('=');
        append_field(f, ev, names, false, out);
    }
}

void append_probe_fields_json(const KprobeDef& def, const Event& ev, NameCache& names,
                              std::string& out) {
    const char* sep = "";
    for (const auto& f : def.fields) {
        out.append(sep);
        append_json_string(f.name, out);
        out.push_back(':');
        append_field(f, ev, names, true, out);
        sep = ",";
    }
}

} // namespace fhook
