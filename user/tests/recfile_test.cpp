// Record files (fhook record / report) and the NDJSON formatter.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/sys/ksyms.hpp>

#include "records.hpp"

namespace fhook {
namespace {

const char* const kKallsyms = "ffffffff812a0000 T vfs_read\n"
                              "ffffffff812a0400 t ksys_read\n"
                              "ffffffff812b0000 T vfs_write\n"
                              "ffffffff812b0800 t ksys_write\n"
                              "ffffffff81400000 T unrelated_function\n"
                              "ffffffffc0100000 t loop_queue_rq\t[loop]\n"
                              "ffffffffc0100200 t lo_rw_aio\t[loop]\n";

// A temporary file that disappears with the test.
class TempFile {
public:
    TempFile() {
        char tmpl[] = "/tmp/fhook-recfile-XXXXXX";
        fd_.reset(::mkstemp(tmpl));
        path_ = tmpl;
    }
    ~TempFile() { ::unlink(path_.c_str()); }
    const std::string& path() const { return path_; }
    UniqueFd take() { return std::move(fd_); }
    std::string contents() const {
        std::ifstream in(path_, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    void write(const std::string& bytes) const {
        std::ofstream out(path_, std::ios::binary | std::ios::trunc);
        out << bytes;
    }

private:
    UniqueFd fd_;
    std::string path_;
};

// Records of a small session on 2 CPUs: function events and a LOST record,
// numbered as the module numbers them.
std::vector<std::vector<std::byte>> sample_records() {
    std::vector<std::vector<std::byte>> recs;
    auto push = [&recs](const auto& r) {
        std::vector<std::byte> b(sizeof(r));
        std::memcpy(b.data(), &r, sizeof(r));
        recs.push_back(std::move(b));
    };
    push(test::comm_rec(94, "cat", 1));
    push(test::func_rec(2431445000, 1, 0xffffffff812a0000, 0xffffffff812a0433, 94));
    push(test::comm_rec(95, "sh\"x\\", 0));
    push(test::func_rec(2431446000, 0, 0xffffffff812b0000, 0xffffffff812b0821, 95));
    fhook_rec_lost lost;
    std::memset(&lost, 0, sizeof(lost));
    lost.hdr = test::header(FHOOK_REC_LOST, sizeof(lost), 2431447000, 1);
    lost.lost = 1234;
    lost.hdr.seq = 1;
    lost.first_seq = 1;
    lost.last_seq = 1234;
    push(lost);
    // an address in a module, a parent without a symbol near it
    auto comm = test::comm_rec(96, "kworker/1:0", 1);
    auto func = test::func_rec(2431448000, 1, 0xffffffffc0100210, 0x1234, 96);
    comm.hdr.seq = func.hdr.seq = 1235;
    push(comm);
    push(func);
    return recs;
}

std::string format_all(const std::vector<std::vector<std::byte>>& recs, const Ksyms& ksyms,
                       bool json, const ProbeTable* probes = nullptr) {
    TextFormatter text(ksyms);
    JsonFormatter js(ksyms);
    text.set_probes(probes);
    js.set_probes(probes);
    std::string out;
    Decoder decoder;
    for (const auto& r : recs) {
        auto ev = decoder.decode(reinterpret_cast<const fhook_rec*>(r.data()));
        if (!ev) {
            continue; // a COMM record
        } else if (json) {
            js.format(*ev, out);
        } else {
            text.format(*ev, out);
        }
    }
    return out;
}

Stats two_cpu_stats() {
    Stats st;
    st.per_cpu = {CpuStats{10, 8, 2, 0}, CpuStats{5, 5, 0, 1}};
    st.total = CpuStats{15, 13, 2, 1};
    return st;
}

// Writes the sample into `file` (chunks of `chunk` bytes) and returns it.
void write_sample(TempFile& file, std::size_t chunk = 1 << 20, bool finish = true) {
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    RecordWriter::Info info;
    info.nr_cpus = 2;
    info.kernel_release = "6.1.0-test";
    info.command = "fhook record -o x vfs_read";
    info.probes = {{1, "vfs_read vfs_write"}};
    RecordWriter w(file.take(), file.path(), info, chunk);
    for (const auto& r : sample_records()) {
        w.add(reinterpret_cast<const fhook_rec*>(r.data()));
    }
    if (finish) {
        w.finish(live, two_cpu_stats(), {RecordedProbe{1, "vfs_read vfs_write", two_cpu_stats()}});
    } else {
        w.flush();
    }
}

std::string report_text(const RecordFile& f, bool json, const ProbeTable* probes = nullptr) {
    const Ksyms ksyms = Ksyms::parse(f.ksyms_text());
    TextFormatter text(ksyms);
    JsonFormatter js(ksyms);
    text.set_probes(probes);
    js.set_probes(probes);
    std::string out;
    Decoder decoder;
    f.for_each_record([&](const fhook_rec* rec) {
        auto ev = decoder.decode(rec);
        if (!ev) {
            return; // a COMM record, or of a type this fhook does not know
        } else if (json) {
            js.format(*ev, out);
        } else {
            text.format(*ev, out);
        }
    });
    return out;
}

TEST(RecordFile, ReportPrintsExactlyWhatTraceWouldHave) {
    for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{64}}) {
        TempFile file;
        write_sample(file, chunk);
        const RecordFile f = RecordFile::open(file.path());
        EXPECT_FALSE(f.truncated()) << f.truncation();
        const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
        EXPECT_EQ(report_text(f, false), format_all(sample_records(), live, false));
        EXPECT_EQ(report_text(f, true), format_all(sample_records(), live, true));
        // the symbols are a subset: only those of addresses seen
        EXPECT_NE(f.ksyms_text().find("vfs_read"), std::string_view::npos);
        EXPECT_NE(f.ksyms_text().find("lo_rw_aio\t[loop]"), std::string_view::npos)
            << f.ksyms_text();
        EXPECT_EQ(f.ksyms_text().find("unrelated_function"), std::string_view::npos);
    }
}

TEST(RecordFile, EverySymbolSeenIsKeptThroughTheRepeatFilter) {
    // 1,500 functions 0x100 apart, called in an order that revisits each
    // and makes them collide in the writer's filter of recent addresses
    std::string kallsyms;
    for (int i = 0; i < 1500; i++) {
        char line[64];
        std::snprintf(line, sizeof(line), "%016llx T fn_%d\n",
                      0xffffffff81000000ULL + 0x100ULL * static_cast<unsigned>(i), i);
        kallsyms += line;
    }
    const Ksyms live = Ksyms::parse(std::string_view(kallsyms));
    TempFile file;
    RecordWriter::Info info;
    info.nr_cpus = 1;
    {
        RecordWriter w(file.take(), file.path(), info);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 1500; i++) {
                const int fn = (i * 7 + round * 11) % 1500;
                const auto rec = test::func_rec(
                    1000 + i, 0, 0xffffffff81000000ULL + 0x100ULL * static_cast<unsigned>(fn),
                    0xffffffff81000010ULL, 1);
                if (round == 1) {
                    // as a pass, twice in a row (the repeat of a call site)
                    const fhook_rec* recs[1] = {&rec.hdr};
                    const RingSpan span{0, std::as_bytes(std::span(&rec, 1)), recs, 1};
                    w.add_pass(std::span(&span, 1));
                    w.add_pass(std::span(&span, 1));
                } else {
                    w.add(&rec.hdr);
                }
            }
        }
        EXPECT_EQ(w.records(), 4u * 1500u);
        w.finish(live, Stats{}, {});
    }
    const RecordFile f = RecordFile::open(file.path());
    const Ksyms back = Ksyms::parse(f.ksyms_text());
    for (int i = 0; i < 1500; i++) {
        const auto ref = back.lookup(0xffffffff81000000ULL + 0x100ULL * static_cast<unsigned>(i));
        ASSERT_TRUE(ref) << "fn_" << i;
        EXPECT_EQ(ref->name, "fn_" + std::to_string(i));
    }
}

