// Event formatters.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fhook/output/trace_event.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/sys/usersyms.hpp>

namespace fhook {

class Ksyms;
class ProbeTable;

// A direct-mapped address -> symbol name cache in front of Ksyms::lookup():
// a trace names few distinct addresses (the traced functions and their
// call sites) millions of times.
class NameCache {
public:
    explicit NameCache(const Ksyms& ksyms) : ksyms_(ksyms) {}
    // Appends the name of `addr` like Ksyms::append_name().
    void append(std::uint64_t addr, std::string& out);
    // Appends "name+0xoff/0xsize [module]" like Ksyms::append_offset().
    void append_offset(std::uint64_t addr, std::string& out);

private:
    static constexpr std::size_t kSlots = 4096;
    static constexpr std::size_t kOffsetSlots = 256;
    struct Slot {
        std::uint64_t addr = 0;
        std::string_view name; // empty: no symbol, print the address
        bool valid = false;
    };
    struct OffsetSlot {
        std::uint64_t addr = 0;
        std::string text;
        bool valid = false;
    };
    const Ksyms& ksyms_;
    std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
    std::vector<OffsetSlot> offsets_ = std::vector<OffsetSlot>(kOffsetSlots);
};

// The five context characters of ftrace's latency format
// (trace_print_lat_fmt()): irqs-off/bh-off, need-resched, hardirq/softirq,
// preempt depth, migrate-disable depth.  E.g. "d.h1.".
std::array<char, 5> context_chars(std::uint8_t flags, std::uint8_t preempt);
// trace_find_mark(): the mark of a delay or duration of `ns` ('$' over a
// second, '@' 100 ms, '*' 10 ms, '#' 1 ms, '!' 100 us, '+' 10 us, ' ').
char delay_mark(std::uint64_t ns);

// The preempt depth tracefs prints for an event: a tracepoint's record
// (`def` its definition) counts the tracepoint's own preempt_disable,
// which the kernel's trace events leave out (trace_event_buffer_reserve():
// tracing_gen_ctx_dec()).  Its syscall events show one level more: on
// 6.1 and 6.12 ftrace_syscall_enter()/exit() disable preemption once more
// before reserving (guard(preempt_notrace)), so their depth is the
// record's.  (From 6.13 syscall tracepoints are faultable and that would
// change; the guest test tracepoint compares the column with tracefs.)
std::uint8_t shown_preempt(const Event& event, const KprobeDef* def);

// How events, tables and documents are written: the kernel's text formats,
// JSON (NDJSON for events), or for events the Chrome trace event format
// (Perfetto, chrome://tracing).
enum class OutputFormat { Text, Json, Chrome, Otlp };

// "return", "redirect", "around" (enum fhook_hook_action).
const char* hook_action_name(std::uint32_t action);

// The frames of uprobe events' user stacks: "function+0xoff (binary)"
// through libdw while the process lives, else through the probed binary
// at the load bias the event's own address gives; "0x..." when unknown.
class UserFrames {
public:
    void append(const Event& event, const KprobeDef* def, std::uint64_t ip, std::string& out);
    // `addr` in process `tgid`; `probe_ip`: where uprobe `def` hit in it
    // (0: unknown), which places its binary when the process is gone.
    void append(std::uint32_t tgid, std::uint64_t probe_ip, const KprobeDef* def,
                std::uint64_t addr, std::string& out);
    // Reads the mappings of process `tgid` now, while it lives (once).
    void remember(std::uint32_t tgid) {
        if (remembered_.insert(tgid).second) {
            syms_.remember(tgid);
        }
    }

private:
    UserSymbolizer syms_;
    // per (binary, file offset): the offset's virtual address in the file
    std::map<std::pair<std::string, std::uint64_t>, std::optional<std::uint64_t>> vaddrs_;
    std::set<std::pair<std::uint32_t, std::string>> noted_; // (tgid, binary)
    std::set<std::uint32_t> remembered_;
};

class Formatter {
public:
    virtual ~Formatter() = default;
    // What comes before the first event and after the last (a document's
    // opening and closing); nothing for line formats.
    virtual void begin(std::string& /*out*/) {}
    virtual void end(std::string& /*out*/) {}
    // Appends the rendering of `event` to `out`.
    virtual void format(const Event& event, std::string& out) = 0;
    // A formatter that says true here formats a function event decoded
    // straight from its FN record (Decoder::decode_fn()) with format_fn(),
    // as format() formats its Event; the others are given Events.
    virtual bool formats_fn() const { return false; }
    virtual void format_fn(const FnEvent& /*fn*/, std::string& /*out*/) {}
    // The kprobe definitions by probe id, for kprobe records (may be null:
    // their fields are then not shown).  Must outlive the formatter.
    void set_probes(const ProbeTable* probes) noexcept { probes_ = probes; }

protected:
    const ProbeTable* probes_ = nullptr;
};

// ftrace `trace` file format of the function tracer:
//   "%16s-%-7d [%03d] %s %5llu.%06llu: %s <-%s\n"
//   "CPU:%d [LOST %llu EVENTS]\n"
class TextFormatter final : public Formatter {
public:
    explicit TextFormatter(const Ksyms& ksyms);
    ~TextFormatter() override;
    void format(const Event& event, std::string& out) override;
    bool formats_fn() const override { return true; }
    void format_fn(const FnEvent& fn, std::string& out) override;

private:
    void append_stack(const Event& event, std::string& out) {
        if (!event.stack.empty()) { // (most events: inline)
            append_stack_lines(event, out);
        }
    }
    void append_stack_lines(const Event& event, std::string& out);
    // What a line's head shows of its event
    struct LineHead {
        std::uint64_t ts;
        std::uint32_t pid;
        std::uint16_t cpu;
        std::uint8_t flags;
        std::uint8_t preempt;
        std::string_view comm;
    };
    // "%16s-%-7d [%03d] %s %5llu.%06llu: ", from the cached parts
    void append_head(const LineHead& h, std::string& out);
    // ... and a function event's "func <-parent\n"
    void append_function(const LineHead& h, std::uint64_t ip, std::uint64_t parent_ip,
                         std::string& out);
    // head_ made h's, with its microseconds
    void refresh_head(const LineHead& h);
    // ... up to the seconds (task, CPU, context)
    void refresh_task(const LineHead& h);
    // ... its seconds and microseconds (inline, the seconds of a new one
    // out of line: new_second())
    void refresh_time(std::uint64_t ts);
    void new_second(std::uint64_t ts);
    // ... and a function event's "func <-parent\n" after it, appended
    // whole (inline; another call's text: set_call())
    void append_call(std::uint64_t ip, std::uint64_t parent_ip, std::string& out);
    void set_call(std::uint64_t ip, std::uint64_t parent_ip);

