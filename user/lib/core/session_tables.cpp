// What a session's in-module aggregations hold, read back: latency
// histograms, per-function counts, hist tables (and the table's setup).
#include <cerrno>
#include <cstring>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>

#include "ioctl_args.hpp"

namespace fhook {

using ioctl_args::user_ptr;
using ioctl_args::zero_init;

LatencyHist Session::latency(std::uint32_t probe_id, std::optional<unsigned> cpu) const {
    device_.require(FHOOK_FEAT_LATENCY, "latency histograms");
    if (cpu) {
        device_.require(FHOOK_FEAT_WAKEUP, "histograms per CPU");
    }
    fhook_latency arg;
    zero_init(arg);
    arg.probe_id = probe_id;
    arg.flags = cpu ? FHOOK_LATENCY_F_CPU : 0;
    arg.cpu = cpu.value_or(0);
    if (device_.ioctl(FHOOK_IOC_LATENCY, &arg) < 0) {
        throw_ioctl_error("reading the histogram of probe " + std::to_string(probe_id) +
                              (cpu ? " on CPU " + std::to_string(*cpu) : std::string()),
                          errno, device_.refusal(errno));
    }
    LatencyHist h;
    h.count = arg.count;
    h.sum_ns = arg.sum_ns;
    h.inflight = arg.inflight;
    h.min_ns = arg.min_ns;
    h.max_ns = arg.max_ns;
    for (std::size_t i = 0; i < h.buckets.size() && i < arg.nr_buckets; i++) {
        h.buckets[i] = arg.buckets[i];
    }
    return h;
}

void Session::set_hist(const fhook_hist_set& hist) {
    device_.require(FHOOK_FEAT_HIST, "histograms in the module");
    if (hist.table) {
        device_.require(FHOOK_FEAT_HIST_STACK, "several histograms of a probe in the module");
    }
    fhook_hist_set arg = hist;
    arg.size = sizeof(arg);
    if (device_.ioctl(FHOOK_IOC_HIST_SET, &arg) < 0) {
        throw_ioctl_error("keeping the histogram of probe " + std::to_string(hist.probe_id) +
                              " in the module",
                          errno, device_.refusal(errno));
    }
}

Session::HistRead Session::hist(std::uint32_t probe_id, std::uint32_t table) const {
    device_.require(FHOOK_FEAT_HIST, "histograms in the module");
    HistRead out;
    out.entries.resize(4096);
    for (;;) {
        fhook_hist_read arg;
        zero_init(arg);
        arg.probe_id = probe_id;
        arg.table = table;
        arg.buf = user_ptr(out.entries.data());
        arg.buf_len = out.entries.size();
        if (device_.ioctl(FHOOK_IOC_HIST_READ, &arg) == 0) {
            out.nr = arg.nr;
            out.key_size = arg.key_size;
            out.elt_size = arg.elt_size;
            out.hits = arg.hits;
            out.drops = arg.drops;
            out.entries.resize(std::size_t{arg.nr} * arg.elt_size);
            return out;
        }
        if (errno != ENOSPC || std::size_t{arg.nr} * arg.elt_size <= out.entries.size()) {
            throw_ioctl_error("reading the histogram of probe " + std::to_string(probe_id), errno,
                              device_.refusal(errno));
        }
        // the module said how many there are (more may come meanwhile)
        out.entries.resize(std::size_t{arg.nr} * arg.elt_size * 2);
    }
}

std::vector<Session::FunctionHits> Session::function_counts(std::uint32_t probe_id) const {
    device_.require(FHOOK_FEAT_COUNT_IPS, "per-function counts");
    std::vector<std::uint64_t> ips(64), hits(64);
    for (;;) {
        fhook_counts arg;
        zero_init(arg);
        arg.probe_id = probe_id;
        arg.nr = static_cast<std::uint32_t>(ips.size());
        arg.ips = user_ptr(ips.data());
        arg.counts = user_ptr(hits.data());
        if (device_.ioctl(FHOOK_IOC_COUNTS, &arg) == 0) {
            std::vector<FunctionHits> out(arg.nr);
            for (std::uint32_t i = 0; i < arg.nr; i++) {
                out[i] = {ips[i], hits[i]};
            }
            return out;
        }
        if (errno != ENOSPC || arg.nr <= ips.size()) {
            throw_ioctl_error("reading the function counts of probe " + std::to_string(probe_id),
                              errno, device_.refusal(errno));
        }
        ips.resize(arg.nr); // the module said how many there are
        hits.resize(arg.nr);
    }
}

} // namespace fhook
