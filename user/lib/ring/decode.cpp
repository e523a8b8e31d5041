#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <fhook/core/error.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {

void record_too_short(const fhook_rec* rec, std::size_t need) {
    throw_runtime("record of type " + std::to_string(rec->type) + " has " +
                      std::to_string(rec->size) + " bytes, needs " + std::to_string(need) +
                      ": this is a bug in fhook.ko, please report it",
                  EBADMSG);
}

namespace {

// `ev` as a fresh Event but for its comm, its containers keeping their
// capacity (a reader decodes millions of records into one Event).
void reset(Event& ev) {
    static_assert(sizeof(Event) == 256, "a new field of Event: reset it here");
    ev.type = EventType::Function;
    ev.probe_id = 0;
    ev.ts = 0;
    ev.pid = ev.tgid = 0;
    ev.cpu = 0;
    ev.flags = ev.preempt = 0;
    ev.ip = ev.parent_ip = 0;
    ev.seq = 0;
    ev.lost = ev.first_seq = ev.last_seq = 0;
    ev.lost_probes.clear();
    ev.ret_ip = ev.faults = 0;
    ev.data.clear();
    ev.stack.clear();
    ev.retval = ev.duration = 0;
    ev.action = ev.depth = 0;
    ev.calltime = 0;
    ev.args.clear();
}

// decode() but for the name, which the Decoder sets.
bool decode_fields(const fhook_rec* rec, Event& ev);

} // namespace

std::size_t lost_record_size(const fhook_rec_lost* rec) {
    if (rec->nr_probes > FHOOK_MAX_PROBES) {
        return 0;
    }
    return sizeof(fhook_rec_lost) + rec->nr_probes * sizeof(fhook_lost_probe);
}

std::size_t lost_record_min_size(const fhook_rec* rec) {
    // the fixed part first: nr_probes is only read once that is there
    if (rec->size < sizeof(fhook_rec_lost)) {
        return sizeof(fhook_rec_lost);
    }
    return lost_record_size(reinterpret_cast<const fhook_rec_lost*>(rec));
}

std::optional<Event> decode(const fhook_rec* rec) {
    Event ev;
    if (!decode(rec, ev)) {
        return std::nullopt;
    }
    return ev;
}

bool decode(const fhook_rec* rec, Event& ev) {
    ev.comm.clear();
    return decode_fields(rec, ev);
}

