// A fake fhook.ko for the tests: a DeviceBackend that answers the ioctls
// of one session from plain data, and a memfd laid out as the device's
// mmap regions (per-CPU ring metadata, consumer page and double-mapped
// data), into which the records the test queues are written at START.
// The trace engine runs on it as on the module, without a kernel.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/device.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/core/latency.hpp>

namespace fhook::test {

class FakeKernel final : public DeviceBackend {
public:
    static constexpr std::uint32_t kCpus = 2;
    static constexpr std::uint64_t kPage = 4096;
    static constexpr std::uint64_t kStride = 1ULL << 20; // per-CPU region of the memfd
    static constexpr std::uint64_t kMaxRing = 64 * 1024; // what RING_SETUP grants at most

    // What the fake module offers (no stats area: its counters come from
    // FHOOK_IOC_STATS only).
    std::uint64_t features = FHOOK_FEAT_FUNC | FHOOK_FEAT_FUNC_IPS | FHOOK_FEAT_PID_FILTER |
                             FHOOK_FEAT_CPU_FILTER | FHOOK_FEAT_RING_MMAP | FHOOK_FEAT_IGNORE_SELF |
                             FHOOK_FEAT_SEQ | FHOOK_FEAT_KPROBE | FHOOK_FEAT_FETCH |
                             FHOOK_FEAT_PRED | FHOOK_FEAT_STACK | FHOOK_FEAT_TRIGGER |
                             FHOOK_FEAT_DIRECT | FHOOK_FEAT_COUNT | FHOOK_FEAT_LATENCY |
                             FHOOK_FEAT_FLUSH | FHOOK_FEAT_COUNT_IPS | FHOOK_FEAT_KHOOK;

    // ---- what the session asked for
    struct Probe {
        fhook_probe_add arg;
        std::string filter, exclude, symbol;
        std::vector<fhook_insn> prog, pred;
        std::vector<std::uint64_t> ips;
        // a call graph's (FHOOK_PROBE_GRAPH): its functions below the graph's
        std::string all_filter;
        std::vector<std::uint64_t> all_ips;
    };
    std::vector<Probe> probes;
    std::vector<pid_t> pids;
    std::uint32_t pid_flags = 0;
    bool started = false, stopped = false;

    // ---- what it answers
    std::vector<fhook_khook_info> khooks; // the ledger FHOOK_IOC_KHOOKS reads
    int probe_add_errno = 0;              // refuse every probe with this errno
    int start_errno = 0;                  // refuse START with this errno
    std::map<std::uint32_t, std::vector<fhook_cpu_stats>> stats; // per probe id, per CPU
    std::map<std::uint32_t, LatencyHist> latency;                // per probe id
    // FHOOK_IOC_COUNTS: per probe id, hits by function address (the
    // probe's ips without an entry read 0)
    std::map<std::uint32_t, std::map<std::uint64_t, std::uint64_t>> function_hits;
    // records each CPU's ring holds once the probes are armed
    std::string records[kCpus];

    FakeKernel() {
        mem_.reset(::memfd_create("fhook-fake", MFD_CLOEXEC));
        if (!mem_ || ::ftruncate(mem_.get(), static_cast<off_t>(kCpus * kStride)) < 0) {
            throw std::runtime_error("memfd for the fake kernel");
        }
    }

    // A Device on this fake (each call a new session's view of it).
    static Device open(const std::shared_ptr<FakeKernel>& kernel) {
        return Device("fake:/dev/fhook", UniqueFd(::dup(kernel->mem_.get())), kernel);
    }

    // `rec` (a complete record, hdr.size set) for `cpu`'s ring, its seq set.
    template <typename T>
    void queue(std::uint16_t cpu, T rec) {
        rec.hdr.seq = seq_[cpu]++;
        records[cpu].append(reinterpret_cast<const char*>(&rec), sizeof(rec));
        records[cpu].resize((records[cpu].size() + 7) & ~std::size_t{7}, '\0');
    }

