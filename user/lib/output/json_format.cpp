// NDJSON (JsonFormatter) and the JSON string escaping every JSON writer
// of the output layer uses.
#include <cstdint>
#include <string>
#include <string_view>

#include <fhook/output/fields.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/ksyms.hpp>

#include "numbers.hpp"

namespace fhook {

using numbers::hex_digit;
using numbers::put_hex;
using numbers::put_i64;
using numbers::put_u64;

namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC
// 3629: no overlong forms, no surrogates, at most U+10FFFF), 0 if none.
std::size_t utf8_sequence(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xc0) == 0x80; };
    const unsigned char c = b(0);
    if (c >= 0xc2 && c <= 0xdf) {
        return cont(1) ? 2 : 0;
    }
    if (c >= 0xe0 && c <= 0xef) {
        if (!cont(1) || !cont(2) || (c == 0xe0 && b(1) < 0xa0) || (c == 0xed && b(1) > 0x9f)) {
            return 0;
        }
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (!cont(1) || !cont(2) || !cont(3) || (c == 0xf0 && b(1) < 0x90) ||
            (c == 0xf4 && b(1) > 0x8f)) {
            return 0;
        }
        return 4;
    }
    return 0;
}

} // namespace

void append_json_string(std::string_view text, std::string& out) {
    out.push_back('"');
    for (std::size_t i = 0; i < text.size();) {
        const char ch = text[i];
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x80) {
            // valid UTF-8 as it is; a byte that starts none as U+FFFD
            if (const std::size_t n = utf8_sequence(text.substr(i))) {
                out.append(text.substr(i, n));
                i += n;
            } else {
                out.append("\\ufffd");
                i++;
            }
            continue;
        }
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(ch);
        } else if (c == '\n') {
            out.append("\\n");
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c < 0x20 || c == 0x7f) {
            out.append("\\u00");
            out.push_back(hex_digit(c >> 4));
            out.push_back(hex_digit(c));
        } else {
            out.push_back(ch);
        }
        i++;
    }
    out.push_back('"');
}

void JsonFormatter::append_json_name(std::uint64_t addr, std::string& out) {
    name_.clear();
    names_.append(addr, name_);
    append_json_string(name_, out);
}

namespace {

// ,"KEY":"0x..." (addresses are strings in NDJSON: no 64-bit number loss)
void put_hex_field(std::string_view key, std::uint64_t v, std::string& out) {
    out.append(",\"").append(key).append("\":\"");
    put_hex(v, out);
    out.push_back('"');
}

// The "type" of an event in NDJSON (docs/cli.md).
std::string_view json_type(EventType type) {
    switch (type) {
    case EventType::Kprobe:
        return "kprobe";
    case EventType::Kretprobe:
        return "kretprobe";
    case EventType::Uprobe:
        return "uprobe";
    case EventType::Uretprobe:
        return "uretprobe";
    case EventType::Tracepoint:
        return "tracepoint";
    case EventType::Hook:
        return "hook";
    case EventType::GraphEntry:
        return "graph_entry";
    case EventType::GraphReturn:
        return "graph_return";
    default:
        return "func";
    }
}

} // namespace

