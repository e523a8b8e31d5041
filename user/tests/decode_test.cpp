#include <vector>

#include <gtest/gtest.h>

#include <fhook/error.hpp>
#include <fhook/event.hpp>

#include "records.hpp"

namespace fhook {
namespace {

TEST(Decode, FunctionRecord) {
    auto rec = test::func_rec(2431445123, 3, 0xffffffff812a0004, 0xffffffff812a0420, 94, "cat");
    rec.hdr.probe_id = 7;
    rec.hdr.tgid = 90;
    rec.hdr.flags = FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ;
    rec.hdr.preempt = 0x21;
    auto ev = decode(&rec.hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Function);
    EXPECT_EQ(ev->probe_id, 7u);
    EXPECT_EQ(ev->ts, 2431445123u);
    EXPECT_EQ(ev->pid, 94u);
    EXPECT_EQ(ev->tgid, 90u);
    EXPECT_EQ(ev->cpu, 3u);
    EXPECT_EQ(ev->flags, FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ);
    EXPECT_EQ(ev->preempt, 0x21);
    EXPECT_EQ(ev->comm, "cat");
    EXPECT_EQ(ev->ip, 0xffffffff812a0004u);
    EXPECT_EQ(ev->parent_ip, 0xffffffff812a0420u);
    EXPECT_EQ(ev->lost, 0u);
}

TEST(Decode, LostRecord) {
    auto rec = test::lost_rec(99, 1, 1234);
    auto ev = decode(&rec.hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Lost);
    EXPECT_EQ(ev->cpu, 1u);
    EXPECT_EQ(ev->ts, 99u);
    EXPECT_EQ(ev->lost, 1234u);
}

TEST(Decode, FullLengthCommWithoutNul) {
    auto rec = test::func_rec(1, 0);
    std::memcpy(rec.hdr.comm, "0123456789abcdef", 16); // no terminator
    auto ev = decode(&rec.hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->comm, "0123456789abcdef");
}

TEST(Decode, LargerRecordOfKnownTypeIsAccepted) {
    // A future module may append fields; the known prefix still decodes.
    std::vector<std::uint64_t> buf(12, 0);
    auto rec = test::func_rec(5, 0, 0xabc, 0xdef);
    rec.hdr.size = 96;
    std::memcpy(buf.data(), &rec, sizeof(rec));
    auto ev = decode(reinterpret_cast<const fhook_rec*>(buf.data()));
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->ip, 0xabcu);
}

TEST(Decode, UnknownTypeIsNotAnEvent) {
    auto h = test::header(42, sizeof(fhook_rec), 1, 0);
    EXPECT_FALSE(decode(&h).has_value());
}

TEST(Decode, ShortKnownRecordThrows) {
    auto rec = test::func_rec(1, 0);
    rec.hdr.size = sizeof(fhook_rec) + 8;
    EXPECT_THROW(decode(&rec.hdr), Error);
    auto lost = test::lost_rec(1, 0, 5);
    lost.hdr.size = sizeof(fhook_rec);
    EXPECT_THROW(decode(&lost.hdr), Error);
}

TEST(Abi, RecordLayoutIsAsDocumented) {
    EXPECT_EQ(sizeof(fhook_rec), 48u);
    EXPECT_EQ(sizeof(fhook_rec_func), 64u);
    EXPECT_EQ(sizeof(fhook_rec_lost), 56u);
    EXPECT_EQ(offsetof(fhook_ring_meta, data_head), 64u);
    EXPECT_EQ(offsetof(fhook_ring_meta, lost_total), 128u);
}

} // namespace
} // namespace fhook
