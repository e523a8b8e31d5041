// Helpers that build ring records and fake rings in plain memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fhook_abi.h>

#include <fhook/ring/ring.hpp>

namespace fhook::test {

inline fhook_rec header(std::uint16_t type, std::uint16_t size, std::uint64_t ts, std::uint16_t cpu,
                        std::uint32_t pid = 100) {
    fhook_rec h;
    std::memset(&h, 0, sizeof(h));
    h.size = size;
    h.type = type;
    h.probe_id = 1;
    h.ts = ts;
    h.pid = pid;
    h.tgid = pid;
    h.cpu = cpu;
    return h;
}

// The name of task `pid` (records carry none), as the module writes it
// before the task's first record on a CPU.
inline fhook_rec_comm comm_rec(std::uint32_t pid, const char* comm, std::uint16_t cpu = 0) {
    fhook_rec_comm r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = header(FHOOK_REC_COMM, sizeof(r), 0, cpu, pid);
    r.hdr.probe_id = 0;
    std::memcpy(r.comm, comm, std::min(std::strlen(comm), sizeof(r.comm)));
    return r;
}

inline fhook_rec_func func_rec(std::uint64_t ts, std::uint16_t cpu, std::uint64_t ip = 0x1000,
                               std::uint64_t parent_ip = 0x2000, std::uint32_t pid = 100) {
    fhook_rec_func r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = header(FHOOK_REC_FUNC, sizeof(r), ts, cpu, pid);
    r.ip = ip;
    r.parent_ip = parent_ip;
    return r;
}

// A function entry as the module's recorder of the common case writes it
// (FHOOK_REC_FN): addresses sign-extended from 32 bits, the context raw.
inline fhook_rec_fn fn_rec(std::uint64_t ts, std::uint16_t cpu,
                           std::uint64_t ip = 0xffffffff81001000,
                           std::uint64_t parent_ip = 0xffffffff81002000, std::uint32_t pid = 100,
                           std::uint32_t ctx = 0) {
    fhook_rec_fn r;
    std::memset(&r, 0, sizeof(r));
    r.size = sizeof(r);
    r.type = FHOOK_REC_FN;
    r.ip = static_cast<std::int32_t>(ip);
    r.ts = ts;
    r.pid = pid;
    r.ctx = ctx;
    r.cpu = cpu;
    r.probe_id = 1;
    r.parent_ip = static_cast<std::int32_t>(parent_ip);
    return r;
}

// A record of any size, built in 8-byte words (rec(): its header).
struct RecBuf {
    std::vector<std::uint64_t> words;
    const fhook_rec* rec() const { return reinterpret_cast<const fhook_rec*>(words.data()); }
    fhook_rec* rec() { return reinterpret_cast<fhook_rec*>(words.data()); }
    std::size_t size() const { return rec()->size; }
};

// A kprobe hit at a function's entry as the module's recorder of the
// common case writes it (FHOOK_REC_FN_KPROBE): an FN record, parent_ip
// the caller, then the probe's fields.
inline RecBuf fn_kprobe_rec(std::uint64_t ts, std::uint16_t cpu, std::uint64_t ip,
                            std::uint64_t parent_ip, const std::vector<std::uint64_t>& fields,
                            std::uint32_t pid = 100, std::uint32_t ctx = 0) {
    fhook_rec_fn r = fn_rec(ts, cpu, ip, parent_ip, pid, ctx);
    r.type = FHOOK_REC_FN_KPROBE;
    r.size = static_cast<std::uint16_t>(sizeof(r) + 8 * fields.size());
    RecBuf b{std::vector<std::uint64_t>(sizeof(r) / 8 + fields.size())};
    std::memcpy(b.words.data(), &r, sizeof(r));
    std::copy(fields.begin(), fields.end(), b.words.begin() + sizeof(r) / 8);
    return b;
}

// The FHOOK_REC_KPROBE record of a hit: `fields` after its header.
inline RecBuf kprobe_rec(std::uint64_t ts, std::uint16_t cpu, std::uint64_t ip,
                         const std::vector<std::uint64_t>& fields, std::uint32_t pid = 100) {
    fhook_rec_probe r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = header(FHOOK_REC_KPROBE, static_cast<std::uint16_t>(sizeof(r) + 8 * fields.size()), ts,
                   cpu, pid);
    r.ip = ip;
    RecBuf b{std::vector<std::uint64_t>(sizeof(r) / 8 + fields.size())};
    std::memcpy(b.words.data(), &r, sizeof(r));
    std::copy(fields.begin(), fields.end(), b.words.begin() + sizeof(r) / 8);
    return b;
}

inline fhook_rec_lost lost_rec(std::uint64_t ts, std::uint16_t cpu, std::uint64_t lost) {
    fhook_rec_lost r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = header(FHOOK_REC_LOST, sizeof(r), ts, cpu);
    r.lost = lost;
    return r;
}

// A ring in plain memory.  The data area is 2 * size bytes and the second
// half mirrors the first, as the kernel's double mapping does.
class FakeRing {
public:
    FakeRing(int cpu, std::uint64_t size, std::uint64_t start = 0)
        : cpu_(cpu), size_(size), storage_(2 * size / 8, 0), pos_(start) {
        std::memset(&meta_, 0, sizeof(meta_));
        meta_.abi_version = FHOOK_ABI_VERSION;
        meta_.cpu = static_cast<std::uint32_t>(cpu);
        meta_.data_size = size;
        meta_.data_head = start;
        cons_.data_tail = start;
    }

