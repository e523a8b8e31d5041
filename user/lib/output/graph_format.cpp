#include <algorithm>
#include <cstdio>
#include <cstring>

#include <fhook/output/graph_format.hpp>
#include <fhook/probe/call_args.hpp>
#include <fhook/sys/btf.hpp>
#include <fhook/sys/ksyms.hpp>

#include "numbers.hpp"

namespace fhook {

using numbers::put_hex;
using numbers::put_i64;
using numbers::put_u64;

namespace {

// TRACE_GRAPH_PROCINFO_LENGTH, TRACE_GRAPH_INDENT
constexpr std::size_t kProcWidth = 14;
constexpr std::size_t kIndent = 2;
constexpr const char* kFillFull = "              |  ";

// The text after the "comm-pid [cpu] ctx ts: " head of a trace line.
std::string_view event_body(std::string_view line) {
    const std::size_t bracket = line.find("] ");
    const std::size_t colon = line.find(": ", bracket == std::string_view::npos ? 0 : bracket);
    if (colon != std::string_view::npos) {
        line.remove_prefix(colon + 2);
    }
    while (!line.empty() && line.back() == '\n') {
        line.remove_suffix(1);
    }
    return line;
}

} // namespace

GraphFormatter::GraphFormatter(const Ksyms& ksyms, GraphFormatOptions options)
    : names_(ksyms), options_(options), text_(ksyms) {
    for (std::uint32_t n = options.nr_cpus > 1 ? options.nr_cpus - 1 : 0; n >= 10; n /= 10) {
        cpu_width_++;
    }
}

GraphFormatter::~GraphFormatter() = default;

// print_graph_headers_flags() with the default flags (+ proc, abstime)
void GraphFormatter::begin(std::string& out) {
    out.append("# tracer: function_graph\n#\n");
    std::string names = "#", bars = "#";
    if (options_.abstime) {
        names.append("     TIME       ");
        bars.append("      |         ");
    }
    names.append(" CPU");
    bars.append(" |  ");
    if (options_.proc) {
        names.append("  TASK/PID       ");
        bars.append("   |    |        ");
    }
    names.append("  DURATION   ");
    bars.append("   |   |      ");
    out.append(names).append("               FUNCTION CALLS\n");
    out.append(bars).append("               |   |   |   |\n");
}

GraphFormatter::Cpu& GraphFormatter::cpu(std::uint16_t n) {
    if (n >= cpus_.size()) {
        cpus_.resize(n + 1u);
    }
    return cpus_[n];
}

// print_graph_proc(): "comm-pid" centred in 14 columns, comm cut to 7
void GraphFormatter::append_proc(std::uint32_t pid, std::string& out) {
    std::string comm = pid == 0 ? "<idle>" : "<...>";
    if (auto it = comms_.find(pid); pid != 0 && it != comms_.end()) {
        comm = it->second;
    }
    comm.resize(std::min<std::size_t>(comm.size(), 7));
    std::string pid_text;
    put_u64(pid, pid_text);
    const std::size_t len = comm.size() + pid_text.size() + 1;
    const std::size_t spaces = len < kProcWidth ? kProcWidth - len : 0;
    out.append(spaces / 2, ' ').append(comm).append("-").append(pid_text);
    out.append(spaces - spaces / 2, ' ');
}

// print_graph_prologue(): the task switch block (verif_pid), then the
// columns before the duration
void GraphFormatter::prologue(const Event& ev, std::string& out, bool switches) {
    Cpu& c = cpu(ev.cpu);
    comms_[ev.pid] = ev.comm;
    auto put_cpu = [&] {
        std::string n;
        put_u64(ev.cpu, n);
        out.push_back(' ');
        if (n.size() < static_cast<std::size_t>(cpu_width_)) {
            out.append(static_cast<std::size_t>(cpu_width_) - n.size(), ' ');
        }
        out.append(n).append(") ");
    };
    if (switches && c.last_pid != static_cast<long>(ev.pid)) {
        const long prev = c.last_pid;
        c.last_pid = ev.pid;
        if (prev != -1) {
            out.append(" ------------------------------------------\n");
            put_cpu();
            append_proc(static_cast<std::uint32_t>(prev), out);
            out.append(" => ");
            append_proc(ev.pid, out);
            out.append("\n ------------------------------------------\n\n");
        }
    }
    if (options_.abstime) {
        char buf[48];
        std::snprintf(buf, sizeof(buf), "%5llu.%06llu |  ",
                      static_cast<unsigned long long>(ev.ts / 1000000000ULL),
                      static_cast<unsigned long long>(ev.ts % 1000000000ULL / 1000));
        out.append(buf);
    }
    put_cpu();
    if (options_.proc) {
        append_proc(ev.pid, out);
        out.append(" | ");
    }
}

// print_graph_duration() with trace_print_graph_duration(): "+ 12.905 us   |  "
void GraphFormatter::append_duration(std::uint64_t ns, std::string& out) {
    out.push_back(delay_mark(ns));
    out.push_back(' ');
    std::string usecs;
    put_u64(ns / 1000, usecs);
    out.append(usecs);
    std::size_t len = usecs.size();
    if (len < 7) {
        // "%03lu" of the nanoseconds cut (not rounded) to 8 - len - 1 digits
        char nsecs[8];
        std::snprintf(nsecs, sizeof(nsecs), "%03llu", static_cast<unsigned long long>(ns % 1000));
        const std::size_t keep = std::min<std::size_t>(4, 8 - len) - 1;
        out.push_back('.');
        out.append(nsecs, std::min(keep, std::strlen(nsecs)));
        len += std::min(keep, std::strlen(nsecs)) + 1;
    }
    out.append(" us ");
    if (len < 8) {
        out.append(8 - len, ' ');
    }
    out.append("|  ");
}

// "vfs_read()" or, with BTF and recorded arguments, "vfs_read(file=0x..., count=1)"
void GraphFormatter::append_call(const Event& entry, std::string& out) {
    names_.append(entry.ip, out);
    if (!options_.btf || entry.args.empty()) {
        out.append("()");
        return;
    }
    auto it = protos_.find(entry.ip);
    if (it == protos_.end()) {
        scratch_.clear();
        names_.append(entry.ip, scratch_);
        const std::string name = scratch_.substr(0, scratch_.find(' ')); // "f [mod]"
        it = protos_.emplace(entry.ip, options_.btf->function(name)).first;
    }
    out.push_back('(');
    if (it->second) {
        append_call_args(call_args(*options_.btf, *it->second, entry.args), out);
    }
    out.push_back(')');
}

// print_graph_retval(): an error code in decimal, anything else in hex
void GraphFormatter::append_retval(std::uint64_t retval, std::string& out) {
    std::int64_t err = 0;
    if (retval != 0) {
        err = (retval & 0x80000000ULL) && !(retval >> 32)
                  ? static_cast<std::int32_t>(static_cast<std::uint32_t>(retval))
                  : static_cast<std::int64_t>(retval);
        if (err < -4095 || err > -1) {
            err = 0; // !IS_ERR_VALUE()
        }
    }
    out.append(" = ");
    if (err) {
        put_i64(err, out);
    } else {
        put_hex(retval, out);
    }
}

// The waiting entry of `c` becomes "func();" with `ret` (its return), else
// "func() {".
void GraphFormatter::resolve(Cpu& c, const Event* ret) {
    Line& l = line(c.pending);
    c.pending = -1;
    const Event& e = *l.entry;
    const std::size_t depth = e.depth;
    if (ret) {
        append_duration(ret->duration, l.text);
        l.text.append(kIndent * depth, ' ');
        append_call(e, l.text);
        l.text.push_back(';');
        if (options_.retval) {
            l.text.append(" /*");
            append_retval(ret->retval, l.text);
            l.text.append(" */");
        }
        l.text.push_back('\n');
        c.depth = static_cast<long>(depth) - 1;
        if (depth < c.open.size()) {
            c.open[depth] = Open{};
        }
    } else {
        l.text.append(kFillFull);
        l.text.append(kIndent * depth, ' ');
        append_call(e, l.text);
        l.text.append(" {\n");
        c.depth = static_cast<long>(depth);
        if (depth >= c.open.size()) {
            c.open.resize(depth + 1);
        }
        c.open[depth] = Open{e.ip, e.pid, e.ts};
    }
    l.entry.reset();
}

void GraphFormatter::push(std::string text) {
    queue_.push_back(Line{std::move(text), std::nullopt});
}

void GraphFormatter::flush(std::string& out) {
    while (!queue_.empty() && !queue_.front().entry) {
        out.append(queue_.front().text);
        queue_.pop_front();
        first_++;
    }
    // bounded: the oldest waiting entry is drawn as "{"
    while (queue_.size() > kMaxQueue) {
        resolve(cpu(queue_.front().entry->cpu), nullptr);
        flush(out);
    }
}

void GraphFormatter::format(const Event& ev, std::string& out) {
    Cpu& c = cpu(ev.cpu);
    if (c.pending >= 0) {
        const Event& e = *line(c.pending).entry;
        const bool own_return = ev.type == EventType::GraphReturn && ev.pid == e.pid &&
                                ev.ip == e.ip && ev.calltime == e.ts;
        resolve(c, own_return ? &ev : nullptr);
        if (own_return) {
            flush(out);
            return;
        }
    }
    std::string text;
    switch (ev.type) {
    case EventType::GraphEntry:
        prologue(ev, text);
        queue_.push_back(Line{std::move(text), ev});
        c.pending = first_ + static_cast<long>(queue_.size()) - 1;
        break;
    case EventType::GraphReturn: {
        // print_graph_return(): "}" closes the entry printed last at this
        // depth, anything else names the function
        const std::size_t depth = ev.depth;
        bool match = false;
        if (depth < c.open.size()) {
            const Open& o = c.open[depth];
            match = o.func == ev.ip && o.pid == ev.pid && o.calltime == ev.calltime;
            c.open[depth] = Open{};
        }
        c.depth = static_cast<long>(depth) - 1;
        prologue(ev, text);
        append_duration(ev.duration, text);
        text.append(kIndent * depth, ' ');
        text.push_back('}');
        if (options_.retval) {
            text.append(" /* ");
            names_.append(ev.ip, text);
            append_retval(ev.retval, text);
            text.append(" */");
        } else if (!match) {
            text.append(" /* ");
            names_.append(ev.ip, text);
            text.append(" */");
        }
        text.push_back('\n');
        push(std::move(text));
        break;
    }
    case EventType::Lost:
        // the tree of this CPU starts over: no "}" pairs across the gap
        text.append("CPU:");
        put_u64(ev.cpu, text);
        text.append(" [LOST ");
        put_u64(ev.lost, text);
        text.append(" EVENTS]\n");
        c.open.clear();
        push(std::move(text));
        break;
    default:
        if (is_probe_event(ev.type)) {
            // print_graph_comment(): "/* event */" at the depth of the CPU
            prologue(ev, text);
            text.append(kFillFull);
            if (c.depth > 0) {
                text.append(kIndent * static_cast<std::size_t>(c.depth + 1), ' ');
            }
            scratch_.clear();
            text_.set_probes(probes_);
            text_.format(ev, scratch_);
            text.append("/* ").append(event_body(scratch_)).append(" */\n");
        } else {
            text_.set_probes(probes_);
            text_.format(ev, text);
        }
        push(std::move(text));
        break;
    }
    flush(out);
}

void GraphFormatter::end(std::string& out) {
    for (Cpu& c : cpus_) {
        if (c.pending >= 0) {
            resolve(c, nullptr);
        }
    }
    flush(out);
    // calls that had not returned when the trace ended
    for (std::size_t n = 0; n < cpus_.size(); n++) {
        Cpu& c = cpus_[n];
        for (std::size_t depth = c.open.size(); depth-- > 0;) {
            const Open o = c.open[depth];
            if (!o.func) {
                continue;
            }
            Event ev;
            ev.cpu = static_cast<std::uint16_t>(n);
            ev.pid = o.pid;
            ev.ts = o.calltime;
            ev.comm = comms_[o.pid];
            prologue(ev, out, false);
            out.append(kFillFull);
            out.append(kIndent * depth, ' ');
            out.append("} /* ");
            names_.append(o.func, out);
            out.append(" unfinished */\n");
        }
        c.open.clear();
    }
}

} // namespace fhook