TEST(RecordFile, PassRepeatsOfACallSiteStillNoteNewOnes) {
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    TempFile file;
    RecordWriter::Info info;
    info.nr_cpus = 1;
    {
        RecordWriter w(file.take(), file.path(), info);
        // vfs_read <- ksys_read twice, vfs_write <- ksys_write twice, then
        // vfs_read <- a module's function
        const std::uint64_t calls[][2] = {{0xffffffff812a0000, 0xffffffff812a0433},
                                          {0xffffffff812a0000, 0xffffffff812a0433},
                                          {0xffffffff812b0000, 0xffffffff812b0821},
                                          {0xffffffff812b0000, 0xffffffff812b0821},
                                          {0xffffffff812a0000, 0xffffffffc0100210}};
        for (const auto& c : calls) {
            const auto rec = test::func_rec(1000, 0, c[0], c[1], 1);
            const fhook_rec* recs[1] = {&rec.hdr};
            const RingSpan span{0, std::as_bytes(std::span(&rec, 1)), recs, 1};
            w.add_pass(std::span(&span, 1));
        }
        w.finish(live, Stats{}, {});
    }
    const RecordFile f = RecordFile::open(file.path());
    for (const char* name : {"vfs_read", "ksys_read", "vfs_write", "ksys_write", "lo_rw_aio"}) {
        EXPECT_NE(f.ksyms_text().find(name), std::string_view::npos) << name;
    }
}

