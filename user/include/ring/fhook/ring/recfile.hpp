// fhook record files: `fhook record` writes them, `fhook report` reads them.
// The format is described in docs/file-format.md.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/fd.hpp>
#include <fhook/core/session.hpp>
#include <fhook/ring/ring.hpp>

namespace fhook {

class Ksyms;

inline constexpr char kRecMagic[8] = {'F', 'H', 'O', 'O', 'K', 'R', 'E', 'C'};
// 2: LOST records with seq range and per-probe counts; 3: a Records chunk
// holds each CPU's records of a reader pass in ring order, one CPU after
// the other (version 2's were in timestamp order: read the same); 4: ABI
// 4's records, function entries as FHOOK_REC_FN records; 5: ABI 5's
// records, kprobe hits at function entry as FHOOK_REC_FN_KPROBE records
inline constexpr std::uint32_t kRecFormatVersion = 5;
inline constexpr std::uint32_t kRecOldestVersion = 2;

// The file header, little-endian, at offset 0.
struct RecFileHeader {
    char magic[8];               // "FHOOKREC"
    std::uint32_t version;       // kRecFormatVersion
    std::uint32_t header_size;   // sizeof(RecFileHeader) = 64
    std::uint32_t abi_version;   // FHOOK_ABI_VERSION of the records
    std::uint32_t nr_cpus;       // rings of the recording session
    std::uint64_t start_mono_ns; // CLOCK_MONOTONIC when recording started
    std::uint64_t start_real_ns; // CLOCK_REALTIME at the same moment
    std::uint32_t clock;         // 1 = CLOCK_MONOTONIC (record timestamps)
    std::uint32_t flags;         // 0
    std::uint64_t reserved[2];   // 0
};
static_assert(sizeof(RecFileHeader) == 64);

// Every chunk: this header, `size` payload bytes, zero padding to 8.
struct RecChunkHeader {
    std::uint32_t type;  // RecChunk
    std::uint32_t flags; // 0
    std::uint64_t size;  // payload bytes, without the padding
};
static_assert(sizeof(RecChunkHeader) == 16);

enum class RecChunk : std::uint32_t {
    Info = 1,    // "key=value\n" text: fhook_version, kernel_release, command
    Probes = 2,  // "ID<TAB>SPECS\n" text
    Records = 3, // ring records (struct fhook_rec ...), each padded to 8
    Ksyms = 4,   // kallsyms lines for the symbols of every address seen
    Stats = 5,   // RecStats, then per-CPU fhook_cpu_stats, per probe
    End = 6,     // empty; the last chunk of a complete file
    Events = 7,  // "SUBSYS:EVENT<TAB>ID<TAB>LEN\n" + LEN bytes of its format file, each
};

// Stats payload: u32 nr_cpus, u32 nr_probes, then for the session and then
// for each probe: u32 id, u32 0, fhook_cpu_stats total, fhook_cpu_stats
// per_cpu[nr_cpus] (the session's id is FHOOK_STATS_SESSION).

struct RecordedProbe {
    std::uint32_t id = 0;
    std::string description;
    Stats stats;
};

// A trace event the recording's tracepoint probes used, as the traced
// machine described it: `report` decodes its records with this format.
struct RecordedEvent {
    std::string name; // SUBSYS:EVENT
    std::uint64_t id = 0;
    std::string format; // its tracefs format file
};

// Writes a record file with large sequential writes.  The records and the
// addresses they mention are buffered; finish() writes the symbols, stats
// and the End chunk.  Without finish() (a crash) the file has no End
// chunk, which `report` reports as truncated after printing what it has.
class RecordWriter {
public:
    struct Info {
        std::uint32_t nr_cpus = 0;
        std::string kernel_release;
        std::string command;
        std::vector<std::pair<std::uint32_t, std::string>> probes;
        std::vector<RecordedEvent> events; // of the tracepoint probes
        std::string preempt_model;         // as latency traces name it ("" = not written)
        unsigned online_cpus = 0;          // (0 = not written)
        std::string tracer;                // the latency tracer whose --record it is ("" = none)
    };
    // Takes over `fd`; writes the header, Info and Probes chunks at once.
    RecordWriter(UniqueFd fd, std::string path, const Info& info,
                 std::size_t chunk_bytes = std::size_t{1} << 20);
    RecordWriter(const RecordWriter&) = delete;
    RecordWriter& operator=(const RecordWriter&) = delete;

