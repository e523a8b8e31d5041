#include <cinttypes>
#include <cstdio>

#include <fhook/format.hpp>
#include <fhook/ksyms.hpp>

namespace fhook {

namespace {

char hex_digit(unsigned v) {
    return "0123456789abcdef"[v & 0xf];
}

} // namespace

// Same decisions as trace_print_lat_fmt() in kernel/trace/trace_output.c
// (v5.19+: bottom halves disabled show in the first column, 'D' together
// with irqs-off).
std::array<char, 5> context_chars(std::uint8_t flags, std::uint8_t preempt) {
    const bool irqs_off = flags & FHOOK_CTX_IRQS_OFF;
    const bool bh_off = flags & FHOOK_CTX_BH_OFF;
    const bool nmi = flags & FHOOK_CTX_NMI;
    const bool hardirq = flags & FHOOK_CTX_HARDIRQ;
    const bool softirq = flags & FHOOK_CTX_SOFTIRQ;
    const bool tif_resched = flags & FHOOK_CTX_NEED_RESCHED;
    const bool preempt_resched = flags & FHOOK_CTX_PREEMPT_RESCHED;

    std::array<char, 5> c{};
    c[0] = irqs_off && bh_off ? 'D' : irqs_off ? 'd' : bh_off ? 'b' : '.';
    c[1] = tif_resched && preempt_resched ? 'N' : tif_resched ? 'n' : preempt_resched ? 'p' : '.';
    c[2] = nmi && hardirq       ? 'Z'
           : nmi                ? 'z'
           : hardirq && softirq ? 'H'
           : hardirq            ? 'h'
           : softirq            ? 's'
                                : '.';
    c[3] = (preempt & 0xf) != 0 ? hex_digit(preempt & 0xf) : '.';
    c[4] = (preempt & 0xf0) != 0 ? hex_digit(preempt >> 4) : '.';
    return c;
}

void TextFormatter::format(const Event& ev, std::string& out) {
    char buf[128];
    int n;
    if (ev.type == EventType::Lost) {
        if (ev.lost == 0) {
            return; // a nested writer already reported these drops
        }
        n = std::snprintf(buf, sizeof(buf), "CPU:%u [LOST %" PRIu64 " EVENTS]\n",
                          static_cast<unsigned>(ev.cpu), ev.lost);
        out.append(buf, static_cast<std::size_t>(n));
        return;
    }
    // ftrace shows the idle task (pid 0) as "<idle>".
    const char* comm = ev.pid == 0 ? "<idle>" : ev.comm.c_str();
    const auto ctx = context_chars(ev.flags, ev.preempt);
    n = std::snprintf(buf, sizeof(buf), "%16s-%-7u [%03u] %c%c%c%c%c %5" PRIu64 ".%06" PRIu64 ": ",
                      comm, ev.pid, static_cast<unsigned>(ev.cpu), ctx[0], ctx[1], ctx[2], ctx[3],
                      ctx[4], ev.ts / 1000000000, ev.ts % 1000000000 / 1000);
    out.append(buf, static_cast<std::size_t>(n));
    ksyms_.append_name(ev.ip, out);
    out.append(" <-");
    ksyms_.append_name(ev.parent_ip, out);
    out.push_back('\n');
}

void append_json_string(std::string_view text, std::string& out) {
    out.push_back('"');
    for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(ch);
        } else if (c == '\n') {
            out.append("\\n");
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c < 0x20 || c >= 0x7f) {
            out.append("\\u00");
            out.push_back(hex_digit(c >> 4));
            out.push_back(hex_digit(c));
        } else {
            out.push_back(ch);
        }
    }
    out.push_back('"');
}

void JsonFormatter::format(const Event& ev, std::string& out) {
    char buf[160];
    int n;
    if (ev.type == EventType::Lost) {
        if (ev.lost == 0) {
            return;
        }
        n = std::snprintf(buf, sizeof(buf),
                          "{\"type\":\"lost\",\"ts\":%" PRIu64 ",\"cpu\":%u,\"lost\":%" PRIu64
                          "}\n",
                          ev.ts, static_cast<unsigned>(ev.cpu), ev.lost);
        out.append(buf, static_cast<std::size_t>(n));
        return;
    }
    const auto ctx = context_chars(ev.flags, ev.preempt);
    n = std::snprintf(
        buf, sizeof(buf),
        "{\"type\":\"func\",\"ts\":%" PRIu64 ",\"cpu\":%u,\"pid\":%u,\"tgid\":%u,\"comm\":", ev.ts,
        static_cast<unsigned>(ev.cpu), ev.pid, ev.tgid);
    out.append(buf, static_cast<std::size_t>(n));
    append_json_string(ev.pid == 0 ? std::string_view("<idle>") : std::string_view(ev.comm), out);
    n = std::snprintf(buf, sizeof(buf), ",\"ctx\":\"%c%c%c%c%c\",\"probe\":%u,\"func\":", ctx[0],
                      ctx[1], ctx[2], ctx[3], ctx[4], ev.probe_id);
    out.append(buf, static_cast<std::size_t>(n));
    name_.clear();
    ksyms_.append_name(ev.ip, name_);
    append_json_string(name_, out);
    n = std::snprintf(buf, sizeof(buf), ",\"ip\":\"0x%" PRIx64 "\",\"parent\":", ev.ip);
    out.append(buf, static_cast<std::size_t>(n));
    name_.clear();
    ksyms_.append_name(ev.parent_ip, name_);
    append_json_string(name_, out);
    n = std::snprintf(buf, sizeof(buf), ",\"parent_ip\":\"0x%" PRIx64 "\"}\n", ev.parent_ip);
    out.append(buf, static_cast<std::size_t>(n));
}

} // namespace fhook
