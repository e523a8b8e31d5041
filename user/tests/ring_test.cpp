#include <span>
#include <stdexcept>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/ring.hpp>

#include "records.hpp"

namespace fhook {
namespace {

using test::FakeRing;
using test::func_rec;
using test::lost_rec;

struct Seen {
    std::uint64_t ts;
    std::uint16_t cpu;
    std::uint16_t type;
};

std::vector<Seen> drain_all(RingMerger& merger) {
    std::vector<Seen> seen;
    merger.drain([&](const fhook_rec* rec) { seen.push_back({rec->ts, rec->cpu, rec->type}); });
    return seen;
}

TEST(RingMerger, MergesCpusInTimestampOrderStably) {
    FakeRing cpu0(0, 4096), cpu1(1, 4096), cpu2(2, 4096);
    for (std::uint64_t ts : {10, 30, 50}) {
        cpu0.push(func_rec(ts, 0));
    }
    for (std::uint64_t ts : {20, 40}) {
        cpu1.push(func_rec(ts, 1));
    }
    cpu2.push(func_rec(5, 2));
    cpu2.push(lost_rec(30, 2, 7));
    for (auto* r : {&cpu0, &cpu1, &cpu2}) {
        r->publish();
    }
    RingMerger merger({cpu0.view(), cpu1.view(), cpu2.view()});
    auto seen = drain_all(merger);
    ASSERT_EQ(seen.size(), 7u);
    const std::vector<std::pair<std::uint64_t, std::uint16_t>> want = {
        {5, 2}, {10, 0}, {20, 1}, {30, 0}, {30, 2}, {40, 1}, {50, 0}};
    for (std::size_t i = 0; i < want.size(); i++) {
        EXPECT_EQ(seen[i].ts, want[i].first) << i;
        EXPECT_EQ(seen[i].cpu, want[i].second) << i;
    }
    EXPECT_EQ(seen[4].type, FHOOK_REC_LOST);
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
    EXPECT_EQ(cpu1.tail(), cpu1.pos());
    EXPECT_EQ(cpu2.tail(), cpu2.pos());
}

TEST(RingMerger, NestedWriterOutOfOrderIsSorted) {
    FakeRing cpu0(0, 4096);
    cpu0.push(func_rec(100, 0)); // interrupted writer reserved first...
    cpu0.push(func_rec(90, 0));  // ...an irq wrote an earlier stamp? still sorted
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    auto seen = drain_all(merger);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].ts, 90u);
    EXPECT_EQ(seen[1].ts, 100u);
}

TEST(RingMerger, ANameComesBeforeTheRecordsOfWritersNestedInItsReservation) {
    // A task's first record on CPU 0 (stamped 100, its name with it) was
    // interrupted after winning its space: the interrupt's records (90,
    // 95) found the name cached and carry none.  CPU 1 ran at 80 and 92.
    FakeRing cpu0(0, 4096), cpu1(1, 4096);
    auto name = test::comm_rec(7, "victim", 0);
    name.hdr.ts = 100;
    cpu0.push(name);
    for (std::uint64_t ts : {100, 90, 95}) {
        cpu0.push(func_rec(ts, 0, 0x1000, 0x2000, 7));
    }
    for (std::uint64_t ts : {80, 92}) {
        cpu1.push(func_rec(ts, 1));
    }
    cpu0.publish();
    cpu1.publish();
    RingMerger merger({cpu0.view(), cpu1.view()});
    Decoder decoder;
    std::vector<std::string> seen;
    merger.drain([&](const fhook_rec* rec) {
        if (const auto ev = decoder.decode(rec)) {
            seen.push_back(std::to_string(ev->ts) + " " + ev->comm);
        }
    });
    const std::vector<std::string> want = {"80 <...>", "90 victim", "92 <...>", "95 victim",
                                           "100 victim"};
    EXPECT_EQ(seen, want);
}

TEST(RingMerger, AdvancesTailOnlyAfterTheCallbacks) {
    FakeRing cpu0(0, 4096);
    cpu0.push(func_rec(1, 0));
    cpu0.push(func_rec(2, 0));
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    int calls = 0;
    merger.drain([&](const fhook_rec*) {
        EXPECT_EQ(cpu0.tail(), 0u) << "tail moved while records were still in use";
        calls++;
    });
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(cpu0.tail(), 2 * sizeof(fhook_rec_func));
}

