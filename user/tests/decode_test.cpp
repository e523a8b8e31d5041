#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/ring/event.hpp>

#include "records.hpp"

namespace fhook {
namespace {

TEST(Decode, FunctionRecord) {
    auto rec = test::func_rec(2431445123, 3, 0xffffffff812a0004, 0xffffffff812a0420, 94);
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
    EXPECT_EQ(ev->comm, "") << "a record carries no name";
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

TEST(Decoder, NamesTasksFromCommRecordsTheLatestWins) {
    Decoder d;
    auto c1 = test::comm_rec(94, "cat");
    auto c2 = test::comm_rec(95, "0123456789abcdef"); // full length, no terminator
    auto f94 = test::func_rec(10, 0, 0x1000, 0x2000, 94);
    auto f95 = test::func_rec(11, 0, 0x1000, 0x2000, 95);
    auto f96 = test::func_rec(12, 0, 0x1000, 0x2000, 96);
    EXPECT_FALSE(d.decode(&c1.hdr)) << "a COMM record is no event";
    EXPECT_FALSE(d.decode(&c2.hdr));
    EXPECT_EQ(d.decode(&f94.hdr)->comm, "cat");
    EXPECT_EQ(d.decode(&f95.hdr)->comm, "0123456789abcdef");
    EXPECT_EQ(d.decode(&f96.hdr)->comm, "<...>") << "never named: as tracefs prints it";
    EXPECT_EQ(d.decode(&f94.hdr)->comm, "cat");
    // an exec: the new name from then on
    auto c3 = test::comm_rec(94, "ls");
    EXPECT_FALSE(d.decode(&c3.hdr));
    EXPECT_EQ(d.decode(&f94.hdr)->comm, "ls");
    EXPECT_EQ(d.comm(94), "ls");
    EXPECT_EQ(d.comm(96), "");
    // pid 0 is each CPU's idle task
    auto i0 = test::comm_rec(0, "swapper/0", 0), i1 = test::comm_rec(0, "swapper/1", 1);
    auto e0 = test::func_rec(13, 0, 0x1000, 0x2000, 0),
         e1 = test::func_rec(14, 1, 0x1000, 0x2000, 0);
    d.decode(&i0.hdr);
    d.decode(&i1.hdr);
    EXPECT_EQ(d.decode(&e0.hdr)->comm, "swapper/0");
    EXPECT_EQ(d.decode(&e1.hdr)->comm, "swapper/1");
    // the stateless decode() names nothing and takes no COMM record
    EXPECT_EQ(decode(&f94.hdr)->comm, "");
    EXPECT_FALSE(decode(&c1.hdr));
}

TEST(Decoder, LeafReturnGivesTheEntryThenItself) {
    Decoder d;
    fhook_rec_graph_ret r{};
    r.hdr = test::header(FHOOK_REC_GRAPH_RET, sizeof(r), 2000, 1, 94);
    r.hdr.flags = FHOOK_CTX_NEED_RESCHED;
    r.hdr.preempt = 2;
    r.ip = 0xffffffff812a0000;
    r.calltime = 1500;
    r.retval = 3;
    r.depth = 2;
    r.ret_flags = FHOOK_GRAPH_RET_LEAF;
    r.entry_flags = FHOOK_CTX_IRQS_OFF;
    r.entry_preempt = 1;
    std::vector<Event> got;
    Event scratch;
    const auto keep = [&](const Event& ev) { got.push_back(ev); };
    d.decode_each(&r.hdr, scratch, keep);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].type, EventType::GraphEntry);
    EXPECT_EQ(got[0].ts, 1500u) << "the entry at the call's time";
    EXPECT_EQ(got[0].flags, FHOOK_CTX_IRQS_OFF) << "with the entry's context";
    EXPECT_EQ(got[0].preempt, 1);
    EXPECT_EQ(got[0].ip, r.ip);
    EXPECT_EQ(got[0].depth, 2u);
    EXPECT_EQ(got[0].pid, 94u);
    EXPECT_TRUE(got[0].args.empty());
    EXPECT_EQ(got[1].type, EventType::GraphReturn);
    EXPECT_EQ(got[1].ts, 2000u);
    EXPECT_EQ(got[1].flags, FHOOK_CTX_NEED_RESCHED);
    EXPECT_EQ(got[1].preempt, 2);
    EXPECT_EQ(got[1].calltime, 1500u);
    EXPECT_EQ(got[1].duration, 500u);
    EXPECT_EQ(got[1].retval, 3u);
    // a return whose entry was written is one event
    r.ret_flags = 0;
    got.clear();
    d.decode_each(&r.hdr, scratch, keep);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].type, EventType::GraphReturn);
    // a COMM record is none
    auto c = test::comm_rec(94, "cat");
    got.clear();
    d.decode_each(&c.hdr, scratch, keep);
    EXPECT_TRUE(got.empty());
}

