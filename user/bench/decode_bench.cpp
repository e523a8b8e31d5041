// Host throughput of the userspace event path: a record file read back,
// decoded, and formatted as text and as NDJSON.  Not a test: it prints
// figures (docs/benchmarks.md).  Run: make bench-host
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <fhook/engine/sinks.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/ring/ring.hpp>
#include <fhook/sys/ksyms.hpp>

namespace {

constexpr std::uint64_t kText = 0xffffffff81000000ULL;
constexpr int kSymbols = 50000; // about a distribution kernel's text symbols
constexpr int kEvents = 1 << 20;

// A kallsyms table of kSymbols functions 512 bytes apart.
std::string kallsyms_text() {
    std::string text;
    char line[96];
    for (int i = 0; i < kSymbols; i++) {
        std::snprintf(line, sizeof(line), "%016" PRIx64 " t function_number_%d\n",
                      kText + static_cast<std::uint64_t>(i) * 512, i);
        text += line;
    }
    return text;
}

// A record file image (no file system involved): header, one Records
// chunk of kEvents function records on 2 CPUs, End.  Addresses: 64 traced
// functions, 2,000 distinct callers.
struct Image {
    std::vector<std::uint64_t> words; // 8-byte aligned storage
    std::size_t size = 0;
};

Image make_image() {
    std::string bytes(sizeof(fhook::RecFileHeader), '\0');
    fhook::RecFileHeader h{};
    std::memcpy(h.magic, fhook::kRecMagic, sizeof(h.magic));
    h.version = fhook::kRecFormatVersion;
    h.header_size = sizeof(h);
    h.abi_version = FHOOK_ABI_VERSION;
    h.nr_cpus = 2;
    h.clock = 1;
    std::memcpy(bytes.data(), &h, sizeof(h));
    fhook::RecChunkHeader ch{static_cast<std::uint32_t>(fhook::RecChunk::Records), 0,
                             static_cast<std::uint64_t>(kEvents) * sizeof(fhook_rec_func)};
    bytes.append(reinterpret_cast<const char*>(&ch), sizeof(ch));
    std::uint64_t seed = 1;
    for (int i = 0; i < kEvents; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        fhook_rec_func r;
        std::memset(&r, 0, sizeof(r));
        r.hdr.size = sizeof(r);
        r.hdr.type = FHOOK_REC_FUNC;
        r.hdr.probe_id = 1;
        r.hdr.ts = 1000000000ULL + static_cast<std::uint64_t>(i) * 250;
        r.hdr.pid = 1000 + (seed >> 60);
        r.hdr.tgid = r.hdr.pid;
        r.hdr.cpu = i & 1;
        // like a real trace: 64 traced functions called from 2,000 call
        // sites spread over the whole table
        r.ip = kText + ((seed >> 20) % 64) * 781 * 512;
        r.parent_ip = kText + ((seed >> 36) % 2000) * 25 * 512 + 0x4d;
        bytes.append(reinterpret_cast<const char*>(&r), sizeof(r));
    }
    fhook::RecChunkHeader end{static_cast<std::uint32_t>(fhook::RecChunk::End), 0, 0};
    bytes.append(reinterpret_cast<const char*>(&end), sizeof(end));
    Image img;
    img.size = bytes.size();
    img.words.resize(bytes.size() / 8 + 1);
    std::memcpy(img.words.data(), bytes.data(), bytes.size());
    return img;
}

const Image& image() {
    static const Image img = make_image();
    return img;
}

const fhook::Ksyms& ksyms() {
    static const fhook::Ksyms k = fhook::Ksyms::parse(kallsyms_text());
    return k;
}

template <typename Work>
void run(benchmark::State& state, Work work) {
    const Image& img = image();
    std::uint64_t bytes_out = 0;
    for (auto _ : state) {
        const fhook::RecordFile f = fhook::RecordFile::parse(
            reinterpret_cast<const std::byte*>(img.words.data()), img.size, "bench");
        f.for_each_record([&](const fhook_rec* rec) { bytes_out += work(rec); });
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kEvents);
    state.counters["out_bytes_per_event"] =
        static_cast<double>(bytes_out) / static_cast<double>(state.iterations() * kEvents);
}

void BM_Decode(benchmark::State& state) {
    run(state, [](const fhook_rec* rec) -> std::uint64_t {
        auto ev = fhook::decode(rec);
        benchmark::DoNotOptimize(ev);
        return 0;
    });
}

void BM_DecodeText(benchmark::State& state) {
    fhook::TextFormatter fmt(ksyms());
    std::string out;
    run(state, [&](const fhook_rec* rec) -> std::uint64_t {
        out.clear();
        fmt.format(*fhook::decode(rec), out);
        return out.size();
    });
}

void BM_DecodeJson(benchmark::State& state) {
    fhook::JsonFormatter fmt(ksyms());
    std::string out;
    run(state, [&](const fhook_rec* rec) -> std::uint64_t {
        out.clear();
        fmt.format(*fhook::decode(rec), out);
        return out.size();
    });
}

// fhook trace's whole text path for the guest bench's workload (one task
// reading in a loop: one function, one caller): a ring of function
// records drained by the RingMerger into a PrintSink writing /dev/null.
struct TraceRing {
    static constexpr std::uint64_t kSize = std::uint64_t{4} << 20;
    static constexpr std::uint32_t kPid = 4321;
    fhook_ring_meta meta{};
    fhook_ring_cons cons{};
    std::vector<std::uint64_t> data = std::vector<std::uint64_t>(kSize / 8);
    std::uint64_t records = 0;

