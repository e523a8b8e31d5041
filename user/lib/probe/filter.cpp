// Filter expressions compiled to predicate programs, and triggers (the
// kernel's trace_events_filter.c and trace_events_trigger.c).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/core/error.hpp>
#include <fhook/probe/spec.hpp>

#include "fetch.hpp"

namespace fhook {

using namespace probe_detail;

namespace {

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
        std::string padded = value; // NUL-terminated, zero-filled
        padded.resize(n * sizeof(fhook_insn), '\0');
        std::memcpy(raw.data(), padded.data(), padded.size());
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

namespace {

bool compare(std::uint32_t arg, std::uint64_t v, std::int64_t imm) {
    if (arg & FHOOK_PRED_SIGNED) {
        const auto sv = static_cast<std::int64_t>(v);
        switch (arg & 0xff) {
        case FHOOK_CMP_LT:
            return sv < imm;
        case FHOOK_CMP_LE:
            return sv <= imm;
        case FHOOK_CMP_GT:
            return sv > imm;
        case FHOOK_CMP_GE:
            return sv >= imm;
        }
    }
    const auto u = static_cast<std::uint64_t>(imm);
    switch (arg & 0xff) {
    case FHOOK_CMP_EQ:
        return v == u;
    case FHOOK_CMP_NE:
        return v != u;
    case FHOOK_CMP_LT:
        return v < u;
    case FHOOK_CMP_LE:
        return v <= u;
    case FHOOK_CMP_GT:
        return v > u;
    case FHOOK_CMP_GE:
        return v >= u;
    default: // BITS
        return (v & u) != 0;
    }
}

// `s` (nullopt: the fetch faulted, equal to nothing) against `constant`
bool compare_string(std::uint32_t cmp, std::optional<std::string_view> s,
                    std::string_view constant) {
    if (!s) {
        return cmp == FHOOK_CMP_NE;
    }
    switch (cmp) {
    case FHOOK_CMP_EQ:
        return *s == constant;
    case FHOOK_CMP_NE:
        return *s != constant;
    default: // GLOB
        return glob_match(constant, *s);
    }
}

} // namespace

bool run_filter(const std::vector<fhook_insn>& pred, const Event& event) {
    const std::vector<std::uint8_t>& data = event.data;
    std::uint64_t stack = 0; // bit 0 is the top
    for (std::size_t i = 0; i < pred.size(); i++) {
        const fhook_insn& p = pred[i];
        bool r = false;
        // the constant of STR/COMM, in the instructions that follow
        auto constant = [&] {
            const std::size_t n =
                (static_cast<std::size_t>(p.imm) + 1 + sizeof(fhook_insn) - 1) / sizeof(fhook_insn);
            const char* text = reinterpret_cast<const char*>(pred.data() + i + 1);
            i += n;
            return std::string_view(text, static_cast<std::size_t>(p.imm));
        };
        switch (p.op) {
        case FHOOK_PRED_FIELD: {
            std::uint64_t v = 0;
            if (p.dst + p.size <= data.size()) {
                std::memcpy(&v, data.data() + p.dst, p.size);
            }
            if ((p.arg & FHOOK_PRED_SIGNED) && p.size < 8) {
                const unsigned shift = 64 - 8 * p.size;
                v = static_cast<std::uint64_t>(static_cast<std::int64_t>(v << shift) >> shift);
            }
            r = compare(p.arg, v, p.imm);
            break;
        }
        case FHOOK_PRED_PID:
            r = compare(p.arg, event.pid, p.imm);
            break;
        case FHOOK_PRED_TGID:
            r = compare(p.arg, event.tgid, p.imm);
            break;
        case FHOOK_PRED_CPU:
            r = compare(p.arg, event.cpu, p.imm);
            break;
        case FHOOK_PRED_STR: {
            std::optional<std::string_view> s;
            std::uint32_t loc = 0;
            if (p.dst + 4u <= data.size()) {
                std::memcpy(&loc, data.data() + p.dst, 4);
                const std::uint32_t len = FHOOK_LOC_LEN(loc), off = FHOOK_LOC_OFF(loc);
                // a cut string is not known whole: equal to nothing
                if (len && !(loc & FHOOK_LOC_CUT) && off + len <= data.size() &&
                    data[off + len - 1] == 0) {
                    s = std::string_view(reinterpret_cast<const char*>(data.data()) + off, len - 1);
                }
            }
            const std::uint32_t cmp = p.arg;
            r = compare_string(cmp, s, constant());
            break;
        }
        case FHOOK_PRED_COMM: {
            const std::uint32_t cmp = p.arg;
            r = compare_string(cmp, std::string_view(event.comm), constant());
            break;
        }
        case FHOOK_PRED_AND:
            r = (stack & 1) && (stack & 2);
            stack >>= 2;
            break;
        case FHOOK_PRED_OR:
            r = (stack & 1) || (stack & 2);
            stack >>= 2;
            break;
        default: // NOT
            r = !(stack & 1);
            stack >>= 1;
            break;
        }
        stack = stack << 1 | (r ? 1 : 0);
    }
    return stack & 1;
}

EventFilter::EventFilter(EventFilterSpec spec, const ProbeTable& table,
                         const std::vector<std::uint32_t>& probe_ids)
    : spec_(std::move(spec)) {
    if (spec_.expr.empty()) {
        return;
    }
    std::string first_error;
    for (const std::uint32_t id : probe_ids) {
        try {
            preds_.emplace(id, compile_filter(spec_.expr, table.find(id)));
        } catch (const Error& e) {
            if (first_error.empty()) {
                first_error = e.what();
            }
        }
    }
    if (preds_.empty()) {
        throw_invalid(first_error.empty() ? "the filter: no probe to filter" : first_error);
    }
}

bool EventFilter::passes(const Event& event) const {
    if (spec_.cpus && !spec_.cpus->count(event.cpu)) {
        return false;
    }
    if (event.ts < spec_.since_ns || event.ts >= spec_.until_ns) {
        return false;
    }
    if (event.type == EventType::Lost) {
        return true;
    }
    if (spec_.probes && !spec_.probes->count(event.probe_id)) {
        return false;
    }
    if (!spec_.pids.empty() && !spec_.pids.count(event.pid) && !spec_.pids.count(event.tgid)) {
        return false;
    }
    if (!spec_.comms.empty() &&
        std::none_of(spec_.comms.begin(), spec_.comms.end(),
                     [&](const std::string& c) { return glob_match(c, event.comm); })) {
        return false;
    }
    if (!spec_.expr.empty()) {
        const auto pred = preds_.find(event.probe_id);
        return pred != preds_.end() && run_filter(pred->second, event);
    }
    return true;
}

} // namespace fhook