TEST(Decoder, ShortCommRecordIsCorrupt) {
    Decoder d;
    auto c = test::comm_rec(94, "cat");
    c.hdr.size = sizeof(fhook_rec) + 8;
    EXPECT_THROW(d.decode(&c.hdr), Error);
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
    EXPECT_EQ(sizeof(fhook_rec), 32u);
    EXPECT_EQ(sizeof(fhook_rec_func), 48u);
    EXPECT_EQ(sizeof(fhook_rec_fn), 32u);
    EXPECT_EQ(offsetof(fhook_rec_fn, ts), offsetof(fhook_rec, ts));
    EXPECT_EQ(offsetof(fhook_rec_fn, cpu), offsetof(fhook_rec, cpu));
    EXPECT_EQ(offsetof(fhook_rec_fn, parent_ip), offsetof(fhook_rec, seq));
    EXPECT_EQ(sizeof(fhook_rec_lost), 64u);
    EXPECT_EQ(sizeof(fhook_rec_comm), 48u);
    EXPECT_EQ(sizeof(fhook_lost_probe), 16u);
    EXPECT_EQ(offsetof(fhook_rec, seq), 28u);
    EXPECT_EQ(offsetof(fhook_ring_meta, data_head), 64u);
    EXPECT_EQ(offsetof(fhook_ring_meta, data_oldest), 72u);
    EXPECT_EQ(offsetof(fhook_ring_meta, lost_total), 128u);
    EXPECT_EQ(offsetof(fhook_ring_meta, seq_next), 144u);
    EXPECT_EQ(sizeof(fhook_ring_meta), 192u);
    EXPECT_EQ(sizeof(fhook_ring_setup), 64u);
    EXPECT_EQ(sizeof(fhook_probe_counters), 64u);
    EXPECT_EQ(sizeof(fhook_stats_area), 64u);
}

TEST(Decode, LostRecordCarriesSeqRangeAndBreakdown) {
    alignas(8) unsigned char buf[sizeof(fhook_rec_lost) + 2 * sizeof(fhook_lost_probe)] = {};
    auto* rec = reinterpret_cast<fhook_rec_lost*>(buf);
    rec->hdr = test::header(FHOOK_REC_LOST, sizeof(buf), 77, 1);
    rec->hdr.probe_id = 0;
    rec->lost = 30;
    rec->first_seq = 100;
    rec->last_seq = 129;
    rec->nr_probes = 2;
    rec->probes[0] = fhook_lost_probe{1, 0, 10};
    rec->probes[1] = fhook_lost_probe{3, 0, 20};
    auto ev = decode(&rec->hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Lost);
    EXPECT_EQ(ev->lost, 30u);
    EXPECT_EQ(ev->first_seq, 100u);
    EXPECT_EQ(ev->last_seq, 129u);
    ASSERT_EQ(ev->lost_probes.size(), 2u);
    EXPECT_EQ(ev->lost_probes[1].probe_id, 3u);
    EXPECT_EQ(ev->lost_probes[1].count, 20u);

    // nr_probes claims more entries than the record holds
    rec->nr_probes = 3;
    EXPECT_THROW(decode(&rec->hdr), Error);
    rec->nr_probes = FHOOK_MAX_PROBES + 1;
    EXPECT_THROW(decode(&rec->hdr), Error);
}

TEST(Decode, FunctionRecordCarriesSeq) {
    auto rec = test::func_rec(5, 0);
    rec.hdr.seq = 0xfffffffeu;
    auto ev = decode(&rec.hdr);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->seq, 0xfffffffeu);
}

