#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/ring.hpp>

namespace fhook {

namespace {

[[noreturn]] void corrupt(const RingView& ring, std::uint64_t pos, const std::string& what) {
    throw_runtime("ring of CPU " + std::to_string(ring.cpu) + " is corrupt at byte " +
                      std::to_string(pos) + ": " + what +
                      ": this is a bug in fhook.ko, please report it with dmesg",
                  EBADMSG);
}

constexpr std::uint64_t align8(std::uint64_t n) {
    return (n + 7) & ~std::uint64_t{7};
}

std::uint64_t load_acquire(const std::uint64_t& v) {
    return __atomic_load_n(&v, __ATOMIC_ACQUIRE);
}

std::uint64_t load_relaxed(const std::uint64_t& v) {
    return __atomic_load_n(&v, __ATOMIC_RELAXED);
}

} // namespace

namespace {

// a record's size (low half) and type (high half)
std::uint32_t size_and_type(const fhook_rec* rec) {
    static_assert(std::endian::native == std::endian::little);
    std::uint32_t word;
    std::memcpy(&word, rec, sizeof(word));
    return word;
}

// collect_records()'s walk: `fn(rec)` for an FN record of its own size
// (most records, tested first), `other(rec)` for a record of any other
// known type (FHOOK_REC_FN_KPROBE too).
template <typename Fn, typename Other>
[[gnu::always_inline]] inline void walk_records(const RingView& ring, std::uint64_t tail,
                                                std::uint64_t head, Fn&& fn, Other&& other) {
    const std::uint64_t size = ring.data_size;
    if (head < tail || head - tail > size) {
        corrupt(ring, tail,
                "head " + std::to_string(head) + " is not within " + std::to_string(size) +
                    " bytes after tail " + std::to_string(tail));
    }
    if ((head | tail) & 7) {
        corrupt(ring, tail,
                "head " + std::to_string(head) + " or tail " + std::to_string(tail) +
                    " is not 8-byte aligned");
    }
    const std::byte* const data = ring.data;
    const std::uint64_t mask = size - 1;
    std::uint64_t pos = tail;
    while (pos < head) {
        const std::uint64_t avail = head - pos;
        if (avail < sizeof(fhook_rec)) {
            corrupt(ring, pos, "truncated record header");
        }
        const auto* rec = reinterpret_cast<const fhook_rec*>(data + (pos & mask));
        // (most records: runs of function entries of their own size, which
        // is the header's, so there is room; size and type as one word)
        static_assert(sizeof(fhook_rec_fn) == sizeof(fhook_rec) && offsetof(fhook_rec, size) == 0 &&
                      offsetof(fhook_rec, type) == 2);
        constexpr std::uint32_t kFnWord = sizeof(fhook_rec_fn) | std::uint32_t{FHOOK_REC_FN} << 16;
        if (size_and_type(rec) == kFnWord) {
            do {
                fn(rec);
                pos += sizeof(fhook_rec_fn);
                if (head - pos < sizeof(fhook_rec_fn)) {
                    break; // (the end, or a truncated header: the test above)
                }
                rec = reinterpret_cast<const fhook_rec*>(data + (pos & mask));
            } while (size_and_type(rec) == kFnWord);
            continue;
        }
        const std::uint64_t rsize = rec->size;
        if (rsize < sizeof(fhook_rec)) {
            corrupt(ring, pos,
                    "record size " + std::to_string(rsize) + " is below the header size");
        }
        if (rsize > avail) {
            corrupt(ring, pos, "record of " + std::to_string(rsize) + " bytes runs past the head");
        }
        const std::size_t need = record_min_size(rec);
        const bool known = rec->type == FHOOK_REC_LOST || need != 0;
        if (known) {
            if (need == 0 || rsize < need) {
                corrupt(ring, pos,
                        "record of type " + std::to_string(rec->type) + " has " +
                            std::to_string(rsize) + " bytes, needs " + std::to_string(need));
            }
            other(rec);
        }
        pos += align8(rsize);
    }
}

} // namespace

void collect_records(const RingView& ring, std::uint64_t tail, std::uint64_t head,
                     std::vector<const fhook_rec*>& out) {
    const auto keep = [&out](const fhook_rec* rec) { out.push_back(rec); };
    walk_records(ring, tail, head, keep, keep);
}

StatsView::StatsView(const fhook_stats_area* area)
    : area_(area), entries_(reinterpret_cast<const fhook_probe_counters*>(
                       reinterpret_cast<const std::byte*>(area) + area->entries_offset)) {}

std::uint64_t StatsView::snapshots() const noexcept {
    return area_ ? load_acquire(area_->snapshots) : 0;
}

bool StatsView::hits_elsewhere(std::uint32_t id) const noexcept {
    if (area_ == nullptr || id == 0 || id > FHOOK_MAX_PROBES) {
        return false;
    }
    return (load_acquire(area_->hits_elsewhere) >> (id - 1)) & 1;
}

fhook_probe_counters StatsView::at(std::uint32_t cpu, std::uint32_t id) const noexcept {
    fhook_probe_counters out{};
    if (area_ == nullptr || cpu >= area_->nr_cpus || id == 0 || id > area_->max_probes) {
        return out;
    }
    const fhook_probe_counters& c =
        entries_[static_cast<std::size_t>(cpu) * area_->max_probes + (id - 1)];
    out.hits = load_relaxed(c.hits);
    out.written = load_relaxed(c.written);
    out.dropped = load_relaxed(c.dropped);
    out.overwritten = load_relaxed(c.overwritten);
    out.filtered = load_relaxed(c.filtered);
    out.missed = load_relaxed(c.missed);
    out.frozen = load_relaxed(c.frozen);
    return out;
}

StatsArea::StatsArea(int fd, std::uint64_t page_size) {
    const auto offset = static_cast<off_t>(FHOOK_MMAP_STATS_REGION * FHOOK_MMAP_STRIDE);
    // The header says how big the whole area is.
    Mapping head = Mapping::map_shared(fd, page_size, PROT_READ, offset, "stats area header");
    const auto* area = static_cast<const fhook_stats_area*>(head.data());
    const std::uint64_t size = area->map_size;
    if (area->entry_size != sizeof(fhook_probe_counters) || area->max_probes != FHOOK_MAX_PROBES ||
        area->entries_offset < sizeof(fhook_stats_area) || size % page_size != 0 ||
        area->entries_offset +
                std::uint64_t{area->nr_cpus} * area->max_probes * sizeof(fhook_probe_counters) >
            size) {
        throw_runtime("the stats area of fhook.ko has an unexpected layout: check that fhook and "
                      "fhook.ko come from the same build",
                      EINVAL);
    }
    head.reset();
    mapping_ = Mapping::map_shared(fd, size, PROT_READ, offset, "stats area");
    view_ = StatsView(static_cast<const fhook_stats_area*>(mapping_.data()));
}

void order_pass(std::vector<const fhook_rec*>& recs) {
    const auto by_ts = [](const fhook_rec* a, const fhook_rec* b) { return a->ts < b->ts; };
    // (a pass from one CPU is usually in order already: no sort then)
    if (std::is_sorted(recs.begin(), recs.end(), by_ts)) {
        return;
    }
    // backwards: the earliest stamp after each record on its CPU, and
    // whether a name is stamped after a record that follows it
    std::vector<std::pair<std::size_t, __u64>> early_names; // (index, key), last first
    __u64 after = UINT64_MAX;
    for (std::size_t i = recs.size(); i-- > 0;) {
        const fhook_rec* rec = recs[i];
        if (i + 1 < recs.size() && recs[i + 1]->cpu != rec->cpu) {
            after = UINT64_MAX;
        }
        if (rec->type == FHOOK_REC_COMM && after < rec->ts) {
            early_names.emplace_back(i, after);
        }
        after = std::min(after, rec->ts);
    }
    if (early_names.empty()) {
        std::stable_sort(recs.begin(), recs.end(), by_ts);
        return;
    }
    struct Keyed {
        __u64 key;
        const fhook_rec* rec;
    };
    std::vector<Keyed> keyed(recs.size());
    for (std::size_t i = 0; i < recs.size(); i++) {
        keyed[i] = {recs[i]->ts, recs[i]};
    }
    for (const auto& [i, key] : early_names) {
        keyed[i].key = key;
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
    for (std::size_t i = 0; i < recs.size(); i++) {
        recs[i] = keyed[i].rec;
    }
}

RingMerger::RingMerger(std::vector<RingView> rings, StatsView stats)
    : rings_(std::move(rings)), stats_(stats) {
    for (const auto& ring : rings_) {
        if (ring.meta == nullptr || ring.cons == nullptr || ring.data == nullptr ||
            ring.data_size < sizeof(fhook_rec) || (ring.data_size & (ring.data_size - 1)) != 0) {
            throw_runtime("ring of CPU " + std::to_string(ring.cpu) + " has an invalid layout (" +
                              std::to_string(ring.data_size) +
                              " data bytes): check that fhook and fhook.ko come from the same "
                              "build",
                          EINVAL);
        }
    }
    heads_.resize(rings_.size());
    seq_read_.resize(rings_.size());
    last_fn_.resize(rings_.size());
    lost_seen_.resize(rings_.size(), PerProbe{});
    batch_lost_.resize(rings_.size(), PerProbe{});
    copy_.resize(rings_.size());
    spans_.resize(rings_.size());
    for (std::size_t i = 0; i < rings_.size(); i++) {
        spans_[i].cpu = rings_[i].cpu;
    }
}

// Appends the records in [tail, head) of ring i (`view`: it or its copy)
// to batch_, counting their numbers, LOST records and names as it goes.
template <bool kSpans>
void RingMerger::take_records(std::size_t i, const RingView& view, std::uint64_t tail,
                              std::uint64_t head) {
    // (room for the most records [tail, head) can hold, each with a
    // header; the walk throws if the range is not within the ring)
    const std::uint64_t bytes = head >= tail ? std::min(head - tail, view.data_size) : 0;
    const std::size_t need = batch_.size() + bytes / sizeof(fhook_rec);
    if (batch_.capacity() < need) {
        batch_.reserve(std::max(need, 2 * batch_.capacity()));
    }
    SeqCount seq = seq_read_[i]; // (kept as it was if the walk throws)
    std::uint32_t fns = 0;       // FN records not yet counted in seq
    PerProbe& lost_of = batch_lost_[i];
    std::uint64_t last_ts = last_ts_;
    std::uint64_t last_fn = last_fn_[i];
    std::size_t names = 0, repeats = 0;
    const std::size_t first = batch_.size();
    walk_records(
        view, tail, head,
        [&](const fhook_rec* rec) {
            if constexpr (kSpans) {
                const std::uint64_t fn = fn_addresses(reinterpret_cast<const fhook_rec_fn*>(rec));
                if (fn == last_fn) {
                    repeats++;
                } else {
                    batch_.push_back(rec);
                    last_fn = fn;
                }
            } else {
                batch_.push_back(rec);
            }
            fns++;
            // (a CPU's stream is time ordered but for nested writers)
            last_ts = std::max<std::uint64_t>(last_ts, rec->ts);
        },
        [&](const fhook_rec* rec) {
            // (an FN_KPROBE record too: counted as FN records are, never
            // left out of a span, its fields are its own)
            batch_.push_back(rec);
            seq.take_fns(fns);
            fns = 0;
            seq.take(rec);
            if (rec->type == FHOOK_REC_LOST) {
                const auto* lost = reinterpret_cast<const fhook_rec_lost*>(rec);
                std::uint64_t attributed = 0;
                for (std::uint32_t p = 0; p < lost->nr_probes; p++) {
                    const std::uint32_t id = lost->probes[p].probe_id;
                    if (id >= 1 && id <= FHOOK_MAX_PROBES) {
                        lost_of[id] += lost->probes[p].count;
                        attributed += lost->probes[p].count;
                    }
                }
                lost_of[0] += lost->lost - std::min<std::uint64_t>(lost->lost, attributed);
            } else if (rec->type == FHOOK_REC_COMM) {
                names++;
            }
            last_ts = std::max<std::uint64_t>(last_ts, rec->ts);
        });
    seq.take_fns(fns);
    seq_read_[i] = seq;
    last_ts_ = last_ts;
    last_fn_[i] = kSpans ? last_fn : 0; // (0: none, for a span pass after this one)
    spans_[i].events = batch_.size() - first + repeats - names;
}

// Appends ring i's pending records to batch_ (take_records()) and sets
// heads_[i] and spans_[i].bytes.
void RingMerger::collect(std::size_t i, bool spans) {
    const RingView& ring = rings_[i];
    const std::uint64_t tail = load_relaxed(ring.cons->data_tail);
    spans_[i].bytes = {};
    if (!ring.overwrite) {
        const std::uint64_t head = load_acquire(ring.meta->data_head);
        heads_[i] = head;
        spans ? take_records<true>(i, ring, tail, head) : take_records<false>(i, ring, tail, head);
        // contiguous through the alias of the double mapping
        spans_[i].bytes = {ring.data + (tail & (ring.data_size - 1)), head - tail};
        return;
    }
    // Overwrite ring: data_oldest first (it never passes data_head), then
    // copy [start, head), then drop what was evicted while copying.  The
    // acquire fence (F) pairs with the producer's smp_wmb() between
    // advancing data_oldest and writing (E).
    heads_[i] = tail;
    for (int attempt = 0; attempt < 4; attempt++) {
        const std::uint64_t oldest = load_relaxed(ring.meta->data_oldest);
        const std::uint64_t head = load_acquire(ring.meta->data_head);
        const std::uint64_t start = std::max(tail, oldest);
        if (head < start || head - start > ring.data_size) {
            continue; // lapped between the two loads: look again
        }
        std::vector<std::byte>& buf = copy_[i];
        buf.resize(head - start);
        std::memcpy(buf.data(), ring.data + (start & (ring.data_size - 1)), head - start);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        const std::uint64_t valid = load_relaxed(ring.meta->data_oldest);
        heads_[i] = head;
        if (valid >= head) {
            return; // all of it evicted while we copied (counted as overwritten)
        }
        // data_oldest is a record boundary: walk from there, never from
        // bytes that new records may have overwritten out of alignment.
        const std::uint64_t from = std::max(start, valid);
        RingView copy = ring;
        copy.data = buf.data();
        spans ? take_records<true>(i, copy, from - start, head - start)
              : take_records<false>(i, copy, from - start, head - start);
        spans_[i].bytes = {buf.data() + (from - start), head - from};
        return;
    }
    // the producers lapped the ring on every attempt: try on the next pass
}

std::size_t RingMerger::collect_pass(bool spans) {
    batch_.clear();
    std::vector<std::size_t>& first = first_;
    first.resize(rings_.size() + 1);
    for (std::size_t i = 0; i < rings_.size(); i++) {
        first[i] = batch_.size();
        batch_lost_[i].fill(0);
        spans_[i].events = 0;
        collect(i, spans);
    }
    first[rings_.size()] = batch_.size();
    // batch_ is complete (no more reallocation): the spans' records
    std::size_t events = 0;
    for (std::size_t i = 0; i < rings_.size(); i++) {
        spans_[i].records = {batch_.data() + first[i], first[i + 1] - first[i]};
        events += spans_[i].events;
    }
    return events;
}

void RingMerger::release_pass() {
    // Only now may the producer reuse the space.
    for (std::size_t i = 0; i < rings_.size(); i++) {
        __atomic_store_n(&rings_[i].cons->seq_read, std::uint64_t{seq_read_[i].next()},
                         __ATOMIC_RELAXED);
        __atomic_store_n(&rings_[i].cons->data_tail, heads_[i], __ATOMIC_RELEASE);
        for (std::size_t p = 0; p < lost_seen_[i].size(); p++) {
            lost_seen_[i][p] += batch_lost_[i][p];
        }
    }
}

std::size_t RingMerger::drain(const RecordCallback& callback) {
    const std::size_t n = collect_pass();
    order_pass(batch_);
    for (const fhook_rec* rec : batch_) {
        callback(rec);
    }
    release_pass();
    return n;
}

std::size_t RingMerger::drain_batch(const BatchCallback& callback) {
    const std::size_t n = collect_pass();
    order_pass(batch_);
    if (!batch_.empty()) {
        callback(batch_);
    }
    release_pass();
    return n;
}

std::size_t RingMerger::drain_spans(const SpanCallback& callback) {
    const std::size_t n = collect_pass(true);
    pass_.clear();
    for (const RingSpan& span : spans_) {
        if (!span.bytes.empty()) {
            pass_.push_back(span);
        }
    }
    if (!pass_.empty()) {
        callback(pass_);
    }
    release_pass();
    return n;
}

std::size_t RingMerger::report_unreported_lost(const RecordCallback& callback) {
    std::size_t delivered = 0;
    for (std::size_t i = 0; i < rings_.size(); i++) {
        const RingView& ring = rings_[i];
        std::vector<fhook_lost_probe> entries;
        std::uint64_t total = 0;
        if (stats_) {
            for (std::uint32_t id = 1; id <= FHOOK_MAX_PROBES; id++) {
                const std::uint64_t dropped =
                    stats_.at(static_cast<std::uint32_t>(ring.cpu), id).dropped;
                if (dropped > lost_seen_[i][id]) {
                    const std::uint64_t n = dropped - lost_seen_[i][id];
                    entries.push_back(fhook_lost_probe{id, 0, n});
                    lost_seen_[i][id] = dropped;
                    total += n;
                }
            }
        } else {
            std::uint64_t seen = 0;
            for (std::uint64_t v : lost_seen_[i]) {
                seen += v;
            }
            const std::uint64_t all = load_relaxed(ring.meta->lost_total);
            if (all > seen) {
                total = all - seen;
                lost_seen_[i][0] += total;
            }
        }
        if (total == 0) {
            continue;
        }
        synthetic_.assign(sizeof(fhook_rec_lost) + entries.size() * sizeof(fhook_lost_probe),
                          std::byte{0});
        auto* rec = reinterpret_cast<fhook_rec_lost*>(synthetic_.data());
        rec->hdr.size = static_cast<std::uint16_t>(synthetic_.size());
        rec->hdr.type = FHOOK_REC_LOST;
        rec->hdr.ts = last_ts_;
        rec->hdr.cpu = static_cast<std::uint16_t>(ring.cpu);
        rec->lost = total;
        rec->first_seq = kSeqUnknown;
        rec->last_seq = kSeqUnknown;
        rec->nr_probes = static_cast<std::uint32_t>(entries.size());
        if (!entries.empty()) {
            std::memcpy(rec->probes, entries.data(), entries.size() * sizeof(fhook_lost_probe));
        }
        callback(&rec->hdr);
        delivered++;
    }
    return delivered;
}

namespace {

std::vector<RingView> map_rings(int fd, std::uint64_t page_size, const RingConfig& config,
                                std::vector<Mapping>& mappings) {
    const std::uint64_t page =
        page_size != 0 ? page_size : static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t stride = config.mmap_stride != 0 ? config.mmap_stride : FHOOK_MMAP_STRIDE;
    std::vector<RingView> views;
    for (std::uint32_t cpu = 0; cpu < config.nr_cpus; cpu++) {
        const auto base = static_cast<off_t>(cpu * stride);
        Mapping meta;
        try {
            meta = Mapping::map_shared(fd, page, PROT_READ, base, "ring metadata");
        } catch (const Error& e) {
            if (e.sys_errno() == ENODEV) {
                continue; // CPU not possible: no ring
            }
            throw;
        }
        Mapping cons = Mapping::map_shared(fd, page, PROT_READ | PROT_WRITE,
                                           base + static_cast<off_t>(FHOOK_MMAP_CONS * page),
                                           "ring consumer page");
        Mapping data =
            Mapping::map_shared(fd, 2 * config.buf_size, PROT_READ,
                                base + static_cast<off_t>(FHOOK_MMAP_DATA * page), "ring data");
        RingView view;
        view.cpu = static_cast<int>(cpu);
        view.overwrite = (config.flags & FHOOK_RING_OVERWRITE) != 0;
        view.meta = static_cast<const fhook_ring_meta*>(meta.data());
        view.cons = static_cast<fhook_ring_cons*>(cons.data());
        view.data = static_cast<const std::byte*>(data.data());
        view.data_size = config.buf_size;
        if (view.meta->data_size != config.buf_size) {
            throw_runtime("ring of CPU " + std::to_string(cpu) + " reports " +
                              std::to_string(view.meta->data_size) + " data bytes, expected " +
                              std::to_string(config.buf_size) +
                              ": check that fhook and fhook.ko come from the same build",
                          EINVAL);
        }
        views.push_back(view);
        mappings.push_back(std::move(meta));
        mappings.push_back(std::move(cons));
        mappings.push_back(std::move(data));
    }
    if (views.empty()) {
        throw_runtime("the session has no ring to map: set up the ring before reading it", ENODEV);
    }
    return views;
}

} // namespace

RingReader::RingReader(const Session& session, const RingConfig& config)
    : RingReader(session.fd(), session.device().info().page_size, config,
                 session.device().has(FHOOK_FEAT_STATS_MMAP)) {}

namespace {

std::optional<StatsArea> map_stats(int fd, std::uint64_t page_size, bool wanted) {
    if (!wanted) {
        return std::nullopt;
    }
    return StatsArea(fd, page_size != 0 ? page_size
                                        : static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
}

} // namespace

RingReader::RingReader(int fd, std::uint64_t page_size, const RingConfig& config,
                       bool map_stats_area)
    : stats_(map_stats(fd, page_size, map_stats_area)),
      merger_(map_rings(fd, page_size, config, mappings_), stats_ ? stats_->view() : StatsView()),
      session_fd_(fd) {
    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) {
        int err = errno;
        throw_runtime("epoll_create1 failed: " + errno_text(err) + ": raise the fd limits", err);
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = session_fd_;
    // A module without poll support (EPERM) still works: wait() then just
    // times out and the caller drains anyway.
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, session_fd_, &ev) < 0 && errno != EPERM) {
        int err = errno;
        throw_runtime("cannot poll the fhook session: " + errno_text(err) +
                          ": check that fhook and fhook.ko come from the same build",
                      err);
    }
}

void RingReader::watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) < 0) {
        int err = errno;
        throw_runtime("cannot poll fd " + std::to_string(fd) + ": " + errno_text(err), err);
    }
}

RingReader::WaitResult RingReader::wait(int timeout_ms) {
    WaitResult result;
    epoll_event events[8];
    int n = ::epoll_wait(epoll_.get(), events, 8, timeout_ms);
    if (n < 0) {
        if (errno == EINTR) {
            return result;
        }
        int err = errno;
        throw_runtime("epoll_wait failed: " + errno_text(err), err);
    }
    for (int i = 0; i < n; i++) {
        if (events[i].data.fd == session_fd_) {
            result.ring = true;
        } else {
            result.watched = true;
        }
    }
    return result;
}

} // namespace fhook
