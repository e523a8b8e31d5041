// fhook record files, the reading side (RecordFile); recfile_writer.cpp
// writes them (docs/file-format.md).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include <fhook/core/error.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

namespace {

constexpr std::uint64_t align8(std::uint64_t v) {
    return (v + 7) & ~std::uint64_t{7};
}

std::string hex_offset(std::uint64_t off) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, off);
    return buf;
}

// Checks the size of one record at `off` (relative to the chunk payload of
// `len` bytes); returns its padded size.
std::uint64_t checked_record_size(const fhook_rec* rec, std::uint64_t off, std::uint64_t len,
                                  const std::string& name, std::uint64_t file_off) {
    if (len - off < sizeof(fhook_rec)) {
        throw_runtime(name + ": record at offset " + hex_offset(file_off) +
                      " is cut short: the file is corrupt");
    }
    const std::uint64_t size = rec->size;
    std::uint64_t need = sizeof(fhook_rec);
    if (rec->type != FHOOK_REC_LOST ||
        (size >= sizeof(fhook_rec_lost) && len - off >= sizeof(fhook_rec_lost))) {
        const std::uint64_t min = record_min_size(rec);
        need = rec->type == FHOOK_REC_LOST && min == 0 ? std::numeric_limits<std::uint64_t>::max()
                                                       : std::max(need, min);
    } else {
        need = sizeof(fhook_rec_lost);
    }
    if (size < need || align8(size) > len - off) {
        throw_runtime(name + ": record at offset " + hex_offset(file_off) + " has a bad size (" +
                      std::to_string(size) + "): the file is corrupt");
    }
    return align8(size);
}

} // namespace

RecordFile RecordFile::open(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        int err = errno;
        throw_runtime("cannot open '" + path + "': " + errno_text(err), err);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) < 0) {
        int err = errno;
        throw_runtime("cannot stat '" + path + "': " + errno_text(err), err);
    }
    if (!S_ISREG(st.st_mode)) {
        throw_runtime("'" + path + "' is not a regular file: give a file written by fhook record");
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size == 0) {
        throw_runtime("'" + path + "' is empty: not an fhook record file");
    }
    void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (addr == MAP_FAILED) {
        int err = errno;
        throw_runtime("cannot map '" + path + "': " + errno_text(err), err);
    }
    Mapping map(addr, size);
    RecordFile f = parse(static_cast<const std::byte*>(addr), size, path);
    f.map_ = std::move(map);
    return f;
}

namespace {

// "SUBSYS:EVENT<TAB>ID<TAB>LEN\n" + LEN bytes, each (RecChunk::Events).
void parse_events(std::string_view text, std::vector<RecordedEvent>& out, const std::string& n) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        if (nl == text.npos) {
            throw_runtime(n + ": events chunk: a line without its end: the file is corrupt");
        }
        const std::string_view line = text.substr(pos, nl - pos);
        const std::size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
        std::uint64_t id = 0, len = 0;
        bool ok = t1 != line.npos && t2 != line.npos && t1 > 0;
        for (std::size_t i = t1 + 1; ok && i < t2; i++) {
            ok = line[i] >= '0' && line[i] <= '9' && id < (1ULL << 40);
            id = id * 10 + static_cast<std::uint64_t>(line[i] - '0');
        }
        for (std::size_t i = t2 + 1; ok && i < line.size(); i++) {
            ok = line[i] >= '0' && line[i] <= '9' && len < (1ULL << 40);
            len = len * 10 + static_cast<std::uint64_t>(line[i] - '0');
        }
        if (!ok || t2 + 1 == line.size() || len > text.size() - nl - 1) {
            throw_runtime(n + ": events chunk: bad entry '" + std::string(line.substr(0, 80)) +
                          "': the file is corrupt");
        }
        out.push_back({std::string(line.substr(0, t1)), id, std::string(text.substr(nl + 1, len))});
        pos = nl + 1 + len;
    }
}

} // namespace

const RecordedEvent* RecordFile::event(std::string_view name) const noexcept {
    for (const auto& e : events_) {
        if (e.name == name) {
            return &e;
        }
    }
    return nullptr;
}

namespace {

// Info: KEY=VALUE lines.
void parse_info_chunk(std::string_view text,
                      std::vector<std::pair<std::string, std::string>>& info) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == text.npos ? text.npos : nl - pos);
        std::size_t eq = line.find('=');
        if (eq != line.npos) {
            info.emplace_back(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
        }
        if (nl == text.npos) {
            break;
        }
        pos = nl + 1;
    }
}