TEST(RingMerger, SpansAreEachCpusBytesInRingOrderTailMovedAfterTheCallback) {
    // CPU 0 wraps (256-byte ring from 224), CPU 1 is out of order (a
    // nested writer) and holds an unknown record, CPU 2 is empty
    FakeRing cpu0(0, 256, 224), cpu1(1, 4096), cpu2(2, 4096);
    cpu0.push(func_rec(7, 0, 0x10));
    cpu0.push(lost_rec(8, 0, 3));
    cpu1.push(func_rec(5, 1, 0x20));
    unsigned char unknown[56] = {};
    const fhook_rec h = test::header(99, 52, 4, 1);
    std::memcpy(unknown, &h, sizeof(h));
    cpu1.write(unknown, 52);
    cpu1.push(func_rec(3, 1, 0x30));
    for (auto* r : {&cpu0, &cpu1, &cpu2}) {
        r->publish();
    }
    RingMerger merger({cpu0.view(), cpu1.view(), cpu2.view()});
    int calls = 0;
    EXPECT_EQ(merger.drain_spans([&](std::span<const RingSpan> spans) {
        calls++;
        ASSERT_EQ(spans.size(), 2u);
        EXPECT_EQ(spans[0].cpu, 0);
        EXPECT_EQ(spans[0].bytes.size(), sizeof(fhook_rec_func) + sizeof(fhook_rec_lost));
        ASSERT_EQ(spans[0].records.size(), 2u);
        EXPECT_EQ(static_cast<const void*>(spans[0].records[0]),
                  static_cast<const void*>(spans[0].bytes.data()));
        EXPECT_EQ(spans[0].records[1]->type, FHOOK_REC_LOST);
        EXPECT_EQ(spans[1].cpu, 1);
        EXPECT_EQ(spans[1].bytes.size(), 2 * sizeof(fhook_rec_func) + 56);
        ASSERT_EQ(spans[1].records.size(), 2u); // the unknown one only in the bytes
        EXPECT_EQ(spans[1].records[0]->ts, 5u);
        EXPECT_EQ(spans[1].records[1]->ts, 3u);
        EXPECT_EQ(cpu0.tail(), 224u) << "tail moved before the callback returned";
    }),
              4u);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
    EXPECT_EQ(cpu1.tail(), cpu1.pos());
    // nothing new: no call
    EXPECT_EQ(merger.drain_spans([&](std::span<const RingSpan>) { calls++; }), 0u);
    EXPECT_EQ(calls, 1);
    // the LOST record was accounted: no synthetic one for it
    cpu0.meta().lost_total = 3;
    EXPECT_EQ(merger.report_unreported_lost([](const fhook_rec*) {}), 0u);
}

// A span's records leave out an FN record with the function and parent of
// the CPU's FN record before it (in this pass or the last), nothing else;
// its bytes, events and numbers count every record.
TEST(RingMerger, SpansLeaveOutRepeatedFnRecordsOnly) {
    FakeRing cpu0(0, 4096);
    const std::uint64_t a = 0xffffffff81001000, b = 0xffffffff81003000, parent = 0xffffffff81002000;
    auto comm = test::comm_rec(100, "cat", 0);
    comm.hdr.seq = 0;
    cpu0.push(comm);
    for (std::uint64_t f : {a, a, a, b, a}) {
        cpu0.push(test::fn_rec(1, 0, f, parent));
    }
    auto func = func_rec(2, 0);
    func.hdr.seq = 6;
    cpu0.push(func);
    cpu0.push(test::fn_rec(3, 0, a, parent)); // (the FN record before it is a)
    cpu0.push(test::fn_rec(3, 0, a, b));
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    std::vector<std::string> seen;
    EXPECT_EQ(merger.drain_spans([&](std::span<const RingSpan> spans) {
        ASSERT_EQ(spans.size(), 1u);
        EXPECT_EQ(spans[0].events, 8u);
        EXPECT_EQ(spans[0].bytes.size(), cpu0.pos());
        for (const fhook_rec* rec : spans[0].records) {
            const auto* fn = reinterpret_cast<const fhook_rec_fn*>(rec);
            seen.push_back(rec->type != FHOOK_REC_FN ? std::to_string(rec->type)
                           : fn->ip == static_cast<std::int32_t>(a)
                               ? (fn->parent_ip == static_cast<std::int32_t>(b) ? "ab" : "a")
                               : "b");
        }
    }),
              8u);
    const std::vector<std::string> want = {std::to_string(FHOOK_REC_COMM), "a", "b", "a",
                                           std::to_string(FHOOK_REC_FUNC), "ab"};
    EXPECT_EQ(seen, want);
    EXPECT_EQ(cpu0.cons().seq_read, 9u) << "numbers 0-8: the name's, five FN, FUNC's 6, two FN";
    // the next pass: a repeat of the last one is left out too
    cpu0.push(test::fn_rec(4, 0, a, b));
    cpu0.push(test::fn_rec(4, 0, b, parent));
    cpu0.publish();
    seen.clear();
    EXPECT_EQ(merger.drain_spans([&](std::span<const RingSpan> spans) {
        ASSERT_EQ(spans[0].records.size(), 1u);
        EXPECT_EQ(spans[0].events, 2u);
    }),
              2u);
    // drain() gives every record
    cpu0.push(test::fn_rec(5, 0, b, parent));
    cpu0.push(test::fn_rec(5, 0, b, parent));
    cpu0.publish();
    std::size_t n = 0;
    EXPECT_EQ(merger.drain([&](const fhook_rec*) { n++; }), 2u);
    EXPECT_EQ(n, 2u);
}