namespace {

// A fixed-size record kept whole: its payload as the event's data.
template <typename T>
void keep_record(const fhook_rec* rec, std::size_t end, Event& ev, EventType type) {
    if (end < sizeof(T)) {
        record_too_short(rec, sizeof(T));
    }
    const auto* payload = reinterpret_cast<const std::uint8_t*>(rec) + sizeof(fhook_rec);
    ev.type = type;
    ev.data.assign(payload, payload + (sizeof(T) - sizeof(fhook_rec)));
}

bool decode_fields(const fhook_rec* rec, Event& ev) {
    reset(ev);
    // FHOOK_CTX_STACK: the record ends with ips[n], n
    std::size_t end = rec->size;
    if (rec->flags & FHOOK_CTX_STACK) {
        std::uint64_t n = 0;
        if (rec->size >= sizeof(fhook_rec) + 8) {
            std::memcpy(&n, reinterpret_cast<const char*>(rec) + rec->size - 8, 8);
        }
        if (rec->size < sizeof(fhook_rec) + 8 || n > FHOOK_MAX_STACK ||
            8 * (n + 1) > rec->size - sizeof(fhook_rec)) {
            record_too_short(rec, sizeof(fhook_rec) + 8 * (n + 1));
        }
        end = rec->size - 8 * (n + 1);
        ev.stack.resize(n);
        std::memcpy(ev.stack.data(), reinterpret_cast<const char*>(rec) + end, 8 * n);
    }
    switch (rec->type) {
    case FHOOK_REC_LOST: {
        if (rec->size < sizeof(fhook_rec_lost)) {
            record_too_short(rec, sizeof(fhook_rec_lost));
        }
        const auto* lost = reinterpret_cast<const fhook_rec_lost*>(rec);
        const std::size_t need = lost_record_size(lost);
        if (need == 0 || rec->size < need) {
            record_too_short(rec, need);
        }
        ev.type = EventType::Lost;
        ev.lost = lost->lost;
        ev.first_seq = lost->first_seq;
        ev.last_seq = lost->last_seq;
        ev.lost_probes.reserve(lost->nr_probes);
        for (std::uint32_t i = 0; i < lost->nr_probes; i++) {
            ev.lost_probes.push_back(LostProbe{lost->probes[i].probe_id, lost->probes[i].count});
        }
        break;
    }
    case FHOOK_REC_FN:
    case FHOOK_REC_FN_KPROBE: {
        // its own header: nothing of the generic one below but its offsets
        if (end < sizeof(fhook_rec_fn)) {
            record_too_short(rec, sizeof(fhook_rec_fn));
        }
        FnEvent fn;
        fn_fields(reinterpret_cast<const fhook_rec_fn*>(rec), fn);
        if (rec->type == FHOOK_REC_FN) {
            ev.type = EventType::Function;
            ev.parent_ip = fn.parent_ip;
        } else {
            // the FHOOK_REC_KPROBE record of the same hit: ret_ip and
            // faults 0, the fields after the header (the caller is not
            // the kprobe's)
            const auto* data = reinterpret_cast<const std::uint8_t*>(rec) + sizeof(fhook_rec_fn);
            ev.type = EventType::Kprobe;
            ev.data.assign(data, data + (end - sizeof(fhook_rec_fn)));
        }
        ev.ip = fn.ip;
        ev.probe_id = fn.probe_id;
        ev.ts = fn.ts;
        ev.pid = fn.pid;
        ev.cpu = fn.cpu;
        ev.flags = fn.flags;
        ev.preempt = fn.preempt;
        return true; // (tgid and seq: the Decoder's, from the stream)
    }
    case FHOOK_REC_FUNC: {
        if (end < sizeof(fhook_rec_func)) {
            record_too_short(rec, sizeof(fhook_rec_func));
        }
        const auto* func = reinterpret_cast<const fhook_rec_func*>(rec);
        ev.type = EventType::Function;
        ev.ip = func->ip;
        ev.parent_ip = func->parent_ip;
        break;
    }
    case FHOOK_REC_KPROBE:
    case FHOOK_REC_KRETPROBE:
    case FHOOK_REC_UPROBE:
    case FHOOK_REC_URETPROBE:
    case FHOOK_REC_TRACEPOINT: {
        if (end < sizeof(fhook_rec_probe)) {
            record_too_short(rec, sizeof(fhook_rec_probe));
        }
        const auto* kp = reinterpret_cast<const fhook_rec_probe*>(rec);
        ev.type = static_cast<EventType>(rec->type);
        ev.ip = kp->ip;
        ev.ret_ip = kp->ret_ip;
        ev.faults = kp->faults;
        ev.data.assign(kp->data, kp->data + (end - sizeof(fhook_rec_probe)));
        break;
    }
    case FHOOK_REC_HOOK: {
        if (end < sizeof(fhook_rec_hook)) {
            record_too_short(rec, sizeof(fhook_rec_hook));
        }
        const auto* hk = reinterpret_cast<const fhook_rec_hook*>(rec);
        ev.type = EventType::Hook;
        ev.ip = hk->ip;
        ev.ret_ip = hk->ret_ip;
        ev.faults = hk->faults;
        ev.retval = hk->retval;
        ev.duration = hk->duration;
        ev.action = hk->action;
        ev.data.assign(hk->data, hk->data + (end - sizeof(fhook_rec_hook)));
        break;
    }
    case FHOOK_REC_GRAPH_ENT: {
        if (end < sizeof(fhook_rec_graph_ent)) {
            record_too_short(rec, sizeof(fhook_rec_graph_ent));
        }
        const auto* g = reinterpret_cast<const fhook_rec_graph_ent*>(rec);
        const std::size_t need = sizeof(fhook_rec_graph_ent) + 8 * std::size_t{g->nr_args};
        if (g->nr_args > FHOOK_GRAPH_NR_ARGS || end < need) {
            record_too_short(rec, need);
        }
        ev.type = EventType::GraphEntry;
        ev.ip = g->ip;
        ev.depth = g->depth;
        ev.args.assign(g->args, g->args + g->nr_args);
        break;
    }
    case FHOOK_REC_GRAPH_RET: {
        if (end < sizeof(fhook_rec_graph_ret)) {
            record_too_short(rec, sizeof(fhook_rec_graph_ret));
        }
        const auto* g = reinterpret_cast<const fhook_rec_graph_ret*>(rec);
        ev.type = EventType::GraphReturn;
        ev.ip = g->ip;
        ev.depth = g->depth;
        ev.calltime = g->calltime;
        ev.retval = g->retval;
        ev.duration = rec->ts >= g->calltime ? rec->ts - g->calltime : 0;
        break;
    }
    case FHOOK_REC_WAKEUP: {
        keep_record<fhook_rec_wakeup>(rec, end, ev, EventType::Wakeup);
        const auto* w = reinterpret_cast<const fhook_rec_wakeup*>(rec);
        ev.duration = w->latency;
        if ((w->wflags & FHOOK_WAKEUP_SWITCH_STACK) && (rec->flags & FHOOK_CTX_STACK)) {
            // the switch's stack, ips[n] then n, before the waker's: kept
            // after the struct in data (wakeup_switch_stack())
            std::uint64_t n = 0;
            if (end >= sizeof(*w) + 8) {
                std::memcpy(&n, reinterpret_cast<const char*>(rec) + end - 8, 8);
            }
            if (end < sizeof(*w) + 8 || n > FHOOK_MAX_STACK || sizeof(*w) + 8 * (n + 1) > end) {
                record_too_short(rec, sizeof(*w) + 8 * (n + 1));
            }
            const auto* ips = reinterpret_cast<const std::uint8_t*>(rec) + end - 8 * (n + 1);
            ev.data.insert(ev.data.end(), ips, ips + 8 * n);
        }
        break;
    }
    case FHOOK_REC_TIMERLAT:
        keep_record<fhook_rec_timerlat>(rec, end, ev, EventType::Timerlat);
        ev.duration = reinterpret_cast<const fhook_rec_timerlat*>(rec)->latency;
        break;
    case FHOOK_REC_HWLAT: {
        keep_record<fhook_rec_hwlat>(rec, end, ev, EventType::Hwlat);
        const auto* h = reinterpret_cast<const fhook_rec_hwlat*>(rec);
        ev.duration = std::max(h->inner_ns, h->outer_ns);
        break;
    }
    case FHOOK_REC_OSNOISE:
        keep_record<fhook_rec_osnoise>(rec, end, ev, EventType::Osnoise);
        ev.duration = reinterpret_cast<const fhook_rec_osnoise*>(rec)->noise_ns;
        break;
    case FHOOK_REC_OSNOISE_NOISE:
        keep_record<fhook_rec_osnoise_noise>(rec, end, ev, EventType::OsnoiseNoise);
        ev.duration = reinterpret_cast<const fhook_rec_osnoise_noise*>(rec)->duration_ns;
        break;
    case FHOOK_REC_IRQSOFF:
        keep_record<fhook_rec_irqsoff>(rec, end, ev, EventType::Irqsoff);
        ev.duration = reinterpret_cast<const fhook_rec_irqsoff*>(rec)->latency_ns;
        break;
    case FHOOK_REC_ERRORS: {
        const auto* e = reinterpret_cast<const fhook_rec_errors*>(rec);
        if (end < sizeof(*e)) {
            record_too_short(rec, sizeof(*e));
        }
        const std::size_t per_frame = sizeof(fhook_err_frame) +
                                      (e->flags & FHOOK_ERRORS_CALLSITES ? 8 : 0) +
                                      (e->flags & FHOOK_ERRORS_ARGS ? 8 * FHOOK_GRAPH_NR_ARGS : 0);
        const std::size_t need = sizeof(*e) + per_frame * std::size_t{e->nr_frames};
        if (e->nr_frames == 0 || e->nr_frames > FHOOK_ERRORS_MAX_FRAMES || end < need) {
            record_too_short(rec, need);
        }
        const auto* payload = reinterpret_cast<const std::uint8_t*>(rec) + sizeof(fhook_rec);
        ev.type = EventType::Errors;
        ev.data.assign(payload, payload + (need - sizeof(fhook_rec)));
        ev.ip = e->frames[0].ip;
        ev.retval = e->frames[0].retval;
        ev.duration = e->frames[0].duration;
        break;
    }
    default:
        return false;
    }
    ev.probe_id = rec->probe_id;
    ev.ts = rec->ts;
    ev.pid = rec->pid;
    ev.tgid = rec->tgid;
    ev.cpu = rec->cpu;
    ev.flags = rec->flags & ~FHOOK_CTX_STACK;
    ev.preempt = rec->preempt;
    ev.seq = rec->seq;
    return true;
}

// The record a Wakeup or Timerlat event keeps in its data, header rebuilt.
template <typename T>
T record_of(const Event& ev, std::uint16_t type) {
    T r{};
    r.hdr.size = sizeof(r);
    r.hdr.type = type;
    r.hdr.probe_id = ev.probe_id;
    r.hdr.ts = ev.ts;
    r.hdr.pid = ev.pid;
    r.hdr.tgid = ev.tgid;
    r.hdr.cpu = ev.cpu;
    r.hdr.flags = ev.flags;
    r.hdr.preempt = ev.preempt;
    r.hdr.seq = ev.seq;
    std::memcpy(reinterpret_cast<std::uint8_t*>(&r) + sizeof(fhook_rec), ev.data.data(),
                std::min(ev.data.size(), sizeof(r) - sizeof(fhook_rec)));
    return r;
}

} // namespace

