// Decoding ring records into plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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
    std::vector<std::uint8_t> data;     // Kprobe/Kretprobe: fields, then strings
    std::vector<std::uint64_t> stack;   // FHOOK_CTX_STACK: the probed location first
    std::uint64_t retval = 0;           // Hook, GraphReturn: what the caller got
    std::uint64_t duration = 0;         // Hook (AROUND), GraphReturn: ns from entry to return
    std::uint32_t action = 0;           // Hook: enum fhook_hook_action
    std::uint32_t depth = 0;            // Graph*: 0 for a graph function's call
    std::uint64_t calltime = 0;         // GraphReturn: its entry's ts (the call's id)
    std::vector<std::uint64_t> args;    // GraphEntry: argument registers, if recorded
};

// Size a LOST record needs for its nr_probes entries (0 if nr_probes is
// absurd); a record is valid when rec->size >= this.
std::size_t lost_record_size(const fhook_rec_lost* rec);

// The least size a record of its type can have (a LOST record's with its
// nr_probes entries, once its fixed part is there), 0 for a type this
// build does not know.
std::size_t record_min_size(const fhook_rec* rec);

// Decodes one record.  Returns nullopt for a record type this build does not
// know; throws a Runtime Error when a known type is shorter than its struct.
std::optional<Event> decode(const fhook_rec* rec);
// The same into `ev`, reusing its buffers (a reader decodes millions of
// records); false for an unknown type.
bool decode(const fhook_rec* rec, Event& ev);

} // namespace fhook