// A kprobe's hits in FN's layout (FHOOK_REC_FN_KPROBE) carry their fields:
// a span's records keep every one (two the same in a row too, and one
// without fields, whose size is an FN record's), the repeat of an FN
// record around them is still left out, and the numbers count them as the
// Decoder does
TEST(RingMerger, SpansKeepEveryFnKprobeRecordAndCountItsNumber) {
    FakeRing cpu0(0, 4096);
    const std::uint64_t a = 0xffffffff81001000, k = 0xffffffff812c0000, parent = 0xffffffff81002000;
    auto comm = test::comm_rec(100, "cat", 0);
    comm.hdr.seq = 20;
    std::vector<test::RecBuf> recs;
    cpu0.push(comm);
    cpu0.push(test::fn_rec(1, 0, a, parent));
    for (const auto& fields : {std::vector<std::uint64_t>{1, 2}, {1, 2}, {}, {3}}) {
        recs.push_back(test::fn_kprobe_rec(2, 0, k, parent, fields));
        cpu0.push(recs.back());
    }
    cpu0.push(test::fn_rec(3, 0, a, parent)); // (a repeat of the FN record before)
    recs.push_back(test::fn_kprobe_rec(4, 0, k, parent, {1, 2}));
    cpu0.push(recs.back());
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    std::vector<const fhook_rec*> kept;
    EXPECT_EQ(merger.drain_spans([&](std::span<const RingSpan> spans) {
        ASSERT_EQ(spans.size(), 1u);
        EXPECT_EQ(spans[0].events, 7u);
        kept.assign(spans[0].records.begin(), spans[0].records.end());
    }),
              7u);
    ASSERT_EQ(kept.size(), 7u) << "the name, the first FN, every FN_KPROBE";
    EXPECT_EQ(kept[0]->type, FHOOK_REC_COMM);
    EXPECT_EQ(kept[1]->type, FHOOK_REC_FN);
    for (std::size_t i = 0; i < 4; i++) {
        ASSERT_EQ(kept[2 + i]->type, FHOOK_REC_FN_KPROBE) << i;
        EXPECT_EQ(kept[2 + i]->size, recs[i].size()) << i;
        EXPECT_EQ(std::memcmp(kept[2 + i], recs[i].rec(), recs[i].size()), 0) << i;
    }
    EXPECT_EQ(kept[6]->type, FHOOK_REC_FN_KPROBE);
    // numbers 20-26: the name's (shared with the first FN), 7 records
    EXPECT_EQ(cpu0.cons().seq_read, 27u);
    // the same records numbered by a Decoder, and by drain()
    Decoder d;
    Event ev;
    std::vector<const fhook_rec*> all;
    collect_records(cpu0.view(), 0, cpu0.pos(), all);
    for (const fhook_rec* rec : all) {
        if (d.decode(rec, ev)) {
            EXPECT_EQ(ev.type, rec->type == FHOOK_REC_FN ? EventType::Function : EventType::Kprobe);
        }
    }
    EXPECT_EQ(ev.seq, 26u);
    FakeRing again(0, 4096);
    for (const fhook_rec* rec : all) {
        again.write(rec, rec->size);
    }
    again.publish();
    RingMerger plain({again.view()});
    std::size_t n = 0;
    EXPECT_EQ(plain.drain([&](const fhook_rec*) { n++; }), 7u);
    EXPECT_EQ(n, 8u) << "every record, the name too";
    EXPECT_EQ(again.cons().seq_read, 27u);
}