// Probes: ID<TAB>DESCRIPTION lines (the chunk at `off` of file `n`).
void parse_probes_chunk(std::string_view text, std::vector<RecordedProbe>& probes,
                        const std::string& n, std::uint64_t off) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == text.npos ? text.npos : nl - pos);
        std::size_t tab = line.find('\t');
        RecordedProbe p;
        std::uint64_t id = 0;
        bool ok = tab != line.npos && tab > 0 && tab <= 10;
        for (std::size_t i = 0; ok && i < tab; i++) {
            ok = line[i] >= '0' && line[i] <= '9';
            id = id * 10 + static_cast<std::uint64_t>(line[i] - '0');
        }
        if (!ok || id > 0xffffffffULL) {
            throw_runtime(n + ": bad probe line in the chunk at offset " + hex_offset(off) +
                          ": the file is corrupt");
        }
        p.id = static_cast<std::uint32_t>(id);
        p.description = std::string(line.substr(tab + 1));
        probes.push_back(std::move(p));
        if (nl == text.npos) {
            break;
        }
        pos = nl + 1;
    }
}

// Stats: the session's statistics, then each probe's (file `n`).
void parse_stats_chunk(const std::byte* payload, std::uint64_t size, const std::string& n,
                       Stats& session, std::vector<RecordedProbe>& probes) {
    std::uint32_t counts[2];
    if (size < sizeof(counts)) {
        throw_runtime(n + ": stats chunk too short: the file is corrupt");
    }
    std::memcpy(counts, payload, sizeof(counts));
    const std::uint64_t per = 8 + sizeof(fhook_cpu_stats) * (1ULL + counts[0]);
    if (counts[0] > 65536 || counts[1] > 65536 ||
        size != sizeof(counts) + per * (1ULL + counts[1])) {
        throw_runtime(n + ": stats chunk of the wrong size: the file is corrupt");
    }
    const std::byte* p = payload + sizeof(counts);
    auto get = [&](Stats& st) -> std::uint32_t {
        std::uint32_t head[2];
        std::memcpy(head, p, sizeof(head));
        p += sizeof(head);
        auto one = [&]() {
            fhook_cpu_stats raw;
            std::memcpy(&raw, p, sizeof(raw));
            p += sizeof(raw);
            return CpuStats{raw.hits, raw.written, raw.lost, raw.missed};
        };
        st.total = one();
        st.per_cpu.clear();
        for (std::uint32_t c = 0; c < counts[0]; c++) {
            st.per_cpu.push_back(one());
        }
        return head[0];
    };
    get(session);
    for (std::uint32_t i = 0; i < counts[1]; i++) {
        Stats st;
        std::uint32_t id = get(st);
        auto it = std::find_if(probes.begin(), probes.end(),
                               [id](const RecordedProbe& rp) { return rp.id == id; });
        if (it != probes.end()) {
            it->stats = std::move(st);
        }
    }
}

} // namespace

RecordFile RecordFile::parse(const std::byte* data, std::size_t size, std::string name) {
    RecordFile f;
    f.name_ = std::move(name);
    const std::string& n = f.name_;
    if (size < sizeof(RecFileHeader) || std::memcmp(data, kRecMagic, sizeof(kRecMagic)) != 0) {
        throw_runtime(n + ": not an fhook record file (no FHOOKREC header)");
    }
    std::memcpy(&f.header_, data, sizeof(f.header_));
    if (f.header_.version < kRecOldestVersion || f.header_.version > kRecFormatVersion) {
        throw_runtime(n + ": record file format version " + std::to_string(f.header_.version) +
                      ", this fhook reads versions " + std::to_string(kRecOldestVersion) + " to " +
                      std::to_string(kRecFormatVersion) + ": use a matching fhook");
    }
    if (f.header_.header_size < sizeof(RecFileHeader) || f.header_.header_size > size ||
        f.header_.header_size % 8 != 0) {
        throw_runtime(n + ": bad header size " + std::to_string(f.header_.header_size) +
                      ": the file is corrupt");
    }
    if (f.header_.nr_cpus == 0 || f.header_.nr_cpus > 65536) {
        throw_runtime(n + ": bad CPU count " + std::to_string(f.header_.nr_cpus) +
                      ": the file is corrupt");
    }
    std::uint64_t off = f.header_.header_size;
    bool ended = false;
    while (off < size) {
        if (size - off < sizeof(RecChunkHeader)) {
            f.truncated_ = true;
            f.truncation_ = "chunk header cut short at offset " + hex_offset(off);
            break;
        }
        RecChunkHeader ch;
        std::memcpy(&ch, data + off, sizeof(ch));
        const std::uint64_t payload_off = off + sizeof(ch);
        if (ch.size > size - payload_off) {
            // the complete records of a Records chunk cut short still count
            if (ch.type == static_cast<std::uint32_t>(RecChunk::Records) && payload_off % 8 == 0) {
                f.records_.push_back(
                    {payload_off,
                     std::basic_string_view<std::byte>(data + payload_off, size - payload_off),
                     true});
            }
            f.truncated_ = true;
            f.truncation_ = "chunk at offset " + hex_offset(off) + " (" + std::to_string(ch.size) +
                            " bytes) runs past the end of the file";
            break;
        }
        const auto* payload = data + payload_off;
        const std::string_view text(reinterpret_cast<const char*>(payload), ch.size);
        switch (static_cast<RecChunk>(ch.type)) {
        case RecChunk::Info:
            parse_info_chunk(text, f.info_);
            break;
        case RecChunk::Probes:
            parse_probes_chunk(text, f.probes_, n, off);
            break;
        case RecChunk::Records:
            if (payload_off % 8 != 0) {
                throw_runtime(n + ": misaligned records chunk at offset " + hex_offset(off) +
                              ": the file is corrupt");
            }
            f.records_.push_back(
                {payload_off, std::basic_string_view<std::byte>(payload, ch.size), false});
            break;
        case RecChunk::Ksyms:
            f.ksyms_ = text;
            break;
        case RecChunk::Events:
            parse_events(text, f.events_, n);
            break;
        case RecChunk::Stats:
            parse_stats_chunk(payload, ch.size, n, f.session_, f.probes_);
            f.has_stats_ = true;
            break;
        case RecChunk::End:
            ended = true;
            break;
        default:
            break; // a newer chunk type: skipped
        }
        if (ended) {
            break;
        }
        const std::uint64_t next = payload_off + align8(ch.size);
        if (next > size) { // the padding of the last chunk is missing
            f.truncated_ = true;
            f.truncation_ = "the file ends inside the padding at offset " + hex_offset(off);
            break;
        }
        off = next;
    }
    if (!ended && !f.truncated_) {
        f.truncated_ = true;
        f.truncation_ = "no end marker after offset " + hex_offset(off);
    }
    return f;
}