TEST(RecordFile, KprobeRepeatsSkipNotesButNeverAfterAFunctionsRecord) {
    // a function record, then kretprobe records with the same two
    // addresses: the kretprobe also needs vfs_read's size (the symbol
    // after it), which the function record did not note
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    TempFile file;
    RecordWriter::Info info;
    info.nr_cpus = 1;
    {
        RecordWriter w(file.take(), file.path(), info);
        const auto func = test::func_rec(1000, 0, 0xffffffff812a0000, 0xffffffffc0100210, 1);
        fhook_rec_probe ret;
        std::memset(&ret, 0, sizeof(ret));
        ret.hdr = test::header(FHOOK_REC_KRETPROBE, sizeof(ret), 1001, 0);
        ret.ip = func.ip;
        ret.ret_ip = func.parent_ip;
        const fhook_rec* recs[3] = {&func.hdr, &ret.hdr, &ret.hdr};
        for (const fhook_rec* rec : recs) {
            const RingSpan span{0, std::as_bytes(std::span(rec, 1)), std::span(&rec, 1), 1};
            w.add_pass(std::span(&span, 1));
        }
        EXPECT_EQ(w.records(), 3u);
        w.finish(live, Stats{}, {});
    }
    const RecordFile f = RecordFile::open(file.path());
    for (const char* name : {"vfs_read", "ksys_read", "lo_rw_aio"}) {
        EXPECT_NE(f.ksyms_text().find(name), std::string_view::npos) << name;
    }
}

// A record's bytes
std::vector<std::byte> bytes_of(const fhook_rec* rec) {
    std::vector<std::byte> b(rec->size);
    std::memcpy(b.data(), rec, rec->size);
    return b;
}

// A kprobe's hits at a function's entry as FHOOK_REC_FN_KPROBE records,
// among FN records and (some) its FHOOK_REC_KPROBE records, report as the
// stream of its KPROBE records would: the same events, numbers and names,
// written a record at a time or a ring's pass at a time (fhook record);
// the file keeps the kprobe's symbol and the one after it (its size)
TEST(RecordFile, FnKprobeRecordsReportAsTheirKprobeRecords) {
    const auto no_symbols = [](std::string_view) { return std::optional<std::uint64_t>(0); };
    ProbeTable probes;
    probes.add(2, parse_kprobe("p:fh/w vfs_write a=%di:u64 b=%si:x64", no_symbols));
    const std::uint64_t vfs_write = 0xffffffff812b0000, caller = 0xffffffff81400010;
    const std::uint32_t ctx = 0x10000 | FHOOK_FN_CTX_IRQS_OFF | 2;
    // the kprobe's hits on CPU 1 (ts, a, b), the first named by a COMM
    // record numbered 10, an FN record (number 11) after the first
    const std::uint64_t hits[][3] = {
        {1000, 3, 0x8000}, {1002, 4, 0x10}, {1003, 4, 0x10}, {1005, 5, 0}};
    const auto stream = [&](bool all_fast, bool as_kprobes) {
        std::vector<std::vector<std::byte>> recs;
        auto comm = test::comm_rec(94, "cat", 1);
        comm.hdr.ts = hits[0][0];
        comm.hdr.seq = 10;
        recs.push_back(bytes_of(&comm.hdr));
        std::uint32_t seq = 10;
        for (std::size_t i = 0; i < std::size(hits); i++) {
            const auto& h = hits[i];
            const bool fast = i > 0 || all_fast;
            test::RecBuf r = test::kprobe_rec(h[0], 1, vfs_write, {h[1], h[2]}, 94);
            r.rec()->probe_id = 2;
            r.rec()->flags = FHOOK_CTX_IRQS_OFF | FHOOK_CTX_HARDIRQ;
            r.rec()->preempt = 2;
            r.rec()->seq = seq++;
            if (fast && !as_kprobes) {
                r = test::fn_kprobe_rec(h[0], 1, vfs_write, caller, {h[1], h[2]}, 94, ctx);
                reinterpret_cast<fhook_rec_fn*>(r.rec())->probe_id = 2;
            }
            recs.push_back(bytes_of(r.rec()));
            if (i == 0) {
                const auto fn = test::fn_rec(1001, 1, 0xffffffff812a0000, 0xffffffff812a0433, 94);
                recs.push_back(bytes_of(reinterpret_cast<const fhook_rec*>(&fn)));
                seq++;
            }
        }
        return recs;
    };
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    for (const bool all_fast : {false, true}) {
        const auto kprobes = stream(all_fast, true);
        const auto recs = stream(all_fast, false);
        ASSERT_EQ(recs.size(), 6u);
        EXPECT_EQ(reinterpret_cast<const fhook_rec*>(recs[3].data())->type, FHOOK_REC_FN_KPROBE);
        const std::string want = format_all(kprobes, live, false, &probes);
        ASSERT_NE(want.find("w: (vfs_write+0x0/0x800) a=4 b=0x10"), std::string::npos) << want;
        EXPECT_EQ(format_all(recs, live, false, &probes), want);
        for (const bool passes : {false, true}) {
            TempFile file;
            RecordWriter::Info info;
            info.nr_cpus = 2;
            {
                RecordWriter w(file.take(), file.path(), info);
                if (passes) { // as fhook record writes them: spans of the ring
                    test::FakeRing ring(1, 4096);
                    for (const auto& r : recs) {
                        ring.write(r.data(), r.size());
                    }
                    ring.publish();
                    RingMerger merger({ring.view()});
                    merger.drain_spans([&](std::span<const RingSpan> spans) { w.add_pass(spans); });
                } else {
                    for (const auto& r : recs) {
                        w.add(reinterpret_cast<const fhook_rec*>(r.data()));
                    }
                }
                EXPECT_EQ(w.records(), 5u);
                w.finish(live, Stats{}, {});
            }
            const RecordFile f = RecordFile::open(file.path());
            EXPECT_EQ(f.header().version, kRecFormatVersion);
            EXPECT_EQ(report_text(f, false, &probes), want) << all_fast << passes;
            EXPECT_EQ(report_text(f, true, &probes), format_all(kprobes, live, true, &probes))
                << all_fast << passes;
            for (const char* name : {"vfs_write", "ksys_write", "vfs_read", "ksys_read"}) {
                EXPECT_NE(f.ksyms_text().find(name), std::string_view::npos)
                    << name << " " << all_fast << passes;
            }
        }
    }
}