TEST(RingMerger, SpansOfAnOverwriteRingStartAtTheOldestRecord) {
    FakeRing cpu0(0, 4096);
    for (std::uint64_t ts = 1; ts <= 5; ts++) {
        cpu0.push(func_rec(ts, 0));
    }
    cpu0.publish();
    cpu0.meta().data_oldest = 2 * sizeof(fhook_rec_func);
    RingView view = cpu0.view();
    view.overwrite = true;
    RingMerger merger({view});
    std::vector<std::uint64_t> ts;
    merger.drain_spans([&](std::span<const RingSpan> spans) {
        ASSERT_EQ(spans.size(), 1u);
        EXPECT_EQ(spans[0].bytes.size(), 3 * sizeof(fhook_rec_func));
        for (std::size_t off = 0; off < spans[0].bytes.size(); off += sizeof(fhook_rec_func)) {
            ts.push_back(reinterpret_cast<const fhook_rec*>(spans[0].bytes.data() + off)->ts);
        }
    });
    EXPECT_EQ(ts, (std::vector<std::uint64_t>{3, 4, 5}));
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
}

TEST(RingMerger, ThrowingCallbackLeavesTail) {
    FakeRing cpu0(0, 4096);
    cpu0.push(func_rec(1, 0));
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    EXPECT_THROW(merger.drain([](const fhook_rec*) { throw std::runtime_error("boom"); }),
                 std::runtime_error);
    EXPECT_EQ(cpu0.tail(), 0u);
    EXPECT_EQ(drain_all(merger).size(), 1u); // delivered again
}

TEST(RingMerger, SecondDrainSeesOnlyNewRecordsAndUnpublishedStaysHidden) {
    FakeRing cpu0(0, 4096);
    cpu0.push(func_rec(1, 0));
    cpu0.publish();
    cpu0.push(func_rec(2, 0)); // written, head not yet moved
    RingMerger merger({cpu0.view()});
    auto first = drain_all(merger);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].ts, 1u);
    EXPECT_TRUE(drain_all(merger).empty());
    cpu0.publish();
    auto second = drain_all(merger);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].ts, 2u);
}

TEST(RingMerger, RecordAcrossTheWrapPointIsContiguous) {
    // 256-byte ring; start the producer at 224 so the 48-byte COMM record
    // covers bytes 224..255 and 0..15 of the buffer.
    FakeRing cpu0(0, 256, 224);
    auto comm = test::comm_rec(4242, "wrapper");
    comm.hdr.ts = 7; // the next record's, as the module writes it
    cpu0.push(comm);
    cpu0.push(func_rec(7, 0, 0xffffffff812a0004, 0xffffffff812a0420, 4242));
    cpu0.push(lost_rec(8, 0, 3));
    cpu0.publish();
    ASSERT_EQ(cpu0.pos(),
              224 + sizeof(fhook_rec_comm) + sizeof(fhook_rec_func) + sizeof(fhook_rec_lost));
    RingMerger merger({cpu0.view()});
    std::vector<Event> events;
    Decoder decoder;
    merger.drain([&](const fhook_rec* rec) {
        if (auto ev = decoder.decode(rec)) {
            events.push_back(*ev);
        }
    });
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].type, EventType::Function);
    EXPECT_EQ(events[0].ip, 0xffffffff812a0004u);
    EXPECT_EQ(events[0].parent_ip, 0xffffffff812a0420u);
    EXPECT_EQ(events[0].pid, 4242u);
    EXPECT_EQ(events[0].comm, "wrapper");
    EXPECT_EQ(events[1].type, EventType::Lost);
    EXPECT_EQ(events[1].lost, 3u);
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
}

