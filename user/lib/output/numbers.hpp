// Numbers appended to output text (the formatters' hot path:
// std::to_chars, no locale, no allocation).  Internal to user/lib/output.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace fhook::numbers {

inline void put_u64(std::uint64_t v, std::string& out) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, r.ptr);
}

inline void put_i64(std::int64_t v, std::string& out) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, r.ptr);
}

// The lowercase hex digit of v's low 4 bits.
inline char hex_digit(unsigned v) {
    return "0123456789abcdef"[v & 0xf];
}

// "0x%lx"
inline void put_hex(std::uint64_t v, std::string& out) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v, 16);
    out.append("0x");
    out.append(buf, r.ptr);
}

} // namespace fhook::numbers