    NameCache names_;
    TraceEventPrinter events_; // tracepoints' TP_printk
    UserFrames user_frames_;
    // The line head, "%16s-%-7d [%03d] %s %5llu.%06llu: ": the same up to
    // the microseconds for every event of one task on one CPU in one
    // context within one second, rebuilt when any of them changes; each
    // event writes its microseconds into the head's last 8 bytes and
    // appends it whole; a function event appends the call after it too,
    // kept there for the next event of the same call (one copy a line).
    struct Head {
        std::uint32_t pid = 0;
        std::uint16_t cpu = 0;
        std::uint8_t flags = 0;
        std::uint8_t preempt = 0;
        std::string comm;
        std::uint64_t sec_ns = 0; // the start of the head's second, ns
        std::size_t sec_at = 0;   // where the seconds start in text
        std::size_t end = 0;      // where the head ends in text
        // text's "func <-parent\n" after the head, if longer than end
        std::uint64_t ip = 0;
        std::uint64_t parent_ip = 0;
        std::string text;
        bool valid = false;
        // the head is of the last FN event's pid and raw context (low
        // and high half of fn_key), CPU and Decoder names count: another
        // with the same needs no refresh_task()
        std::uint64_t fn_key = 0;
        std::uint32_t fn_names = 0;
        bool fn_valid = false;
    } head_;
    // "func <-parent\n" of a function event, by (ip, parent_ip)
    static constexpr std::size_t kCallSlots = 1024;
    struct CallSlot {
        std::uint64_t ip = 0;
        std::uint64_t parent_ip = 0;
        std::string text;
        bool valid = false;
    };
    std::vector<CallSlot> calls_ = std::vector<CallSlot>(kCallSlots);
};

// NDJSON, one object per line; field names are stable (docs/cli.md):
//   {"type":"func","ts":2431445123,"cpu":1,"seq":4711,"pid":94,"tgid":94,
//    "comm":"cat","ctx":".....","probe":1,"func":"vfs_read",
//    "ip":"0xffffffff812a1b40","parent":"ksys_read",
//    "parent_ip":"0xffffffff812a1d2e"}
//   {"type":"lost","ts":2431445200,"cpu":1,"lost":1234,"first_seq":4712,
//    "last_seq":5945,"probes":[{"probe":1,"lost":1234}]}
// first_seq/last_seq only when known (seq_range_known()), probes only when
// the module broke the count down.
// True when a LOST event's first_seq..last_seq is a real range that can hold
// its count (not synthesised after the last record, not a pre-seq module).
bool seq_range_known(const Event& ev);

class JsonFormatter final : public Formatter {
public:
    explicit JsonFormatter(const Ksyms& ksyms) : names_(ksyms) {}
    void format(const Event& event, std::string& out) override;

private:
    // The symbol name of `addr` as a JSON string.
    void append_json_name(std::uint64_t addr, std::string& out);
    // ,"stack":[...] when the event has one.
    void append_json_stack(const Event& event, bool user, std::string& out);