// One case per event type, each its object's members: kept in one
// function (over 120 lines) so that the formats read side by side, as the
// text formatter's do.
void JsonFormatter::format(const Event& ev, std::string& out) {
    if (ev.type == EventType::Lost) {
        if (ev.lost == 0) {
            return;
        }
        out.append("{\"type\":\"lost\",\"ts\":");
        put_u64(ev.ts, out);
        out.append(",\"cpu\":");
        put_u64(ev.cpu, out);
        out.append(",\"lost\":");
        put_u64(ev.lost, out);
        if (seq_range_known(ev)) {
            out.append(",\"first_seq\":");
            put_u64(ev.first_seq, out);
            out.append(",\"last_seq\":");
            put_u64(ev.last_seq, out);
        }
        if (!ev.lost_probes.empty()) {
            out.append(",\"probes\":[");
            const char* sep = "";
            for (const LostProbe& p : ev.lost_probes) {
                out.append(sep);
                out.append("{\"probe\":");
                put_u64(p.probe_id, out);
                out.append(",\"lost\":");
                put_u64(p.count, out);
                out.push_back('}');
                sep = ",";
            }
            out.push_back(']');
        }
        out.append("}\n");
        return;
    }
    const bool kprobe = is_probe_event(ev.type);
    out.append("{\"type\":\"");
    out.append(json_type(ev.type));
    out.append("\",\"ts\":");
    put_u64(ev.ts, out);
    out.append(",\"cpu\":");
    put_u64(ev.cpu, out);
    out.append(",\"seq\":");
    put_u64(ev.seq, out);
    out.append(",\"pid\":");
    put_u64(ev.pid, out);
    out.append(",\"tgid\":");
    put_u64(ev.tgid, out);
    out.append(",\"comm\":");
    append_json_string(ev.pid == 0 ? std::string_view("<idle>") : std::string_view(ev.comm), out);
    out.append(",\"ctx\":\"");
    const KprobeDef* def = kprobe && probes_ ? probes_->find(ev.probe_id) : nullptr;
    const auto ctx = context_chars(ev.flags, shown_preempt(ev, def));
    out.append(ctx.data(), ctx.size());
    out.append("\",\"probe\":");
    put_u64(ev.probe_id, out);
    if (kprobe) {
        if (def) {
            out.append(",\"event\":");
            append_json_string(def->group + "/" + def->event, out);
        }
        const bool user = ev.type == EventType::Uprobe || ev.type == EventType::Uretprobe;
        if (!user && ev.type != EventType::Tracepoint) {
            out.append(",\"func\":");
            append_json_name(ev.ip, out);
        }
        if (ev.type != EventType::Tracepoint) { // its ip is the event id
            put_hex_field("ip", ev.ip, out);
        }
        if (ev.type == EventType::Uretprobe) {
            put_hex_field("ret_ip", ev.ret_ip, out);
        }
        if (ev.type == EventType::Hook) {
            out.append(",\"action\":\"");
            out.append(hook_action_name(ev.action));
            out.append("\",\"retval\":");
            put_i64(static_cast<std::int64_t>(ev.retval), out);
            if (ev.action == FHOOK_HOOK_AROUND) {
                out.append(",\"duration_ns\":");
                put_u64(ev.duration, out);
            }
        }
        if (ev.type == EventType::Kretprobe || ev.type == EventType::Hook) {
            out.append(",\"ret\":");
            name_.clear();
            names_.append_offset(ev.ret_ip, name_);
            append_json_string(name_, out);
            put_hex_field("ret_ip", ev.ret_ip, out);
        }
        if (def) {
            out.append(",\"args\":{");
            append_probe_fields_json(*def, ev, names_, out);
            out.push_back('}');
        }
        append_json_stack(ev, user, out);
        out.append("}\n");
        return;
    }
    out.append(",\"func\":");
    append_json_name(ev.ip, out);
    put_hex_field("ip", ev.ip, out);
    if (is_graph_event(ev.type)) {
        out.append(",\"depth\":");
        put_u64(ev.depth, out);
        if (ev.type == EventType::GraphReturn) {
            out.append(",\"calltime\":");
            put_u64(ev.calltime, out);
            out.append(",\"duration_ns\":");
            put_u64(ev.duration, out);
            out.append(",\"retval\":");
            put_i64(static_cast<std::int64_t>(ev.retval), out);
        } else if (!ev.args.empty()) {
            out.append(",\"args\":[");
            const char* sep = "";
            for (std::uint64_t a : ev.args) {
                out.append(sep).push_back('"');
                put_hex(a, out);
                out.push_back('"');
                sep = ",";
            }
            out.push_back(']');
        }
        out.append("}\n");
        return;
    }
    out.append(",\"parent\":");
    append_json_name(ev.parent_ip, out);
    put_hex_field("parent_ip", ev.parent_ip, out);
    append_json_stack(ev, false, out);
    out.append("}\n");
}

void JsonFormatter::append_json_stack(const Event& ev, bool user, std::string& out) {
    if (ev.stack.empty()) {
        return;
    }
    out.append(",\"stack\":[");
    const char* sep = "";
    const KprobeDef* def = user && probes_ ? probes_->find(ev.probe_id) : nullptr;
    for (std::uint64_t ip : ev.stack) {
        out.append(sep);
        if (user) {
            name_.clear();
            user_frames_.append(ev, def, ip, name_);
            append_json_string(name_, out);
        } else {
            append_json_name(ip, out);
        }
        sep = ",";
    }
    out.push_back(']');
}

} // namespace fhook
