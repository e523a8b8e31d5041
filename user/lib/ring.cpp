#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <fhook/error.hpp>
#include <fhook/ring.hpp>
#include <fhook/session.hpp>

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

std::size_t min_size_of(std::uint16_t type) {
    switch (type) {
    case FHOOK_REC_LOST:
        return sizeof(fhook_rec_lost);
    case FHOOK_REC_FUNC:
        return sizeof(fhook_rec_func);
    default:
        return 0; // unknown: skipped
    }
}

} // namespace

void collect_records(const RingView& ring, std::uint64_t tail, std::uint64_t head,
                     std::vector<const fhook_rec*>& out) {
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
    std::uint64_t pos = tail;
    while (pos < head) {
        const std::uint64_t avail = head - pos;
        if (avail < sizeof(fhook_rec)) {
            corrupt(ring, pos, "truncated record header");
        }
        const auto* rec = reinterpret_cast<const fhook_rec*>(ring.data + (pos & (size - 1)));
        const std::uint64_t rsize = rec->size;
        if (rsize < sizeof(fhook_rec)) {
            corrupt(ring, pos,
                    "record size " + std::to_string(rsize) + " is below the header size");
        }
        if (rsize > avail) {
            corrupt(ring, pos, "record of " + std::to_string(rsize) + " bytes runs past the head");
        }
        const std::size_t need = min_size_of(rec->type);
        if (need != 0) {
            if (rsize < need) {
                corrupt(ring, pos,
                        "record of type " + std::to_string(rec->type) + " has " +
                            std::to_string(rsize) + " bytes, needs " + std::to_string(need));
            }
            out.push_back(rec);
        }
        pos += align8(rsize);
    }
}

RingMerger::RingMerger(std::vector<RingView> rings) : rings_(std::move(rings)) {
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
    lost_seen_.resize(rings_.size());
    batch_lost_.resize(rings_.size());
}

std::size_t RingMerger::drain(const RecordCallback& callback) {
    batch_.clear();
    for (std::size_t i = 0; i < rings_.size(); i++) {
        const RingView& ring = rings_[i];
        const std::uint64_t head = __atomic_load_n(&ring.meta->data_head, __ATOMIC_ACQUIRE);
        const std::uint64_t tail = __atomic_load_n(&ring.cons->data_tail, __ATOMIC_RELAXED);
        const std::size_t first = batch_.size();
        collect_records(ring, tail, head, batch_);
        heads_[i] = head;
        batch_lost_[i] = 0;
        for (std::size_t r = first; r < batch_.size(); r++) {
            if (batch_[r]->type == FHOOK_REC_LOST) {
                batch_lost_[i] += reinterpret_cast<const fhook_rec_lost*>(batch_[r])->lost;
            }
        }
    }
    // Each CPU's stream is (almost) time ordered and the CPUs were collected in
    // order, so a stable sort yields one stream ordered by timestamp with
    // equal timestamps in CPU order.
    std::stable_sort(batch_.begin(), batch_.end(),
                     [](const fhook_rec* a, const fhook_rec* b) { return a->ts < b->ts; });
    for (const fhook_rec* rec : batch_) {
        callback(rec);
    }
    if (!batch_.empty()) {
        last_ts_ = std::max<std::uint64_t>(last_ts_, batch_.back()->ts);
    }
    // Only now may the producer reuse the space.
    for (std::size_t i = 0; i < rings_.size(); i++) {
        __atomic_store_n(&rings_[i].cons->data_tail, heads_[i], __ATOMIC_RELEASE);
        lost_seen_[i] += batch_lost_[i];
    }
    return batch_.size();
}

std::size_t RingMerger::report_unreported_lost(const RecordCallback& callback) {
    std::size_t delivered = 0;
    for (std::size_t i = 0; i < rings_.size(); i++) {
        const std::uint64_t total = __atomic_load_n(&rings_[i].meta->lost_total, __ATOMIC_RELAXED);
        if (total <= lost_seen_[i]) {
            continue;
        }
        fhook_rec_lost rec;
        std::memset(&rec, 0, sizeof(rec));
        rec.hdr.size = sizeof(rec);
        rec.hdr.type = FHOOK_REC_LOST;
        rec.hdr.ts = last_ts_;
        rec.hdr.cpu = static_cast<std::uint16_t>(rings_[i].cpu);
        rec.lost = total - lost_seen_[i];
        lost_seen_[i] = total;
        callback(&rec.hdr);
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
    : RingReader(session.fd(), session.device().info().page_size, config) {}

RingReader::RingReader(int fd, std::uint64_t page_size, const RingConfig& config)
    : merger_(map_rings(fd, page_size, config, mappings_)), session_fd_(fd) {
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
