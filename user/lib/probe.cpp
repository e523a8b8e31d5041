#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fhook/elfsym.hpp>
#include <fhook/error.hpp>
#include <fhook/format.hpp>
#include <fhook/probe.hpp>

namespace fhook {

namespace {

constexpr std::size_t kMaxEventName = 64;                     // MAX_EVENT_NAME_LEN
constexpr std::uint32_t kDefaultStringMax = FHOOK_MAX_STRING; // tracefs: MAX_STRING_SIZE

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

constexpr const char* kRegNames[FHOOK_REG_MAX] = {
    "ax",  "bx",  "cx",  "dx",  "si",  "di", "bp",    "sp", "r8", "r9",     "r10",
    "r11", "r12", "r13", "r14", "r15", "ip", "flags", "cs", "ss", "orig_ax"};

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

// A parsed FETCHARG: one load and the dereferences applied to it, innermost
// first.
struct Chain {
    fhook_insn load{};
    bool comm = false;
    bool from_at = false; // @ADDR / @SYM: load.imm plus derefs[0]
    bool uses_arg = false;
    bool uses_retval = false;
    struct Deref {
        bool user;
        std::int64_t offset;
    };
    std::vector<Deref> derefs;
};

void parse_fetcharg(std::string_view a, std::string_view token, const SymbolResolver& resolve,
                    Chain& c) {
    if (a.empty()) {
        bad(token, "empty fetch argument");
    }
    switch (a[0]) {
    case '%': {
        auto r = register_index(a.substr(1));
        if (!r) {
            bad(token, "unknown register '" + std::string(a) +
                           "' (x86-64: %ax %bx %cx %dx %si %di %bp %sp %r8..%r15 %ip %flags "
                           "%cs %ss %orig_ax)");
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
            if (!n || *n == 0 || *n > FHOOK_MAX_ARGN) {
                bad(token, "$argN needs N in 1.." + std::to_string(FHOOK_MAX_ARGN));
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

fhook_insn make(std::uint8_t op, std::uint8_t size = 0, std::uint16_t dst = 0,
                std::uint32_t arg = 0, std::int64_t imm = 0) {
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

// ------------------------------------------------------------------
// Filters
// ------------------------------------------------------------------

struct Token {
    enum Kind { End, Ident, Number, String, Op, LParen, RParen, Not, And, Or } kind = End;
    std::string text;
    std::int64_t number = 0;
};

class FilterParser {
public:
    FilterParser(std::string_view expr, const KprobeDef* def) : src_(expr), def_(def) { next(); }

    std::vector<fhook_insn> compile() {
        if (tok_.kind == Token::End) {
            fail_expr("empty filter");
        }
        parse_or();
        if (tok_.kind != Token::End) {
            fail("unexpected '" + tok_.text + "'");
        }
        // the stack depth the module allows
        int depth = 0, max = 0;
        for (std::size_t i = 0; i < out_.size(); i++) {
            const auto op = out_[i].op;
            if (op == FHOOK_PRED_AND || op == FHOOK_PRED_OR) {
                depth--;
            } else if (op != FHOOK_PRED_NOT) {
                depth++;
                if (op == FHOOK_PRED_STR || op == FHOOK_PRED_COMM) {
                    i += (out_[i].imm + 1 + 15) / 16;
                }
            }
            max = std::max(max, depth);
        }
        if (max > FHOOK_PRED_STACK || out_.size() > FHOOK_MAX_PRED) {
            fail_expr("filter too complex (stack depth " + std::to_string(max) + ", " +
                      std::to_string(out_.size()) + " instructions)");
        }
        return std::move(out_);
    }

private:
    [[noreturn]] void fail(const std::string& why) {
        throw_invalid("bad filter '" + std::string(src_) + "' at '" +
                      std::string(src_.substr(at_)) + "': " + why);
    }
    [[noreturn]] void fail_expr(const std::string& why) {
        throw_invalid("bad filter '" + std::string(src_) + "': " + why);
    }

    void next() {
        while (pos_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[pos_]))) {
            pos_++;
        }
        at_ = pos_;
        tok_ = Token{};
        if (pos_ >= src_.size()) {
            return;
        }
        const char c = src_[pos_];
        auto two = src_.substr(pos_, 2);
        if (two == "&&" || two == "||") {
            tok_.kind = two == "&&" ? Token::And : Token::Or;
            tok_.text = std::string(two);
            pos_ += 2;
        } else if (two == "==" || two == "!=" || two == "<=" || two == ">=") {
            tok_.kind = Token::Op;
            tok_.text = std::string(two);
            pos_ += 2;
        } else if (c == '<' || c == '>' || c == '&' || c == '~') {
            tok_.kind = Token::Op;
            tok_.text = std::string(1, c);
            pos_++;
        } else if (c == '!') {
            tok_.kind = Token::Not;
            tok_.text = "!";
            pos_++;
        } else if (c == '(' || c == ')') {
            tok_.kind = c == '(' ? Token::LParen : Token::RParen;
            tok_.text = std::string(1, c);
            pos_++;
        } else if (c == '"') {
            std::string str;
            pos_++;
            while (pos_ < src_.size() && src_[pos_] != '"') {
                if (src_[pos_] == '\\' && pos_ + 1 < src_.size()) {
                    pos_++;
                }
                str.push_back(src_[pos_++]);
            }
            if (pos_ >= src_.size()) {
                fail("unterminated string");
            }
            pos_++;
            tok_.kind = Token::String;
            tok_.text = std::move(str);
        } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
            std::size_t end = pos_ + 1;
            while (end < src_.size() && std::isalnum(static_cast<unsigned char>(src_[end]))) {
                end++;
            }
            auto v = parse_int(src_.substr(pos_, end - pos_));
            if (!v) {
                // 0xffff... above INT64_MAX: as unsigned bits
                auto u = parse_uint(src_.substr(pos_, end - pos_));
                if (!u) {
                    fail("bad number");
                }
                v = static_cast<std::int64_t>(*u);
            }
            tok_.kind = Token::Number;
            tok_.number = *v;
            tok_.text = std::string(src_.substr(pos_, end - pos_));
            pos_ = end;
        } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t end = pos_ + 1;
            while (end < src_.size() &&
                   (std::isalnum(static_cast<unsigned char>(src_[end])) || src_[end] == '_')) {
                end++;
            }
            tok_.kind = Token::Ident;
            tok_.text = std::string(src_.substr(pos_, end - pos_));
            pos_ = end;
        } else {
            fail(std::string("unexpected character '") + c + "'");
        }
    }

    void parse_or() {
        parse_and();
        while (tok_.kind == Token::Or) {
            next();
            parse_and();
            out_.push_back(make(FHOOK_PRED_OR));
        }
    }
    void parse_and() {
        parse_unary();
        while (tok_.kind == Token::And) {
            next();
            parse_unary();
            out_.push_back(make(FHOOK_PRED_AND));
        }
    }
    void parse_unary() {
        if (tok_.kind == Token::Not) {
            next();
            parse_unary();
            out_.push_back(make(FHOOK_PRED_NOT));
            return;
        }
        if (tok_.kind == Token::LParen) {
            next();
            parse_or();
            if (tok_.kind != Token::RParen) {
                fail("expected ')'");
            }
            next();
            return;
        }
        parse_cmp();
    }

    static std::uint32_t cmp_of(std::string_view op) {
        static const std::pair<std::string_view, std::uint32_t> kOps[] = {
            {"==", FHOOK_CMP_EQ}, {"!=", FHOOK_CMP_NE}, {"<", FHOOK_CMP_LT},   {"<=", FHOOK_CMP_LE},
            {">", FHOOK_CMP_GT},  {">=", FHOOK_CMP_GE}, {"&", FHOOK_CMP_BITS},
        };
        for (const auto& [text, cmp] : kOps) {
            if (op == text) {
                return cmp;
            }
        }
        return FHOOK_CMP_GLOB; // "~"
    }

    void emit_string(std::uint8_t op, std::uint16_t dst, std::uint32_t cmp,
                     const std::string& value) {
        if (value.size() > FHOOK_MAX_PRED_STRING) {
            fail("string longer than " + std::to_string(FHOOK_MAX_PRED_STRING) + " bytes");
        }
        if (value.find('\0') != std::string::npos) {
            fail("NUL in a string");
        }
        if (cmp == FHOOK_CMP_EQ && value.find_first_of("*?[") != std::string::npos) {
            cmp = FHOOK_CMP_GLOB; // tracefs: == with wildcards is a glob
        }
        out_.push_back(make(op, 0, dst, cmp, static_cast<std::int64_t>(value.size())));
        const std::size_t n = (value.size() + 1 + 15) / 16;
        std::vector<fhook_insn> raw(n);
        std::memcpy(raw.data(), value.data(), value.size()); // zero-filled: NUL-terminated
        out_.insert(out_.end(), raw.begin(), raw.end());
    }

    void parse_cmp() {
        if (tok_.kind != Token::Ident) {
            fail("expected a field name");
        }
        const std::string name = tok_.text;
        next();
        if (tok_.kind != Token::Op) {
            fail("expected a comparison (== != < <= > >= & ~) after '" + name + "'");
        }
        const std::string op = tok_.text;
        const std::uint32_t cmp = cmp_of(op);
        next();
        const Token value = tok_;
        if (value.kind != Token::Number && value.kind != Token::String) {
            fail("expected a number or a \"string\" after '" + op + "'");
        }
        next();

        const ProbeField* field = nullptr;
        if (def_) {
            for (const auto& f : def_->fields) {
                if (f.name == name) {
                    field = &f;
                }
            }
        }
        const bool string_op = op == "==" || op == "!=" || op == "~";
        if ((field && field->type.is_string()) || (!field && name == "comm")) {
            if (!string_op || value.kind != Token::String) {
                fail("'" + name + "' is a string: compare it with ==, != or ~ and a \"string\"");
            }
            if (field) {
                emit_string(FHOOK_PRED_STR, field->offset, cmp, value.text);
            } else {
                emit_string(FHOOK_PRED_COMM, 0, cmp, value.text);
            }
            return;
        }
        if (op == "~") {
            fail("'~' (glob) needs a string field");
        }
        if (value.kind != Token::Number) {
            fail("'" + name + "' is a number: compare it with a number");
        }
        if (field) {
            const auto k = field->type.kind;
            if (field->type.count || k == FetchType::Kind::Bitfield ||
                k == FetchType::Kind::FixedString) {
                fail("cannot filter on '" + name + "' (arrays and bit fields are not supported)");
            }
            std::uint32_t arg = cmp;
            if (k == FetchType::Kind::Signed) {
                arg |= FHOOK_PRED_SIGNED;
            }
            out_.push_back(make(FHOOK_PRED_FIELD, static_cast<std::uint8_t>(field->type.size),
                                field->offset, arg, value.number));
            return;
        }
        std::uint8_t op_code = 0;
        if (name == "common_pid" || name == "pid") {
            op_code = FHOOK_PRED_PID;
        } else if (name == "tgid") {
            op_code = FHOOK_PRED_TGID;
        } else if (name == "cpu") {
            op_code = FHOOK_PRED_CPU;
        } else {
            std::string known = "common_pid, pid, tgid, comm, cpu";
            if (def_) {
                for (const auto& f : def_->fields) {
                    known += ", " + f.name;
                }
            }
            fail("unknown field '" + name + "' (known: " + known + ")");
        }
        out_.push_back(make(op_code, 0, 0, cmp, value.number));
    }

    std::string_view src_;
    const KprobeDef* def_;
    std::size_t pos_ = 0, at_ = 0;
    Token tok_;
    std::vector<fhook_insn> out_;
};

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

} // namespace

std::vector<fhook_insn> compile_filter(std::string_view expr, const KprobeDef* def) {
    return FilterParser(expr, def).compile();
}

TriggerSpec parse_trigger(std::string_view text) {
    TriggerSpec t;
    t.text = std::string(text);
    const auto fail = [&](const std::string& why) {
        throw_invalid("bad trigger '" + std::string(text) + "': " + why +
                      " (EVENT=ACTION[:N] [if FILTER]; ACTION: traceoff, traceon, stacktrace, "
                      "snapshot, enable:EVENT, disable:EVENT)");
    };
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        fail("no EVENT=");
    }
    t.event = std::string(text.substr(0, eq));
    if (!good_name(t.event)) {
        fail("bad event name '" + t.event + "'");
    }
    std::string_view rest = text.substr(eq + 1);
    if (auto sp = rest.find(" if "); sp != std::string_view::npos) {
        t.filter = std::string(rest.substr(sp + 4));
        rest = rest.substr(0, sp);
    }
    while (!rest.empty() && rest.back() == ' ') {
        rest.remove_suffix(1);
    }
    // ACTION[:TARGET][:N]
    std::vector<std::string_view> parts;
    for (std::size_t from = 0;;) {
        const auto c = rest.find(':', from);
        parts.push_back(rest.substr(from, c == std::string_view::npos ? c : c - from));
        if (c == std::string_view::npos) {
            break;
        }
        from = c + 1;
    }
    static const std::pair<std::string_view, std::uint32_t> kActions[] = {
        {"traceoff", FHOOK_TRIG_TRACEOFF},     {"traceon", FHOOK_TRIG_TRACEON},
        {"stacktrace", FHOOK_TRIG_STACKTRACE}, {"snapshot", FHOOK_TRIG_SNAPSHOT},
        {"enable", FHOOK_TRIG_ENABLE},         {"disable", FHOOK_TRIG_DISABLE},
    };
    for (const auto& [name, action] : kActions) {
        if (parts[0] == name) {
            t.action = action;
        }
    }
    if (!t.action) {
        fail("unknown action '" + std::string(parts[0]) + "'");
    }
    std::size_t next = 1;
    if (t.action == FHOOK_TRIG_ENABLE || t.action == FHOOK_TRIG_DISABLE) {
        if (parts.size() < 2 || parts[1].empty()) {
            fail(std::string(parts[0]) + " needs the event to switch: " + std::string(parts[0]) +
                 ":EVENT");
        }
        t.target = std::string(parts[1]);
        next = 2;
    }
    if (parts.size() > next + 1) {
        fail("too many ':'");
    }
    if (parts.size() == next + 1) {
        auto n = parse_uint(parts[next]);
        if (!n || *n == 0) {
            fail("the count must be a positive number");
        }
        t.count = *n;
    }
    return t;
}

std::optional<std::uint32_t> register_index(std::string_view name) {
    for (std::uint32_t i = 0; i < FHOOK_REG_MAX; i++) {
        if (name == kRegNames[i]) {
            return i;
        }
    }
    return std::nullopt;
}

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

} // namespace

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
        const auto colon = place.rfind(':');
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
            field.name = "arg" + std::to_string(f - 1);
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
        if (type.empty()) {
            type = chain.comm ? "string" : !btf_type.empty() ? btf_type : "x64";
        }
        field.type = parse_type(type, tok);
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

// ------------------------------------------------------------------
// Rendering
// ------------------------------------------------------------------

namespace {

std::uint64_t load_le(const std::uint8_t* p, unsigned size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, size); // x86-64: little-endian
    return v;
}

std::int64_t sign_extend(std::uint64_t v, unsigned size) {
    const unsigned shift = 64 - size * 8;
    return static_cast<std::int64_t>(v << shift) >> shift;
}

// Numbers with std::to_chars: snprintf costs hundreds of instructions a
// field, and a reader formats every field of every event (docs/benchmarks.md).
template <typename T>
void put_num(std::string& out, T v, int base = 10) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v, base);
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
        out.append("0x");
        put_num(out, raw, 16);
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