    int ioctl(unsigned long request, void* arg) noexcept override {
        switch (request) {
        case FHOOK_IOC_HANDSHAKE: {
            auto* hs = static_cast<fhook_handshake*>(arg);
            hs->features = features;
            hs->nr_cpus = kCpus;
            hs->nr_sessions = 1;
            hs->page_size = kPage;
            hs->max_probes = FHOOK_MAX_PROBES;
            std::strcpy(hs->version, "fake");
            return 0;
        }
        case FHOOK_IOC_RING_SETUP:
            return ring_setup(*static_cast<fhook_ring_setup*>(arg));
        case FHOOK_IOC_PROBE_ADD:
            return probe_add(*static_cast<fhook_probe_add*>(arg));
        case FHOOK_IOC_PID_FILTER: {
            const auto* f = static_cast<const fhook_pid_filter*>(arg);
            const auto* p = reinterpret_cast<const std::uint32_t*>(f->pids);
            pids.assign(p, p + f->nr_pids);
            pid_flags = f->flags;
            return 0;
        }
        case FHOOK_IOC_CPU_FILTER:
        case FHOOK_IOC_TRIGGER_ADD:
            return 0;
        case FHOOK_IOC_START:
            if (start_errno) {
                errno = start_errno;
                return -1;
            }
            started = true;
            publish();
            return 0;
        case FHOOK_IOC_STOP:
            stopped = true;
            return 0;
        case FHOOK_IOC_STATS:
            return read_stats(*static_cast<fhook_stats*>(arg));
        case FHOOK_IOC_LATENCY: {
            auto* l = static_cast<fhook_latency*>(arg);
            const LatencyHist h = latency[l->probe_id];
            l->count = h.count;
            l->sum_ns = h.sum_ns;
            l->inflight = h.inflight;
            l->nr_buckets = FHOOK_LAT_BUCKETS;
            std::memcpy(l->buckets, h.buckets.data(), sizeof(l->buckets));
            return 0;
        }
        case FHOOK_IOC_COUNTS:
            return read_counts(*static_cast<fhook_counts*>(arg));
        case FHOOK_IOC_KHOOKS: {
            auto* k = static_cast<fhook_khooks*>(arg);
            if (k->size != sizeof(*k) || k->entry_size != sizeof(fhook_khook_info)) {
                errno = EINVAL;
                return -1;
            }
            auto* out =
                reinterpret_cast<fhook_khook_info*>(static_cast<std::uintptr_t>(k->entries));
            for (std::size_t i = 0; i < khooks.size() && i < k->nr; i++) {
                out[i] = khooks[i];
            }
            k->nr = static_cast<std::uint32_t>(khooks.size());
            return 0;
        }
        default:
            errno = ENOTTY;
            return -1;
        }
    }

private:
    static std::uint64_t base(std::uint32_t cpu) { return cpu * kStride; }

    void pwrite_at(const void* p, std::size_t n, std::uint64_t off) {
        if (::pwrite(mem_.get(), p, n, static_cast<off_t>(off)) != static_cast<ssize_t>(n)) {
            throw std::runtime_error("pwrite to the fake kernel's memfd");
        }
    }

    int ring_setup(fhook_ring_setup& r) {
        ring_size_ = r.buf_size ? std::min<std::uint64_t>(r.buf_size, kMaxRing) : kMaxRing;
        r.buf_size = ring_size_;
        r.watermark = r.watermark ? r.watermark : static_cast<std::uint32_t>(ring_size_ / 4);
        r.nr_cpus = kCpus;
        r.mmap_stride = kStride;
        for (std::uint32_t cpu = 0; cpu < kCpus; cpu++) {
            fhook_ring_meta meta;
            std::memset(&meta, 0, sizeof(meta));
            meta.abi_version = FHOOK_ABI_VERSION;
            meta.cpu = cpu;
            meta.data_size = ring_size_;
            meta.watermark = r.watermark;
            meta.flags = r.flags;
            pwrite_at(&meta, sizeof(meta), base(cpu));
        }
        return 0;
    }

