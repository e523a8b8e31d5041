// The operating system noise tracer's records summed per CPU as rtla's
// osnoise top and hist modes show them: periods (FHOOK_REC_OSNOISE) into
// runtime, noise, the longest noise of a period and of a gap, and the
// interference counters; gaps (FHOOK_REC_OSNOISE_NOISE) into a linear
// histogram of their durations (rtla's --bucket-size and --entries).
#pragma once

#include <cstdint>
#include <map>

#include <fhook_abi.h>

#include <fhook/core/timerlat.hpp>

namespace fhook {

struct OsnoiseCpu {
    std::uint64_t periods = 0;
    std::uint64_t runtime_ns = 0;
    std::uint64_t noise_ns = 0;
    std::uint64_t max_noise_ns = 0;  // the noisiest period's noise
    std::uint64_t max_single_ns = 0; // the longest gap
    std::uint64_t hw = 0, nmi = 0, irq = 0, softirq = 0, thread = 0;
    TimerlatSide gaps; // each gap's duration (FHOOK_REC_OSNOISE_NOISE)

    void add(const fhook_rec_osnoise& r);
    void merge(const OsnoiseCpu& other);
    // % of the runtime left to the task, in 1e-5 % (rtla's five decimals)
    std::uint64_t available_e5() const;
};

class OsnoiseSummary {
public:
    explicit OsnoiseSummary(std::uint64_t bucket_ns = 1000, std::size_t entries = 256);
    void add(const fhook_rec_osnoise& r);
    void add(const fhook_rec_osnoise_noise& r);
    const std::map<unsigned, OsnoiseCpu>& cpus() const noexcept { return cpus_; }
    OsnoiseCpu all() const;
    std::uint64_t bucket_ns() const noexcept { return bucket_ns_; }
    std::size_t entries() const noexcept { return entries_; }

private:
    OsnoiseCpu& cpu(unsigned n);

    std::uint64_t bucket_ns_;
    std::size_t entries_;
    std::map<unsigned, OsnoiseCpu> cpus_;
};

} // namespace fhook
