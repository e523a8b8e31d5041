// RingReader's mapping layer against a memfd laid out like /dev/fhook's mmap
// space (CPU c at c << 32: meta page, consumer page, data).
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/core/session.hpp>
#include <fhook/ring/ring.hpp>

#include "records.hpp"

namespace fhook {
namespace {

class RingReaderTest : public ::testing::Test {
protected:
    static constexpr std::uint64_t kSize = 8192;
    static constexpr std::uint64_t kStride = std::uint64_t{1} << 32;

    RingReaderTest() : page_(static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE))) {
        fd_.reset(::memfd_create("fhook-rings", MFD_CLOEXEC));
        EXPECT_TRUE(fd_);
        // Sparse: two CPUs' regions.
        EXPECT_EQ(::ftruncate(fd_.get(), static_cast<off_t>(kStride + 2 * page_ + 2 * kSize)), 0);
    }

    void put(std::uint64_t offset, const void* bytes, std::size_t len) {
        ASSERT_EQ(::pwrite(fd_.get(), bytes, len, static_cast<off_t>(offset)),
                  static_cast<ssize_t>(len));
    }

    void put_meta(int cpu, std::uint64_t head, std::uint64_t data_size = kSize) {
        fhook_ring_meta meta;
        std::memset(&meta, 0, sizeof(meta));
        meta.abi_version = FHOOK_ABI_VERSION;
        meta.cpu = static_cast<std::uint32_t>(cpu);
        meta.data_size = data_size;
        meta.data_head = head;
        put(cpu * kStride, &meta, sizeof(meta));
    }

    std::uint64_t tail_of(int cpu) {
        std::uint64_t tail = 0;
        EXPECT_EQ(
            ::pread(fd_.get(), &tail, sizeof(tail), static_cast<off_t>(cpu * kStride + page_)),
            static_cast<ssize_t>(sizeof(tail)));
        return tail;
    }

    RingConfig config() const {
        RingConfig c;
        c.buf_size = kSize;
        c.nr_cpus = 2;
        c.mmap_stride = kStride;
        return c;
    }

    std::uint64_t page_;
    UniqueFd fd_;
};

TEST_F(RingReaderTest, MapsEveryCpuAndDrainsInTimeOrder) {
    auto a = test::func_rec(200, 0, 0xa);
    auto b = test::func_rec(100, 1, 0xb);
    auto c = test::func_rec(300, 1, 0xc);
    put(2 * page_, &a, sizeof(a));
    put(kStride + 2 * page_, &b, sizeof(b));
    put(kStride + 2 * page_ + sizeof(b), &c, sizeof(c));
    put_meta(0, sizeof(a));
    put_meta(1, sizeof(b) + sizeof(c));

    RingReader reader(fd_.get(), page_, config());
    EXPECT_EQ(reader.nr_rings(), 2u);
    // A memfd cannot be polled: wait() just times out.
    auto woke = reader.wait(0);
    EXPECT_FALSE(woke.ring);
    EXPECT_FALSE(woke.watched);

    std::vector<std::uint64_t> ips;
    EXPECT_EQ(reader.drain([&](const fhook_rec* rec) {
        ips.push_back(reinterpret_cast<const fhook_rec_func*>(rec)->ip);
    }),
              3u);
    EXPECT_EQ(ips, (std::vector<std::uint64_t>{0xb, 0xa, 0xc}));
    EXPECT_EQ(tail_of(0), sizeof(a));
    EXPECT_EQ(tail_of(1), sizeof(b) + sizeof(c));
    EXPECT_EQ(reader.drain([](const fhook_rec*) {}), 0u);
}

TEST_F(RingReaderTest, DrainFinalReportsTrailingDrops) {
    put_meta(0, 0);
    put_meta(1, 0);
    std::uint64_t lost_total = 4;
    put(kStride + offsetof(fhook_ring_meta, lost_total), &lost_total, sizeof(lost_total));
    RingReader reader(fd_.get(), page_, config());
    std::vector<std::pair<std::uint16_t, std::uint64_t>> lost;
    reader.drain_final([&](const fhook_rec* rec) {
        ASSERT_EQ(rec->type, FHOOK_REC_LOST);
        lost.emplace_back(rec->cpu, reinterpret_cast<const fhook_rec_lost*>(rec)->lost);
    });
    EXPECT_EQ(lost, (std::vector<std::pair<std::uint16_t, std::uint64_t>>{{1, 4}}));
}

TEST_F(RingReaderTest, MetaSizeMismatchIsAnError) {
    put_meta(0, 0, kSize / 2);
    put_meta(1, 0);
    EXPECT_THROW(RingReader(fd_.get(), page_, config()), Error);
}

TEST_F(RingReaderTest, WatchedFdWakesTheWait) {
    put_meta(0, 0);
    put_meta(1, 0);
    RingReader reader(fd_.get(), page_, config());
    UniqueFd ev(::eventfd(0, EFD_CLOEXEC));
    ASSERT_TRUE(ev);
    reader.watch(ev.get());
    EXPECT_FALSE(reader.wait(0).watched);
    std::uint64_t one = 1;
    ASSERT_EQ(::write(ev.get(), &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    EXPECT_TRUE(reader.wait(1000).watched);
}

} // namespace
} // namespace fhook
