// The timer latency tracer's measures (FHOOK_REC_TIMERLAT records) summed
// per CPU as rtla's timerlat top and hist modes show them: for the IRQ
// and the thread, the last, shortest, average and longest latency and a
// linear histogram (rtla's --bucket-size and --entries).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <fhook_abi.h>

namespace fhook {

// One context's (IRQ or thread) measures on one CPU.
struct TimerlatSide {
    std::uint64_t count = 0;
    std::uint64_t cur_ns = 0; // the last one
    std::uint64_t min_ns = 0; // 0 without any
    std::uint64_t max_ns = 0;
    std::uint64_t sum_ns = 0;
    std::uint64_t over = 0;             // past the last bucket
    std::vector<std::uint64_t> buckets; // [i]: [i, i+1) bucket widths

    void add(std::uint64_t ns, std::uint64_t bucket_ns);
    void merge(const TimerlatSide& other);
    std::uint64_t avg_ns() const { return count ? sum_ns / count : 0; }
};

struct TimerlatCpu {
    TimerlatSide irq;
    TimerlatSide thread;
};

class TimerlatSummary {
public:
    // Buckets of `bucket_ns` each, `entries` of them (rtla: 1 us, 256).
    explicit TimerlatSummary(std::uint64_t bucket_ns = 1000, std::size_t entries = 256);
    void add(const fhook_rec_timerlat& r);
    // The CPUs with measures, by number.
    const std::map<unsigned, TimerlatCpu>& cpus() const noexcept { return cpus_; }
    // Every CPU's together.
    TimerlatCpu all() const;
    std::uint64_t bucket_ns() const noexcept { return bucket_ns_; }
    std::size_t entries() const noexcept { return entries_; }

private:
    std::uint64_t bucket_ns_;
    std::size_t entries_;
    std::map<unsigned, TimerlatCpu> cpus_;
};

} // namespace fhook
