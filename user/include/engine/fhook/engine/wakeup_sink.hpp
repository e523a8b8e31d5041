// The wakeup tracers' reports, live (fhook wakeup) or from a record file
// (fhook report): each FHOOK_REC_WAKEUP record with the function calls
// its CPU made from the wakeup to the switch (WakeupSpec::functions),
// which come before it, as a WakeupReport.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include <fhook/engine/tracer.hpp>
#include <fhook/output/wakeup_format.hpp>

namespace fhook {

class WakeupSink final : public EventSink {
public:
    using OnReport = std::function<void(const WakeupReport&)>;
    // The calls kept waiting for their report (a tracked wakeup that is
    // never reported leaves its calls behind): the oldest go past this (a
    // report whose wait held more lacks its first ones).
    static constexpr std::size_t kMaxCalls = std::size_t{1} << 17;

    // `file` (optional: a FileSink) gets the records of each report as
    // well: its calls, the names of their tasks and the report, not the
    // calls of the wakeups that were not reported.
    explicit WakeupSink(OnReport on_report, Sink* file = nullptr);
    void on_record(const fhook_rec* rec) override;
    void on_event(const Event& ev) override;
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override;

    std::size_t reports() const noexcept { return reports_; }

private:
    struct Call {
        WakeupCall call;
        std::vector<std::byte> raw; // its record, when a file is written
    };
    using Raw = std::vector<std::byte>;
    static Raw copy(const fhook_rec* rec);
    void report(const Event& ev);

    OnReport on_report_;
    Sink* file_;
    const fhook_rec* rec_ = nullptr; // the record being decoded
    std::deque<Call> calls_;         // oldest first
    // a task's last COMM record (file), by pid (and CPU for pid 0)
    std::unordered_map<std::uint64_t, Raw> comms_;
    std::size_t reports_ = 0;
};

} // namespace fhook