std::vector<ProbeField> parse_event_format(std::string_view format, std::uint32_t& fixed_size) {
    // "\tfield:unsigned int prev_state;\toffset:24;\tsize:4;\tsigned:0;"
    std::vector<ProbeField> out;
    fixed_size = 0;
    std::size_t pos = 0;
    while (pos < format.size()) {
        std::size_t eol = format.find('\n', pos);
        if (eol == std::string_view::npos) {
            eol = format.size();
        }
        std::string_view line = format.substr(pos, eol - pos);
        pos = eol + 1;
        const auto f = line.find("field:");
        if (f == std::string_view::npos) {
            continue;
        }
        auto part = [&](std::string_view key) -> std::optional<std::uint64_t> {
            auto k = line.find(key);
            if (k == std::string_view::npos) {
                return std::nullopt;
            }
            auto v = line.substr(k + key.size());
            return parse_uint(v.substr(0, v.find(';')));
        };
        const auto semi = line.find(';', f);
        std::string_view decl = line.substr(f + 6, semi - f - 6);
        const auto offset = part("offset:"), size = part("size:"), is_signed = part("signed:");
        if (!offset || !size || *offset + *size > 0xffff) {
            continue;
        }
        fixed_size =
            std::max<std::uint32_t>(fixed_size, static_cast<std::uint32_t>(*offset + *size));
        // the name: the last identifier of the declaration, before any [N]
        std::string_view d = decl;
        std::uint64_t array = 0;
        if (d.ends_with(']')) {
            auto lb = d.rfind('[');
            array = parse_uint(d.substr(lb + 1, d.size() - lb - 2)).value_or(0);
            d = d.substr(0, lb);
        }
        auto sp = d.find_last_of(" *");
        std::string name(d.substr(sp == std::string_view::npos ? 0 : sp + 1));
        std::string_view type = sp == std::string_view::npos ? "" : d.substr(0, sp + 1);
        if (name.substr(0, 7) == "common_" || name.empty()) {
            continue;
        }
        ProbeField field;
        field.name = name;
        field.text = std::string(decl);
        field.offset = static_cast<std::uint16_t>(*offset);
        field.store = 64; // no fault bits: the kernel filled the entry
        FetchType& t = field.type;
        if (type.find("__data_loc") != std::string_view::npos) {
            t.kind = FetchType::Kind::String;
            t.size = 4;
            t.name = "string";
        } else if (array && type.find("char") != std::string_view::npos) {
            t.kind = FetchType::Kind::FixedString;
            t.size = static_cast<unsigned>(*size);
            t.name = "char[]";
        } else if (array && *size % array == 0 &&
                   (*size / array == 1 || *size / array == 2 || *size / array == 4 ||
                    *size / array == 8)) {
            t.kind = FetchType::Kind::Hex;
            t.size = static_cast<unsigned>(*size / array);
            t.count = static_cast<unsigned>(array);
            t.name = "array";
        } else if (*size == 1 || *size == 2 || *size == 4 || *size == 8) {
            t.size = static_cast<unsigned>(*size);
            t.kind = type.find('*') != std::string_view::npos ? FetchType::Kind::Hex
                     : is_signed.value_or(0)                  ? FetchType::Kind::Signed
                                                              : FetchType::Kind::Unsigned;
            t.name = (t.kind == FetchType::Kind::Hex      ? "x"
                      : t.kind == FetchType::Kind::Signed ? "s"
                                                          : "u") +
                     std::to_string(*size * 8);
        } else {
            continue; // a field fhook cannot render (struct by value...)
        }
        out.push_back(std::move(field));
    }
    return out;
}