    // Buffers one record (rec->size bytes, padded to 8).
    void add(const fhook_rec* rec);
    // A reader pass: one Records chunk written straight from the spans'
    // memory (the rings' mapping: no copy in userspace), each CPU's records
    // in ring order, the CPUs one after the other (docs/file-format.md);
    // records buffered with add() go first.
    void add_pass(std::span<const RingSpan> spans);
    // Writes the buffered records as one Records chunk.
    void flush();
    // (A file system that pins the writer's pages instead of copying them,
    // 9p, FUSE direct_io, fails writev() from the rings' device mapping
    // with EFAULT: from then on the records are copied first.)
    // Flushes, then Ksyms (the symbols of every address seen, from
    // `ksyms`), Stats and End; fsyncs and closes.
    void finish(const Ksyms& ksyms, const Stats& session, const std::vector<RecordedProbe>& probes);

    std::uint64_t bytes_written() const noexcept { return written_; }
    // the records written, COMM records (task names) not counted
    std::uint64_t records() const noexcept { return records_; }

private:
    void copy_rest(std::vector<iovec>& payload, std::size_t& idx);
    // The addresses of `rec` whose symbols the file needs.
    void note_record(const fhook_rec* rec);
    // note_record() unless `rec` repeats the last function, kprobe or
    // graph record's addresses (no stack attached): most records of a trace
    void note_new(const fhook_rec* rec) {
        if (rec->type == FHOOK_REC_FN && rec->size >= sizeof(fhook_rec_fn)) {
            if (fn_addresses(reinterpret_cast<const fhook_rec_fn*>(rec)) == last_fn_) {
                return;
            }
        } else if (rec->type == FHOOK_REC_FN_KPROBE) {
            // noted as the kprobe record of the same hit (ret_ip 0) is
            const auto* f = reinterpret_cast<const fhook_rec_fn*>(rec);
            if (rec->size >= sizeof(fhook_rec_fn) && last_type_ == FHOOK_REC_KPROBE &&
                last_parent_ == 0 && static_cast<std::uint64_t>(std::int64_t{f->ip}) == last_ip_) {
                return;
            }
        } else if (!(rec->flags & FHOOK_CTX_STACK) && rec->size >= sizeof(fhook_rec_func)) {
            // ip first after the header in all of them, then a function's
            // parent where a kprobe's ret_ip is
            static_assert(offsetof(fhook_rec_func, ip) == sizeof(fhook_rec) &&
                          offsetof(fhook_rec_probe, ip) == sizeof(fhook_rec) &&
                          offsetof(fhook_rec_graph_ent, ip) == sizeof(fhook_rec) &&
                          offsetof(fhook_rec_graph_ret, ip) == sizeof(fhook_rec) &&
                          offsetof(fhook_rec_probe, ret_ip) == offsetof(fhook_rec_func, parent_ip));
            const auto* f = reinterpret_cast<const fhook_rec_func*>(rec);
            if ((rec->type == FHOOK_REC_GRAPH_ENT || rec->type == FHOOK_REC_GRAPH_RET) &&
                f->ip == last_ip_) {
                return;
            }
            // (a kprobe's notes sizes too: never skipped after a function's)
            if (rec->type == last_type_ && f->ip == last_ip_ && f->parent_ip == last_parent_) {
                return;
            }
        }
        note_record(rec);
    }
    void write_chunk(RecChunk type, std::string_view payload);
    void write_chunk(RecChunk type, std::vector<iovec>& payload);
    void write_all(const void* data, std::size_t len);

