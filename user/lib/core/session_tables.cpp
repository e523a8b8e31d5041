// What a session's in-module aggregations hold, read back: latency
// histograms (per task too), per-function counts, hist tables (and the
// tables' setup).
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <utility>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>

#include "ioctl_args.hpp"

namespace fhook {

using ioctl_args::user_ptr;
using ioctl_args::zero_init;

// (of a latency probe, which needed FHOOK_FEAT_LATENCY, or a latency tracer)
LatencyHist Session::latency(std::uint32_t probe_id, std::optional<unsigned> cpu) const {
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

void Session::set_wakeup_task_hist(std::uint32_t probe_id, bool per_process,
                                   std::uint32_t entries) {
    device_.require(FHOOK_FEAT_WAKEUP_HIST, "wakeup histograms per task");
    const auto data = [](std::uint16_t offset, std::uint8_t size) {
        fhook_hist_field f;
        zero_init(f);
        f.src = FHOOK_HIST_SRC_DATA;
        f.offset = offset;
        f.size = size;
        f.store = FHOOK_HIST_NO_STORE;
        return f;
    };
    fhook_hist_set arg;
    zero_init(arg);
    arg.probe_id = probe_id;
    arg.entries = entries;
    arg.nr_keys = 2;
    arg.keys[0] = per_process ? data(offsetof(fhook_wakeup_sample, tgid), 4)
                              : data(offsetof(fhook_wakeup_sample, pid), 4);
    arg.keys[1] = data(offsetof(fhook_wakeup_sample, bucket), 4);
    arg.nr_vals = 1;
    arg.vals[0] = data(offsetof(fhook_wakeup_sample, latency), 8);
    arg.flags = FHOOK_HIST_F_COMM;
    set_hist(arg);
}

Session::TaskLatencies Session::task_latencies(std::uint32_t probe_id) const {
    const HistRead read = hist(probe_id);
    // (the key: id and bucket; the hit count, the sums, the name)
    if (read.nr && (read.key_size != 16 ||
                    read.elt_size != 16 + 8 * (1 + FHOOK_HIST_MAX_VALS) + FHOOK_COMM_LEN)) {
        throw_runtime("the per-task wakeup table of probe " + std::to_string(probe_id) +
                      " is not the one set (key " + std::to_string(read.key_size) + " bytes)");
    }
    TaskLatencies out;
    out.drops = read.drops;
    std::map<std::uint32_t, TaskLatency> tasks;
    for (std::uint32_t i = 0; i < read.nr; i++) {
        // the key (id, bucket), the hit count, the latencies' sum; the name last
        const std::uint8_t* e = read.entries.data() + std::size_t{i} * read.elt_size;
        std::uint64_t w[4];
        std::memcpy(w, e, sizeof(w));
        TaskLatency& t = tasks[static_cast<std::uint32_t>(w[0])];
        t.id = static_cast<std::uint32_t>(w[0]);
        if (t.comm.empty()) {
            const char* comm = reinterpret_cast<const char*>(e + read.elt_size - FHOOK_COMM_LEN);
            t.comm.assign(comm, strnlen(comm, FHOOK_COMM_LEN));
        }
        t.hist.buckets[std::min<std::uint64_t>(w[1], t.hist.buckets.size() - 1)] += w[2];
        t.hist.count += w[2];
        t.hist.sum_ns += w[3];
    }
    for (auto& [id, t] : tasks) {
        out.tasks.push_back(std::move(t));
    }
    return out;
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