// A kprobe record (either kind) repeating the last kprobe record's
// address is not noted again, but one whose address a graph record gave
// last is: the graph record did not note its size
TEST(RecordFile, KprobeNotesAreSkippedAfterAKprobeNotAfterAGraphRecord) {
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    const std::uint64_t vfs_read = 0xffffffff812a0000, vfs_write = 0xffffffff812b0000;
    fhook_rec_graph_ent graph;
    std::memset(&graph, 0, sizeof(graph));
    graph.hdr = test::header(FHOOK_REC_GRAPH_ENT, sizeof(graph), 1001, 0);
    graph.ip = vfs_write;
    for (const bool fast : {false, true}) {
        TempFile file;
        RecordWriter::Info info;
        info.nr_cpus = 1;
        {
            RecordWriter w(file.take(), file.path(), info);
            const auto first = test::fn_kprobe_rec(1000, 0, vfs_read, 0xffffffff81400010, {1});
            const auto again = test::kprobe_rec(1000, 0, vfs_read, {1});
            const auto hit = fast ? test::fn_kprobe_rec(1002, 0, vfs_write, 0xffffffff81400010, {1})
                                  : test::kprobe_rec(1002, 0, vfs_write, {1});
            const fhook_rec* const recs[] = {first.rec(), again.rec(), &graph.hdr, hit.rec()};
            for (const fhook_rec* rec : recs) {
                const RingSpan span{0, std::as_bytes(std::span(rec, 1)), std::span(&rec, 1), 1};
                w.add_pass(std::span(&span, 1));
            }
            w.finish(live, Stats{}, {});
        }
        const RecordFile f = RecordFile::open(file.path());
        for (const char* name : {"vfs_read", "ksys_read", "vfs_write", "ksys_write"}) {
            EXPECT_NE(f.ksyms_text().find(name), std::string_view::npos) << name << " " << fast;
        }
        EXPECT_EQ(f.ksyms_text().find("unrelated_function"), std::string_view::npos)
            << "an FN_KPROBE record's caller is no address of its event";
    }
}

TEST(RecordFile, PassesWriteWhatCopiesWrite) {
    // the sample laid out as two CPUs' rings (8-byte aligned, back to
    // back, records of unknown type between them): odd records on CPU 1,
    // so the pass is out of timestamp order; the last one copied with
    // add() (order kept across the two)
    const auto recs = sample_records();
    std::vector<std::uint64_t> mem[2] = {std::vector<std::uint64_t>(4096),
                                         std::vector<std::uint64_t>(4096)};
    std::vector<const fhook_rec*> at[2];
    std::size_t off[2] = {0, 0};
    unsigned char unknown[56] = {};
    const fhook_rec h = test::header(99, 52, 0, 0);
    std::memcpy(unknown, &h, sizeof(h));
    for (std::size_t i = 0; i + 1 < recs.size(); i++) {
        const std::size_t c = i % 2;
        char* base = reinterpret_cast<char*>(mem[c].data());
        std::memcpy(base + off[c], recs[i].data(), recs[i].size());
        at[c].push_back(reinterpret_cast<const fhook_rec*>(base + off[c]));
        off[c] += (recs[i].size() + 7) & ~std::size_t{7};
        std::memcpy(base + off[c], unknown, sizeof(unknown));
        off[c] += sizeof(unknown);
    }
    RingSpan spans[2];
    for (int c = 0; c < 2; c++) {
        spans[c].cpu = c;
        spans[c].bytes = std::as_bytes(std::span(mem[c])).first(off[c]);
        spans[c].records = at[c];
        spans[c].events = static_cast<std::size_t>(
            std::count_if(at[c].begin(), at[c].end(),
                          [](const fhook_rec* rec) { return rec->type != FHOOK_REC_COMM; }));
    }
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{64}}) {
        TempFile file;
        RecordWriter::Info info;
        info.nr_cpus = 2;
        {
            RecordWriter w(file.take(), file.path(), info, chunk);
            w.add_pass(spans);
            w.add(reinterpret_cast<const fhook_rec*>(recs.back().data()));
            EXPECT_EQ(w.records(), recs.size() - 3); // the names of 3 tasks not counted
            w.finish(live, Stats{}, {});
        }
        const RecordFile f = RecordFile::open(file.path());
        EXPECT_EQ(report_text(f, false), format_all(recs, live, false)) << "chunk " << chunk;
        EXPECT_NE(f.ksyms_text().find("lo_rw_aio\t[loop]"), std::string_view::npos);
    }
}