// An FN record decodes to the event its FUNC record would be: addresses
// sign-extended, the raw context as the flags and the preempt depth
TEST(Decode, FnRecordIsAFunctionEvent) {
    auto rec = test::fn_rec(2431445123, 3, 0xffffffffc0100010, 0xffffffff812a0420, 94,
                            0x10000 | 0x200 | 0x100 | 0x12 | FHOOK_FN_CTX_IRQS_OFF |
                                FHOOK_FN_CTX_NEED_RESCHED);
    rec.probe_id = 7;
    auto ev = decode(reinterpret_cast<const fhook_rec*>(&rec));
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->type, EventType::Function);
    EXPECT_EQ(ev->probe_id, 7u);
    EXPECT_EQ(ev->ts, 2431445123u);
    EXPECT_EQ(ev->pid, 94u);
    EXPECT_EQ(ev->cpu, 3u);
    EXPECT_EQ(ev->ip, 0xffffffffc0100010u);
    EXPECT_EQ(ev->parent_ip, 0xffffffff812a0420u);
    EXPECT_EQ(ev->flags, FHOOK_CTX_IRQS_OFF | FHOOK_CTX_NEED_RESCHED | FHOOK_CTX_HARDIRQ |
                             FHOOK_CTX_SOFTIRQ | FHOOK_CTX_BH_OFF);
    EXPECT_EQ(ev->preempt, 15) << "a depth of 0x12 shows as 15, as fhook_rec_preempt() cuts it";
    EXPECT_EQ(ev->tgid, 0u) << "the Decoder's, from the COMM record";
    EXPECT_TRUE(ev->stack.empty());

    // every context bit on its own
    const std::pair<std::uint32_t, std::uint8_t> bits[] = {
        {FHOOK_FN_CTX_IRQS_OFF, FHOOK_CTX_IRQS_OFF},
        {FHOOK_FN_CTX_NEED_RESCHED, FHOOK_CTX_NEED_RESCHED},
        {FHOOK_FN_CTX_PREEMPT_RESCHED, FHOOK_CTX_PREEMPT_RESCHED},
        {0x30000, FHOOK_CTX_HARDIRQ},
        {FHOOK_FN_CTX_SOFTIRQ_OFFSET, FHOOK_CTX_SOFTIRQ},
        {0x400, FHOOK_CTX_BH_OFF},
        {0x100000, FHOOK_CTX_NMI},
        {0x3, 0},
    };
    for (const auto& [ctx, flags] : bits) {
        rec.ctx = ctx;
        ev = decode(reinterpret_cast<const fhook_rec*>(&rec));
        ASSERT_TRUE(ev);
        EXPECT_EQ(ev->flags, flags) << std::hex << ctx;
        EXPECT_EQ(ev->preempt, ctx & 0xff) << std::hex << ctx;
    }
    rec.size = sizeof(rec) - 8;
    EXPECT_THROW(decode(reinterpret_cast<const fhook_rec*>(&rec)), Error);
}

// The Decoder gives an FN event its task's tgid (the COMM record's) and
// its number: the one its COMM record shares with it, then one more than
// the CPU's previous record's, a LOST record's last + 1
TEST(Decoder, FnRecordTakesTgidAndSeqFromTheStream) {
    Decoder d;
    Event ev;
    const auto fn = [&](std::uint64_t ts, std::uint16_t cpu, std::uint32_t pid) {
        auto r = test::fn_rec(ts, cpu, 0xffffffff81001000, 0xffffffff81002000, pid);
        EXPECT_TRUE(d.decode(reinterpret_cast<const fhook_rec*>(&r), ev));
        return std::make_pair(ev.seq, ev.tgid);
    };
    auto comm = test::comm_rec(94, "cat", 1);
    comm.hdr.tgid = 90;
    comm.hdr.seq = 40;
    EXPECT_FALSE(d.decode(&comm.hdr, ev));
    EXPECT_EQ(fn(1, 1, 94), std::make_pair(40u, 90u));
    EXPECT_EQ(fn(2, 1, 94), std::make_pair(41u, 90u));
    EXPECT_EQ(ev.comm, "cat");
    // another CPU counts on its own
    auto comm0 = test::comm_rec(95, "sh", 0);
    comm0.hdr.seq = 7;
    EXPECT_FALSE(d.decode(&comm0.hdr, ev));
    EXPECT_EQ(fn(3, 0, 95).first, 7u);
    EXPECT_EQ(fn(4, 1, 94).first, 42u);
    // a record with a number of its own, then FN after it
    auto func = test::func_rec(5, 1, 0x1000, 0x2000, 94);
    func.hdr.seq = 50;
    ASSERT_TRUE(d.decode(&func.hdr, ev));
    EXPECT_EQ(ev.seq, 50u);
    EXPECT_EQ(fn(6, 1, 94).first, 51u);
    // after a loss: the number after the last one lost
    auto lost = test::lost_rec(7, 1, 10);
    lost.first_seq = 52;
    lost.last_seq = 61;
    ASSERT_TRUE(d.decode(&lost.hdr, ev));
    EXPECT_EQ(fn(8, 1, 94).first, 62u);
    // a task the stream never named: no name, no tgid
    EXPECT_EQ(fn(9, 1, 300).second, 0u);
    EXPECT_EQ(ev.comm, "<...>");
}