    // the task's COMM record, then as many copies of `rec` (its ts and seq
    // counting up) as fit
    template <typename Rec>
    explicit TraceRing(Rec rec) {
        auto* p = reinterpret_cast<std::byte*>(data.data());
        fhook_rec_comm c{};
        c.hdr.size = sizeof(c);
        c.hdr.type = FHOOK_REC_COMM;
        c.hdr.pid = c.hdr.tgid = kPid;
        std::memcpy(c.comm, "fhook-workload", 14);
        std::memcpy(p, &c, sizeof(c));
        std::uint64_t at = sizeof(c);
        if constexpr (std::is_same_v<Rec, fhook_rec_fn>) {
            rec.size = sizeof(rec);
            rec.probe_id = 1;
            rec.pid = kPid;
        } else {
            rec.hdr.size = sizeof(rec);
            rec.hdr.probe_id = 1;
            rec.hdr.pid = rec.hdr.tgid = kPid;
        }
        for (; at + sizeof(rec) <= kSize; at += sizeof(rec), records++) {
            if constexpr (std::is_same_v<Rec, fhook_rec_fn>) {
                rec.ts = 5000000000ULL + records * 1700;
            } else {
                rec.hdr.ts = 5000000000ULL + records * 1700;
                rec.hdr.seq = static_cast<std::uint32_t>(records);
            }
            std::memcpy(p + at, &rec, sizeof(rec));
        }
        meta.data_head = at;
    }
};

fhook::RingMerger merger_of(TraceRing& ring) {
    return fhook::RingMerger({fhook::RingView{0, &ring.meta, &ring.cons,
                                              reinterpret_cast<const std::byte*>(ring.data.data()),
                                              TraceRing::kSize, false}});
}

// the guest bench's function record: one function, one caller
fhook_rec_func bench_func_record() {
    fhook_rec_func r{};
    r.hdr.type = FHOOK_REC_FUNC;
    r.ip = kText + 781 * 512;
    r.parent_ip = kText + 25 * 512 + 0x4d;
    return r;
}

// ... as ABI 4 writes it on x86-64 (FHOOK_REC_FN)
fhook_rec_fn bench_fn_record() {
    fhook_rec_fn r{};
    r.type = FHOOK_REC_FN;
    r.ip = static_cast<std::int32_t>(kText + 781 * 512);
    r.parent_ip = static_cast<std::int32_t>(kText + 25 * 512 + 0x4d);
    return r;
}

void trace_text(benchmark::State& state, TraceRing& ring, const fhook::ProbeTable& probes) {
    const fhook::UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    fhook::PrintSink sink(null.get(), ksyms(), fhook::OutputFormat::Text, probes);
    fhook::RingMerger merger = merger_of(ring);
    for (auto _ : state) {
        ring.cons.data_tail = 0;
        merger.drain_batch([&](std::span<const fhook_rec* const> recs) { sink.on_records(recs); });
    }
    sink.flush();
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ring.records));
}

void BM_TraceText(benchmark::State& state) {
    TraceRing ring(bench_func_record());
    trace_text(state, ring, fhook::ProbeTable());
}

void BM_TraceTextFn(benchmark::State& state) {
    TraceRing ring(bench_fn_record());
    trace_text(state, ring, fhook::ProbeTable());
}

// fhook record -o /dev/null's path for the same ring: the RingMerger's
// passes written as spans by a FileSink (no formatting, no merge).
void record_spans(benchmark::State& state, TraceRing& ring) {
    fhook::FileSink sink(fhook::UniqueFd(::open("/dev/null", O_WRONLY | O_CLOEXEC)), "/dev/null",
                         fhook::RecordWriter::Info{1, "bench", "bench", {}, {}, {}, 0, {}},
                         ksyms());
    fhook::RingMerger merger = merger_of(ring);
    for (auto _ : state) {
        ring.cons.data_tail = 0;
        merger.drain_spans([&](std::span<const fhook::RingSpan> spans) { sink.on_pass(spans); });
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * ring.records));
}

void BM_RecordSpans(benchmark::State& state) {
    TraceRing ring(bench_func_record());
    record_spans(state, ring);
}

void BM_RecordSpansFn(benchmark::State& state) {
    TraceRing ring(bench_fn_record());
    record_spans(state, ring);
}

// ... of a kprobe with two fetch arguments: 'p FUNC file=%di count=%dx:u64'
void BM_TraceKprobeText(benchmark::State& state) {
    struct Rec {
        fhook_rec hdr;
        std::uint64_t ip, ret_ip, faults; // fhook_rec_probe
        std::uint64_t file, count;        // its data
    } rec{};
    static_assert(sizeof(Rec) == sizeof(fhook_rec_probe) + 16);
    rec.hdr.type = FHOOK_REC_KPROBE;
    rec.ip = kText + 781 * 512;
    rec.file = 0xffff88800abc1200ULL;
    rec.count = 1;
    TraceRing ring(rec);
    fhook::KprobeDef def;
    def.group = "fhookbench";
    def.event = "a";
    def.symbol = "function_number_781";
    def.data_size = 16;
    def.fields.push_back({"file", "%di", fhook::FetchType{}, 0, 0, false, "%di"});
    fhook::FetchType u64{fhook::FetchType::Kind::Unsigned, 8, 0, 0, 0, "u64"};
    def.fields.push_back({"count", "%dx:u64", u64, 8, 1, false, "%dx"});
    fhook::ProbeTable probes;
    probes.add(1, std::move(def));
    trace_text(state, ring, probes);
}

BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeText)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceText)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceTextFn)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceKprobeText)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RecordSpans)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RecordSpansFn)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