fhook_rec_wakeup wakeup_of(const Event& ev) {
    return record_of<fhook_rec_wakeup>(ev, FHOOK_REC_WAKEUP);
}

std::vector<std::uint64_t> wakeup_switch_stack(const Event& ev) {
    constexpr std::size_t kStruct = sizeof(fhook_rec_wakeup) - sizeof(fhook_rec);
    std::vector<std::uint64_t> ips;
    if (ev.type == EventType::Wakeup && ev.data.size() > kStruct) {
        ips.resize((ev.data.size() - kStruct) / 8);
        std::memcpy(ips.data(), ev.data.data() + kStruct, ips.size() * 8);
    }
    return ips;
}

fhook_rec_timerlat timerlat_of(const Event& ev) {
    return record_of<fhook_rec_timerlat>(ev, FHOOK_REC_TIMERLAT);
}

fhook_rec_hwlat hwlat_of(const Event& ev) {
    return record_of<fhook_rec_hwlat>(ev, FHOOK_REC_HWLAT);
}

fhook_rec_osnoise osnoise_of(const Event& ev) {
    return record_of<fhook_rec_osnoise>(ev, FHOOK_REC_OSNOISE);
}

fhook_rec_osnoise_noise osnoise_noise_of(const Event& ev) {
    return record_of<fhook_rec_osnoise_noise>(ev, FHOOK_REC_OSNOISE_NOISE);
}