// An Event's fields, for comparing two events whole
auto fields_of(const Event& e) {
    return std::make_tuple(e.type, e.probe_id, e.ts, e.pid, e.tgid, e.cpu, e.flags, e.preempt,
                           e.comm, e.ip, e.parent_ip, e.seq, e.ret_ip, e.faults, e.data, e.stack);
}

// A kprobe's hit at a function's entry in FN's layout (FHOOK_REC_FN_KPROBE)
// decodes to the event of the FHOOK_REC_KPROBE record of the same hit:
// ret_ip and faults 0, the fields after the 32-byte header, the context
// decoded as an FN record's, the caller not the kprobe's
TEST(Decode, FnKprobeRecordIsTheEventOfItsKprobeRecord) {
    const std::uint32_t ctx = 0x10000 | 0x100 | 0x3 | FHOOK_FN_CTX_IRQS_OFF;
    const std::vector<std::uint64_t> fields = {0xffffff9c, 0x8000, 0xffff888012345678};
    auto fn =
        test::fn_kprobe_rec(2431447000, 3, 0xffffffff812c0000, 0xffffffff812c0840, fields, 94, ctx);
    reinterpret_cast<fhook_rec_fn*>(fn.rec())->probe_id = 7;
    auto kp = test::kprobe_rec(2431447000, 3, 0xffffffff812c0000, fields, 94);
    kp.rec()->probe_id = 7;
    kp.rec()->tgid = 0; // (the Decoder's, as an FN record's)
    kp.rec()->flags = FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ | FHOOK_CTX_SOFTIRQ;
    kp.rec()->preempt = 3;
    const auto want = decode(kp.rec());
    const auto got = decode(fn.rec());
    ASSERT_TRUE(want);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->type, EventType::Kprobe);
    EXPECT_EQ(got->ip, 0xffffffff812c0000u);
    EXPECT_EQ(got->probe_id, 7u);
    EXPECT_EQ(got->data.size(), 24u);
    EXPECT_EQ(fields_of(*got), fields_of(*want));
    // a probe without fields: the header alone
    auto bare = test::fn_kprobe_rec(5, 0, 0xffffffff812c0000, 0xffffffff812c0840, {});
    const auto b = decode(bare.rec());
    ASSERT_TRUE(b);
    EXPECT_EQ(b->type, EventType::Kprobe);
    EXPECT_TRUE(b->data.empty());
    // shorter than its header
    bare.rec()->size = sizeof(fhook_rec_fn) - 8;
    EXPECT_THROW(decode(bare.rec()), Error);
    EXPECT_EQ(record_min_size(bare.rec()), sizeof(fhook_rec_fn));
    EXPECT_EQ(record_probe_id(fn.rec()), 7u);
}

