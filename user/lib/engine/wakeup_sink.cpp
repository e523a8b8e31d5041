#include <algorithm>
#include <cstring>
#include <set>

#include <fhook/engine/wakeup_sink.hpp>

namespace fhook {

namespace {

// A task's name as the decoder keys it: by pid, and for the idle tasks
// (pid 0, one per CPU: swapper/N) by CPU too.
std::uint64_t task_key(std::uint32_t pid, std::uint16_t cpu) {
    return std::uint64_t{pid} << 16 | (pid ? 0 : cpu);
}

} // namespace

WakeupSink::WakeupSink(OnReport on_report, Sink* file)
    : on_report_(std::move(on_report)), file_(file) {}

WakeupSink::Raw WakeupSink::copy(const fhook_rec* rec) {
    const auto* bytes = reinterpret_cast<const std::byte*>(rec);
    return Raw(bytes, bytes + rec->size);
}

void WakeupSink::on_record(const fhook_rec* rec) {
    if (file_ && rec->type == FHOOK_REC_COMM && rec->size >= sizeof(fhook_rec_comm)) {
        comms_[task_key(rec->pid, rec->cpu)] = copy(rec);
    }
    rec_ = rec;
    EventSink::on_record(rec);
    rec_ = nullptr;
}

void WakeupSink::on_event(const Event& ev) {
    if (ev.type == EventType::Wakeup) {
        report(ev);
        return;
    }
    if (ev.type != EventType::Function) {
        return;
    }
    if (calls_.size() == kMaxCalls) {
        calls_.pop_front();
    }
    calls_.push_back(
        Call{{ev.ts, ev.ip, ev.parent_ip, ev.pid, ev.cpu, ev.flags, ev.preempt, ev.comm},
             file_ && rec_ ? copy(rec_) : Raw()});
}

void WakeupSink::report(const Event& ev) {
    WakeupReport r{wakeup_of(ev), ev.comm, ev.stack, {}, wakeup_switch_stack(ev)};
    // the calls from when the tracer took the wakeup (calls_from after
    // its stamp) to the switch; those before are a wakeup's that was not
    // reported (or the previous one's CPU's), those after the next one's
    const std::uint64_t from = r.rec.wakeup_ts + r.rec.calls_from;
    std::vector<const Raw*> raws;
    std::set<std::uint64_t> tasks{task_key(r.rec.hdr.pid, r.rec.hdr.cpu)};
    for (const Call& c : calls_) {
        if (c.call.ts >= from && c.call.ts <= r.rec.hdr.ts) {
            r.calls.push_back(c.call);
            raws.push_back(&c.raw);
            tasks.insert(task_key(c.call.pid, c.call.cpu));
        }
    }
    if (file_) {
        // the names first, stamped with the first record they name (a
        // file's records are read in time order)
        const std::uint64_t first = r.calls.empty() ? r.rec.hdr.ts : r.calls.front().ts;
        for (const std::uint64_t task : tasks) {
            if (const auto it = comms_.find(task); it != comms_.end()) {
                Raw name = it->second;
                reinterpret_cast<fhook_rec*>(name.data())->ts = first;
                file_->on_record(reinterpret_cast<const fhook_rec*>(name.data()));
            }
        }
        for (const Raw* raw : raws) {
            if (!raw->empty()) {
                file_->on_record(reinterpret_cast<const fhook_rec*>(raw->data()));
            }
        }
        if (rec_) {
            file_->on_record(rec_);
        }
    }
    std::erase_if(calls_, [&](const Call& c) { return c.call.ts <= r.rec.hdr.ts; });
    on_report_(r);
    reports_++;
}

void WakeupSink::finish(const Stats& session, const std::vector<ProbeSummary>& probes) {
    if (file_) {
        file_->finish(session, probes);
    }
}

} // namespace fhook