    NameCache names_;
    UserFrames user_frames_;
    std::string name_; // scratch
};

// Chrome trace event JSON (the JSON object format), streamed: one track
// per thread, grouped by process, named by metadata events the first time
// a task is seen; a hook's trace-around call is a complete event ("X",
// ts/dur in µs), every other event an instant one ("i") with its fields and
// CPU in args; lost records are instant events on a per-CPU track of a
// process of their own ("lost events", pid kLostPid); the latency
// tracers' records (timerlat, osnoise, the irqsoff tracers) spans, hwlat's
// instants, on per-CPU tracks of "latency tracers" (pid kTracerPid;
// timerlat's thread measures on tracks of their own, kThreadTracks + CPU).
// Memory grows with the number of tasks only.
class ChromeFormatter final : public Formatter {
public:
    static constexpr std::uint32_t kLostPid = 0x7fffffff;
    static constexpr std::uint32_t kTracerPid = 0x7ffffffe;
    static constexpr std::uint32_t kThreadTracks = 0x10000; // + CPU: timerlat's threads
    explicit ChromeFormatter(const Ksyms& ksyms) : names_(ksyms) {}
    // The name of the irqsoff tracers' spans: the tracer's (irqsoff,
    // preemptoff, preemptirqsoff; "irqsoff" unless told).
    void set_tracer(std::string tracer) { tracer_ = std::move(tracer); }
    void begin(std::string& out) override;
    void end(std::string& out) override;
    void format(const Event& event, std::string& out) override;

private:
    void open_event(std::string& out);
    void name_tasks(const Event& event, std::string& out);
    void format_wakeup(const Event& event, std::string& out);
    void format_tracer(const Event& event, std::string& out);
    void format_errors(const Event& event, std::string& out);
    void append_name(const Event& event, const KprobeDef* def, std::string& out);

    NameCache names_;
    bool first_ = true;
    std::set<std::uint32_t> processes_, threads_, lost_cpus_, tracer_cpus_;
    std::string name_; // scratch
    std::string tracer_;
};

// OpenTelemetry logs as OTLP JSON lines (the file format of the collector's
// otlpjsonfile receiver; docs/fleet.md): each line one
// ExportLogsServiceRequest of up to kBatch events, resource service.name =
// "fhook", scope "fhook"; each event a LogRecord whose body is its line of
// the text format and whose attributes are its fields in the NDJSON format
// (prefixed "fhook."), timeUnixNano its stamp on the realtime clock
// (CLOCK_MONOTONIC + `real_minus_mono`), severity INFO (WARN for lost
// records).
class OtlpFormatter final : public Formatter {
public:
    static constexpr std::size_t kBatch = 256;
    OtlpFormatter(const Ksyms& ksyms, std::int64_t real_minus_mono);
    ~OtlpFormatter() override;
    void format(const Event& event, std::string& out) override;
    void end(std::string& out) override;

private:
    void flush(std::string& out);

    TextFormatter text_;
    JsonFormatter json_;
    std::int64_t offset_;
    std::string records_; // the batch's LogRecords, comma separated
    std::size_t batched_ = 0;
    std::string line_, fields_; // scratch
};

// CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: a live stamp's offset.
std::int64_t realtime_offset_now();

// The event formatter of `format`, naming addresses through `ksyms`;
// `real_minus_mono` for Otlp's realtime stamps (a record file's own: its
// header's start_real_ns - start_mono_ns).
std::unique_ptr<Formatter> make_formatter(OutputFormat format, const Ksyms& ksyms,
                                          std::int64_t real_minus_mono = realtime_offset_now());

// Appends `text` as a JSON string literal (quotes included): well-formed
// UTF-8 as it is, each byte that is not part of one (kernel strings can be
// anything) as \ufffd, and only the characters JSON requires escaped, so
// the output is always valid UTF-8.
void append_json_string(std::string_view text, std::string& out);

} // namespace fhook