    int probe_add(fhook_probe_add& a) {
        if (probe_add_errno) {
            errno = probe_add_errno;
            return -1;
        }
        Probe p{a, {}, {}, {}, {}, {}, {}, {}, {}};
        auto text = [](std::uint64_t ptr, std::uint32_t len) {
            return ptr ? std::string(reinterpret_cast<const char*>(ptr), len) : std::string();
        };
        p.filter = text(a.filter, a.filter_len);
        p.exclude = text(a.exclude, a.exclude_len);
        p.symbol = text(a.symbol, a.symbol_len);
        const auto* prog = reinterpret_cast<const fhook_insn*>(a.prog);
        p.prog.assign(prog, prog + (a.prog ? a.prog_len : 0));
        const auto* pred = reinterpret_cast<const fhook_insn*>(a.pred);
        p.pred.assign(pred, pred + (a.pred ? a.pred_len : 0));
        const auto* ips = reinterpret_cast<const std::uint64_t*>(a.ips);
        p.ips.assign(ips, ips + (a.ips ? a.nr_ips : 0));
        if (a.type == FHOOK_PROBE_GRAPH && a.hook) {
            const auto& g = *reinterpret_cast<const fhook_graph*>(a.hook);
            p.all_filter = text(g.all_filter, g.all_filter_len);
            const auto* all = reinterpret_cast<const std::uint64_t*>(g.all_ips);
            p.all_ips.assign(all, all + (g.all_ips ? g.nr_all_ips : 0));
        }
        probes.push_back(std::move(p));
        a.probe_id = static_cast<std::uint32_t>(probes.size());
        return 0;
    }

    // The module's answer: sorted, deduplicated addresses; ENOSPC with the
    // number when they do not fit.
    int read_counts(fhook_counts& c) {
        if (c.probe_id == 0 || c.probe_id > probes.size() ||
            !(probes[c.probe_id - 1].arg.flags & FHOOK_PROBE_F_COUNT_IPS)) {
            errno = c.probe_id == 0 || c.probe_id > probes.size() ? ENOENT : EINVAL;
            return -1;
        }
        std::vector<std::uint64_t> ips = probes[c.probe_id - 1].ips;
        std::sort(ips.begin(), ips.end());
        ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
        const bool fits = c.nr >= ips.size();
        c.nr = static_cast<std::uint32_t>(ips.size());
        if (!fits) {
            errno = ENOSPC;
            return -1;
        }
        for (std::size_t i = 0; i < ips.size(); i++) {
            reinterpret_cast<std::uint64_t*>(c.ips)[i] = ips[i];
            reinterpret_cast<std::uint64_t*>(c.counts)[i] = function_hits[c.probe_id][ips[i]];
        }
        return 0;
    }

    // The queued records into each ring (both aliases), then data_head.
    void publish() {
        for (std::uint32_t cpu = 0; cpu < kCpus; cpu++) {
            const std::string& recs = records[cpu];
            if (recs.size() > ring_size_) {
                throw std::runtime_error("the fake ring is too small for the queued records");
            }
            const std::uint64_t data = base(cpu) + FHOOK_MMAP_DATA * kPage;
            pwrite_at(recs.data(), recs.size(), data);
            pwrite_at(recs.data(), recs.size(), data + ring_size_);
            const std::uint64_t head = recs.size(), seq = seq_[cpu];
            pwrite_at(&head, sizeof(head), base(cpu) + offsetof(fhook_ring_meta, data_head));
            pwrite_at(&seq, sizeof(seq), base(cpu) + offsetof(fhook_ring_meta, seq_next));
        }
    }

    int read_stats(fhook_stats& s) {
        auto* out = reinterpret_cast<fhook_cpu_stats*>(s.cpus);
        std::memset(&s.total, 0, sizeof(s.total));
        std::uint32_t n = 0;
        for (std::uint32_t cpu = 0; cpu < kCpus; cpu++) {
            fhook_cpu_stats c{};
            for (const auto& [id, per_cpu] : stats) {
                if ((s.probe_id == FHOOK_STATS_SESSION || s.probe_id == id) &&
                    cpu < per_cpu.size()) {
                    c.hits += per_cpu[cpu].hits;
                    c.written += per_cpu[cpu].written;
                    c.lost += per_cpu[cpu].lost;
                    c.missed += per_cpu[cpu].missed;
                }
            }
            if (out && cpu < s.nr_cpus) {
                out[cpu] = c;
                n++;
            }
            s.total.hits += c.hits;
            s.total.written += c.written;
            s.total.lost += c.lost;
            s.total.missed += c.missed;
        }
        s.nr_cpus = n;
        return 0;
    }

    UniqueFd mem_;
    std::uint64_t ring_size_ = 0;
    std::uint64_t seq_[kCpus] = {};
};

} // namespace fhook::test
