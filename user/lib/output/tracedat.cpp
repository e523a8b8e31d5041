// trace.dat version 6 (see tracedat.hpp).  The ring-buffer page and event
// header layouts are the kernel's (kernel/trace/ring_buffer.c), as the
// header_page and header_event texts written here describe them.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fhook/core/error.hpp>
#include <fhook/output/format.hpp>
#include <fhook/output/tracedat.hpp>

#include "tracedat_formats.hpp"

namespace fhook {

namespace {

using namespace tracedat;

constexpr std::size_t kPageHeader = 16; // u64 timestamp, u64 commit
constexpr std::size_t kPageData = TraceDatWriter::kPageSize - kPageHeader;
constexpr std::uint32_t kMaxDelta = (1U << 27) - 1;
constexpr std::uint32_t kTypeTimeExtend = 30;
constexpr std::uint64_t kMissedEvents = 1ULL << 31; // the page's commit flags
constexpr std::uint64_t kMissedStored = 1ULL << 30;

constexpr const char* kHeaderPage = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

constexpr const char* kHeaderEvent = "# compressed entry header\n"
                                     "\ttype_len    :    5 bits\n"
                                     "\ttime_delta  :   27 bits\n"
                                     "\tarray       :   32 bits\n"
                                     "\n"
                                     "\tpadding     : type == 29\n"
                                     "\ttime_extend : type == 30\n"
                                     "\ttime_stamp : type == 31\n"
                                     "\tdata max type_len  == 28\n";

void put(std::string& out, const void* p, std::size_t n) {
    out.append(static_cast<const char*>(p), n);
}

template <typename T>
void put_int(std::string& out, T v) {
    put(out, &v, sizeof(v));
}

template <typename T>
void put_int(std::vector<std::uint8_t>& out, T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(v));
}

void write_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            throw_runtime("writing the trace.dat file: " + errno_text(errno), errno);
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

// ftrace's common_flags (enum trace_flag_type) from fhook's context bits.
std::uint8_t trace_flags(std::uint8_t ctx) {
    std::uint8_t f = 0;
    f |= (ctx & FHOOK_CTX_IRQS_OFF) ? 0x01 : 0;
    f |= (ctx & FHOOK_CTX_NEED_RESCHED) ? 0x04 : 0;
    f |= (ctx & FHOOK_CTX_HARDIRQ) ? 0x08 : 0;
    f |= (ctx & FHOOK_CTX_SOFTIRQ) ? 0x10 : 0;
    f |= (ctx & FHOOK_CTX_PREEMPT_RESCHED) ? 0x20 : 0;
    f |= (ctx & FHOOK_CTX_NMI) ? 0x40 : 0;
    f |= (ctx & FHOOK_CTX_BH_OFF) ? 0x80 : 0;
    return f;
}

} // namespace

// One CPU's ring-buffer pages, filled in memory one at a time and written
// to a temporary file.
struct TraceDatWriter::Cpu {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file{nullptr, std::fclose};
    std::vector<std::uint8_t> page = std::vector<std::uint8_t>(kPageSize);
    std::size_t used = 0; // bytes of events in the page
    bool open = false;
    std::uint64_t last_ts = 0;
    std::uint64_t missed = 0; // lost before the next page's first event
    std::uint64_t pages = 0;

    void flush() {
        if (!open) {
            return;
        }
        std::uint64_t commit = used;
        if (missed) {
            commit |= kMissedEvents;
            if (used + 8 <= kPageData) {
                commit |= kMissedStored;
                std::memcpy(page.data() + kPageHeader + used, &missed, 8);
            }
            missed = 0;
        }
        std::memcpy(page.data() + 8, &commit, 8);
        if (std::fwrite(page.data(), 1, page.size(), file.get()) != page.size()) {
            throw_runtime("writing a temporary file for trace.dat: " + errno_text(errno), errno);
        }
        pages++;
        open = false;
    }

    void start(std::uint64_t ts) {
        std::fill(page.begin(), page.end(), 0);
        std::memcpy(page.data(), &ts, 8);
        used = 0;
        last_ts = ts;
        open = true;
    }

    void append_word(std::uint32_t w) {
        std::memcpy(page.data() + kPageHeader + used, &w, 4);
        used += 4;
    }

