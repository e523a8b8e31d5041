// Reading the per-CPU mmap'd rings of a session.
//
// RingMerger is the device-independent core: it walks rings that are plain
// memory (struct fhook_ring_meta / fhook_ring_cons / double-mapped data), so
// unit tests drive it with fake rings.  RingReader mmaps the real rings of a
// Session, waits with epoll and drains through a RingMerger.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/fd.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {

class Session;
struct RingConfig;

// One CPU's ring as seen in memory.  `data` holds 2 * data_size bytes whose
// second half aliases the first, so a record that wraps is contiguous.
struct RingView {
    int cpu = 0;
    const fhook_ring_meta* meta = nullptr;
    fhook_ring_cons* cons = nullptr;
    const std::byte* data = nullptr;
    std::uint64_t data_size = 0; // power of two
    bool overwrite = false;      // FHOOK_RING_OVERWRITE: producers never wait
};

// The session's counters (struct fhook_stats_area) as seen in memory.
class StatsView {
public:
    StatsView() = default;
    // `area` points to map_size bytes laid out as fhook_stats_area says.
    explicit StatsView(const fhook_stats_area* area);

    explicit operator bool() const noexcept { return area_ != nullptr; }
    std::uint32_t nr_cpus() const noexcept { return area_ ? area_->nr_cpus : 0; }
    // A copy of the counters of probe `id` (1..FHOOK_MAX_PROBES) on `cpu`,
    // each field read once; zero for a CPU or id out of range.
    fhook_probe_counters at(std::uint32_t cpu, std::uint32_t id) const noexcept;
    // Snapshot triggers fired so far (fhook_stats_area.snapshots).
    std::uint64_t snapshots() const noexcept;
    // Are probe `id`'s hits counted outside the area for now (a fast
    // counting or latency probe, fhook_stats_area.hits_elsewhere)?  Then
    // at(...).hits is not all of them: Session::stats() is.
    bool hits_elsewhere(std::uint32_t id) const noexcept;

private:
    const fhook_stats_area* area_ = nullptr;
    const fhook_probe_counters* entries_ = nullptr;
};

// The mapping of a session's stats area.
class StatsArea {
public:
    StatsArea(int fd, std::uint64_t page_size);
    const StatsView& view() const noexcept { return view_; }

private:
    Mapping mapping_;
    StatsView view_;
};

// Receives every record, zero copy: the pointer aims into the ring and is
// valid only during the call (the tail moves past it after the batch).
using RecordCallback = std::function<void(const fhook_rec*)>;

// One CPU's records of a pass: `bytes` exactly as the module wrote them
// (ring order, records of unknown type included), `records` the known ones
// among them that a consumer of the bytes has to look at: all but an FN
// record (FHOOK_REC_FN) with the same function and parent as the CPU's FN
// record before it (most of a trace; one stands for them).  Valid only
// during the call, like a RecordCallback's record.
struct RingSpan {
    int cpu = 0;
    std::span<const std::byte> bytes;
    std::span<const fhook_rec* const> records;
    std::size_t events = 0; // the known records in `bytes`, COMM records not counted
};

// Receives the CPUs' spans of one pass (only the CPUs with records).
using SpanCallback = std::function<void(std::span<const RingSpan>)>;

// Receives a pass's records in time order at once (one call a pass, not a
// record), valid as a RecordCallback's record is.
using BatchCallback = std::function<void(std::span<const fhook_rec* const>)>;

// Validates and appends the records in [tail, head) of `ring` to `out`.
// Records of unknown type are skipped by their size.  A corrupt stream
// (misaligned positions, head - tail > data_size, a size smaller than the
// header or its type's struct, or running past head) throws a Runtime
// Error; the walk always advances, it never spins.
void collect_records(const RingView& ring, std::uint64_t tail, std::uint64_t head,
                     std::vector<const fhook_rec*>& out);

// Orders one reader pass (each CPU's records in ring order, one CPU after
// the other) by timestamp, equal timestamps in pass order.  A CPU's
// stream is out of order only where writers nested: an interrupt's
// records, reserved after the writer it interrupted, are stamped before
// it.  A FHOOK_REC_COMM record shares the stamp of the record it names,
// but the ring's name cache took the name when the space was won, so the
// nested writers' records did not repeat it: the name sorts as early as
// any record after it on its CPU, else those records would come out
// before their task's name.
void order_pass(std::vector<const fhook_rec*>& recs);

class RingMerger {
public:
    // `stats` (optional) gives the per-probe drop counts for
    // report_unreported_lost().
    explicit RingMerger(std::vector<RingView> rings, StatsView stats = {});

    // One pass over all rings: load every data_head (acquire), collect the
    // records from data_tail, stable-sort them by timestamp (ties keep CPU
    // order, then ring order), call `callback` for each, and only then store
    // data_tail = head (release) for every CPU.  Returns the number of
    // records delivered, not counting COMM records (they name tasks, they
    // are no events).  If the callback throws, no tail moves.
    //
    // Overwrite rings are read from max(data_tail, data_oldest) into a
    // private copy, then data_oldest is read again and the records the
    // producers evicted meanwhile are discarded (they count as overwritten),
    // so a torn record is never delivered (ring-protocol.md).
    std::size_t drain(const RecordCallback& callback);
    // ... the pass's records given at once
    std::size_t drain_batch(const BatchCallback& callback);