TEST(RingMerger, ManyLapsAroundTheRing) {
    FakeRing cpu0(0, 512);
    RingMerger merger({cpu0.view()});
    std::uint64_t ts = 0;
    std::uint64_t delivered = 0;
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 5; i++) { // 5 * 64 bytes < 512
            ++ts;
            cpu0.push(func_rec(ts, 0, ts));
        }
        cpu0.publish();
        merger.drain([&](const fhook_rec* rec) {
            const auto* f = reinterpret_cast<const fhook_rec_func*>(rec);
            EXPECT_EQ(f->ip, rec->ts);
            EXPECT_EQ(rec->ts, delivered + 1);
            delivered++;
        });
    }
    EXPECT_EQ(delivered, 250u);
}

TEST(RingMerger, SkipsUnknownRecordTypesBySize) {
    FakeRing cpu0(0, 4096);
    unsigned char unknown[56] = {};
    fhook_rec h = test::header(99, sizeof(unknown) - 4, 3, 0); // size 52, padded to 56
    std::memcpy(unknown, &h, sizeof(h));
    cpu0.push(func_rec(1, 0));
    cpu0.write(unknown, 52);
    cpu0.push(func_rec(5, 0));
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    auto seen = drain_all(merger);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].ts, 1u);
    EXPECT_EQ(seen[1].ts, 5u);
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
}

void expect_corrupt(FakeRing& ring) {
    RingMerger merger({ring.view()});
    const std::uint64_t tail = ring.tail();
    try {
        merger.drain([](const fhook_rec*) { FAIL() << "no record may be delivered"; });
        FAIL() << "corrupt ring not detected";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Runtime);
        EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ring.tail(), tail);
}

TEST(RingMerger, DetectsZeroSizedRecord) {
    FakeRing ring(0, 4096);
    auto rec = func_rec(1, 0);
    rec.hdr.size = 0;
    ring.push(rec);
    ring.publish();
    expect_corrupt(ring);
}

TEST(RingMerger, DetectsSizeBelowHeader) {
    FakeRing ring(0, 4096);
    auto rec = func_rec(1, 0);
    rec.hdr.size = sizeof(fhook_rec) - 8;
    ring.push(rec);
    ring.publish();
    expect_corrupt(ring);
}

TEST(RingMerger, DetectsRecordRunningPastHead) {
    FakeRing ring(0, 4096);
    auto rec = func_rec(1, 0);
    rec.hdr.size = 200;
    ring.push(rec);
    ring.publish();
    expect_corrupt(ring);
}

TEST(RingMerger, DetectsKnownTypeTooShort) {
    FakeRing ring(0, 4096);
    auto rec = func_rec(1, 0);
    rec.hdr.size = sizeof(fhook_rec) + 8; // a FUNC record needs 64 bytes
    ring.push(rec);
    ring.publish();
    expect_corrupt(ring);
}

TEST(RingMerger, DetectsHeadTooFarAheadOfTail) {
    FakeRing ring(0, 256);
    ring.meta().data_head = 512;
    expect_corrupt(ring);
}

TEST(RingMerger, DetectsHeadBehindTail) {
    FakeRing ring(0, 256, 128);
    ring.meta().data_head = 64;
    expect_corrupt(ring);
}

TEST(RingMerger, DetectsMisalignedHead) {
    FakeRing ring(0, 4096);
    ring.push(func_rec(1, 0));
    ring.meta().data_head = sizeof(fhook_rec_func) + 4;
    expect_corrupt(ring);
}

TEST(RingMerger, RejectsInvalidLayout) {
    FakeRing ring(0, 4096);
    RingView view = ring.view();
    view.data_size = 3000;
    EXPECT_THROW(RingMerger({view}), Error);
    view = ring.view();
    view.cons = nullptr;
    EXPECT_THROW(RingMerger({view}), Error);
}

TEST(RingMerger, ReportsDropsThatNoLostRecordCarried) {
    FakeRing cpu0(0, 4096), cpu1(1, 4096);
    cpu0.push(func_rec(10, 0));
    cpu0.push(lost_rec(20, 0, 5)); // 5 reported in band...
    cpu0.push(func_rec(30, 0));
    cpu0.meta().lost_total = 8; // ...3 more dropped after the last record
    cpu1.push(func_rec(15, 1));
    cpu1.meta().lost_total = 0;
    cpu0.publish();
    cpu1.publish();
    RingMerger merger({cpu0.view(), cpu1.view()});
    std::vector<Event> events;
    auto collect = [&](const fhook_rec* rec) { events.push_back(*decode(rec)); };
    EXPECT_EQ(merger.drain(collect), 4u);
    EXPECT_EQ(merger.report_unreported_lost(collect), 1u);
    ASSERT_EQ(events.size(), 5u);
    EXPECT_EQ(events[4].type, EventType::Lost);
    EXPECT_EQ(events[4].cpu, 0u);
    EXPECT_EQ(events[4].lost, 3u);
    EXPECT_EQ(events[4].ts, 30u); // after everything delivered
    // Nothing is reported twice.
    EXPECT_EQ(merger.report_unreported_lost(collect), 0u);
    cpu1.meta().lost_total = 2;
    EXPECT_EQ(merger.report_unreported_lost(collect), 1u);
    EXPECT_EQ(events.back().cpu, 1u);
    EXPECT_EQ(events.back().lost, 2u);
}