TEST(RecordFile, HeaderInfoProbesAndStatsRoundTrip) {
    TempFile file;
    write_sample(file);
    const RecordFile f = RecordFile::open(file.path());
    EXPECT_EQ(f.header().nr_cpus, 2u);
    EXPECT_EQ(f.header().abi_version, static_cast<std::uint32_t>(FHOOK_ABI_VERSION));
    EXPECT_EQ(f.header().clock, 1u);
    EXPECT_GT(f.header().start_real_ns, f.header().start_mono_ns);
    EXPECT_EQ(f.info("kernel_release"), "6.1.0-test");
    EXPECT_EQ(f.info("command"), "fhook record -o x vfs_read");
    EXPECT_FALSE(f.info("fhook_version").empty());
    ASSERT_EQ(f.probes().size(), 1u);
    EXPECT_EQ(f.probes()[0].id, 1u);
    EXPECT_EQ(f.probes()[0].description, "vfs_read vfs_write");
    ASSERT_TRUE(f.has_stats());
    EXPECT_EQ(f.session_stats().total.hits, 15u);
    EXPECT_EQ(f.session_stats().total.lost, 2u);
    ASSERT_EQ(f.session_stats().per_cpu.size(), 2u);
    EXPECT_EQ(f.session_stats().per_cpu[1].missed, 1u);
    EXPECT_EQ(f.probes()[0].stats.total.written, 13u);
}

TEST(RecordFile, TraceEventFormatsRoundTripAndParse) {
    // a format this machine may not have: report decodes with the recorded one
    const std::string format =
        "name: fhk_ev\nID: 4242\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:int answer;\toffset:8;\tsize:4;\tsigned:1;\n\n"
        "print fmt: \"answer=%d\", REC->answer\n";
    TempFile file;
    RecordWriter::Info info;
    info.nr_cpus = 1;
    info.probes = {{1, "t:fhk:fhk_ev"}};
    info.events = {{"fhk:fhk_ev", 4242, format}};
    RecordWriter w(file.take(), file.path(), info);
    w.finish(Ksyms{}, Stats{}, {});
    const RecordFile f = RecordFile::open(file.path());
    const RecordedEvent* e = f.event("fhk:fhk_ev");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->id, 4242u);
    EXPECT_EQ(e->format, format);
    EXPECT_EQ(f.event("fhk:other"), nullptr);
    const KprobeDef def = parse_tracepoint(
        "t:fhk:fhk_ev",
        [&f](const std::string& s, const std::string& ev) -> std::optional<TraceEventFiles> {
            if (const RecordedEvent* r = f.event(s + ":" + ev)) {
                return TraceEventFiles{r->id, r->format};
            }
            return std::nullopt;
        });
    EXPECT_EQ(def.tp_id, 4242u);
    ASSERT_EQ(def.fields.size(), 1u);
    EXPECT_EQ(def.fields[0].name, "answer");

    // an entry whose length runs past the chunk: refused, not read past
    std::string bytes = file.contents();
    const auto at = bytes.find("fhk:fhk_ev\t4242\t");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, std::string("fhk:fhk_ev\t4242\t").size(), "fhk:fhk_ev\t4242\t9");
    file.write(bytes);
    EXPECT_THROW(RecordFile::open(file.path()), Error);
}

TEST(RecordFile, WithoutEndIsTruncatedButReadable) {
    TempFile file;
    write_sample(file, 1 << 20, false);
    const RecordFile f = RecordFile::open(file.path());
    EXPECT_TRUE(f.truncated());
    EXPECT_NE(f.truncation().find("no end marker"), std::string::npos);
    std::size_t n = 0;
    f.for_each_record([&n](const fhook_rec*) { n++; });
    EXPECT_EQ(n, 7u); // 4 and the names of 3 tasks
}

TEST(RecordFile, CutInsideRecordsKeepsTheWholeOnes) {
    TempFile file;
    write_sample(file); // one Records chunk with all seven records
    const std::string bytes = file.contents();
    // cat's name is the first record
    const std::size_t first = bytes.find("cat") - offsetof(fhook_rec_comm, comm);
    TempFile cut;
    cut.write(bytes.substr(0, first + 2 * (sizeof(fhook_rec_comm) + sizeof(fhook_rec_func)) + 10));
    const RecordFile f = RecordFile::open(cut.path());
    EXPECT_TRUE(f.truncated());
    std::vector<std::uint64_t> ts;
    f.for_each_record([&ts](const fhook_rec* rec) {
        if (rec->type != FHOOK_REC_COMM) {
            ts.push_back(rec->ts);
        }
    });
    EXPECT_EQ(ts, (std::vector<std::uint64_t>{2431445000, 2431446000}));
}