    // The same pass, unsorted: the records of each CPU as one span of the
    // ring (a consumer that copies bytes, such as `fhook record`, writes
    // them straight from the mapping and merges nothing).
    std::size_t drain_spans(const SpanCallback& callback);

    // Drops are reported in band by the next record that finds room, so the
    // drops after a CPU's last record never get a LOST record.  Once the
    // producers are stopped and drained, this delivers one synthetic LOST
    // record per CPU with drops no LOST record carried: per probe from the
    // stats area when the merger has one (dropped minus the LOST counts
    // seen), else meta->lost_total minus the LOST counts seen.  first_seq
    // and last_seq are kSeqUnknown; the timestamp follows everything
    // delivered so far.  Returns the number of records delivered.
    std::size_t report_unreported_lost(const RecordCallback& callback);

    const std::vector<RingView>& rings() const noexcept { return rings_; }

private:
    using PerProbe = std::array<std::uint64_t, FHOOK_MAX_PROBES + 1>; // [0]: unattributed
    // Collects every ring (records, spans, LOST and sequence accounting);
    // returns the number of records.
    // (`spans`: for drain_spans(), repeated FN records left out of batch_)
    std::size_t collect_pass(bool spans = false);
    // Hands the pass's space back to the producers.
    void release_pass();
    void collect(std::size_t i, bool spans);
    // (kSpans: repeated FN records left out of batch_, see RingSpan)
    template <bool kSpans>
    void take_records(std::size_t i, const RingView& view, std::uint64_t tail, std::uint64_t head);

    std::vector<RingView> rings_;
    StatsView stats_;
    std::vector<std::uint64_t> heads_;
    std::vector<SeqCount> seq_read_;           // next seq to acknowledge
    std::vector<std::uint64_t> last_fn_;       // the last FN record's addresses (fn_addresses())
    std::vector<PerProbe> lost_seen_;          // delivered LOST counts
    std::vector<PerProbe> batch_lost_;         // ... in the batch being delivered
    std::vector<std::vector<std::byte>> copy_; // overwrite rings: private copies
    std::vector<const fhook_rec*> batch_;
    std::vector<RingSpan> spans_;    // per ring, of the pass being delivered
    std::vector<RingSpan> pass_;     // ... those with records
    std::vector<std::size_t> first_; // each ring's first record in batch_
    std::vector<std::byte> synthetic_;
    std::uint64_t last_ts_ = 0;
};

// The rings of a live session.
class RingReader {
public:
    static constexpr int kDefaultTimeoutMs = 100;

    // mmaps meta, consumer page and the double-mapped data of every CPU
    // 0..nr_cpus-1 (a CPU whose mmap fails with ENODEV is skipped) and sets
    // up epoll on the session fd.  The session must outlive the reader.
    RingReader(const Session& session, const RingConfig& config);
    // The same on any fd with that mmap layout (`page_size` 0 = the
    // system's); used by tests with a memfd.
    RingReader(int fd, std::uint64_t page_size, const RingConfig& config, bool map_stats = false);

    // Adds another fd (e.g. a signalfd) to the wait set.
    void watch(int fd);

    struct WaitResult {
        bool ring = false;    // some CPU has >= watermark bytes pending
        bool watched = false; // a watch()ed fd is readable
    };
    // epoll_wait up to `timeout_ms`; on timeout both are false, which is the
    // moment to drain the tail below the watermark anyway.
    WaitResult wait(int timeout_ms = kDefaultTimeoutMs);

    std::size_t drain(const RecordCallback& callback) { return merger_.drain(callback); }
    std::size_t drain_spans(const SpanCallback& callback) { return merger_.drain_spans(callback); }
    std::size_t drain_batch(const BatchCallback& callback) { return merger_.drain_batch(callback); }
    // After Session::stop(): drain everything, then report the drops that no
    // LOST record carried (see RingMerger::report_unreported_lost).
    std::size_t drain_final(const RecordCallback& callback) {
        std::size_t n = merger_.drain(callback);
        return n + merger_.report_unreported_lost(callback);
    }
    // The same with the pass as spans (the synthetic LOST records still
    // come one by one).
    std::size_t drain_final(const SpanCallback& spans, const RecordCallback& callback) {
        std::size_t n = merger_.drain_spans(spans);
        return n + merger_.report_unreported_lost(callback);
    }
    // ... and with the pass's records at once
    std::size_t drain_final(const BatchCallback& batch, const RecordCallback& callback) {
        std::size_t n = merger_.drain_batch(batch);
        return n + merger_.report_unreported_lost(callback);
    }
    std::size_t nr_rings() const noexcept { return merger_.rings().size(); }
    // The session's counters; empty for a module without FHOOK_FEAT_STATS_MMAP
    // and for the fd constructor.
    StatsView stats() const noexcept { return stats_ ? stats_->view() : StatsView(); }

private:
    std::vector<Mapping> mappings_;
    std::optional<StatsArea> stats_;
    RingMerger merger_;
    UniqueFd epoll_;
    int session_fd_;
};

} // namespace fhook