fhook_rec_irqsoff irqsoff_of(const Event& ev) {
    return record_of<fhook_rec_irqsoff>(ev, FHOOK_REC_IRQSOFF);
}

ErrorsRecord errors_of(const Event& ev) {
    ErrorsRecord out;
    constexpr std::size_t kHead = sizeof(fhook_rec_errors) - sizeof(fhook_rec);
    if (ev.type != EventType::Errors || ev.data.size() < kHead) {
        return out;
    }
    fhook_rec_errors head;
    std::memcpy(reinterpret_cast<std::uint8_t*>(&head) + sizeof(fhook_rec), ev.data.data(), kHead);
    out.flags = head.flags;
    // (decode_record() kept nr_frames frames, and what follows them)
    const bool callsites = head.flags & FHOOK_ERRORS_CALLSITES,
               args = head.flags & FHOOK_ERRORS_ARGS;
    const std::size_t per_frame =
        sizeof(fhook_err_frame) + (callsites ? 8 : 0) + (args ? sizeof(out.args[0]) : 0);
    if (ev.data.size() < kHead + head.nr_frames * per_frame) {
        return out;
    }
    const std::size_t n = head.nr_frames;
    const std::uint8_t* at = ev.data.data() + kHead;
    out.frames.resize(n);
    std::memcpy(out.frames.data(), at, n * sizeof(fhook_err_frame));
    at += n * sizeof(fhook_err_frame);
    if (callsites) {
        out.callsites.resize(n);
        std::memcpy(out.callsites.data(), at, n * 8);
        at += n * 8;
    }
    if (args) {
        out.args.resize(n);
        std::memcpy(out.args.data(), at, n * sizeof(out.args[0]));
    }
    return out;
}

