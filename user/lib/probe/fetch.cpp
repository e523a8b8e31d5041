// The fetch-argument language: types, FETCHARGs, their instructions.
#include "fetch.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/core/error.hpp>

namespace fhook::probe_detail {

[[noreturn]] void bad(std::string_view token, const std::string& why) {
    throw_invalid("bad probe token '" + std::string(token) + "': " + why);
}

bool good_name(std::string_view s) {
    if (s.empty() || s.size() > kMaxEventName ||
        !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

// Integer in C notation (decimal, 0x hex), the whole of `s`.
std::optional<std::uint64_t> parse_uint(std::string_view s) {
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    }
    if (s.empty()) {
        return std::nullopt;
    }
    std::uint64_t v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
    bool neg = false;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    auto v = parse_uint(s);
    if (!v || *v > static_cast<std::uint64_t>(INT64_MAX) + (neg ? 1 : 0)) {
        return std::nullopt;
    }
    return neg ? static_cast<std::int64_t>(0 - *v) : static_cast<std::int64_t>(*v);
}

const char* const kRegNames[FHOOK_REG_MAX] = {
    "ax",  "bx",  "cx",  "dx",  "si",  "di",  "bp",    "sp",  "r8",  "r9",      "r10",
    "r11", "r12", "r13", "r14", "r15", "ip",  "flags", "cs",  "ss",  "orig_ax", "x0",
    "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",    "x8",  "x9",  "x10",     "x11",
    "x12", "x13", "x14", "x15", "x16", "x17", "x18",   "x19", "x20", "x21",     "x22",
    "x23", "x24", "x25", "x26", "x27", "x28", "x29",   "x30", "pc",  "pstate"};

FetchType parse_type(std::string_view t, std::string_view token) {
    FetchType ft;
    ft.name = std::string(t);
    // TYPE[N]
    if (auto lb = t.find('['); lb != std::string_view::npos) {
        if (t.back() != ']') {
            bad(token, "array type needs ']' (e.g. u32[4])");
        }
        auto n = parse_uint(t.substr(lb + 1, t.size() - lb - 2));
        if (!n || *n == 0 || *n > FHOOK_MAX_ARRAY) {
            bad(token, "array length must be 1.." + std::to_string(FHOOK_MAX_ARRAY));
        }
        FetchType elem = parse_type(t.substr(0, lb), token);
        if (elem.is_string()) {
            bad(token, "arrays of strings are not supported");
        }
        if (elem.count) {
            bad(token, "arrays of arrays are not supported");
        }
        elem.count = static_cast<unsigned>(*n);
        elem.name = ft.name;
        return elem;
    }
    if (t == "string" || t == "ustring") {
        ft.kind = t == "string" ? FetchType::Kind::String : FetchType::Kind::UString;
        ft.size = 4;
        return ft;
    }
    if (t == "symbol") {
        ft.kind = FetchType::Kind::Symbol;
        return ft;
    }
    if (t == "char") {
        ft.kind = FetchType::Kind::Char;
        ft.size = 1;
        return ft;
    }
    if (!t.empty() && t[0] == 'b') {
        // b<width>@<offset>/<container>
        auto at = t.find('@');
        auto slash = t.find('/');
        if (at == std::string_view::npos || slash == std::string_view::npos || slash < at) {
            bad(token, "bitfield type is b<width>@<offset>/<container>, e.g. b4@2/32");
        }
        auto w = parse_uint(t.substr(1, at - 1));
        auto o = parse_uint(t.substr(at + 1, slash - at - 1));
        auto c = parse_uint(t.substr(slash + 1));
        if (!w || !o || !c || (*c != 8 && *c != 16 && *c != 32 && *c != 64) || *w == 0 ||
            *w + *o > *c) {
            bad(token, "bitfield needs width >= 1, width + offset <= container, container 8, 16, "
                       "32 or 64");
        }
        ft.kind = FetchType::Kind::Bitfield;
        ft.size = static_cast<unsigned>(*c / 8);
        ft.bf_width = static_cast<unsigned>(*w);
        ft.bf_offset = static_cast<unsigned>(*o);
        return ft;
    }
    if (t.size() >= 2 && (t[0] == 'u' || t[0] == 's' || t[0] == 'x')) {
        auto bits = parse_uint(t.substr(1));
        if (bits && (*bits == 8 || *bits == 16 || *bits == 32 || *bits == 64)) {
            ft.kind = t[0] == 'u'   ? FetchType::Kind::Unsigned
                      : t[0] == 's' ? FetchType::Kind::Signed
                                    : FetchType::Kind::Hex;
            ft.size = static_cast<unsigned>(*bits / 8);
            return ft;
        }
    }
    bad(token, "unknown type '" + std::string(t) +
                   "' (u8..u64, s8..s64, x8..x64, char, string, ustring, symbol, "
                   "b<width>@<offset>/<container>, TYPE[N])");
}

void parse_fetcharg(std::string_view a, std::string_view token, const SymbolResolver& resolve,
                    Chain& c) {
    if (a.empty()) {
        bad(token, "empty fetch argument");
    }
    switch (a[0]) {
    case '%': {
        auto r = register_index(a.substr(1));
        if (!r || !register_of(*r, host_arch())) {
            bad(token, "unknown register '" + std::string(a) +
                           (host_arch() == Arch::Arm64
                                ? "' (arm64: %x0..%x30 %sp %pc %pstate)"
                                : "' (x86-64: %ax %bx %cx %dx %si %di %bp %sp %r8..%r15 %ip "
                                  "%flags %cs %ss %orig_ax)"));
        }
        c.load.op = FHOOK_OP_REG;
        c.load.arg = *r;
        return;
    }
    case '$': {
        std::string_view v = a.substr(1);
        if (v == "retval") {
            c.load.op = FHOOK_OP_RETVAL;
            c.uses_retval = true;
        } else if (v == "stack") {
            c.load.op = FHOOK_OP_STACKP;
        } else if (v == "comm" || v == "COMM") {
            c.comm = true;
        } else if (v.substr(0, 5) == "stack") {
            auto n = parse_uint(v.substr(5));
            if (!n || *n > FHOOK_MAX_STACKN) {
                bad(token, "$stackN needs N in 0.." + std::to_string(FHOOK_MAX_STACKN));
            }
            c.load.op = FHOOK_OP_STACK;
            c.load.arg = static_cast<std::uint32_t>(*n);
        } else if (v.substr(0, 3) == "arg") {
            auto n = parse_uint(v.substr(3));
            const std::uint32_t max = arch_max_argn(host_arch());
            if (!n || *n == 0 || *n > max) {
                bad(token,
                    "$argN needs N in 1.." + std::to_string(max) +
                        (max < FHOOK_MAX_ARGN ? std::string(" on ") + arch_name(host_arch()) +
                                                    " (later arguments: $stack0 on)"
                                              : ""));
            }
            c.load.op = FHOOK_OP_ARG;
            c.load.arg = static_cast<std::uint32_t>(*n);
            c.uses_arg = true;
        } else {
            bad(token, "unknown variable '" + std::string(a) +
                           "' ($argN, $stackN, $stack, $retval, $comm)");
        }
        return;
    }
    case '@': {
        std::string_view m = a.substr(1);
        std::uint64_t addr = 0;
        if (auto v = parse_uint(m)) {
            addr = *v;
        } else {
            auto pm = m.find_first_of("+-");
            std::string_view sym = m.substr(0, pm);
            std::int64_t off = 0;
            if (pm != std::string_view::npos) {
                auto o = parse_int(m.substr(pm));
                if (!o) {
                    bad(token, "bad offset in '" + std::string(a) + "'");
                }
                off = *o;
            }
            auto base = resolve ? resolve(sym) : std::nullopt;
            if (!base) {
                bad(token, "unknown symbol '" + std::string(sym) + "' (not in /proc/kallsyms)");
            }
            addr = *base + static_cast<std::uint64_t>(off);
        }
        c.load.op = FHOOK_OP_IMM;
        c.load.imm = static_cast<std::int64_t>(addr);
        c.derefs.push_back({false, 0});
        c.from_at = true;
        return;
    }
    case '\\': {
        auto v = parse_int(a.substr(1));
        if (!v) {
            bad(token, "bad immediate '" + std::string(a) + "' (\\123, \\0x7b, \\-1)");
        }
        c.load.op = FHOOK_OP_IMM;
        c.load.imm = *v;
        return;
    }
    case '+':
    case '-': {
        auto open = a.find('(');
        if (open == std::string_view::npos || a.back() != ')') {
            bad(token, "dereference is +|-[u]OFFS(FETCHARG), e.g. +8(%di)");
        }
        std::string_view off = a.substr(1, open - 1);
        bool user = false;
        if (!off.empty() && off[0] == 'u') {
            user = true;
            off.remove_prefix(1);
        }
        auto o = parse_uint(off);
        if (!o || *o > static_cast<std::uint64_t>(INT32_MAX)) {
            bad(token, "bad offset '" + std::string(a.substr(0, open)) + "'");
        }
        parse_fetcharg(a.substr(open + 1, a.size() - open - 2), token, resolve, c);
        if (c.comm) {
            bad(token, "$comm cannot be dereferenced");
        }
        const auto value = static_cast<std::int64_t>(*o);
        c.derefs.push_back({user, a[0] == '-' ? -value : value});
        if (c.derefs.size() > FHOOK_MAX_DEREF) {
            bad(token, "more than " + std::to_string(FHOOK_MAX_DEREF) + " dereferences");
        }
        return;
    }
    default:
        bad(token, "unknown fetch argument '" + std::string(a) +
                       "' (%REG, $argN, $stackN, $stack, $retval, $comm, @ADDR, @SYM[+OFFS], "
                       "\\IMM, +|-[u]OFFS(FETCHARG))");
    }
}

fhook_insn make(std::uint8_t op, std::uint8_t size, std::uint16_t dst, std::uint32_t arg,
                std::int64_t imm) {
    fhook_insn in{};
    in.op = op;
    in.size = size;
    in.dst = dst;
    in.arg = arg;
    in.imm = imm;
    return in;
}

// Instructions of one field: load, derefs, store.
std::vector<fhook_insn> compile_field(const Chain& c, const FetchType& t, std::uint16_t dst,
                                      std::string_view token, bool user_memory) {
    std::vector<fhook_insn> out;
    if (c.comm) {
        if (!t.is_string()) {
            bad(token, "$comm is a string: use $comm or $comm:string");
        }
        out.push_back(make(FHOOK_OP_ST_COMM, 0, dst));
        return out;
    }
    out.push_back(c.load);
    const bool has_deref = !c.derefs.empty();
    // the last dereference becomes the store's memory read
    for (std::size_t i = 0; i + 1 < c.derefs.size(); i++) {
        out.push_back(
            make(c.derefs[i].user ? FHOOK_OP_UDEREF : FHOOK_OP_DEREF, 0, 0, 0, c.derefs[i].offset));
    }
    const bool last_user = has_deref && c.derefs.back().user;
    const std::int64_t last_off = has_deref ? c.derefs.back().offset : 0;
    if (t.is_string()) {
        const bool user = t.kind == FetchType::Kind::UString || last_user || user_memory;
        if (has_deref) {
            out.push_back(make(user ? FHOOK_OP_ST_USTRING : FHOOK_OP_ST_STRING, 0, dst,
                               kDefaultStringMax, last_off));
        } else {
            // the string at the address the value holds
            out.push_back(make(user ? FHOOK_OP_ST_USTRING : FHOOK_OP_ST_STRING, 0, dst,
                               kDefaultStringMax, 0));
        }
        return out;
    }
    if (t.count) {
        if (!has_deref) {
            bad(token, "an array needs a dereference, e.g. +0(%di):u32[4]");
        }
        out.push_back(make(last_user ? FHOOK_OP_ST_UMEM : FHOOK_OP_ST_MEM,
                           static_cast<std::uint8_t>(t.size), dst, t.count, last_off));
        return out;
    }
    if (has_deref) {
        out.push_back(make(last_user ? FHOOK_OP_ST_UMEM : FHOOK_OP_ST_MEM,
                           static_cast<std::uint8_t>(t.size), dst, 1, last_off));
    } else {
        out.push_back(make(FHOOK_OP_ST_RAW, static_cast<std::uint8_t>(t.size), dst));
    }
    return out;
}

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) {
            i++;
        }
        std::size_t j = i;
        while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) {
            j++;
        }
        if (j > i) {
            out.push_back(s.substr(i, j - i));
        }
        i = j;
    }
    return out;
}

