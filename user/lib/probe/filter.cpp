// Filter expressions compiled to predicate programs, and triggers (the
// kernel's trace_events_filter.c and trace_events_trigger.c).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/error.hpp>

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

} // namespace fhook
