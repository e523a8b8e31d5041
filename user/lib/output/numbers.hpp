// Numbers appended to output text (the formatters' hot path:
// std::to_chars, no locale, no allocation).  Internal to user/lib/output.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
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

// v in lowercase hex without leading zeros, written backwards ending at
// `end`; returns where it starts.  A byte at a time from a table of digit
// pairs: std::to_chars(..., 16) took ~170 instructions for a kernel
// address, and pointer fields are hex.
inline char* hex_backwards(std::uint64_t v, char* end) {
    static constexpr auto kPairs = [] {
        std::array<char, 512> t{};
        for (unsigned i = 0; i < 256; i++) {
            t[2 * i] = "0123456789abcdef"[i >> 4];
            t[2 * i + 1] = "0123456789abcdef"[i & 0xf];
        }
        return t;
    }();
    char* p = end;
    while (v >= 0x100) {
        p -= 2;
        std::memcpy(p, &kPairs[2 * (v & 0xff)], 2);
        v >>= 8;
    }
    if (v >= 0x10) {
        p -= 2;
        std::memcpy(p, &kPairs[2 * v], 2);
    } else {
        *--p = hex_digit(static_cast<unsigned>(v));
    }
    return p;
}

// "0x%lx"
inline void put_hex(std::uint64_t v, std::string& out) {
    char buf[18];
    char* p = hex_backwards(v, buf + sizeof(buf));
    *--p = 'x';
    *--p = '0';
    out.append(p, static_cast<std::size_t>(buf + sizeof(buf) - p));
}

// "%lx"
inline void put_hex_digits(std::uint64_t v, std::string& out) {
    char buf[16];
    char* p = hex_backwards(v, buf + sizeof(buf));
    out.append(p, static_cast<std::size_t>(buf + sizeof(buf) - p));
}

} // namespace fhook::numbers