TEST(RingMerger, ReportsTheRemainderPerProbeFromTheStatsArea) {
    FakeRing cpu0(0, 4096);
    alignas(8) unsigned char buf[sizeof(fhook_rec_lost) + sizeof(fhook_lost_probe)] = {};
    auto* lost = reinterpret_cast<fhook_rec_lost*>(buf);
    lost->hdr = test::header(FHOOK_REC_LOST, sizeof(buf), 20, 0);
    lost->lost = 5;
    lost->first_seq = 3;
    lost->last_seq = 7;
    lost->nr_probes = 1;
    lost->probes[0] = fhook_lost_probe{1, 0, 5};
    cpu0.push(func_rec(10, 0));
    cpu0.write(buf, sizeof(buf));
    cpu0.push(func_rec(30, 0));
    cpu0.publish();
    test::FakeStats stats(2);
    stats.at(0, 1).dropped = 8; // 3 after the last record
    stats.at(0, 2).dropped = 4; // 4, none reported in band
    stats.at(1, 1).dropped = 0;
    RingMerger merger({cpu0.view()}, stats.view());
    std::vector<Event> events;
    auto collect = [&](const fhook_rec* rec) { events.push_back(*decode(rec)); };
    EXPECT_EQ(merger.drain(collect), 3u);
    EXPECT_EQ(merger.report_unreported_lost(collect), 1u);
    ASSERT_EQ(events.size(), 4u);
    const Event& rest = events[3];
    EXPECT_EQ(rest.type, EventType::Lost);
    EXPECT_EQ(rest.lost, 7u);
    EXPECT_EQ(rest.first_seq, kSeqUnknown);
    ASSERT_EQ(rest.lost_probes.size(), 2u);
    EXPECT_EQ(rest.lost_probes[0].probe_id, 1u);
    EXPECT_EQ(rest.lost_probes[0].count, 3u);
    EXPECT_EQ(rest.lost_probes[1].probe_id, 2u);
    EXPECT_EQ(rest.lost_probes[1].count, 4u);
    EXPECT_EQ(merger.report_unreported_lost(collect), 0u);
}

TEST(StatsView, HitsElsewhere) {
    test::FakeStats stats(1);
    EXPECT_FALSE(stats.view().hits_elsewhere(1));
    stats.set_hits_elsewhere((1ULL << 0) | (1ULL << 63));
    const StatsView view = stats.view();
    EXPECT_TRUE(view.hits_elsewhere(1));
    EXPECT_FALSE(view.hits_elsewhere(2));
    EXPECT_TRUE(view.hits_elsewhere(FHOOK_MAX_PROBES));
    EXPECT_FALSE(view.hits_elsewhere(0));
    EXPECT_FALSE(view.hits_elsewhere(FHOOK_MAX_PROBES + 1));
    EXPECT_FALSE(StatsView().hits_elsewhere(1));
}

TEST(RingMerger, AcknowledgesSequenceNumbers) {
    FakeRing cpu0(0, 4096);
    auto a = func_rec(10, 0);
    a.hdr.seq = 7;
    auto b = func_rec(11, 0);
    b.hdr.seq = 8;
    cpu0.push(a);
    cpu0.push(b);
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    merger.drain([](const fhook_rec*) {});
    EXPECT_EQ(cpu0.cons().seq_read, 9u);
}