    UniqueFd fd_;
    std::string path_;
    std::size_t chunk_bytes_;
    std::string buf_;
    // Notes an address whose symbol the file needs (`sized`: and its size),
    // through a direct-mapped filter of the addresses noted last: a trace
    // repeats few addresses, and a set insertion per record was most of
    // what `fhook record` spent on an event.
    void note(std::uint64_t addr, bool sized = false) {
        std::uint64_t& seen = (sized ? seen_sized_ : seen_)[(addr ^ (addr >> 11)) & (kSeen - 1)];
        if (seen != addr + 1) {
            seen = addr + 1;
            (sized ? sized_ : addrs_).insert(addr);
        }
    }
    static constexpr std::size_t kSeen = 512;
    std::unordered_set<std::uint64_t> addrs_;
    std::unordered_set<std::uint64_t> sized_; // kprobe addresses: also need the size
    std::array<std::uint64_t, kSeen> seen_{}; // addr + 1 (0: empty)
    std::array<std::uint64_t, kSeen> seen_sized_{};
    std::uint64_t last_ip_ = 0;     // the last function, kprobe or graph record's, noted
    std::uint64_t last_parent_ = 0; // the last function or kprobe record's, noted
    std::uint16_t last_type_ = 0;   // ... and its type (FN_KPROBE's: KPROBE, noted as that)
    std::uint64_t last_fn_ = 0;     // the last FN record noted: fn_addresses() (0: none)
    std::vector<iovec> iov_;
    std::vector<char> bounce_; // the copy, once writev() refused the mapping
    bool copy_first_ = false;
    std::uint64_t written_ = 0;
    std::uint64_t records_ = 0;
};

// A record file read into memory and validated chunk by chunk.
class RecordFile {
public:
    // Maps and validates `path`.  A file that is not a record file, of
    // another format version, or whose chunks run past its end throws a
    // Runtime Error naming the file and the offset.  A file that ends
    // without an End chunk (cut short) is accepted with truncated() true;
    // its complete records up to the cut are readable.
    static RecordFile open(const std::string& path);
    // The same over bytes in memory (tests, fuzzing); `data` must outlive
    // the object and be 8-byte aligned.
    static RecordFile parse(const std::byte* data, std::size_t size, std::string name);

    const RecFileHeader& header() const noexcept { return header_; }
    const std::string& info(std::string_view key) const;
    const std::vector<RecordedProbe>& probes() const noexcept { return probes_; }
    const Stats& session_stats() const noexcept { return session_; }
    bool has_stats() const noexcept { return has_stats_; }
    bool truncated() const noexcept { return truncated_; }
    const std::string& truncation() const noexcept { return truncation_; }
    // The kallsyms-format text of the Ksyms chunk ("" if none).
    std::string_view ksyms_text() const noexcept { return ksyms_; }
    // The recorded format of trace event SUBSYS:EVENT, or nullptr (files
    // written before the Events chunk existed).
    const RecordedEvent* event(std::string_view name) const noexcept;

    // Calls `callback` for every record in timestamp order (each Records
    // chunk sorted).  Throws a Runtime Error (file name, offset) at the
    // first malformed record.  Records of a version 2 file (ABI 2: the
    // task's name in a 48-byte header) come as ABI 3 records, a COMM
    // record before a task's first record on a CPU and where its name
    // changed.
    void for_each_record(const std::function<void(const fhook_rec*)>& callback) const;

private:
    void for_each_abi2_record(const std::function<void(const fhook_rec*)>& callback) const;

    std::string name_;
    Mapping map_;
    RecFileHeader header_{};
    std::vector<std::pair<std::string, std::string>> info_;
    std::vector<RecordedProbe> probes_;
    Stats session_;
    bool has_stats_ = false;
    bool truncated_ = false;
    std::string truncation_;
    std::string_view ksyms_;
    std::vector<RecordedEvent> events_;
    struct RecordsChunk {
        std::uint64_t file_off = 0; // of the payload
        std::basic_string_view<std::byte> payload;
        bool partial = false; // cut short by the end of the file
    };
    std::vector<RecordsChunk> records_;
};

} // namespace fhook
