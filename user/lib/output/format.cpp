#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/output/fields.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/elfsym.hpp>
#include <fhook/sys/ksyms.hpp>

#include "numbers.hpp"

namespace fhook {

namespace {

using numbers::hex_digit;
using numbers::put_hex;
using numbers::put_i64;
using numbers::put_u64;

// Appends v in decimal, at least `width` digits, zero-padded.
void put_u64_zero(std::uint64_t v, int width, std::string& out) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    const auto n = static_cast<int>(r.ptr - buf);
    if (n < width) {
        out.append(static_cast<std::size_t>(width - n), '0');
    }
    out.append(buf, static_cast<std::size_t>(n));
}

// A hook record's own fields after the definition's: " ret=VAL" (signed
// decimal, as errno values read) and " duration=NSns" for trace-around;
// " injected" / " redirected" for the actions that replaced the call.
void append_hook_fields(const Event& ev, std::string& out) {
    if (ev.action == FHOOK_HOOK_REDIRECT) {
        out.append(" redirected");
        return;
    }
    if (ev.action == FHOOK_HOOK_RETURN) {
        out.append(" injected");
    }
    out.append(" ret=");
    put_i64(static_cast<std::int64_t>(ev.retval), out);
    if (ev.action == FHOOK_HOOK_AROUND) {
        out.append(" duration=");
        put_u64(ev.duration, out);
        out.append("ns");
    }
}

} // namespace

const char* hook_action_name(std::uint32_t action) {
    switch (action) {
    case FHOOK_HOOK_RETURN:
        return "return";
    case FHOOK_HOOK_REDIRECT:
        return "redirect";
    case FHOOK_HOOK_AROUND:
        return "around";
    default:
        return "unknown";
    }
}

void NameCache::append(std::uint64_t addr, std::string& out) {
    Slot& s = slots_[(addr ^ (addr >> 12) ^ (addr >> 24)) & (kSlots - 1)];
    if (!s.valid || s.addr != addr) {
        auto ref = ksyms_.lookup(addr);
        s.addr = addr;
        s.name = ref ? ref->name : std::string_view();
        s.valid = true;
    }
    if (!s.name.empty()) {
        out.append(s.name);
    } else {
        ksyms_.append_name(addr, out); // "0x%08lx"
    }
}

void NameCache::append_offset(std::uint64_t addr, std::string& out) {
    // kprobe events repeat a few addresses: two binary searches and the
    // formatting once per address
    OffsetSlot& s = offsets_[(addr ^ (addr >> 12)) & (kOffsetSlots - 1)];
    if (!s.valid || s.addr != addr) {
        s.text.clear();
        ksyms_.append_offset(addr, s.text);
        s.addr = addr;
        s.valid = true;
    }
    out.append(s.text);
}

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

char delay_mark(std::uint64_t ns) {
    static constexpr std::pair<std::uint64_t, char> kMarks[] = {
        {1000000000ULL, '$'}, {100000000ULL, '@'}, {10000000ULL, '*'},
        {1000000ULL, '#'},    {100000ULL, '!'},    {10000ULL, '+'},
    };
    for (const auto& [limit, mark] : kMarks) {
        if (ns > limit) {
            return mark;
        }
    }
    return ' ';
}

std::uint8_t shown_preempt(const Event& ev, const KprobeDef* def) {
    if (ev.type != EventType::Tracepoint || !def || def->is_syscall_event() ||
        (ev.preempt & 0xf) == 0) {
        return ev.preempt;
    }
    return static_cast<std::uint8_t>(ev.preempt - 1);
}

bool seq_range_known(const Event& ev) {
    return ev.first_seq != kSeqUnknown && ev.last_seq >= ev.first_seq &&
           ev.last_seq - ev.first_seq >= ev.lost - 1;
}

