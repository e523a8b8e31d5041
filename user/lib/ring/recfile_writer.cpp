// fhook record files, the writing side (RecordWriter); recfile.cpp reads
// them (docs/file-format.md).
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>

#include <fhook/core/error.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

namespace {

constexpr std::uint64_t align8(std::uint64_t v) {
    return (v + 7) & ~std::uint64_t{7};
}

std::uint64_t clock_ns(clockid_t id) {
    timespec ts{};
    ::clock_gettime(id, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

void put_stats(std::string& out, std::uint32_t id, const Stats& st, std::uint32_t nr_cpus) {
    const std::uint32_t head[2] = {id, 0};
    out.append(reinterpret_cast<const char*>(head), sizeof(head));
    auto put = [&out](const CpuStats& c) {
        const fhook_cpu_stats raw{c.hits, c.written, c.lost, c.missed};
        out.append(reinterpret_cast<const char*>(&raw), sizeof(raw));
    };
    put(st.total);
    for (std::uint32_t cpu = 0; cpu < nr_cpus; cpu++) {
        put(cpu < st.per_cpu.size() ? st.per_cpu[cpu] : CpuStats{});
    }
}

} // namespace

RecordWriter::RecordWriter(UniqueFd fd, std::string path, const Info& info, std::size_t chunk_bytes)
    : fd_(std::move(fd)), path_(std::move(path)), chunk_bytes_(chunk_bytes) {
    buf_.reserve(chunk_bytes_ + 4096);
    RecFileHeader h{};
    std::memcpy(h.magic, kRecMagic, sizeof(h.magic));
    h.version = kRecFormatVersion;
    h.header_size = sizeof(h);
    h.abi_version = FHOOK_ABI_VERSION;
    h.nr_cpus = info.nr_cpus;
    h.start_mono_ns = clock_ns(CLOCK_MONOTONIC);
    h.start_real_ns = clock_ns(CLOCK_REALTIME);
    h.clock = 1;
    write_all(&h, sizeof(h));
    std::string text = "fhook_version=" + std::string(version()) + "\n";
    text += "kernel_release=" + info.kernel_release + "\n";
    if (!info.preempt_model.empty()) {
        text += "preempt_model=" + info.preempt_model + "\n";
    }
    if (info.online_cpus) {
        text += "online_cpus=" + std::to_string(info.online_cpus) + "\n";
    }
    if (!info.tracer.empty()) {
        text += "tracer=" + info.tracer + "\n";
    }
    text += "command=" + info.command + "\n";
    write_chunk(RecChunk::Info, text);
    text.clear();
    for (const auto& [id, spec] : info.probes) {
        text += std::to_string(id) + "\t" + spec + "\n";
    }
    write_chunk(RecChunk::Probes, text);
    if (!info.events.empty()) {
        text.clear();
        for (const auto& e : info.events) {
            text += e.name + "\t" + std::to_string(e.id) + "\t" + std::to_string(e.format.size()) +
                    "\n" + e.format;
        }
        write_chunk(RecChunk::Events, text);
    }
}

void RecordWriter::add(const fhook_rec* rec) {
    const std::size_t size = rec->size;
    buf_.append(reinterpret_cast<const char*>(rec), size);
    buf_.append(align8(size) - size, '\0');
    records_ += rec->type != FHOOK_REC_COMM;
    note_record(rec);
    if (buf_.size() >= chunk_bytes_) {
        flush();
    }
}

void RecordWriter::add_pass(std::span<const RingSpan> spans) {
    flush();
    iov_.clear();
    for (const RingSpan& span : spans) {
        for (const fhook_rec* rec : span.records) {
            note_new(rec);
        }
        records_ += span.events;
        if (!span.bytes.empty()) {
            iov_.push_back({const_cast<std::byte*>(span.bytes.data()), span.bytes.size()});
        }
    }
    if (!iov_.empty()) {
        write_chunk(RecChunk::Records, iov_);
    }
}

void RecordWriter::note_record(const fhook_rec* rec) {
    const std::size_t size = rec->size;
    last_fn_ = 0;
    if (rec->type == FHOOK_REC_FN && size >= sizeof(fhook_rec_fn)) {
        const auto* f = reinterpret_cast<const fhook_rec_fn*>(rec);
        last_fn_ = fn_addresses(f);
        last_ip_ = static_cast<std::uint64_t>(std::int64_t{f->ip});
        last_parent_ = static_cast<std::uint64_t>(std::int64_t{f->parent_ip});
        note(last_ip_);
        note(last_parent_);
        last_type_ = rec->type;
    } else if (rec->type == FHOOK_REC_FUNC && size >= sizeof(fhook_rec_func)) {
        const auto* f = reinterpret_cast<const fhook_rec_func*>(rec);
        note(f->ip);
        note(f->parent_ip);
        last_ip_ = f->ip;
        last_parent_ = f->parent_ip;
        last_type_ = rec->type;
    } else if ((rec->type == FHOOK_REC_KPROBE || rec->type == FHOOK_REC_KRETPROBE) &&
               size >= sizeof(fhook_rec_probe)) {
        const auto* k = reinterpret_cast<const fhook_rec_probe*>(rec);
        note(k->ip);
        note(k->ip, true);
        if (k->ret_ip) {
            note(k->ret_ip);
            note(k->ret_ip, true);
        }
        last_ip_ = k->ip;
        last_parent_ = k->ret_ip;
        last_type_ = rec->type;
    } else if (rec->type == FHOOK_REC_FN_KPROBE && size >= sizeof(fhook_rec_fn)) {
        // as the FHOOK_REC_KPROBE record of the same hit (ret_ip 0)
        const auto ip = static_cast<std::uint64_t>(
            std::int64_t{reinterpret_cast<const fhook_rec_fn*>(rec)->ip});
        note(ip);
        note(ip, true);
        last_ip_ = ip;
        last_parent_ = 0;
        last_type_ = FHOOK_REC_KPROBE;
    } else if (rec->type == FHOOK_REC_HOOK && size >= sizeof(fhook_rec_hook)) {
        const auto* h = reinterpret_cast<const fhook_rec_hook*>(rec);
        note(h->ip);
        note(h->ret_ip);
        note(h->ret_ip, true);
    } else if (rec->type == FHOOK_REC_GRAPH_ENT && size >= sizeof(fhook_rec_graph_ent)) {
        note(reinterpret_cast<const fhook_rec_graph_ent*>(rec)->ip);
        last_ip_ = reinterpret_cast<const fhook_rec_graph_ent*>(rec)->ip;
        last_type_ = rec->type; // (a kprobe's ip after it is not noted sized yet)
    } else if (rec->type == FHOOK_REC_GRAPH_RET && size >= sizeof(fhook_rec_graph_ret)) {
        note(reinterpret_cast<const fhook_rec_graph_ret*>(rec)->ip);
        last_ip_ = reinterpret_cast<const fhook_rec_graph_ret*>(rec)->ip;
        last_type_ = rec->type;
    } else if (rec->type == FHOOK_REC_ERRORS && size >= sizeof(fhook_rec_errors)) {
        const auto* e = reinterpret_cast<const fhook_rec_errors*>(rec);
        for (std::size_t i = 0;
             i < e->nr_frames && sizeof(*e) + (i + 1) * sizeof(fhook_err_frame) <= size; i++) {
            note(e->frames[i].ip);
        }
    } else if (rec->type == FHOOK_REC_IRQSOFF && size >= sizeof(fhook_rec_irqsoff)) {
        const auto* q = reinterpret_cast<const fhook_rec_irqsoff*>(rec);
        for (const std::uint64_t ip :
             {q->start_ip, q->start_parent_ip, q->end_ip, q->end_parent_ip}) {
            note(ip);
        }
    }
    if (!(rec->flags & FHOOK_CTX_STACK)) {
        return;
    }
    // the stack trailer (ips[n], n) ending at `end`, after `payload`
    // bytes; where it starts, or 0
    const char* base = reinterpret_cast<const char*>(rec);
    const auto note_stack = [&](std::size_t end, std::size_t payload) -> std::size_t {
        std::uint64_t n = 0;
        if (end < payload + 8) {
            return 0;
        }
        std::memcpy(&n, base + end - 8, 8);
        if (n > FHOOK_MAX_STACK || 8 * (n + 1) > end - payload) {
            return 0;
        }
        for (std::uint64_t i = 0; i < n; i++) {
            std::uint64_t ip = 0;
            std::memcpy(&ip, base + end - 8 * (n + 1) + 8 * i, 8);
            note(ip);
        }
        return end - 8 * (n + 1);
    };
    const std::size_t first = note_stack(size, sizeof(fhook_rec));
    // a wakeup report's switch stack, between the struct and the waker's
    if (rec->type == FHOOK_REC_WAKEUP && first >= sizeof(fhook_rec_wakeup) &&
        (reinterpret_cast<const fhook_rec_wakeup*>(rec)->wflags & FHOOK_WAKEUP_SWITCH_STACK)) {
        note_stack(first, sizeof(fhook_rec_wakeup));
    }
}

void RecordWriter::flush() {
    if (buf_.empty()) {
        return;
    }
    write_chunk(RecChunk::Records, buf_);
    buf_.clear();
}

void RecordWriter::finish(const Ksyms& ksyms, const Stats& session,
                          const std::vector<RecordedProbe>& probes) {
    flush();
    // The symbol containing each address seen: enough for report to name
    // every address exactly as the live trace did (docs/file-format.md).
    std::map<std::uint64_t, std::string> syms;
    std::vector<std::uint64_t> addrs(addrs_.begin(), addrs_.end());
    // and for those printed with "+off/size" the symbol after them
    for (std::uint64_t addr : sized_) {
        if (auto ref = ksyms.lookup(addr)) {
            if (std::uint64_t size = ksyms.size_of(addr)) {
                addrs.push_back(addr - ref->offset + size);
            }
        }
    }
    for (std::uint64_t addr : addrs) {
        if (auto ref = ksyms.lookup(addr)) {
            const std::uint64_t start = addr - ref->offset;
            if (!syms.count(start)) {
                std::string line(ref->name);
                if (!ref->module.empty()) {
                    line += "\t[";
                    line += ref->module;
                    line += "]";
                }
                syms.emplace(start, std::move(line));
            }
        }
    }
    std::string text;
    char buf[32];
    for (const auto& [start, rest] : syms) {
        std::snprintf(buf, sizeof(buf), "%016" PRIx64 " t ", start);
        text += buf;
        text += rest;
        text += '\n';
    }
    write_chunk(RecChunk::Ksyms, text);

    const auto nr_cpus = static_cast<std::uint32_t>(session.per_cpu.size());
    text.clear();
    const std::uint32_t counts[2] = {nr_cpus, static_cast<std::uint32_t>(probes.size())};
    text.append(reinterpret_cast<const char*>(counts), sizeof(counts));
    put_stats(text, FHOOK_STATS_SESSION, session, nr_cpus);
    for (const auto& p : probes) {
        put_stats(text, p.id, p.stats, nr_cpus);
    }
    write_chunk(RecChunk::Stats, text);
    write_chunk(RecChunk::End, {});
    if (::fsync(fd_.get()) < 0 && errno != EINVAL && errno != EROFS) {
        int err = errno;
        throw_runtime("cannot write '" + path_ + "': " + errno_text(err), err);
    }
    fd_.reset();
}

void RecordWriter::write_chunk(RecChunk type, std::string_view payload) {
    std::vector<iovec> iov{{const_cast<char*>(payload.data()), payload.size()}};
    write_chunk(type, iov);
}

void RecordWriter::write_chunk(RecChunk type, std::vector<iovec>& payload) {
    std::uint64_t len = 0;
    for (const iovec& v : payload) {
        len += v.iov_len;
    }
    RecChunkHeader ch{static_cast<std::uint32_t>(type), 0, len};
    static const char zeros[8] = {};
    payload.insert(payload.begin(), iovec{&ch, sizeof(ch)});
    payload.push_back({const_cast<char*>(zeros), align8(len) - len});
    // writev in IOV_MAX pieces; partial writes (a full disk, a pipe) go on
    std::size_t idx = 0;
    if (copy_first_) {
        copy_rest(payload, idx);
    }
    while (idx < payload.size()) {
        const auto n =
            ::writev(fd_.get(), payload.data() + idx,
                     static_cast<int>(std::min<std::size_t>(payload.size() - idx, IOV_MAX)));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EFAULT && !copy_first_) {
                // a file system that pins pages (9p, FUSE direct_io) cannot
                // pin the device's: copy, now and from now on
                copy_first_ = true;
                copy_rest(payload, idx);
                continue;
            }
            int err = errno;
            throw_runtime("cannot write '" + path_ + "': " + errno_text(err), err);
        }
        written_ += static_cast<std::uint64_t>(n);
        auto left = static_cast<std::size_t>(n);
        while (idx < payload.size() && left >= payload[idx].iov_len) {
            left -= payload[idx].iov_len;
            idx++;
        }
        if (idx < payload.size()) {
            payload[idx].iov_base = static_cast<char*>(payload[idx].iov_base) + left;
            payload[idx].iov_len -= left;
        }
    }
}

// payload[idx...] becomes one piece of bounce_ (idx 0 of a new payload)
void RecordWriter::copy_rest(std::vector<iovec>& payload, std::size_t& idx) {
    bounce_.clear();
    for (std::size_t i = idx; i < payload.size(); i++) {
        const char* p = static_cast<const char*>(payload[i].iov_base);
        bounce_.insert(bounce_.end(), p, p + payload[i].iov_len);
    }
    payload.assign(1, iovec{bounce_.data(), bounce_.size()});
    idx = 0;
}

void RecordWriter::write_all(const void* data, std::size_t len) {
    const char* p = static_cast<const char*>(data);
    while (len > 0) {
        ssize_t n = ::write(fd_.get(), p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            int err = errno;
            throw_runtime("cannot write '" + path_ + "': " + errno_text(err), err);
        }
        p += n;
        len -= static_cast<std::size_t>(n);
        written_ += static_cast<std::uint64_t>(n);
    }
}

} // namespace fhook