// A stream where both kinds of a kprobe's records interleave with FN
// records: the Decoder numbers and names an FN_KPROBE record as an FN
// record, whether the FN records take decode() or decode_fn()
TEST(Decoder, FnKprobeRecordsAreNumberedAndNamedAsFnRecords) {
    const std::uint64_t ip = 0xffffffff812c0000;
    auto comm = test::comm_rec(94, "cat", 1);
    comm.hdr.tgid = 90;
    comm.hdr.seq = 40;
    auto kp = test::kprobe_rec(1, 1, ip, {1, 2}, 94);
    kp.rec()->tgid = 90;
    kp.rec()->seq = 40;
    auto fk1 = test::fn_kprobe_rec(2, 1, ip, 0xffffffff81002000, {3, 4}, 94);
    auto fn = test::fn_rec(3, 1, 0xffffffff81001000, 0xffffffff81002000, 94);
    auto fk2 = test::fn_kprobe_rec(4, 1, ip, 0xffffffff81002000, {5, 6}, 94);
    const auto* fn_hdr = reinterpret_cast<const fhook_rec*>(&fn);
    for (const bool fast : {false, true}) {
        Decoder d;
        Event ev;
        EXPECT_FALSE(d.decode(&comm.hdr, ev));
        ASSERT_TRUE(d.decode(kp.rec(), ev));
        EXPECT_EQ(ev.seq, 40u);
        ASSERT_TRUE(d.decode(fk1.rec(), ev));
        EXPECT_EQ(ev.type, EventType::Kprobe);
        EXPECT_EQ(ev.seq, 41u);
        EXPECT_EQ(ev.tgid, 90u);
        EXPECT_EQ(ev.comm, "cat");
        if (fast) {
            FnEvent f;
            d.decode_fn(fn_hdr, f);
            EXPECT_EQ(f.seq, 42u);
            EXPECT_EQ(f.tgid, 90u);
        } else {
            ASSERT_TRUE(d.decode(fn_hdr, ev));
            EXPECT_EQ(ev.seq, 42u);
            EXPECT_EQ(ev.tgid, 90u);
        }
        ASSERT_TRUE(d.decode(fk2.rec(), ev));
        EXPECT_EQ(ev.seq, 43u);
        EXPECT_EQ(ev.tgid, 90u);
        EXPECT_EQ(ev.comm, "cat");
    }
    // and so does a SeqCount (the reader's acknowledgement)
    SeqCount count;
    count.take(&comm.hdr);
    EXPECT_EQ(count.take(kp.rec()), 40u);
    EXPECT_EQ(count.take(fk1.rec()), 41u);
    EXPECT_EQ(count.take(fn_hdr), 42u);
    EXPECT_EQ(count.take(fk2.rec()), 43u);
    EXPECT_EQ(count.next(), 44u);
}

// Nested writers: a task took number 70, an irq over it took 71 and
// reserved first (its FN record counted 70), then the task's COMM record
// says 70.  The count never goes back: no number is given twice.
TEST(SeqCount, NeverGoesBack) {
    SeqCount count;
    auto func = test::func_rec(1, 0);
    func.hdr.seq = 69;
    EXPECT_EQ(count.take(&func.hdr), 69u);
    auto fn = test::fn_rec(2, 0, 0xffffffff81001000, 0xffffffff81002000, 5);
    const auto* fn_hdr = reinterpret_cast<const fhook_rec*>(&fn);
    EXPECT_EQ(count.take(fn_hdr), 70u);
    auto comm = test::comm_rec(94, "cat", 0);
    comm.hdr.seq = 70;
    count.take(&comm.hdr);
    EXPECT_EQ(count.take(fn_hdr), 71u);
    EXPECT_EQ(count.next(), 72u);
    // a synthesised LOST record (no numbers) moves nothing
    auto lost = test::lost_rec(3, 0, 4);
    lost.first_seq = lost.last_seq = kSeqUnknown;
    count.take(&lost.hdr);
    EXPECT_EQ(count.next(), 72u);
    // across the 32-bit wrap (numbers compare within 2^31 of each other)
    for (const std::uint32_t seq : {0x40000000u, 0x80000000u, 0xc0000000u, 0xffffffffu}) {
        func.hdr.seq = seq;
        EXPECT_EQ(count.take(&func.hdr), seq);
    }
    EXPECT_EQ(count.take(fn_hdr), 0u);
    func.hdr.seq = 0xfffffff0u;
    count.take(&func.hdr);
    EXPECT_EQ(count.next(), 1u) << "an older number after the wrap moves nothing";
}

} // namespace
} // namespace fhook

// same_task_name() against std::string_view's ==: every length up to 16
// and past it, names equal and differing in each byte
TEST(Decoder, SameTaskNameIsStringEquality) {
    const std::string base = "0123456789abcdefXYZ";
    for (std::size_t n = 0; n <= base.size(); n++) {
        const std::string a = base.substr(0, n);
        EXPECT_TRUE(fhook::same_task_name(a, std::string(a))) << n;
        if (n > 0) {
            EXPECT_FALSE(fhook::same_task_name(a, base.substr(0, n - 1))) << n;
        }
        for (std::size_t i = 0; i < n; i++) {
            std::string b = a;
            b[i] ^= 0x20;
            EXPECT_FALSE(fhook::same_task_name(a, b)) << n << " byte " << i;
        }
    }
}