// One case per event type, each the kernel's trace line for it: kept in
// one function (over 120 lines) so that the formats read side by side, as
// the JSON formatter's do.
namespace {

// "000" to "999", for the microseconds of a line's head
constexpr std::array<std::array<char, 3>, 1000> make_triples() {
    std::array<std::array<char, 3>, 1000> t{};
    for (int i = 0; i < 1000; i++) {
        t[static_cast<std::size_t>(i)] = {static_cast<char>('0' + i / 100),
                                          static_cast<char>('0' + i / 10 % 10),
                                          static_cast<char>('0' + i % 10)};
    }
    return t;
}
constexpr auto kTriples = make_triples();

} // namespace

// (inline: every event; what changes rarely is out of line)
inline void TextFormatter::refresh_time(std::uint64_t ts) {
    // (within the second of the head's: no division for the seconds)
    if (!head_.valid || ts < head_.sec_ns || ts - head_.sec_ns >= 1000000000) {
        new_second(ts);
    }
    // the microseconds, three digits at a time, over the "uuuuuu"
    const auto us = static_cast<std::uint32_t>((ts - head_.sec_ns) / 1000);
    char* digits = head_.text.data() + head_.end - 8;
    std::memcpy(digits, kTriples[us / 1000].data(), 3);
    std::memcpy(digits + 3, kTriples[us % 1000].data(), 3);
}

void TextFormatter::new_second(std::uint64_t ts) {
    std::string& t = head_.text;
    const std::uint64_t sec = ts / 1000000000;
    t.resize(head_.sec_at);
    const std::size_t sec_at = t.size();
    put_u64(sec, t);
    if (t.size() - sec_at < 5) {
        t.insert(sec_at, 5 - (t.size() - sec_at), ' ');
    }
    t.append(".uuuuuu: ");
    head_.end = t.size(); // (no call after it)
    head_.sec_ns = sec * 1000000000;
    head_.valid = true;
}

inline void TextFormatter::append_call(std::uint64_t ip, std::uint64_t parent_ip,
                                       std::string& out) {
    if (head_.text.size() == head_.end || head_.ip != ip || head_.parent_ip != parent_ip) {
        set_call(ip, parent_ip);
    }
    out.append(head_.text);
}

void TextFormatter::set_call(std::uint64_t ip, std::uint64_t parent_ip) {
    CallSlot& call = calls_[(ip ^ ((parent_ip * 0x9e3779b97f4a7c15ULL) >> 40)) & (kCallSlots - 1)];
    if (!call.valid || call.ip != ip || call.parent_ip != parent_ip) {
        call.text.clear();
        names_.append(ip, call.text);
        call.text.append(" <-");
        names_.append(parent_ip, call.text);
        call.text.push_back('\n');
        call.ip = ip;
        call.parent_ip = parent_ip;
        call.valid = true;
    }
    head_.text.resize(head_.end);
    head_.text.append(call.text);
    head_.ip = ip;
    head_.parent_ip = parent_ip;
}

inline void TextFormatter::refresh_head(const LineHead& h) {
    refresh_task(h);
    refresh_time(h.ts);
}

