// Decoding ring records into plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <fhook_abi.h>

namespace fhook {

enum class EventType : std::uint16_t {
    Lost = FHOOK_REC_LOST,
    Function = FHOOK_REC_FUNC,
};

struct Event {
    EventType type = EventType::Function;
    std::uint32_t probe_id = 0;
    std::uint64_t ts = 0; // CLOCK_MONOTONIC ns
    std::uint32_t pid = 0;
    std::uint32_t tgid = 0;
    std::uint16_t cpu = 0;
    std::uint8_t flags = 0;      // FHOOK_CTX_*
    std::uint8_t preempt = 0;    // low nibble preempt depth, high migrate-disable
    std::string comm;            // at most FHOOK_COMM_LEN - 1 chars
    std::uint64_t ip = 0;        // Function
    std::uint64_t parent_ip = 0; // Function
    std::uint64_t lost = 0;      // Lost: records dropped before this one
};

// Decodes one record.  Returns nullopt for a record type this build does not
// know; throws a Runtime Error when a known type is shorter than its struct.
std::optional<Event> decode(const fhook_rec* rec);

} // namespace fhook