TEST(RecordFile, CutAnywhereNeverCrashes) {
    TempFile file;
    write_sample(file, 64);
    const std::string bytes = file.contents();
    for (std::size_t len = 0; len < bytes.size(); len++) {
        TempFile cut;
        cut.write(bytes.substr(0, len));
        try {
            const RecordFile f = RecordFile::open(cut.path());
            EXPECT_TRUE(f.truncated()) << "cut at " << len;
            f.for_each_record([](const fhook_rec* rec) { (void)decode(rec); });
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Runtime);
            EXPECT_NE(std::string(e.what()).find(cut.path()), std::string::npos) << e.what();
        }
    }
}

// A file of format version 2, as fhook wrote them before the records'
// header lost its comm (ABI 2: 48 bytes, the name after `seq`).
std::string abi2_file(bool complete = true) {
    std::string file(sizeof(RecFileHeader), '\0');
    RecFileHeader h{};
    std::memcpy(h.magic, kRecMagic, sizeof(h.magic));
    h.version = 2;
    h.header_size = sizeof(h);
    h.abi_version = 2;
    h.nr_cpus = 2;
    h.clock = 1;
    std::memcpy(file.data(), &h, sizeof(h));
    std::string recs;
    const auto old = [&recs](const auto& rec, const char* comm) {
        std::string r(reinterpret_cast<const char*>(&rec), sizeof(fhook_rec));
        std::string name(16, '\0');
        std::memcpy(name.data(), comm, std::strlen(comm));
        r += name;
        r.append(reinterpret_cast<const char*>(&rec) + sizeof(fhook_rec),
                 sizeof(rec) - sizeof(fhook_rec));
        auto* hdr = reinterpret_cast<fhook_rec*>(r.data());
        hdr->size = static_cast<std::uint16_t>(r.size());
        recs += r;
    };
    old(test::func_rec(2431445000, 1, 0xffffffff812a0000, 0xffffffff812a0433, 94), "cat");
    old(test::func_rec(2431446000, 0, 0xffffffff812b0000, 0xffffffff812b0821, 95), "sh");
    old(test::lost_rec(2431447000, 1, 1234), "");
    old(test::func_rec(2431448000, 1, 0xffffffff812a0000, 0xffffffff812a0433, 94), "cat");
    old(test::func_rec(2431449000, 1, 0xffffffff812a0000, 0xffffffff812a0433, 94), "ls");
    const auto chunk = [&file](RecChunk type, const std::string& payload) {
        const RecChunkHeader ch{static_cast<std::uint32_t>(type), 0, payload.size()};
        file.append(reinterpret_cast<const char*>(&ch), sizeof(ch));
        file += payload;
        file.append((8 - payload.size() % 8) % 8, '\0');
    };
    chunk(RecChunk::Records, recs);
    if (complete) {
        chunk(RecChunk::End, "");
    }
    return file;
}

TEST(RecordFile, Version2FilesReadAsAbi3RecordsWithTheirNames) {
    const std::string bytes = abi2_file();
    const RecordFile f =
        RecordFile::parse(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size(), "old");
    EXPECT_FALSE(f.truncated());
    Decoder decoder;
    std::vector<std::string> seen;
    f.for_each_record([&](const fhook_rec* rec) {
        if (auto ev = decoder.decode(rec)) {
            char ip[32];
            std::snprintf(ip, sizeof(ip), "%llx", static_cast<unsigned long long>(ev->ip));
            seen.push_back(std::to_string(ev->ts) + " " + ev->comm + "-" + std::to_string(ev->pid) +
                           " " + ip + " " + std::to_string(ev->lost));
        }
    });
    EXPECT_EQ(seen,
              (std::vector<std::string>{
                  "2431445000 cat-94 ffffffff812a0000 0", "2431446000 sh-95 ffffffff812b0000 0",
                  "2431447000 <...>-100 0 1234", "2431448000 cat-94 ffffffff812a0000 0",
                  "2431449000 ls-94 ffffffff812a0000 0", // a name change
              }));
    // cut inside the last record: the whole ones still come
    std::string cut = abi2_file(false);
    cut.resize(cut.size() - 20);
    const RecordFile c =
        RecordFile::parse(reinterpret_cast<const std::byte*>(cut.data()), cut.size(), "cut");
    EXPECT_TRUE(c.truncated());
    std::size_t n = 0;
    c.for_each_record([&n](const fhook_rec* rec) { n += rec->type == FHOOK_REC_FUNC; });
    EXPECT_EQ(n, 3u);
}