// FN records carry no number: the merger counts them on from the COMM
// record whose number the first one shares, and past a LOST record's range
TEST(RingMerger, CountsSequenceNumbersOfFnRecords) {
    FakeRing cpu0(0, 4096);
    auto comm = test::comm_rec(100, "cat", 0);
    comm.hdr.seq = 20;
    cpu0.push(comm);
    cpu0.push(test::fn_rec(10, 0));
    cpu0.push(test::fn_rec(11, 0));
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    EXPECT_EQ(merger.drain([](const fhook_rec*) {}), 2u);
    EXPECT_EQ(cpu0.cons().seq_read, 22u) << "records 20 and 21 read";
    auto lost = lost_rec(12, 0, 5);
    lost.first_seq = 22;
    lost.last_seq = 26;
    cpu0.push(lost);
    cpu0.push(test::fn_rec(13, 0));
    cpu0.publish();
    merger.drain([](const fhook_rec*) {});
    EXPECT_EQ(cpu0.cons().seq_read, 28u) << "22-26 lost, 27 read";
    // FN records before a numbered record in one pass count before it
    cpu0.push(test::fn_rec(14, 0));
    cpu0.push(test::fn_rec(15, 0));
    auto f = func_rec(16, 0);
    f.hdr.seq = 30;
    cpu0.push(f);
    cpu0.push(test::fn_rec(17, 0));
    cpu0.publish();
    merger.drain([](const fhook_rec*) {});
    EXPECT_EQ(cpu0.cons().seq_read, 32u) << "28, 29, 30 and 31 read";
}

TEST(RingMerger, OverwriteRingIsReadFromTheOldestRecord) {
    FakeRing cpu0(0, 4096);
    for (std::uint64_t ts = 1; ts <= 5; ts++) {
        cpu0.push(func_rec(ts, 0));
    }
    cpu0.publish();
    // The producer evicted the first two records; the consumer never read.
    cpu0.meta().data_oldest = 2 * sizeof(fhook_rec_func);
    RingView view = cpu0.view();
    view.overwrite = true;
    RingMerger merger({view});
    std::vector<std::uint64_t> ts;
    EXPECT_EQ(merger.drain([&](const fhook_rec* rec) { ts.push_back(rec->ts); }), 3u);
    EXPECT_EQ(ts, (std::vector<std::uint64_t>{3, 4, 5}));
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
    // Read records are not read again; the consumer's tail wins over oldest.
    cpu0.push(func_rec(6, 0));
    cpu0.publish();
    ts.clear();
    EXPECT_EQ(merger.drain([&](const fhook_rec* rec) { ts.push_back(rec->ts); }), 1u);
    EXPECT_EQ(ts, (std::vector<std::uint64_t>{6}));
}

TEST(RingMerger, OverwriteRingEvictedWhileCopyingDeliversNothing) {
    FakeRing cpu0(0, 4096);
    for (std::uint64_t ts = 1; ts <= 3; ts++) {
        cpu0.push(func_rec(ts, 0));
    }
    cpu0.publish();
    cpu0.meta().data_oldest = cpu0.pos(); // everything evicted
    RingView view = cpu0.view();
    view.overwrite = true;
    RingMerger merger({view});
    EXPECT_EQ(merger.drain([](const fhook_rec*) {}), 0u);
    EXPECT_EQ(cpu0.tail(), cpu0.pos());
}

TEST(RingMerger, LostCountNotAdvancedWhenTheCallbackThrows) {
    FakeRing cpu0(0, 4096);
    cpu0.push(lost_rec(20, 0, 5));
    cpu0.meta().lost_total = 5;
    cpu0.publish();
    RingMerger merger({cpu0.view()});
    EXPECT_THROW(merger.drain([](const fhook_rec*) { throw std::runtime_error("x"); }),
                 std::runtime_error);
    std::uint64_t lost = 0;
    auto sum = [&](const fhook_rec* rec) {
        lost += reinterpret_cast<const fhook_rec_lost*>(rec)->lost;
    };
    merger.drain(sum);
    merger.report_unreported_lost(sum);
    EXPECT_EQ(lost, 5u);
}

TEST(CollectRecords, ReturnsPointersIntoTheRing) {
    FakeRing ring(0, 4096);
    ring.push(func_rec(1, 0));
    ring.push(func_rec(2, 0));
    ring.publish();
    RingView view = ring.view();
    std::vector<const fhook_rec*> out;
    collect_records(view, 0, ring.pos(), out);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(reinterpret_cast<const std::byte*>(out[0]), view.data);
    EXPECT_EQ(reinterpret_cast<const std::byte*>(out[1]), view.data + sizeof(fhook_rec_func));
}

} // namespace
} // namespace fhook
