// Decoding ring records into plain values.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fhook_abi.h>

namespace fhook {

enum class EventType : std::uint16_t {
    Lost = FHOOK_REC_LOST,
    Function = FHOOK_REC_FUNC,
    Kprobe = FHOOK_REC_KPROBE,
    Kretprobe = FHOOK_REC_KRETPROBE,
    Uprobe = FHOOK_REC_UPROBE,
    Uretprobe = FHOOK_REC_URETPROBE,
    Tracepoint = FHOOK_REC_TRACEPOINT,
    Hook = FHOOK_REC_HOOK,
    GraphEntry = FHOOK_REC_GRAPH_ENT,
    GraphReturn = FHOOK_REC_GRAPH_RET,
    Wakeup = FHOOK_REC_WAKEUP,
    Timerlat = FHOOK_REC_TIMERLAT,
    Hwlat = FHOOK_REC_HWLAT,
    Osnoise = FHOOK_REC_OSNOISE,
    OsnoiseNoise = FHOOK_REC_OSNOISE_NOISE,
    Irqsoff = FHOOK_REC_IRQSOFF,
    Errors = FHOOK_REC_ERRORS,
};

inline bool is_graph_event(EventType t) {
    return t == EventType::GraphEntry || t == EventType::GraphReturn;
}

// A record of a probe definition (kprobe, kretprobe, uprobe, uretprobe).
inline bool is_probe_event(EventType t) {
    return t == EventType::Kprobe || t == EventType::Kretprobe || t == EventType::Uprobe ||
           t == EventType::Uretprobe || t == EventType::Tracepoint || t == EventType::Hook;
}

struct LostProbe {
    std::uint32_t probe_id = 0;
    std::uint64_t count = 0;
};

// first_seq/last_seq of a LOST record the reader synthesised for drops no
// in-band LOST record reported (after the last record of a CPU).
inline constexpr std::uint64_t kSeqUnknown = ~std::uint64_t{0};

struct Event {
    EventType type = EventType::Function;
    std::uint32_t probe_id = 0;
    std::uint64_t ts = 0; // CLOCK_MONOTONIC ns
    std::uint32_t pid = 0;
    std::uint32_t tgid = 0;
    std::uint16_t cpu = 0;
    std::uint8_t flags = 0;             // FHOOK_CTX_*
    std::uint8_t preempt = 0;           // low nibble preempt depth, high migrate-disable
    std::string comm;                   // at most FHOOK_COMM_LEN - 1 chars
    std::uint64_t ip = 0;               // Function, Kprobe (probed address), Kretprobe (function)
    std::uint64_t parent_ip = 0;        // Function
    std::uint32_t seq = 0;              // low 32 bits of the CPU's sequence number
    std::uint64_t lost = 0;             // Lost: records dropped before this one
    std::uint64_t first_seq = 0;        // Lost: first and last sequence number dropped,
    std::uint64_t last_seq = 0;         //       kSeqUnknown when synthesised
    std::vector<LostProbe> lost_probes; // Lost: the count per probe
    std::uint64_t ret_ip = 0;           // Kretprobe: where the function returned to
    std::uint64_t faults = 0;           // Kprobe/Kretprobe: bit n, the n-th store faulted
    std::vector<std::uint8_t> data; // Kprobe/Kretprobe: fields, then strings; Wakeup: wakeup_of(),
                                    // wakeup_switch_stack();
                                    // Timerlat: timerlat_of(); Hwlat: hwlat_of();
                                    // Osnoise(Noise): osnoise(_noise)_of();
                                    // Irqsoff: irqsoff_of(); Errors: errors_of()
    std::vector<std::uint64_t> stack; // FHOOK_CTX_STACK: the probed location first
    std::uint64_t retval = 0;         // Hook, GraphReturn: what the caller got
    std::uint64_t duration = 0;       // Hook (AROUND), GraphReturn: ns from entry to return;
                                      // Wakeup, Timerlat: the latency
    std::uint32_t action = 0;         // Hook: enum fhook_hook_action
    std::uint32_t depth = 0;          // Graph*: 0 for a graph function's call
    std::uint64_t calltime = 0;       // GraphReturn: its entry's ts (the call's id)
    std::vector<std::uint64_t> args;  // GraphEntry: argument registers, if recorded
};

// A function event of an FN record, decoded without an Event
// (Decoder::decode_fn()): the fields its Event would have, for the
// readers that format millions of them.
struct FnEvent {
    std::uint64_t ts = 0;
    std::uint64_t ip = 0;
    std::uint64_t parent_ip = 0;
    std::uint32_t pid = 0;
    std::uint32_t tgid = 0;
    std::uint32_t seq = 0;
    std::uint32_t probe_id = 0;
    std::uint16_t cpu = 0;
    std::uint8_t flags = 0;   // FHOOK_CTX_*
    std::uint8_t preempt = 0; // the preempt depth (FN records keep no migrate-disable count)
    std::uint32_t ctx = 0;    // the record's raw context (flags and preempt come from it)
    std::uint32_t names = 0;  // the Decoder's COMM records so far: while the same, so is comm
    std::string_view comm;    // until the Decoder's next record
};

// An FN record's raw context as the FHOOK_CTX_* flags of the other records
// (the module's fhook_rec_ctx()).  Inline: readers ask it for every event.
inline std::uint8_t fn_ctx_flags(std::uint32_t ctx) {
    // the three flag bits in the same order, shifted
    static_assert(FHOOK_FN_CTX_IRQS_OFF >> 24 == FHOOK_CTX_IRQS_OFF &&
                  FHOOK_FN_CTX_NEED_RESCHED >> 24 == FHOOK_CTX_NEED_RESCHED &&
                  FHOOK_FN_CTX_PREEMPT_RESCHED >> 24 == FHOOK_CTX_PREEMPT_RESCHED);
    auto flags = static_cast<std::uint8_t>((ctx >> 24) & 7);
    // (most events: task context, at most a preempt depth)
    if ((ctx & (FHOOK_FN_CTX_SOFTIRQ_MASK | FHOOK_FN_CTX_HARDIRQ_MASK | FHOOK_FN_CTX_NMI_MASK)) ==
        0) {
        return flags;
    }
    if (ctx & FHOOK_FN_CTX_HARDIRQ_MASK) {
        flags |= FHOOK_CTX_HARDIRQ;
    }
    if (ctx & FHOOK_FN_CTX_SOFTIRQ_OFFSET) {
        flags |= FHOOK_CTX_SOFTIRQ;
    }
    // (bottom halves disabled: the count above the serving bit)
    if (ctx & FHOOK_FN_CTX_SOFTIRQ_MASK & ~FHOOK_FN_CTX_SOFTIRQ_OFFSET) {
        flags |= FHOOK_CTX_BH_OFF;
    }
    if (ctx & FHOOK_FN_CTX_NMI_MASK) {
        flags |= FHOOK_CTX_NMI;
    }
    return flags;
}

// What an FN record itself says (not its task's tgid and name, nor its
// number: the stream's, see Decoder).
inline void fn_fields(const fhook_rec_fn* rec, FnEvent& fn) {
    fn.ts = rec->ts;
    fn.ip = static_cast<std::uint64_t>(std::int64_t{rec->ip});
    fn.parent_ip = static_cast<std::uint64_t>(std::int64_t{rec->parent_ip});
    fn.pid = rec->pid;
    fn.probe_id = rec->probe_id;
    fn.cpu = rec->cpu;
    fn.ctx = rec->ctx;
    fn.flags = fn_ctx_flags(rec->ctx);
    const std::uint32_t depth = rec->ctx & FHOOK_FN_CTX_PREEMPT_MASK;
    fn.preempt = static_cast<std::uint8_t>(depth < 15 ? depth : 15);
}

// A record in FN's layout (struct fhook_rec_fn): a function entry
// (FHOOK_REC_FN) or a kprobe's hit at a function's entry
// (FHOOK_REC_FN_KPROBE, the probe's fields after it).  Neither has a
// number or a tgid: the stream gives them (SeqCount, Decoder).
inline bool fn_layout(std::uint16_t type) {
    return type == FHOOK_REC_FN || type == FHOOK_REC_FN_KPROBE;
}

// An FN record's function and parent as one word (as stored: 32 bits each)
inline std::uint64_t fn_addresses(const fhook_rec_fn* f) {
    return static_cast<std::uint32_t>(f->ip) |
           std::uint64_t{static_cast<std::uint32_t>(f->parent_ip)} << 32;
}

// Throws the Runtime Error of a record shorter than its type's struct.
[[noreturn]] void record_too_short(const fhook_rec* rec, std::size_t need);

// Size a LOST record needs for its nr_probes entries (0 if nr_probes is
// absurd); a record is valid when rec->size >= this.
std::size_t lost_record_size(const fhook_rec_lost* rec);

std::size_t lost_record_min_size(const fhook_rec* rec);

// The least size a record of its type can have (a LOST record's with its
// nr_probes entries, once its fixed part is there), 0 for a type this
// build does not know.  Inline: the readers ask for every record.
inline std::size_t record_min_size(const fhook_rec* rec) {
    static constexpr std::uint16_t kMin[] = {
        0,                               // (none)
        0,                               // FHOOK_REC_LOST: lost_record_min_size()
        sizeof(fhook_rec_func),          // FHOOK_REC_FUNC
        0,                               // FHOOK_REC_BENCH: not for readers, skipped
        sizeof(fhook_rec_probe),         // FHOOK_REC_KPROBE
        sizeof(fhook_rec_probe),         // FHOOK_REC_KRETPROBE
        sizeof(fhook_rec_probe),         // FHOOK_REC_UPROBE
        sizeof(fhook_rec_probe),         // FHOOK_REC_URETPROBE
        sizeof(fhook_rec_probe),         // FHOOK_REC_TRACEPOINT
        sizeof(fhook_rec_hook),          // FHOOK_REC_HOOK
        sizeof(fhook_rec_graph_ent),     // FHOOK_REC_GRAPH_ENT
        sizeof(fhook_rec_graph_ret),     // FHOOK_REC_GRAPH_RET
        sizeof(fhook_rec_comm),          // FHOOK_REC_COMM
        sizeof(fhook_rec_wakeup),        // FHOOK_REC_WAKEUP
        sizeof(fhook_rec_timerlat),      // FHOOK_REC_TIMERLAT
        sizeof(fhook_rec_hwlat),         // FHOOK_REC_HWLAT
        sizeof(fhook_rec_osnoise),       // FHOOK_REC_OSNOISE
        sizeof(fhook_rec_osnoise_noise), // FHOOK_REC_OSNOISE_NOISE
        sizeof(fhook_rec_irqsoff),       // FHOOK_REC_IRQSOFF
        sizeof(fhook_rec_errors),        // FHOOK_REC_ERRORS
        sizeof(fhook_rec_fn),            // FHOOK_REC_FN
        sizeof(fhook_rec_fn),            // FHOOK_REC_FN_KPROBE: + the probe's fields
    };
    static_assert(FHOOK_REC_FN_KPROBE == std::size(kMin) - 1);
    if (rec->type == FHOOK_REC_LOST) {
        return lost_record_min_size(rec);
    }
    return rec->type < std::size(kMin) ? kMin[rec->type] : 0;
}

// A record's probe id (one in FN's layout keeps it in a slot of its own).
inline std::uint32_t record_probe_id(const fhook_rec* rec) {
    return fn_layout(rec->type) ? reinterpret_cast<const fhook_rec_fn*>(rec)->probe_id
                                : rec->probe_id;
}

// Numbers one CPU's records in ring order: a record in FN's layout
// (fn_layout()) carries no number, so it gets the one after the record
// before it (a COMM record's own, which it shares with the record it
// names; a LOST record's last_seq + 1).  The count never goes back:
// nested writers take numbers in the order they entered and space in the
// order they reserved, so a COMM record can carry a number the count
// already gave.
class SeqCount {
public:
    // `rec`'s number (one in FN's layout counted), the count moved past
    // it (inline: a reader takes every record's)
    std::uint32_t take(const fhook_rec* rec) {
        switch (rec->type) {
        case FHOOK_REC_FN:
        case FHOOK_REC_FN_KPROBE:
            return next_++;
        case FHOOK_REC_COMM:
            raise(rec->seq);
            return rec->seq;
        case FHOOK_REC_LOST:
            return take_lost(rec);
        default:
            raise(rec->seq + 1);
            return rec->seq;
        }
    }
    // take() of an FN record
    std::uint32_t take_fn() { return next_++; }
    // ... of `n` of them in a row
    void take_fns(std::uint32_t n) { next_ += n; }
    // the number of the next record
    std::uint32_t next() const noexcept { return next_; }

private:
    std::uint32_t take_lost(const fhook_rec* rec);
    void raise(std::uint32_t to) {
        if (static_cast<std::int32_t>(to - next_) > 0) {
            next_ = to;
        }
    }
    std::uint32_t next_ = 0;
};

// Decodes one record, without the task's name (records carry none: see
// Decoder).  Returns nullopt for a record type this build does not know
// and for a COMM record; throws a Runtime Error when a known type is
// shorter than its struct.
std::optional<Event> decode(const fhook_rec* rec);
// The same into `ev`, reusing its buffers (a reader decodes millions of
// records); false for an unknown type or a COMM record.
bool decode(const fhook_rec* rec, Event& ev);

// A Wakeup (Timerlat) event's record, its header as the event's.
fhook_rec_wakeup wakeup_of(const Event& ev);
// A Wakeup event's stack at the switch (FHOOK_WAKEUP_SWITCH_STACK),
// innermost first; empty without one.  The waker's is ev.stack.
std::vector<std::uint64_t> wakeup_switch_stack(const Event& ev);
fhook_rec_timerlat timerlat_of(const Event& ev);
fhook_rec_hwlat hwlat_of(const Event& ev);
fhook_rec_osnoise osnoise_of(const Event& ev);
fhook_rec_osnoise_noise osnoise_noise_of(const Event& ev);
fhook_rec_irqsoff irqsoff_of(const Event& ev);
// An Errors event's chain (fhook_rec_errors), outermost call first.
struct ErrorsRecord {
    std::uint32_t flags = 0; // FHOOK_ERRORS_*
    std::vector<fhook_err_frame> frames;
    // FHOOK_ERRORS_CALLSITES: each frame's return address, else empty
    std::vector<std::uint64_t> callsites;
    // FHOOK_ERRORS_ARGS: each frame's argument registers, else empty
    std::vector<std::array<std::uint64_t, FHOOK_GRAPH_NR_ARGS>> args;
};
ErrorsRecord errors_of(const Event& ev);

// A graph return standing for its whole call (FHOOK_GRAPH_RET_LEAF):
// turns `ev`, decoded from `rec`, into the call's entry and says true;
// leaf_return() makes it the return again.
bool leaf_entry(const fhook_rec* rec, Event& ev);
void leaf_return(const fhook_rec* rec, Event& ev);

// a == b for task names (at most 16 bytes: TASK_COMM_LEN) in a few loads,
// not a call into libc's memcmp(): the decoder and the text formatter ask
// it for every event
inline bool same_task_name(std::string_view a, std::string_view b) {
    const auto load8 = [](const char* p) {
        std::uint64_t v;
        std::memcpy(&v, p, sizeof(v));
        return v;
    };
    const auto load4 = [](const char* p) {
        std::uint32_t v;
        std::memcpy(&v, p, sizeof(v));
        return v;
    };
    const std::size_t n = a.size();
    if (n != b.size()) {
        return false;
    }
    const char* x = a.data();
    const char* y = b.data();
    if (n >= 8 && n <= 16) { // the first and the last 8 bytes cover them all
        return load8(x) == load8(y) && load8(x + n - 8) == load8(y + n - 8);
    }
    if (n >= 4 && n < 8) {
        return load4(x) == load4(y) && load4(x + n - 4) == load4(y + n - 4);
    }
    return a == b;
}

// Decodes a stream of records in delivery order and names each event's
// task from the stream's FHOOK_REC_COMM records (the latest name of its
// pid; "<...>" when the stream never named it, as tracefs prints a pid
// missing from saved_cmdlines).
class Decoder {
public:
    // As decode() above, with Event::comm, and the tgid and seq of a
    // record in FN's layout (from the task's COMM record and the CPU's
    // previous record); a COMM record is taken in and gives false.  A
    // graph return that stands for its whole call gives the return only:
    // readers use decode_each().
    bool decode(const fhook_rec* rec, Event& ev);
    std::optional<Event> decode(const fhook_rec* rec);
    // An FN record (FHOOK_REC_FN, no flags) as decode() would give its
    // Event, without one: the same fields, the same count of numbers.
    void decode_fn(const fhook_rec* rec, FnEvent& fn) {
        if (rec->size < sizeof(fhook_rec_fn)) {
            record_too_short(rec, sizeof(fhook_rec_fn));
        }
        fn_fields(reinterpret_cast<const fhook_rec_fn*>(rec), fn);
        fn.seq = seq_count(fn.cpu).take_fn();
        fn.names = names_;
        if (const Task* task = task_of(fn.pid, fn.cpu)) {
            fn.tgid = task->tgid;
            fn.comm = task->name;
        } else {
            fn.tgid = 0;
            fn.comm = kUnnamed;
        }
    }
    // Gives `fn` each event of `rec`, decoded into `ev`: none for a COMM
    // record or a type this build does not know, one, or two for a graph
    // return that stands for its whole call (FHOOK_GRAPH_RET_LEAF): the
    // call's entry, then the return.
    template <typename Fn>
    void decode_each(const fhook_rec* rec, Event& ev, Fn&& fn) {
        if (!decode(rec, ev)) {
            return;
        }
        if (ev.type == EventType::GraphReturn && leaf_entry(rec, ev)) {
            fn(std::as_const(ev));
            leaf_return(rec, ev);
        }
        fn(std::as_const(ev));
    }
    // `pid`'s name as the stream gave it last, "" if it never did (pid 0:
    // the idle task of `cpu`).
    std::string_view comm(std::uint32_t pid, std::uint16_t cpu = 0) const;

private:
    // by pid; pid 0 by CPU too (each CPU's idle task is swapper/N)
    static std::uint64_t key(std::uint32_t pid, std::uint16_t cpu) {
        return pid != 0 ? pid : std::uint64_t{1} << 32 | cpu;
    }
    // a task as its COMM record names it (an FN record's tgid is its)
    struct Task {
        std::string name;
        std::uint32_t tgid = 0;
    };
    // "<...>": a task the stream never named
    static constexpr std::string_view kUnnamed = "<...>";
    SeqCount& seq_count(std::uint16_t cpu) {
        return cpu < seq_counts_.size() ? seq_counts_[cpu] : new_seq_count(cpu);
    }
    SeqCount& new_seq_count(std::uint16_t cpu);
    // the task a record of `pid` on `cpu` is of, null if unnamed
    const Task* task_of(std::uint32_t pid, std::uint16_t cpu) {
        const std::uint64_t k = key(pid, cpu);
        return last_ != nullptr && k == last_key_ ? last_ : find_task(k);
    }
    const Task* find_task(std::uint64_t k);
    std::unordered_map<std::uint64_t, Task> comms_;
    std::uint64_t last_key_ = 0;
    const Task* last_ = nullptr;       // comms_[last_key_] (nodes are stable)
    std::uint32_t names_ = 0;          // COMM records taken
    std::vector<SeqCount> seq_counts_; // by CPU
};

} // namespace fhook