// A version 3 file (ABI 3: FUNC records only) reads as it always did; FN
// records print as FUNC records of the same events, and their addresses'
// symbols are kept, in a version 4 file (ABI 4) as in one of this version
TEST(RecordFile, Version3FilesReadAndFnRecordsPrintAsFuncRecords) {
    const Ksyms live = Ksyms::parse(std::string_view(kKallsyms));
    TempFile v5;
    write_sample(v5);
    std::string bytes = v5.contents();
    ASSERT_EQ(bytes[8], static_cast<char>(kRecFormatVersion));
    bytes[8] = 3;  // format version
    bytes[16] = 3; // abi_version
    TempFile v3;
    v3.write(bytes);
    const RecordFile f3 = RecordFile::open(v3.path());
    EXPECT_EQ(f3.header().version, 3u);
    EXPECT_EQ(report_text(f3, false), format_all(sample_records(), live, false));

    // the same records with the functions' as FN records (their numbers
    // follow the COMM records' 0, as the module's would; a COMM record
    // stamped as its record, as the module stamps it)
    std::vector<std::vector<std::byte>> fns;
    auto recs = sample_records();
    for (std::size_t i = 0; i + 1 < recs.size(); i++) {
        auto* rec = reinterpret_cast<fhook_rec*>(recs[i].data());
        if (rec->type == FHOOK_REC_COMM) {
            rec->ts = reinterpret_cast<const fhook_rec*>(recs[i + 1].data())->ts;
        }
    }
    for (auto r : recs) {
        const auto* rec = reinterpret_cast<const fhook_rec*>(r.data());
        if (rec->type == FHOOK_REC_FUNC) {
            const auto* f = reinterpret_cast<const fhook_rec_func*>(rec);
            const auto fn = test::fn_rec(rec->ts, rec->cpu, f->ip, f->parent_ip, rec->pid);
            r.resize(sizeof(fn));
            std::memcpy(r.data(), &fn, sizeof(fn));
        }
        fns.push_back(std::move(r));
    }
    TempFile file;
    {
        RecordWriter::Info info;
        info.nr_cpus = 2;
        info.probes = {{1, "vfs_read vfs_write"}};
        RecordWriter w(file.take(), file.path(), info);
        for (const auto& r : fns) {
            w.add(reinterpret_cast<const fhook_rec*>(r.data()));
        }
        w.finish(live, two_cpu_stats(), {RecordedProbe{1, "vfs_read vfs_write", two_cpu_stats()}});
    }
    bytes = file.contents();
    ASSERT_EQ(bytes[8], static_cast<char>(kRecFormatVersion));
    bytes[8] = 4;  // format version
    bytes[16] = 4; // abi_version
    TempFile v4;
    v4.write(bytes);
    for (const std::string& path : {file.path(), v4.path()}) {
        const RecordFile f = RecordFile::open(path);
        EXPECT_EQ(f.header().version, path == v4.path() ? 4u : kRecFormatVersion);
        EXPECT_EQ(report_text(f, false), format_all(sample_records(), live, false));
        EXPECT_EQ(report_text(f, true), format_all(sample_records(), live, true));
        EXPECT_NE(f.ksyms_text().find("vfs_read"), std::string_view::npos);
        EXPECT_NE(f.ksyms_text().find("lo_rw_aio\t[loop]"), std::string_view::npos)
            << f.ksyms_text();
    }
}

TEST(RecordFile, ClearErrors) {
    TempFile file;
    file.write("not a record file at all, just text that is long enough to have a header....");
    try {
        (void)RecordFile::open(file.path());
        FAIL() << "accepted garbage";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not an fhook record file"), std::string::npos);
    }
    TempFile good;
    write_sample(good);
    std::string bytes = good.contents();
    bytes[8] = 9; // format version 9
    file.write(bytes);
    try {
        (void)RecordFile::open(file.path());
        FAIL() << "accepted version 9";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("format version 9"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)RecordFile::open("/nonexistent/fhook.rec"), Error);
}

TEST(RecordFile, CorruptRecordSizeIsAnErrorWithOffset) {
    TempFile file;
    write_sample(file);
    std::string bytes = file.contents();
    // the first Records chunk follows header, Info and Probes chunks
    const std::size_t pos = bytes.find("cat");
    ASSERT_NE(pos, std::string::npos);
    const std::size_t rec = pos - offsetof(fhook_rec_comm, comm);
    bytes[rec] = 8; // size 8 < the header
    bytes[rec + 1] = 0;
    file.write(bytes);
    const RecordFile f = RecordFile::open(file.path());
    try {
        f.for_each_record([](const fhook_rec*) {});
        FAIL() << "accepted a record of size 8";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad size (8)"), std::string::npos) << e.what();
    }
}