bool leaf_entry(const fhook_rec* rec, Event& ev) {
    const auto* g = reinterpret_cast<const fhook_rec_graph_ret*>(rec);
    if (!(g->ret_flags & FHOOK_GRAPH_RET_LEAF)) {
        return false;
    }
    ev.type = EventType::GraphEntry;
    ev.ts = g->calltime;
    ev.flags = g->entry_flags & ~FHOOK_CTX_STACK;
    ev.preempt = g->entry_preempt;
    ev.calltime = 0;
    ev.retval = 0;
    ev.duration = 0;
    ev.args.clear();
    return true;
}

void leaf_return(const fhook_rec* rec, Event& ev) {
    const auto* g = reinterpret_cast<const fhook_rec_graph_ret*>(rec);
    ev.type = EventType::GraphReturn;
    ev.ts = rec->ts;
    ev.flags = rec->flags & ~FHOOK_CTX_STACK;
    ev.preempt = rec->preempt;
    ev.calltime = g->calltime;
    ev.retval = g->retval;
    ev.duration = rec->ts >= g->calltime ? rec->ts - g->calltime : 0;
}

std::uint32_t SeqCount::take_lost(const fhook_rec* rec) {
    if (rec->size >= sizeof(fhook_rec_lost)) {
        const auto last = reinterpret_cast<const fhook_rec_lost*>(rec)->last_seq;
        if (last != kSeqUnknown) {
            raise(static_cast<std::uint32_t>(last) + 1);
        }
    }
    return rec->seq;
}

SeqCount& Decoder::new_seq_count(std::uint16_t cpu) {
    seq_counts_.resize(std::size_t{cpu} + 1);
    return seq_counts_[cpu];
}

const Decoder::Task* Decoder::find_task(std::uint64_t k) {
    const auto it = comms_.find(k);
    if (it == comms_.end()) {
        return nullptr;
    }
    last_key_ = k;
    last_ = &it->second;
    return last_;
}

bool Decoder::decode(const fhook_rec* rec, Event& ev) {
    if (rec->type == FHOOK_REC_COMM) {
        if (rec->size < sizeof(fhook_rec_comm)) {
            record_too_short(rec, sizeof(fhook_rec_comm));
        }
        const auto* c = reinterpret_cast<const fhook_rec_comm*>(rec);
        last_key_ = key(rec->pid, rec->cpu);
        Task& task = comms_[last_key_];
        task.name.assign(c->comm, ::strnlen(c->comm, sizeof(c->comm)));
        task.tgid = rec->tgid;
        names_++;
        last_ = &task;
        seq_count(rec->cpu).take(rec);
        return false;
    }
    if (!decode_fields(rec, ev)) {
        return false;
    }
    const bool fn = fn_layout(rec->type);
    const std::uint32_t seq = seq_count(ev.cpu).take(rec);
    if (fn) {
        ev.seq = seq;
    }
    const Task* task = task_of(ev.pid, ev.cpu);
    if (task == nullptr) {
        ev.comm = kUnnamed;
        return true;
    }
    if (fn) {
        ev.tgid = task->tgid;
    }
    // (mostly the name the previous event of the stream had already)
    if (!same_task_name(ev.comm, task->name)) {
        ev.comm = task->name;
    }
    return true;
}

std::optional<Event> Decoder::decode(const fhook_rec* rec) {
    Event ev;
    if (!decode(rec, ev)) {
        return std::nullopt;
    }
    return ev;
}

std::string_view Decoder::comm(std::uint32_t pid, std::uint16_t cpu) const {
    const auto it = comms_.find(key(pid, cpu));
    return it == comms_.end() ? std::string_view() : std::string_view(it->second.name);
}

} // namespace fhook
