#include <algorithm>

#include <fhook/core/osnoise.hpp>

namespace fhook {

void OsnoiseCpu::add(const fhook_rec_osnoise& r) {
    periods++;
    runtime_ns += r.runtime_ns;
    noise_ns += r.noise_ns;
    max_noise_ns = std::max<std::uint64_t>(max_noise_ns, r.noise_ns);
    max_single_ns = std::max<std::uint64_t>(max_single_ns, r.max_single_ns);
    hw += r.hw_count;
    nmi += r.nmi_count;
    irq += r.irq_count;
    softirq += r.softirq_count;
    thread += r.thread_count;
}

void OsnoiseCpu::merge(const OsnoiseCpu& o) {
    periods += o.periods;
    runtime_ns += o.runtime_ns;
    noise_ns += o.noise_ns;
    max_noise_ns = std::max(max_noise_ns, o.max_noise_ns);
    max_single_ns = std::max(max_single_ns, o.max_single_ns);
    hw += o.hw;
    nmi += o.nmi;
    irq += o.irq;
    softirq += o.softirq;
    thread += o.thread;
    gaps.merge(o.gaps);
}

std::uint64_t OsnoiseCpu::available_e5() const {
    if (!runtime_ns) {
        return 0;
    }
    const std::uint64_t net = runtime_ns - std::min(noise_ns, runtime_ns);
    // (128-bit: a day of runtime in ns times 1e7 overflows 64 bits)
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(net) * 10000000 / runtime_ns);
}

OsnoiseSummary::OsnoiseSummary(std::uint64_t bucket_ns, std::size_t entries)
    : bucket_ns_(std::max<std::uint64_t>(bucket_ns, 1)), entries_(entries) {}

OsnoiseCpu& OsnoiseSummary::cpu(unsigned n) {
    auto [it, fresh] = cpus_.try_emplace(n);
    if (fresh) {
        it->second.gaps.buckets.resize(entries_);
    }
    return it->second;
}

void OsnoiseSummary::add(const fhook_rec_osnoise& r) {
    cpu(r.hdr.cpu).add(r);
}

void OsnoiseSummary::add(const fhook_rec_osnoise_noise& r) {
    cpu(r.hdr.cpu).gaps.add(r.duration_ns, bucket_ns_);
}

OsnoiseCpu OsnoiseSummary::all() const {
    OsnoiseCpu sum;
    for (const auto& [n, c] : cpus_) {
        sum.merge(c);
    }
    return sum;
}

} // namespace fhook