    // One event of `data` (padded to 4 bytes) at `ts`; false if it cannot
    // fit a page.
    bool add(std::uint64_t ts, const std::vector<std::uint8_t>& data) {
        const std::size_t len = (data.size() + 3) & ~std::size_t{3};
        const bool small = len <= 28 * 4 && len > 0;
        const std::size_t need = 4 + (small ? 0 : 4) + len + 8; // + a time extend
        if (need + 8 > kPageData) {
            return false;
        }
        if (!open || used + need + (missed ? 8 : 0) > kPageData) {
            flush();
            start(ts);
        }
        std::uint64_t delta = ts > last_ts ? ts - last_ts : 0;
        last_ts = std::max(last_ts, ts);
        if (delta > kMaxDelta) {
            append_word(kTypeTimeExtend | static_cast<std::uint32_t>(delta & kMaxDelta) << 5);
            append_word(static_cast<std::uint32_t>(delta >> 27));
            delta = 0;
        }
        if (small) {
            append_word(static_cast<std::uint32_t>(len / 4) | static_cast<std::uint32_t>(delta)
                                                                  << 5);
        } else {
            append_word(static_cast<std::uint32_t>(delta) << 5);
            append_word(static_cast<std::uint32_t>(len + 4));
        }
        std::memcpy(page.data() + kPageHeader + used, data.data(), data.size());
        used += len;
        return true;
    }
};

TraceDatWriter::TraceDatWriter(std::string kallsyms, std::vector<Probe> probes)
    : kallsyms_(std::move(kallsyms)), probes_(std::move(probes)) {}

TraceDatWriter::~TraceDatWriter() = default;

TraceDatWriter::Cpu& TraceDatWriter::cpu(std::uint16_t n) {
    while (cpus_.size() <= n) {
        auto c = std::make_unique<Cpu>();
        c->file.reset(std::tmpfile());
        if (!c->file) {
            throw_runtime("cannot create a temporary file for trace.dat: " + errno_text(errno),
                          errno);
        }
        cpus_.push_back(std::move(c));
    }
    return *cpus_[n];
}

const KprobeDef* TraceDatWriter::find(std::uint32_t id) const {
    for (const auto& p : probes_) {
        if (p.id == id) {
            return p.def;
        }
    }
    return nullptr;
}

std::uint16_t TraceDatWriter::type_of(const Event& ev) const {
    if (ev.type == EventType::Function) {
        return kFunctionId;
    }
    if (ev.type == EventType::GraphEntry) {
        return kGraphEntryId;
    }
    if (ev.type == EventType::GraphReturn) {
        return kGraphExitId;
    }
    if (ev.type == EventType::Hook) {
        return static_cast<std::uint16_t>(kHookBase + ev.probe_id);
    }
    switch (ev.type) {
    case EventType::Timerlat:
        return kTimerlatId;
    case EventType::Hwlat:
        return kHwlatId;
    case EventType::Osnoise:
        return kOsnoiseId;
    case EventType::OsnoiseNoise:
        return kNoiseId;
    default:
        break;
    }
    return static_cast<std::uint16_t>(kProbeBase + ev.probe_id);
}