void TextFormatter::format(const Event& ev, std::string& out) {
    if (ev.type == EventType::Lost) {
        if (ev.lost == 0) {
            return; // a nested writer already reported these drops
        }
        // The kernel's line, then what fhook knows about the gap:
        // "CPU:1 [LOST 30 EVENTS] (seq 100-129; probe 1: 10, probe 3: 20)"
        out.append("CPU:");
        put_u64(ev.cpu, out);
        out.append(" [LOST ");
        put_u64(ev.lost, out);
        out.append(" EVENTS]");
        const bool range = seq_range_known(ev);
        const bool after = ev.first_seq == kSeqUnknown;
        if (range || after || !ev.lost_probes.empty()) {
            out.append(" (");
            if (range) {
                out.append("seq ");
                put_u64(ev.first_seq, out);
                out.push_back('-');
                put_u64(ev.last_seq, out);
            } else if (after) {
                out.append("after the last record");
            }
            const char* sep = range || after ? "; " : "";
            for (const LostProbe& p : ev.lost_probes) {
                out.append(sep);
                out.append("probe ");
                put_u64(p.probe_id, out);
                out.append(": ");
                put_u64(p.count, out);
                sep = ", ";
            }
            out.push_back(')');
        }
        out.push_back('\n');
        return;
    }
    const KprobeDef* def =
        is_probe_event(ev.type) && probes_ ? probes_->find(ev.probe_id) : nullptr;
    const LineHead head{ev.ts, ev.pid, ev.cpu, ev.flags, shown_preempt(ev, def), ev.comm};
    if (ev.type == EventType::Function) {
        append_function(head, ev.ip, ev.parent_ip, out);
        append_stack(ev, out);
        return;
    }
    append_head(head, out);
    if (is_probe_event(ev.type)) {
        // print_kprobe_event() / print_kretprobe_event():
        //   "NAME: (sym+off/size) args" and "NAME: (ret+off/size <- func) args"
        // a tracepoint as the kernel prints it ("sched_switch: prev_comm=..."
        // by its TP_printk), else its fields as name=value
        if (ev.type == EventType::Tracepoint && def && events_.append_event(*def, ev, out)) {
            out.push_back('\n');
            append_stack(ev, out);
            return;
        }
        if (def) {
            out.append(def->event);
        } else {
            out.append("probe");
            put_u64(ev.probe_id, out);
        }
        if (ev.type == EventType::Tracepoint) {
            out.push_back(':');
            if (def) {
                append_probe_fields(*def, ev, names_, out);
            }
            out.push_back('\n');
            append_stack(ev, out);
            return;
        }
        out.append(": (");
        if (ev.type == EventType::Kprobe) {
            names_.append_offset(ev.ip, out);
        } else if (ev.type == EventType::Kretprobe || ev.type == EventType::Hook) {
            names_.append_offset(ev.ret_ip, out);
            out.append(" <- ");
            names_.append(ev.ip, out);
        } else if (ev.type == EventType::Uprobe) {
            put_hex(ev.ip, out); // print_uprobe_event(): "(0x%lx)"
        } else {
            put_hex(ev.ret_ip, out);
            out.append(" <- ");
            put_hex(ev.ip, out);
        }
        out.push_back(')');
        if (def) {
            append_probe_fields(*def, ev, names_, out);
        }
        if (ev.type == EventType::Hook) {
            append_hook_fields(ev, out);
        }
        out.push_back('\n');
        append_stack(ev, out);
        return;
    }
    if (is_graph_event(ev.type)) {
        // the funcgraph_entry/funcgraph_exit events' print_fmt (fhook graph
        // draws the tree)
        out.append(ev.type == EventType::GraphEntry ? "--> " : "<-- ");
        names_.append(ev.ip, out);
        out.append(" (");
        put_u64(ev.depth, out);
        out.push_back(')');
        if (ev.type == EventType::GraphReturn) {
            out.append(" (start: ");
            put_hex(ev.calltime, out);
            out.append("  end: ");
            put_hex(ev.ts, out);
            out.push_back(')');
        }
        out.push_back('\n');
        return;
    }
}

void TextFormatter::format_fn(const FnEvent& fn, std::string& out) {
    const std::uint64_t key = fn.pid | std::uint64_t{fn.ctx} << 32;
    if (!head_.fn_valid || key != head_.fn_key || fn.cpu != head_.cpu ||
        fn.names != head_.fn_names) {
        refresh_task({fn.ts, fn.pid, fn.cpu, fn.flags, fn.preempt, fn.comm});
        head_.fn_key = key;
        head_.fn_names = fn.names;
        head_.fn_valid = true;
    }
    refresh_time(fn.ts);
    append_call(fn.ip, fn.parent_ip, out);
}

void TextFormatter::append_function(const LineHead& h, std::uint64_t ip, std::uint64_t parent_ip,
                                    std::string& out) {
    refresh_head(h);
    append_call(ip, parent_ip, out);
}