std::string sanitize(std::string s) {
    for (char& c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c))) {
            c = '_';
        }
    }
    return s;
}

// The tracefs spelling of a parsed fetch argument, without BTF names.
std::string raw_fetcharg(const Chain& c) {
    if (c.comm) {
        return "$comm";
    }
    std::string s;
    std::size_t first = 0;
    char buf[48];
    switch (c.load.op) {
    case FHOOK_OP_REG:
        s = std::string("%") + kRegNames[c.load.arg];
        break;
    case FHOOK_OP_ARG:
        s = "$arg" + std::to_string(c.load.arg);
        break;
    case FHOOK_OP_STACK:
        s = "$stack" + std::to_string(c.load.arg);
        break;
    case FHOOK_OP_STACKP:
        s = "$stack";
        break;
    case FHOOK_OP_RETVAL:
        s = "$retval";
        break;
    default: // IMM: @ADDR (with its dereference) or \IMM
        if (!c.derefs.empty() && c.from_at) {
            std::snprintf(buf, sizeof(buf), "@0x%" PRIx64,
                          static_cast<std::uint64_t>(c.load.imm) +
                              static_cast<std::uint64_t>(c.derefs[0].offset));
            s = buf;
            first = 1;
        } else {
            s = "\\" + std::to_string(c.load.imm);
        }
    }
    for (std::size_t i = first; i < c.derefs.size(); i++) {
        const auto& d = c.derefs[i];
        std::snprintf(buf, sizeof(buf), "%c%s%" PRIu64 "(", d.offset < 0 ? '-' : '+',
                      d.user ? "u" : "",
                      d.offset < 0 ? 0 - static_cast<std::uint64_t>(d.offset)
                                   : static_cast<std::uint64_t>(d.offset));
        s = buf + s + ")";
    }
    return s;
}

} // namespace fhook::probe_detail

namespace fhook {

using probe_detail::kRegNames;

std::optional<std::uint32_t> register_index(std::string_view name) {
    for (std::uint32_t i = 0; i < FHOOK_REG_MAX; i++) {
        if (name == kRegNames[i]) {
            return i;
        }
    }
    return std::nullopt;
}

namespace {

// The registers of each CPU, as tracefs names them there (%sp is both's).
constexpr bool is_arm64_reg(std::uint32_t r) {
    return r == FHOOK_REG_SP || (r >= FHOOK_REG_X0 && r <= FHOOK_REG_PSTATE);
}

} // namespace

bool register_of(std::uint32_t r, Arch arch) {
    return r < FHOOK_REG_MAX && (arch == Arch::Arm64 ? is_arm64_reg(r) : r <= FHOOK_REG_ORIG_AX);
}

} // namespace fhook