void TraceDatWriter::payload(const Event& ev, std::vector<std::uint8_t>& out) {
    out.clear();
    if (ev.type == EventType::Tracepoint) { // the kernel's own record
        out = ev.data;
        const KprobeDef* def = find(ev.probe_id);
        if (def && out.size() >= 8) { // its type as its recorded format says
            const auto id = static_cast<std::uint16_t>(def->tp_id);
            const auto pid = static_cast<std::int32_t>(ev.pid);
            std::memcpy(out.data(), &id, 2);
            out[3] = shown_preempt(ev, def); // the depth trace-cmd's own file has
            std::memcpy(out.data() + 4, &pid, 4);
        }
        return;
    }
    put_int<std::uint16_t>(out, type_of(ev));
    out.push_back(trace_flags(ev.flags));
    out.push_back(ev.preempt);
    put_int<std::int32_t>(out, static_cast<std::int32_t>(ev.pid));
    switch (ev.type) {
    case EventType::Function:
        put_int<std::uint64_t>(out, ev.ip);
        put_int<std::uint64_t>(out, ev.parent_ip);
        return;
    case EventType::Hook:
        put_int<std::uint64_t>(out, ev.ip);
        put_int<std::uint64_t>(out, ev.ret_ip);
        put_int<std::uint64_t>(out, ev.retval);
        put_int<std::uint64_t>(out, ev.duration);
        put_int<std::uint32_t>(out, ev.action);
        return;
    case EventType::GraphEntry:
        put_int<std::uint64_t>(out, ev.ip);
        put_int<std::int32_t>(out, static_cast<std::int32_t>(ev.depth));
        return;
    case EventType::GraphReturn:
        put_int<std::uint64_t>(out, ev.ip);
        put_int<std::int32_t>(out, static_cast<std::int32_t>(ev.depth));
        put_int<std::uint32_t>(out, 0); // overrun
        put_int<std::uint64_t>(out, ev.calltime);
        put_int<std::uint64_t>(out, ev.ts);
        return;
    case EventType::Timerlat: {
        const fhook_rec_timerlat t = timerlat_of(ev);
        put_int<std::uint32_t>(out, static_cast<std::uint32_t>(t.seqnum));
        put_int<std::int32_t>(out, static_cast<std::int32_t>(t.context));
        put_int<std::uint64_t>(out, t.latency);
        return;
    }
    case EventType::Hwlat: {
        // ts: the window's end (the kernel's is the wall clock's)
        const fhook_rec_hwlat h = hwlat_of(ev);
        put_int<std::uint64_t>(out, h.inner_ns);
        put_int<std::uint64_t>(out, h.outer_ns);
        put_int<std::uint64_t>(out, h.nmi_total_ns);
        put_int<std::int64_t>(out, static_cast<std::int64_t>(ev.ts / 1000000000));
        put_int<std::int64_t>(out, static_cast<std::int64_t>(ev.ts % 1000000000));
        put_int<std::uint32_t>(out, h.nmi_count);
        put_int<std::uint32_t>(out, static_cast<std::uint32_t>(h.seqnum));
        put_int<std::uint32_t>(out, h.count);
        return;
    }
    case EventType::Osnoise: {
        const fhook_rec_osnoise o = osnoise_of(ev);
        for (const std::uint64_t v : {o.noise_ns, o.runtime_ns, o.max_single_ns}) {
            put_int<std::uint64_t>(out, v);
        }
        for (const std::uint32_t v :
             {o.hw_count, o.nmi_count, o.irq_count, o.softirq_count, o.thread_count}) {
            put_int<std::uint32_t>(out, v);
        }
        return;
    }
    case EventType::OsnoiseNoise: {
        const fhook_rec_osnoise_noise n = osnoise_noise_of(ev);
        put_int<std::uint64_t>(out, n.start_ns);
        put_int<std::uint64_t>(out, n.duration_ns);
        put_int<std::uint64_t>(out, std::uint64_t{n.nmi_count} + n.irq_count + n.softirq_count +
                                        n.thread_count);
        return;
    }
    default:
        break;
    }
    const KprobeDef* def = find(ev.probe_id);
    if (ev.type == EventType::Kretprobe || ev.type == EventType::Uretprobe) {
        put_int<std::uint64_t>(out, ev.ip);
        put_int<std::uint64_t>(out, ev.ret_ip);
    } else {
        put_int<std::uint64_t>(out, ev.ip);
    }
    const std::size_t base = out.size();
    out.insert(out.end(), ev.data.begin(), ev.data.end());
    if (!def) {
        return;
    }
    // strings: each data_loc rebuilt to point at the string appended to
    // the event ("(fault)" for one that faulted), offsets from its start
    std::vector<std::uint8_t> strings;
    for (const ProbeField& f : def->fields) {
        if (!f.type.is_string() || f.offset + 4u > ev.data.size()) {
            continue;
        }
        std::uint32_t loc = 0;
        std::memcpy(&loc, ev.data.data() + f.offset, 4);
        const std::size_t len = FHOOK_LOC_LEN(loc), off = FHOOK_LOC_OFF(loc);
        const bool fault = (f.store < 64 && (ev.faults >> f.store & 1)) ||
                           (len == 0 && !(loc & FHOOK_LOC_CUT)) || off + len > ev.data.size();
        std::string text =
            fault
                ? "(fault)"
                : std::string(reinterpret_cast<const char*>(ev.data.data() + off),
                              ::strnlen(reinterpret_cast<const char*>(ev.data.data() + off), len));
        const std::size_t at = out.size() + strings.size();
        const std::uint32_t new_loc =
            static_cast<std::uint32_t>(text.size() + 1) << 16 | static_cast<std::uint32_t>(at);
        std::memcpy(out.data() + base + f.offset, &new_loc, 4);
        strings.insert(strings.end(), text.begin(), text.end());
        strings.push_back(0);
    }
    out.insert(out.end(), strings.begin(), strings.end());
}

void TraceDatWriter::add(const Event& ev) {
    if (ev.type == EventType::Lost) {
        Cpu& c = cpu(ev.cpu);
        c.flush(); // the next page of this CPU says how many were missed
        c.missed += ev.lost;
        return;
    }
    if (ev.type == EventType::Hook) {
        hooks_.insert(ev.probe_id);
    }
    noise_ = noise_ || ev.type == EventType::OsnoiseNoise;
    if (comms_.find(ev.pid) == comms_.end()) {
        comms_.emplace(ev.pid, ev.pid == 0 ? "<idle>" : ev.comm);
    }
    if (ev.type == EventType::Irqsoff) {
        add_section(ev);
        return;
    }
    payload(ev, scratch_);
    if (!cpu(ev.cpu).add(ev.ts, scratch_)) {
        too_large_++;
    }
}

