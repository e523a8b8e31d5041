// make_recfile FILE: writes a small record file of every kind of event
// (function calls with and without a stack, a kprobe with a string, a
// faulting one, a kretprobe, a tracepoint with its recorded format, a
// LOST record) on two CPUs, for the golden tests of `fhook report`
// (user/tests/cli/cases.txt).  Deterministic: the same bytes every run.
#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/sys/ksyms.hpp>

#include "../records.hpp"

namespace {

using namespace fhook;

const char* const kKallsyms = "ffffffff81100000 T try_to_wake_up\n"
                              "ffffffff81100800 T __schedule\n"
                              "ffffffff81101000 T schedule\n"
                              "ffffffff812a0000 T vfs_read\n"
                              "ffffffff812a0400 t ksys_read\n"
                              "ffffffff812a0800 T __x64_sys_read\n"
                              "ffffffff812b0000 T vfs_write\n"
                              "ffffffff812b0800 t ksys_write\n"
                              "ffffffff812c0000 T do_sys_openat2\n"
                              "ffffffff812c0800 T __x64_sys_openat\n"
                              "ffffffff812c1000 T __x64_sys_close\n"
                              "ffffffffc0100000 t loop_queue_rq\t[loop]\n";

const char* const kOpen = "p:fh/open do_sys_openat2 dfd=%di:s32 flags=%dx:x32 path=+0(%si):string";
const char* const kOpenRet = "r:fh/openret do_sys_openat2 ret=$retval:s64";
const char* const kFormat =
    "name: fhk_ev\nID: 4242\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int answer;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:char name[8];\toffset:12;\tsize:8;\tsigned:0;\n\n"
    "print fmt: \"answer=%d\", REC->answer\n";

// A record of `type` with `payload` after the probe header and `data`.
class Rec {
public:
    Rec(std::uint16_t type, std::uint32_t probe, std::uint64_t ts, std::uint16_t cpu,
        std::uint32_t pid, const char* comm)
        : hdr_(test::header(type, 0, ts, cpu, pid)), comm_(comm) {
        hdr_.probe_id = probe;
    }
    const char* comm() const { return comm_; }
    Rec& u64(std::uint64_t v) {
        append(&v, sizeof(v));
        return *this;
    }
    Rec& bytes(const void* p, std::size_t n) {
        append(p, n);
        return *this;
    }
    Rec& stack(const std::vector<std::uint64_t>& ips) {
        for (std::uint64_t ip : ips) {
            u64(ip);
        }
        hdr_.flags |= FHOOK_CTX_STACK;
        return u64(ips.size());
    }
    Rec& flags(std::uint8_t f) {
        hdr_.flags |= f;
        return *this;
    }
    const fhook_rec* finish() {
        hdr_.size = static_cast<std::uint16_t>(sizeof(hdr_) + body_.size());
        out_.assign(reinterpret_cast<const char*>(&hdr_), sizeof(hdr_));
        out_ += body_;
        out_.resize((out_.size() + 7) & ~std::size_t{7}, '\0');
        return reinterpret_cast<const fhook_rec*>(out_.data());
    }

private:
    void append(const void* p, std::size_t n) { body_.append(static_cast<const char*>(p), n); }
    fhook_rec hdr_;
    const char* comm_;
    std::string body_;
    std::string out_;
};

// Adds records as the module writes them: the task's name (a COMM record
// with the record's timestamp) before its first record on a CPU and when
// the name changed.
class Writer {
public:
    explicit Writer(RecordWriter& w) : w_(w) {}
    void add(Rec& rec) {
        const fhook_rec* r = rec.finish();
        name(r->cpu, r->pid, rec.comm(), r->ts, r->seq);
        w_.add(r);
    }
    void add(const fhook_rec* r) { w_.add(r); }
    // A function entry as fhook_fnrec() writes it (FHOOK_REC_FN), its
    // context raw (FHOOK_FN_CTX_*).
    void add_fn(std::uint32_t probe, std::uint64_t ts, std::uint16_t cpu, std::uint32_t pid,
                const char* comm, std::uint64_t ip, std::uint64_t parent_ip, std::uint32_t ctx) {
        fhook_rec_fn r = test::fn_rec(ts, cpu, ip, parent_ip, pid, ctx);
        r.probe_id = static_cast<std::uint8_t>(probe);
        name(cpu, pid, comm, ts, 0);
        w_.add(reinterpret_cast<const fhook_rec*>(&r));
    }

private:
    // The task's COMM record before its record numbered `seq` where the CPU
    // has not named it so yet
    void name(std::uint16_t cpu, std::uint32_t pid, const char* comm, std::uint64_t ts,
              std::uint32_t seq) {
        std::string& named = named_[{cpu, pid}];
        if (named != comm) {
            named = comm;
            fhook_rec_comm c = test::comm_rec(pid, comm, cpu);
            c.hdr.ts = ts;
            c.hdr.seq = seq;
            w_.add(&c.hdr);
        }
    }
    RecordWriter& w_;
    std::map<std::pair<std::uint16_t, std::uint32_t>, std::string> named_;
};

// The data area of `def` with its scalar fields set from `values` (in
// field order) and its first string field pointing at `str`.
std::string probe_data(const KprobeDef& def, const std::vector<std::uint64_t>& values,
                       const std::string& str) {
    std::string data(def.data_size, '\0');
    std::size_t next = 0;
    for (const ProbeField& f : def.fields) {
        if (f.type.is_string()) {
            const std::uint32_t loc =
                static_cast<std::uint32_t>((str.size() + 1) << 16 | data.size());
            std::memcpy(&data[f.offset], &loc, sizeof(loc));
            data += str;
            data.push_back('\0');
        } else {
            std::memcpy(&data[f.offset], &values.at(next++), f.type.size);
        }
    }
    return data;
}

// `lost_mid`: one more event on CPU 0 after its lost records, so that a
// reader sees the gap before it, and one half a second after the others
// (the trace.dat test).
int write(const char* path, bool lost_mid) {
    UniqueFd fd(::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) {
        std::perror(path);
        return 1;
    }
    const auto no_symbols = [](std::string_view) { return std::optional<std::uint64_t>(0); };
    const KprobeDef open = parse_kprobe(kOpen, no_symbols);
    const KprobeDef ret = parse_kprobe(kOpenRet, no_symbols);

    RecordWriter::Info info;
    info.nr_cpus = 2;
    info.kernel_release = "6.1.0-test";
    info.command = "fhook record -o sample.fhk vfs_read vfs_write 'p:fh/open ...' ...";
    info.probes = {{1, "vfs_read vfs_write"}, {2, kOpen}, {3, kOpenRet}, {4, "t:fhk:fhk_ev"}};
    info.events = {{"fhk:fhk_ev", 4242, kFormat}};
    RecordWriter w(std::move(fd), path, info);
    Writer out(w);

    // (function entries without a stack are FN records, as the module
    // writes them: the same events as FUNC records would be)
    out.add_fn(1, 2431445000, 1, 94, "cat", 0xffffffff812a0000, 0xffffffff812a0433,
               FHOOK_FN_CTX_IRQS_OFF);
    out.add(Rec(FHOOK_REC_FUNC, 1, 2431446000, 0, 95, "sh\"x\\")
                .u64(0xffffffff812b0000)
                .u64(0xffffffff812b0821)
                .stack({0xffffffff812b0821, 0xffffffff812a0810, 0x1234}));
    const std::string path_data = probe_data(open, {0xffffff9c, 0x8000}, "/etc/h\xc3\xa9llo");
    out.add(Rec(FHOOK_REC_KPROBE, 2, 2431447000, 1, 94, "cat")
                .u64(0xffffffff812c0000)
                .u64(0)
                .u64(0)
                .bytes(path_data.data(), path_data.size())
                .flags(FHOOK_CTX_SOFTIRQ));
    const std::string faulted = probe_data(open, {3, 0}, "");
    out.add(Rec(FHOOK_REC_KPROBE, 2, 2431447500, 0, 95, "sh")
                .u64(0xffffffff812c0000)
                .u64(0)
                .u64(1ULL << open.fields[2].store)
                .bytes(faulted.data(), faulted.size()));
    const std::int64_t minus_two = -2;
    const std::string ret_data = probe_data(ret, {static_cast<std::uint64_t>(minus_two)}, "");
    out.add(Rec(FHOOK_REC_KRETPROBE, 3, 2431448000, 1, 94, "cat")
                .u64(0xffffffff812c0000)
                .u64(0xffffffff812c0840)
                .u64(0)
                .bytes(ret_data.data(), ret_data.size()));
    fhook_rec_lost lost;
    std::memset(&lost, 0, sizeof(lost));
    lost.hdr = test::header(FHOOK_REC_LOST, sizeof(lost), 2431449000, 0);
    lost.hdr.probe_id = 0;
    lost.lost = 1234;
    out.add(&lost.hdr);
    if (lost_mid) {
        out.add_fn(1, 2431449500, 0, 95, "sh", 0xffffffff812a0000, 0xffffffff812a0400, 0);
    }
    unsigned char entry[24] = {};
    const std::int32_t answer = 42;
    std::memcpy(entry + 8, &answer, sizeof(answer));
    std::memcpy(entry + 12, "fhk", 3);
    out.add(Rec(FHOOK_REC_TRACEPOINT, 4, 2431450000, 1, 96, "kworker/1:0")
                .u64(0)
                .u64(0)
                .u64(0)
                .bytes(entry, sizeof(entry)));
    out.add_fn(1, 2431451000, 1, 96, "kworker/1:0", 0xffffffffc0100010, 0x1234,
               0x10000 | FHOOK_FN_CTX_IRQS_OFF);
    if (lost_mid) { // half a second later: beyond a page event's 27-bit time delta
        out.add_fn(1, 2931451000, 1, 94, "cat", 0xffffffff812b0000, 0xffffffff812a0400, 0);
    }

    Stats st;
    st.per_cpu = {CpuStats{10, 8, 2, 0}, CpuStats{5, 5, 0, 1}};
    st.total = CpuStats{15, 13, 2, 1};
    std::vector<RecordedProbe> probes;
    for (const auto& [id, text] : info.probes) {
        probes.push_back(RecordedProbe{id, text, st});
    }
    w.finish(Ksyms::parse(std::string_view(kKallsyms)), st, probes);
    return 0;
}

// A record file of two CPUs at `path`.
std::unique_ptr<RecordWriter> create(const char* path, RecordWriter::Info info) {
    UniqueFd fd(::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) {
        throw_runtime(std::string("cannot create ") + path, errno);
    }
    info.nr_cpus = 2;
    return std::make_unique<RecordWriter>(std::move(fd), path, info);
}

// The end of a tracer's recording: its `n` records written on CPU 1.
void finish_cpu1(RecordWriter& w, std::uint64_t n,
                 const std::vector<std::pair<std::uint32_t, std::string>>& probes) {
    Stats st;
    st.per_cpu = {CpuStats{0, 0, 0, 0}, CpuStats{n, n, 0, 0}};
    st.total = st.per_cpu[1];
    std::vector<RecordedProbe> recorded;
    for (const auto& [id, text] : probes) {
        recorded.push_back(RecordedProbe{id, text, st});
    }
    w.finish(Ksyms::parse(std::string_view(kKallsyms)), st, recorded);
}

// A call graph's recording (fhook record --graph vfs_read): on CPU 1 cat's
// read with a nested call, an irq-free leaf on CPU 0, a task switch, a
// loss, a return whose entry was lost, a leaf in one record (its entry
// held back), a call still running at the end.
int write_graph(const char* path) {
    RecordWriter::Info info;
    info.kernel_release = "6.1.0-test";
    info.command = "fhook record --graph -o graph.fhk vfs_read";
    info.probes = {{1, "graph vfs_read"}};
    const std::unique_ptr<RecordWriter> file = create(path, info);
    RecordWriter& w = *file;
    Writer out(w);
    const std::uint64_t read = 0xffffffff812a0000, ksys = 0xffffffff812a0400,
                        write = 0xffffffff812b0000;
    const auto ent = [&](std::uint64_t ip, std::uint32_t depth, std::uint64_t ts, std::uint16_t cpu,
                         std::uint32_t pid, const char* comm) {
        const std::uint64_t depth_args = depth; // depth, nr_args 0
        out.add(Rec(FHOOK_REC_GRAPH_ENT, 1, ts, cpu, pid, comm).u64(ip).u64(depth_args));
    };
    const auto ret = [&](std::uint64_t ip, std::uint32_t depth, std::uint64_t ts,
                         std::uint64_t calltime, std::uint64_t retval, std::uint16_t cpu,
                         std::uint32_t pid, const char* comm) {
        out.add(Rec(FHOOK_REC_GRAPH_RET, 1, ts, cpu, pid, comm)
                    .u64(ip)
                    .u64(calltime)
                    .u64(retval)
                    .u64(depth));
    };
    ent(read, 0, 2431445000, 1, 94, "cat");
    ent(ksys, 1, 2431445100, 1, 94, "cat");
    ret(ksys, 1, 2431445581, 2431445100, 0, 1, 94, "cat");
    ent(read, 0, 2431445200, 0, 95, "sh");
    ret(read, 0, 2431445700, 2431445200, static_cast<std::uint64_t>(-14), 0, 95, "sh");
    ret(read, 0, 2431457905, 2431445000, 1, 1, 94, "cat");
    ent(write, 0, 2431460000, 1, 96, "kworker/1:0");
    fhook_rec_lost lost{};
    lost.hdr = test::header(FHOOK_REC_LOST, sizeof(lost), 2431461000, 1);
    lost.hdr.probe_id = 0;
    lost.lost = 2;
    lost.first_seq = 7;
    lost.last_seq = 8;
    out.add(&lost.hdr);
    ret(write, 0, 2433461000, 2431460500, 4096, 1, 96, "kworker/1:0");
    // a leaf: its entry held back, the return stands for the whole call
    // (FHOOK_GRAPH_RET_LEAF; entry_flags 'd', entry_preempt 1)
    const std::uint64_t leaf = 0 | std::uint64_t{FHOOK_GRAPH_RET_LEAF} << 32 |
                               std::uint64_t{FHOOK_CTX_IRQS_OFF} << 40 | std::uint64_t{1} << 48;
    out.add(Rec(FHOOK_REC_GRAPH_RET, 1, 2433461900, 0, 95, "sh")
                .u64(read)
                .u64(2433461500)
                .u64(3)
                .u64(leaf));
    ent(read, 0, 2433462000, 0, 95, "sh");

    Stats st;
    st.per_cpu = {CpuStats{4, 4, 0, 0}, CpuStats{8, 6, 2, 0}};
    st.total = CpuStats{12, 10, 2, 0};
    w.finish(Ksyms::parse(std::string_view(kKallsyms)), st,
             {RecordedProbe{1, "graph vfs_read", st}});
    return 0;
}

// A recording of 'fhook wakeup --rt --function --stack --record': one
// report of a FIFO thread woken on CPU 0 and switched to on CPU 1 1,361 us
// later, with two function calls on CPU 1 in between (those of the
// module's FHOOK_PROBE_F_WAKEUP_CPU probe), the waker's stack and the
// switch's.
int write_wakeup(const char* path) {
    RecordWriter::Info info;
    info.kernel_release = "6.12.118+deb12-rt-amd64";
    info.preempt_model = "preempt_rt";
    info.command = "fhook wakeup --rt --function=vfs_* --stack --record w.fhk";
    info.tracer = "wakeup_rt";
    info.probes = {{1, "wakeup_rt"}, {2, "vfs_*"}};
    const std::unique_ptr<RecordWriter> file = create(path, info);
    RecordWriter& w = *file;
    Writer out(w);
    const std::uint64_t wakeup_ts = 2431445000;
    Rec read(FHOOK_REC_FUNC, 2, wakeup_ts + 12000, 1, 115, "fhook-workload");
    out.add(read.u64(0xffffffff812a0000).u64(0xffffffff812a0400).flags(FHOOK_CTX_IRQS_OFF));
    Rec write(FHOOK_REC_FUNC, 2, wakeup_ts + 400000, 1, 115, "fhook-workload");
    out.add(write.u64(0xffffffff812b0000).u64(0xffffffff812b0800));
    fhook_rec_wakeup r{};
    r.hdr = test::header(FHOOK_REC_WAKEUP, sizeof(r), wakeup_ts + 1361000, 1, 115);
    r.hdr.probe_id = 1;
    r.hdr.flags = FHOOK_CTX_IRQS_OFF;
    r.hdr.preempt = 4;
    r.latency = 1361000;
    r.wakeup_ts = wakeup_ts;
    r.max = r.latency;
    r.nr = 7;
    r.pid = 163;
    r.tgid = 162;
    r.wakeup_cpu = 1;
    r.waker_pid = 162;
    r.prio = 49;
    r.waker_prio = 120;
    r.prev_prio = 120;
    r.policy = 1;
    r.rt_priority = 50;
    r.wflags = FHOOK_WAKEUP_NEW_MAX | FHOOK_WAKEUP_SWITCH_STACK;
    r.waker_flags = FHOOK_CTX_IRQS_OFF;
    r.waker_preempt = 6;
    std::strcpy(r.comm, "fhook-wakeprog");
    std::strcpy(r.waker_comm, "fhook-wakeprog");
    // the switch's stack (__schedule <- schedule), then the waker's
    // (try_to_wake_up <- vfs_write)
    const std::uint64_t stacks[] = {0xffffffff81100810, 0xffffffff81101010, 2,
                                    0xffffffff81100010, 0xffffffff812b0010, 2};
    r.hdr.flags |= FHOOK_CTX_STACK;
    r.hdr.size = sizeof(r) + sizeof(stacks);
    std::vector<std::uint8_t> rec(r.hdr.size);
    std::memcpy(rec.data(), &r, sizeof(r));
    std::memcpy(rec.data() + sizeof(r), stacks, sizeof(stacks));
    w.add(reinterpret_cast<const fhook_rec*>(rec.data()));
    finish_cpu1(w, 3, info.probes);
    return 0;
}

// A recording of 'fhook timerlat --record': one activation on CPU 1, its
// timer's handler (IRQ) then its thread, printed as timerlat's trace mode.
int write_timerlat(const char* path) {
    RecordWriter::Info info;
    info.kernel_release = "6.12.118+deb12-rt-amd64";
    info.command = "fhook timerlat --record t.fhk";
    info.probes = {{1, "timerlat"}};
    const std::unique_ptr<RecordWriter> file = create(path, info);
    Writer out(*file);
    const std::uint64_t irq_lat = 4321, thread_lat = 12345, seq = 7;
    Rec irq(FHOOK_REC_TIMERLAT, 1, 2431445000, 1, 0, "swapper/1");
    out.add(irq.u64(irq_lat).u64(seq).u64(FHOOK_TIMERLAT_IRQ).flags(FHOOK_CTX_IRQS_OFF));
    Rec thread(FHOOK_REC_TIMERLAT, 1, 2431453000, 1, 1234, "fhook-timerlat/1");
    out.add(thread.u64(thread_lat).u64(seq).u64(FHOOK_TIMERLAT_THREAD));
    finish_cpu1(*file, 2, info.probes);
    return 0;
}

// A recording of one of the other latency tracers, on CPU 1: a hwlat
// window with a gap; an osnoise period and a noise in it; a preemptoff
// section with the stack where it ended (its probe described otherwise:
// the file's tracer key names the tracer; the timerlat file has none,
// as files from before the key).
int write_tracer(const char* path, std::string_view tracer) {
    RecordWriter::Info info;
    info.kernel_release = "6.1.0-test";
    info.command = "fhook " + std::string(tracer) + " --record x.fhk";
    info.tracer = tracer == "irqsoff" ? "preemptoff" : std::string(tracer);
    info.probes = {{1, tracer == "irqsoff" ? "sections" : std::string(tracer)}};
    const std::unique_ptr<RecordWriter> file = create(path, info);
    Writer out(*file);
    std::uint64_t n = 1;
    if (tracer == "hwlat") {
        // inner, outer, nmi_total, seqnum; nmi_count, count
        Rec hwlat(FHOOK_REC_HWLAT, 1, 2431445000, 1, 1300, "fhook-hwlat");
        out.add(hwlat.u64(310000000).u64(1200).u64(5000).u64(3).u64(std::uint64_t{1} << 32 | 2));
    } else if (tracer == "osnoise") {
        // a noise of 40 us: one IRQ
        Rec noise(FHOOK_REC_OSNOISE_NOISE, 1, 2431500000, 1, 1301, "fhook-osn/1");
        out.add(noise.u64(2431460000).u64(40000).u64(std::uint64_t{1} << 32).u64(0).u64(0));
        // runtime, noise, max single, seqnum; hw, nmi, irq, softirq,
        // thread, oflags
        Rec period(FHOOK_REC_OSNOISE, 1, 2432445000, 1, 1301, "fhook-osn/1");
        out.add(period.u64(1000000).u64(40000).u64(40000).u64(9).u64(0).u64(1).u64(0));
        n = 2;
    } else {
        // 250 us with interrupts off, from ksys_read's call to vfs_read's
        // return
        Rec section(FHOOK_REC_IRQSOFF, 1, 2433445000, 1, 115, "fhook-workload");
        out.add(section.u64(250000)
                    .u64(0xffffffff812a0010)
                    .u64(0xffffffff812a0410)
                    .u64(0xffffffff812a0020)
                    .u64(0xffffffff812a0420)
                    .u64(4)
                    .stack({0xffffffff812a0020, 0xffffffff812a0420, 0xffffffff812a0810})
                    .flags(FHOOK_CTX_IRQS_OFF));
    }
    finish_cpu1(*file, n, info.probes);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::string_view variant = argc == 3 ? argv[2] : "";
    const bool tracer = variant == "hwlat" || variant == "osnoise" || variant == "irqsoff";
    if ((argc != 2 && argc != 3) || (argc == 3 && variant != "lost-mid" && variant != "graph" &&
                                     variant != "wakeup" && variant != "timerlat" && !tracer)) {
        std::fprintf(stderr, "usage: make_recfile FILE "
                             "[lost-mid|graph|wakeup|timerlat|hwlat|osnoise|irqsoff]\n");
        return 2;
    }
    try {
        if (variant == "graph") {
            return write_graph(argv[1]);
        }
        if (variant == "wakeup") {
            return write_wakeup(argv[1]);
        }
        if (variant == "timerlat") {
            return write_timerlat(argv[1]);
        }
        if (tracer) {
            return write_tracer(argv[1], variant);
        }
        return write(argv[1], variant == "lost-mid");
    } catch (const fhook::Error& e) {
        std::fprintf(stderr, "make_recfile: %s\n", e.what());
        return 1;
    }
}