// A bounded random mutator over a valid file (FHOOK_FUZZ_SECONDS, default
// 2): every mutation must be rejected with an Error or read cleanly.
TEST(RecordFile, RandomMutationsNeverCrash) {
    TempFile file;
    write_sample(file, 64);
    const std::string base = file.contents();
    const char* env = std::getenv("FHOOK_FUZZ_SECONDS");
    const double seconds = env ? std::atof(env) : 2.0;
    std::mt19937_64 rng(12345);
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::size_t runs = 0, rejected = 0;
    // aligned scratch, as the mmap of a file would be
    std::vector<std::uint64_t> buf((base.size() + 4096) / 8 + 1);
    while (std::chrono::steady_clock::now() < end) {
        std::string m = base;
        const int nmut = 1 + static_cast<int>(rng() % 4);
        for (int i = 0; i < nmut; i++) {
            switch (rng() % 4) {
            case 0:
                m[rng() % m.size()] = static_cast<char>(rng());
                break;
            case 1: { // a 32-bit value somewhere, aligned
                if (m.size() < 4) {
                    break;
                }
                std::size_t at = (rng() % (m.size() / 4)) * 4;
                const std::uint32_t v = rng() % 2 ? static_cast<std::uint32_t>(rng())
                                                  : static_cast<std::uint32_t>(rng() % 256);
                std::memcpy(&m[at], &v, 4);
                break;
            }
            case 2:
                m.resize(rng() % m.size());
                break;
            default:
                m.insert(rng() % m.size(), std::string(1 + rng() % 16, static_cast<char>(rng())));
                break;
            }
            if (m.empty()) {
                m = "x";
            }
        }
        std::memcpy(buf.data(), m.data(), m.size());
        try {
            const RecordFile f =
                RecordFile::parse(reinterpret_cast<const std::byte*>(buf.data()), m.size(), "fuzz");
            const Ksyms ksyms = Ksyms::parse(f.ksyms_text());
            TextFormatter fmt(ksyms);
            std::string out;
            f.for_each_record([&](const fhook_rec* rec) {
                if (auto ev = decode(rec)) {
                    fmt.format(*ev, out);
                }
            });
        } catch (const Error&) {
            rejected++;
        }
        runs++;
    }
    std::printf("record file mutations: %zu runs in %.1f s, %zu rejected with an error\n", runs,
                seconds, rejected);
    EXPECT_GT(runs, 100u);
}

TEST(JsonFormatter, EscapesAndFields) {
    const Ksyms ksyms = Ksyms::parse(std::string_view(kKallsyms));
    const auto recs = sample_records();
    const std::string out = format_all(recs, ksyms, true);
    std::istringstream lines(out);
    std::string l1, l2, l3, l4;
    std::getline(lines, l1);
    std::getline(lines, l2);
    std::getline(lines, l3);
    std::getline(lines, l4);
    EXPECT_EQ(l1, "{\"type\":\"func\",\"ts\":2431445000,\"cpu\":1,\"seq\":0,\"pid\":94,\"tgid\":94,"
                  "\"comm\":\"cat\",\"ctx\":\".....\",\"probe\":1,\"func\":\"vfs_read\","
                  "\"ip\":\"0xffffffff812a0000\",\"parent\":\"ksys_read\","
                  "\"parent_ip\":\"0xffffffff812a0433\"}");
    EXPECT_NE(l2.find("\"comm\":\"sh\\\"x\\\\\""), std::string::npos) << l2;
    EXPECT_EQ(l3, "{\"type\":\"lost\",\"ts\":2431447000,\"cpu\":1,\"lost\":1234,\"first_seq\":1,"
                  "\"last_seq\":1234}");
    EXPECT_NE(l4.find("\"func\":\"lo_rw_aio\""), std::string::npos) << l4;
    EXPECT_NE(l4.find("\"parent\":\"0x00001234\""), std::string::npos) << l4;

    std::string s;
    append_json_string(std::string("a\x01\xff\n\t"), s);
    EXPECT_EQ(s, "\"a\\u0001\\ufffd\\n\\t\"");
}

// UTF-8 comes out as it went in (jq shows "é", not "Ã©"); bytes that are
// not well-formed UTF-8 become U+FFFD, one each.
TEST(Json, Utf8IsKeptInvalidBytesReplaced) {
    auto json = [](std::string_view in) {
        std::string s;
        append_json_string(in, s);
        return s;
    };
    EXPECT_EQ(json("caf\xc3\xa9.txt"), "\"caf\xc3\xa9.txt\"");                             // é
    EXPECT_EQ(json("\xe2\x82\xac \xf0\x9f\x98\x80"), "\"\xe2\x82\xac \xf0\x9f\x98\x80\""); // € 😀
    EXPECT_EQ(json("\xc0\xaf"), "\"\\ufffd\\ufffd\"");                       // overlong '/'
    EXPECT_EQ(json("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");            // a surrogate
    EXPECT_EQ(json("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); // > U+10FFFF
    EXPECT_EQ(json("\xc3"), "\"\\ufffd\"");                                  // cut short
    EXPECT_EQ(json("\xc3("), "\"\\ufffd(\"");
    EXPECT_EQ(json("\x7f"), "\"\\u007f\"");
}

} // namespace
} // namespace fhook