void TextFormatter::append_head(const LineHead& h, std::string& out) {
    refresh_head(h);
    out.append(head_.text.data(), head_.end);
}

// "%16s-%-7d [%03d] %s %5llu.%06llu: ", written by hand (snprintf was more
// than half of the cost of an event) and mostly copied: consecutive events
// tend to come from one task on one CPU within one second.
void TextFormatter::refresh_task(const LineHead& h) {
    std::string& t = head_.text;
    if (!head_.valid || head_.pid != h.pid || head_.cpu != h.cpu || head_.flags != h.flags ||
        head_.preempt != h.preempt || !same_task_name(head_.comm, h.comm)) {
        t.clear();
        // ftrace shows the idle task (pid 0) as "<idle>".
        const std::string_view comm = h.pid == 0 ? std::string_view("<idle>") : h.comm;
        if (comm.size() < 16) {
            t.append(16 - comm.size(), ' ');
        }
        t.append(comm);
        t.push_back('-');
        const std::size_t pid_at = t.size();
        put_u64(h.pid, t);
        if (t.size() - pid_at < 7) {
            t.append(7 - (t.size() - pid_at), ' ');
        }
        t.append(" [");
        put_u64_zero(h.cpu, 3, t);
        t.append("] ");
        const auto ctx = context_chars(h.flags, h.preempt);
        t.append(ctx.data(), ctx.size());
        t.push_back(' ');
        head_.pid = h.pid;
        head_.cpu = h.cpu;
        head_.flags = h.flags;
        head_.preempt = h.preempt;
        head_.comm = h.comm;
        head_.sec_at = t.size();
        head_.valid = false; // the seconds: refresh_time()
        head_.fn_valid = false;
    }
}

void UserFrames::append(const Event& ev, const KprobeDef* def, std::uint64_t ip, std::string& out) {
    // ev.ip: the probe's address (a uretprobe's: the function's)
    append(ev.tgid, ev.ip, def, ip, out);
}

void UserFrames::append(std::uint32_t tgid, std::uint64_t probe_ip, const KprobeDef* def,
                        std::uint64_t addr, std::string& out) {
    if (def && !def->path.empty() && probe_ip && noted_.emplace(tgid, def->path).second) {
        // the probe's own address tells where its binary is loaded
        auto [it, fresh] = vaddrs_.try_emplace({def->path, def->offset});
        if (fresh) {
            it->second = elf_offset_vaddr(def->path, def->offset);
        }
        if (it->second && probe_ip >= *it->second) {
            syms_.note_mapping(tgid, def->path, probe_ip - *it->second);
        }
    }
    syms_.append(tgid, addr, out);
}

// The kernel's stack trace lines (" => func"); user frames named by libdw.
void TextFormatter::append_stack_lines(const Event& ev, std::string& out) {
    const bool user = ev.type == EventType::Uprobe || ev.type == EventType::Uretprobe;
    const KprobeDef* def = user && probes_ ? probes_->find(ev.probe_id) : nullptr;
    for (std::uint64_t ip : ev.stack) {
        out.append(" => ");
        if (user) {
            user_frames_.append(ev, def, ip, out);
        } else {
            names_.append(ip, out);
        }
        out.push_back('\n');
    }
}

TextFormatter::TextFormatter(const Ksyms& ksyms) : names_(ksyms), events_(ksyms) {}

TextFormatter::~TextFormatter() = default;

std::unique_ptr<Formatter> make_formatter(OutputFormat format, const Ksyms& ksyms,
                                          std::int64_t real_minus_mono) {
    if (format == OutputFormat::Otlp) {
        return std::make_unique<OtlpFormatter>(ksyms, real_minus_mono);
    }
    if (format == OutputFormat::Json) {
        return std::make_unique<JsonFormatter>(ksyms);
    }
    if (format == OutputFormat::Chrome) {
        return std::make_unique<ChromeFormatter>(ksyms);
    }
    return std::make_unique<TextFormatter>(ksyms);
}

} // namespace fhook
