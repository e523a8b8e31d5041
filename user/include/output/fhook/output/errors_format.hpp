// fhook errors' output (issue 44): a failing call chain, outermost first,
// each frame's return value as kernel code names it, the frame that first
// produced the failure marked; identical chains counted; the --stat table
// per (entry, first failing function, errno).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fhook/probe/retval.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

// One call of a chain: what it returned and how long it took.
struct ErrorFrame {
    std::uint64_t func = 0;
    std::uint64_t calltime = 0; // CLOCK_MONOTONIC ns
    std::uint64_t duration = 0;
    std::uint64_t retval = 0; // %rax as it returned
    ReturnType type;
};

// The calls from an entry function that failed down to the deepest call
// whose failure it returned, outermost (the entry) first.  `truncated`:
// calls deeper than the last frame were not watched (the depth limit, or
// a shadow stack missing), so the first failure may lie below it.
struct ErrorChain {
    std::uint64_t ts = 0; // when the entry returned
    std::uint32_t pid = 0;
    std::uint32_t tgid = 0;
    std::uint16_t cpu = 0;
    std::string comm;
    std::vector<ErrorFrame> frames;
    bool truncated = false;
};

// The frames' functions and return values, the key of identical chains.
std::string error_chain_key(const ErrorChain& chain);

// The chain as text: a title line (task, CPU, time, the entry's result and
// duration; "(N times)" when `repeats` > 1), then a line per frame indented
// by depth, "<- first" on the deepest (or "<- deeper calls not watched"
// when truncated).
std::string format_error_chain(const ErrorChain& chain, const Ksyms& ksyms, unsigned repeats = 1);
// One JSON object (no newline): ts_ns, cpu, pid, tgid, comm, entry, result,
// errno, first (the deepest frame's function), truncated, repeats, frames
// [{function, result, duration_ns, calltime_ns}].
std::string format_error_chain_json(const ErrorChain& chain, const Ksyms& ksyms,
                                    unsigned repeats = 1);

// --stat: failures counted per (entry, first failing function, errno).
class ErrorStats {
public:
    void add(const ErrorChain& chain);
    // "COUNT  ERRNO  ENTRY  FIRST", most frequent first; "(no failures)"
    // when nothing was added.
    std::string text(const Ksyms& ksyms) const;
    std::uint64_t total() const noexcept { return total_; }

private:
    // (entry, first, its result as text) -> count
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::string>, std::uint64_t> counts_;
    std::uint64_t total_ = 0;
};

} // namespace fhook
