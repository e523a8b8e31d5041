// Event formatters.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <fhook/event.hpp>

namespace fhook {

class Ksyms;

// The five context characters of ftrace's latency format
// (trace_print_lat_fmt()): irqs-off/bh-off, need-resched, hardirq/softirq,
// preempt depth, migrate-disable depth.  E.g. "d.h1.".
std::array<char, 5> context_chars(std::uint8_t flags, std::uint8_t preempt);

class Formatter {
public:
    virtual ~Formatter() = default;
    // Appends the rendering of `event` to `out`.
    virtual void format(const Event& event, std::string& out) = 0;
};

// ftrace `trace` file format of the function tracer:
//   "%16s-%-7d [%03d] %s %5llu.%06llu: %s <-%s\n"
//   "CPU:%d [LOST %llu EVENTS]\n"
class TextFormatter final : public Formatter {
public:
    explicit TextFormatter(const Ksyms& ksyms) : ksyms_(ksyms) {}
    void format(const Event& event, std::string& out) override;

private:
    const Ksyms& ksyms_;
};

} // namespace fhook