    // Writes `len` bytes at the producer position (wrapping) and advances it
    // by ALIGN(len, 8).  Not visible until publish().
    void write(const void* bytes, std::size_t len) {
        auto* data = reinterpret_cast<unsigned char*>(storage_.data());
        const auto* src = static_cast<const unsigned char*>(bytes);
        for (std::size_t i = 0; i < len; i++) {
            data[(pos_ + i) % size_] = src[i];
        }
        std::memcpy(data + size_, data, size_); // the alias
        pos_ += (len + 7) & ~std::size_t{7};
    }
    template <typename T>
    void push(const T& rec) {
        write(&rec, sizeof(rec));
    }
    void push(const RecBuf& rec) { write(rec.rec(), rec.size()); }
    void publish() { meta_.data_head = pos_; }

    RingView view() {
        RingView v;
        v.cpu = cpu_;
        v.meta = &meta_;
        v.cons = &cons_;
        v.data = reinterpret_cast<const std::byte*>(storage_.data());
        v.data_size = size_;
        return v;
    }
    fhook_ring_meta& meta() { return meta_; }
    fhook_ring_cons& cons() { return cons_; }
    std::uint64_t tail() const { return cons_.data_tail; }
    std::uint64_t pos() const { return pos_; }

private:
    int cpu_;
    std::uint64_t size_;
    std::vector<std::uint64_t> storage_;
    std::uint64_t pos_;
    fhook_ring_meta meta_;
    fhook_ring_cons cons_{};
};

// A stats area (struct fhook_stats_area) in plain memory.
class FakeStats {
public:
    explicit FakeStats(std::uint32_t nr_cpus)
        : storage_((4096 + nr_cpus * FHOOK_MAX_PROBES * sizeof(fhook_probe_counters)) / 8, 0) {
        auto* a = area();
        a->abi_version = FHOOK_ABI_VERSION;
        a->nr_cpus = nr_cpus;
        a->max_probes = FHOOK_MAX_PROBES;
        a->entry_size = sizeof(fhook_probe_counters);
        a->entries_offset = 4096;
        a->map_size = storage_.size() * 8;
    }
    fhook_probe_counters& at(std::uint32_t cpu, std::uint32_t id) {
        auto* base = reinterpret_cast<fhook_probe_counters*>(
            reinterpret_cast<unsigned char*>(storage_.data()) + 4096);
        return base[cpu * FHOOK_MAX_PROBES + id - 1];
    }
    StatsView view() { return StatsView(area()); }
    void set_hits_elsewhere(std::uint64_t mask) { area()->hits_elsewhere = mask; }

private:
    fhook_stats_area* area() { return reinterpret_cast<fhook_stats_area*>(storage_.data()); }
    std::vector<std::uint64_t> storage_;
};

} // namespace fhook::test
