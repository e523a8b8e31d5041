#include <algorithm>

#include <fhook/core/timerlat.hpp>

namespace fhook {

void TimerlatSide::add(std::uint64_t ns, std::uint64_t bucket_ns) {
    min_ns = count ? std::min(min_ns, ns) : ns;
    max_ns = std::max(max_ns, ns);
    count++;
    cur_ns = ns;
    sum_ns += ns;
    const std::uint64_t index = ns / bucket_ns;
    if (index < buckets.size()) {
        buckets[index]++;
    } else {
        over++;
    }
}

void TimerlatSide::merge(const TimerlatSide& other) {
    if (!other.count) {
        return;
    }
    min_ns = count ? std::min(min_ns, other.min_ns) : other.min_ns;
    max_ns = std::max(max_ns, other.max_ns);
    count += other.count;
    cur_ns = other.cur_ns;
    sum_ns += other.sum_ns;
    over += other.over;
    buckets.resize(std::max(buckets.size(), other.buckets.size()));
    for (std::size_t i = 0; i < other.buckets.size(); i++) {
        buckets[i] += other.buckets[i];
    }
}

TimerlatSummary::TimerlatSummary(std::uint64_t bucket_ns, std::size_t entries)
    : bucket_ns_(std::max<std::uint64_t>(bucket_ns, 1)), entries_(entries) {}

void TimerlatSummary::add(const fhook_rec_timerlat& r) {
    auto [it, fresh] = cpus_.try_emplace(r.hdr.cpu);
    if (fresh) {
        it->second.irq.buckets.resize(entries_);
        it->second.thread.buckets.resize(entries_);
    }
    TimerlatSide& side = r.context == FHOOK_TIMERLAT_IRQ ? it->second.irq : it->second.thread;
    side.add(r.latency, bucket_ns_);
}

TimerlatCpu TimerlatSummary::all() const {
    TimerlatCpu sum;
    for (const auto& [cpu, c] : cpus_) {
        sum.irq.merge(c.irq);
        sum.thread.merge(c.thread);
    }
    return sum;
}

} // namespace fhook