KprobeDef parse_tracepoint(std::string_view text, const std::string& tracefs) {
    return parse_tracepoint(
        text,
        [&tracefs](const std::string& subsys,
                   const std::string& event) -> std::optional<TraceEventFiles> {
            const std::string dir = tracefs + "/events/" + subsys + "/" + event;
            auto slurp = [](const std::string& path) -> std::optional<std::string> {
                std::ifstream in(path);
                if (!in) {
                    return std::nullopt;
                }
                std::stringstream ss;
                ss << in.rdbuf();
                return ss.str();
            };
            const auto id_text = slurp(dir + "/id");
            const auto format = slurp(dir + "/format");
            if (!id_text || !format) {
                throw_runtime("no trace event " + subsys + ":" + event + " (" + dir +
                                  " cannot be read): list them in " + tracefs + "/available_events",
                              ENOENT);
            }
            auto id = parse_uint(std::string_view(*id_text).substr(0, id_text->find('\n')));
            if (!id || !*id) {
                throw_runtime("bad id in " + dir + "/id");
            }
            return TraceEventFiles{*id, *format};
        });
}

KprobeDef parse_tracepoint(std::string_view text, const TraceEventSource& files) {
    KprobeDef def;
    def.text = std::string(text);
    def.is_tracepoint = true;
    std::string_view rest = text.substr(2);
    std::string_view filter;
    if (auto i = rest.find(" if "); i != std::string_view::npos) {
        filter = rest.substr(i + 4);
        rest = rest.substr(0, i);
    }
    while (!rest.empty() && rest.back() == ' ') {
        rest.remove_suffix(1);
    }
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos || rest.find(' ') != std::string_view::npos) {
        bad(text, "a tracepoint is t:SUBSYS:EVENT [if FILTER], e.g. t:sched:sched_process_exec");
    }
    def.group = std::string(rest.substr(0, colon));
    def.event = std::string(rest.substr(colon + 1));
    if (!good_name(def.group) || !good_name(def.event)) {
        bad(text, "bad subsystem or event name");
    }
    std::optional<TraceEventFiles> ev = files(def.group, def.event);
    if (!ev) {
        throw_runtime("no trace event " + def.group + ":" + def.event, ENOENT);
    }
    def.tp_id = ev->id;
    def.tp_format = std::move(ev->format);
    def.fields = parse_event_format(def.tp_format, def.data_size);
    if (!filter.empty()) {
        def.filter = std::string(filter);
        def.pred = compile_filter(filter, &def);
    }
    def.canonical =
        "t:" + def.group + ":" + def.event + (def.filter.empty() ? "" : " if " + def.filter);
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