void TraceDatWriter::add_stack(const std::vector<std::uint64_t>& ips, std::uint16_t on,
                               std::uint64_t ts, std::uint32_t pid, std::uint8_t flags,
                               std::uint8_t preempt) {
    if (ips.empty()) {
        return;
    }
    // struct stack_entry: size (entries), the callers from offset 16
    scratch_.clear();
    put_int<std::uint16_t>(scratch_, kStackId);
    scratch_.push_back(trace_flags(flags));
    scratch_.push_back(preempt);
    put_int<std::int32_t>(scratch_, static_cast<std::int32_t>(pid));
    put_int<std::int32_t>(scratch_, static_cast<std::int32_t>(ips.size()));
    put_int<std::uint32_t>(scratch_, 0);
    for (const std::uint64_t ip : ips) {
        put_int<std::uint64_t>(scratch_, ip);
    }
    // at least the 8 its format declares, ended by ULONG_MAX as the
    // kernel's were (trace-cmd's stack handler stops there)
    for (std::size_t i = ips.size(); i < 8; i++) {
        put_int<std::uint64_t>(scratch_, ~std::uint64_t{0});
    }
    if (!cpu(on).add(ts, scratch_)) {
        too_large_++;
    }
}

// An irqsoff report as the kernel's irqsoff tracers write it: a function
// event where the section began (start_critical_timing()), one where it
// ended, then the stack there (check_critical_timing()).  The start is
// stamped before the record, and before what the CPU recorded meanwhile:
// a page keeps time in order, so it shows at the time of the event before
// it on that CPU (a file of the irqsoff tracer has none in between).
void TraceDatWriter::add_section(const Event& ev) {
    const fhook_rec_irqsoff r = irqsoff_of(ev);
    WakeupCall fn{ev.ts - std::min<std::uint64_t>(ev.ts, r.latency_ns),
                  r.start_ip,
                  r.start_parent_ip,
                  ev.pid,
                  ev.cpu,
                  ev.flags,
                  ev.preempt,
                  ev.comm};
    add_function(fn);
    fn.ts = ev.ts;
    fn.ip = r.end_ip;
    fn.parent_ip = r.end_parent_ip;
    add_function(fn);
    add_stack(ev.stack, ev.cpu, ev.ts, ev.pid, ev.flags, ev.preempt);
}

// ftrace's function event of one call
void TraceDatWriter::add_function(const WakeupCall& c) {
    Event ev;
    ev.type = EventType::Function;
    ev.ts = c.ts;
    ev.cpu = c.cpu;
    ev.pid = c.pid;
    ev.flags = c.flags;
    ev.preempt = c.preempt;
    ev.comm = c.comm;
    ev.ip = c.ip;
    ev.parent_ip = c.parent_ip;
    add(ev);
}

void TraceDatWriter::add(const WakeupReport& report) {
    const fhook_rec_wakeup& w = report.rec;
    const auto name = [this](std::uint32_t pid, const char* comm, std::size_t len) {
        comms_.emplace(pid, pid == 0 ? "<idle>" : std::string(comm, ::strnlen(comm, len)));
    };
    name(w.waker_pid, w.waker_comm, sizeof(w.waker_comm));
    name(w.pid, w.comm, sizeof(w.comm));
    name(w.hdr.pid, report.prev_comm.c_str(), report.prev_comm.size());
    // struct ctx_switch_entry: prio as the kernel's, states as task_state_index()
    const auto sched = [&](bool wakeup, std::uint32_t pid, std::int32_t prio,
                           std::uint32_t state_index) {
        scratch_.clear();
        put_int<std::uint16_t>(scratch_, wakeup ? kWakeupId : kSwitchId);
        scratch_.push_back(trace_flags(wakeup ? w.waker_flags : w.hdr.flags));
        scratch_.push_back(wakeup ? w.waker_preempt : w.hdr.preempt);
        put_int<std::int32_t>(scratch_, static_cast<std::int32_t>(pid));
        put_int<std::uint32_t>(scratch_, pid);
        put_int<std::uint32_t>(scratch_, w.pid);
        put_int<std::uint32_t>(scratch_, wakeup ? w.wakeup_cpu : w.hdr.cpu);
        scratch_.push_back(static_cast<std::uint8_t>(prio));
        scratch_.push_back(static_cast<std::uint8_t>(state_index));
        scratch_.push_back(static_cast<std::uint8_t>(w.prio));
        scratch_.push_back(0); // running
        if (!cpu(wakeup ? w.waker_cpu : w.hdr.cpu).add(wakeup ? w.wakeup_ts : w.hdr.ts, scratch_)) {
            too_large_++;
        }
    };
    sched(true, w.waker_pid, w.waker_prio, 0);
    add_stack(report.stack, w.waker_cpu, w.wakeup_ts, w.waker_pid, w.waker_flags, w.waker_preempt);
    for (const WakeupCall& c : report.calls) {
        add_function(c);
    }
    sched(false, w.hdr.pid, w.prev_prio, task_state_index(w.prev_state));
    add_stack(report.switch_stack, w.hdr.cpu, w.hdr.ts, w.hdr.pid, w.hdr.flags, w.hdr.preempt);
}