const std::string& RecordFile::info(std::string_view key) const {
    static const std::string empty;
    for (const auto& [k, v] : info_) {
        if (k == key) {
            return v;
        }
    }
    return empty;
}

void RecordFile::for_each_abi2_record(const std::function<void(const fhook_rec*)>& callback) const {
    // ABI 2's header: ABI 3's, then char comm[16]
    constexpr std::size_t kOldHeader = sizeof(fhook_rec) + FHOOK_COMM_LEN;
    std::map<std::pair<std::uint16_t, std::uint32_t>, std::string> named; // by CPU and pid
    std::vector<std::uint64_t> buf;
    for (const auto& chunk : records_) {
        std::uint64_t off = 0;
        const std::uint64_t len = chunk.payload.size();
        while (off < len) {
            const std::byte* old = chunk.payload.data() + off;
            fhook_rec hdr;
            const std::uint64_t room = len - off;
            if (room >= sizeof(hdr)) {
                std::memcpy(&hdr, old, sizeof(hdr));
            }
            if (room < kOldHeader || hdr.size < kOldHeader || align8(hdr.size) > room) {
                if (chunk.partial) {
                    break; // a chunk cut by the end of the file ends at its last whole record
                }
                throw_runtime(name_ + ": record at offset " + hex_offset(chunk.file_off + off) +
                              " has a bad size (" +
                              std::to_string(room >= sizeof(hdr) ? hdr.size : 0) +
                              "): the file is corrupt");
            }
            const std::size_t size = hdr.size - FHOOK_COMM_LEN;
            if (hdr.type != FHOOK_REC_LOST) {
                const char* comm = reinterpret_cast<const char*>(old) + sizeof(fhook_rec);
                std::string& was = named[{hdr.cpu, hdr.pid}];
                const std::string_view name(comm, ::strnlen(comm, FHOOK_COMM_LEN));
                if (was != name) {
                    was = name;
                    fhook_rec_comm c{};
                    c.hdr = hdr;
                    c.hdr.size = sizeof(c);
                    c.hdr.type = FHOOK_REC_COMM;
                    c.hdr.probe_id = 0;
                    c.hdr.flags = 0;
                    std::memcpy(c.comm, comm, FHOOK_COMM_LEN);
                    callback(&c.hdr);
                }
            }
            buf.assign(align8(size) / 8, 0);
            auto* rec = reinterpret_cast<fhook_rec*>(buf.data());
            std::memcpy(rec, old, sizeof(fhook_rec));
            std::memcpy(rec + 1, old + kOldHeader, hdr.size - kOldHeader);
            rec->size = static_cast<std::uint16_t>(size);
            checked_record_size(rec, 0, align8(size), name_, chunk.file_off + off);
            callback(rec);
            off += align8(hdr.size);
        }
    }
}

void RecordFile::for_each_record(const std::function<void(const fhook_rec*)>& callback) const {
    if (header_.version < 3) {
        for_each_abi2_record(callback); // its chunks are in timestamp order
        return;
    }
    std::vector<const fhook_rec*> recs;
    for (const auto& chunk : records_) {
        std::uint64_t off = 0;
        const std::uint64_t len = chunk.payload.size();
        recs.clear();
        while (off < len) {
            const auto* rec = reinterpret_cast<const fhook_rec*>(chunk.payload.data() + off);
            // a chunk cut by the end of the file ends at its last whole record
            if (chunk.partial && (len - off < sizeof(fhook_rec) || align8(rec->size) > len - off)) {
                break;
            }
            off += checked_record_size(rec, off, len, name_, chunk.file_off + off);
            recs.push_back(rec);
        }
        // a reader pass, merged as RingMerger::drain() merges it
        order_pass(recs);
        for (const fhook_rec* rec : recs) {
            callback(rec);
        }
    }
}

} // namespace fhook