void TraceDatWriter::finish(int fd) {
    std::string h;
    put(h, "\x17\x08\x44tracing6", 11);
    h.push_back('\0');
    h.push_back(0); // little endian
    h.push_back(8); // long size
    put_int<std::uint32_t>(h, kPageSize);
    put(h, "header_page", 12);
    put_int<std::uint64_t>(h, std::strlen(kHeaderPage));
    h += kHeaderPage;
    put(h, "header_event", 13);
    put_int<std::uint64_t>(h, std::strlen(kHeaderEvent));
    h += kHeaderEvent;

    // ftrace's formats
    const std::vector<std::string> ftrace = ftrace_formats();
    put_int<std::uint32_t>(h, static_cast<std::uint32_t>(ftrace.size()));
    for (const std::string& f : ftrace) {
        put_int<std::uint64_t>(h, f.size());
        h += f;
    }

    // event systems: tracepoints as recorded, definitions and hooks as made here
    std::map<std::string, std::vector<std::string>> systems;
    for (const auto& p : probes_) {
        if (!p.def || hooks_.count(p.id)) {
            continue;
        }
        if (p.def->is_tracepoint) {
            if (!p.def->tp_format.empty()) {
                systems[p.def->group].push_back(p.def->tp_format);
            }
        } else {
            systems[p.def->group].push_back(probe_format(*p.def, p.id));
        }
    }
    for (std::uint32_t id : hooks_) {
        systems["fhook"].push_back(hook_format(id));
    }
    if (noise_) {
        systems["osnoise"].push_back(noise_format());
    }
    put_int<std::uint32_t>(h, static_cast<std::uint32_t>(systems.size()));
    for (const auto& [name, formats] : systems) {
        h += name;
        h.push_back('\0');
        put_int<std::uint32_t>(h, static_cast<std::uint32_t>(formats.size()));
        for (const auto& f : formats) {
            put_int<std::uint64_t>(h, f.size());
            h += f;
        }
    }
    put_int<std::uint32_t>(h, static_cast<std::uint32_t>(kallsyms_.size()));
    h += kallsyms_;
    put_int<std::uint32_t>(h, 0); // printk formats
    std::string cmdlines;
    for (const auto& [pid, comm] : comms_) {
        cmdlines += std::to_string(pid) + " " + comm + "\n";
    }
    put_int<std::uint64_t>(h, cmdlines.size());
    h += cmdlines;

    for (auto& c : cpus_) {
        c->flush();
        if (c->missed) { // lost at the end: an empty page carries the count
            c->start(c->last_ts);
            c->flush();
        }
    }
    const auto nr = static_cast<std::uint32_t>(std::max<std::size_t>(cpus_.size(), 1));
    put_int<std::uint32_t>(h, nr);
    put(h, "flyrecord", 10);
    // the CPUs' data, page-aligned after the offset table
    std::uint64_t at = (h.size() + 16ULL * nr + kPageSize - 1) / kPageSize * kPageSize;
    for (std::uint32_t i = 0; i < nr; i++) {
        const std::uint64_t size = i < cpus_.size() ? cpus_[i]->pages * kPageSize : 0;
        put_int<std::uint64_t>(h, at);
        put_int<std::uint64_t>(h, size);
        at += size;
    }
    h.resize((h.size() + kPageSize - 1) / kPageSize * kPageSize, '\0');
    write_all(fd, h.data(), h.size());
    std::vector<std::uint8_t> buf(64 * kPageSize);
    for (auto& c : cpus_) {
        std::rewind(c->file.get());
        std::size_t n;
        while ((n = std::fread(buf.data(), 1, buf.size(), c->file.get())) > 0) {
            write_all(fd, buf.data(), n);
        }
    }
}

} // namespace fhook
