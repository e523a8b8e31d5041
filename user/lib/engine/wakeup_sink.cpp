#include <algorithm>
#include <cstring>
#include <set>

#include <fhook/engine/wakeup_sink.hpp>

namespace fhook {

WakeupSink::WakeupSink(OnReport on_report, RecordWriter* file, const Ksyms* ksyms)
    : on_report_(std::move(on_report)), file_(file), ksyms_(ksyms) {}

WakeupSink::Raw WakeupSink::copy(const fhook_rec* rec) {
    const auto* bytes = reinterpret_cast<const std::byte*>(rec);
    return Raw(bytes, bytes + rec->size);
}

void WakeupSink::on_record(const fhook_rec* rec) {
    if (file_ && rec->type == FHOOK_REC_COMM && rec->size >= sizeof(fhook_rec_comm)) {
        comms_[rec->pid] = copy(rec);
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
    WakeupReport r{wakeup_of(ev), ev.comm, ev.stack, {}};
    // the calls from the wakeup to the switch; those before are a tracked
    // wakeup's that was not reported, those after the next one's
    std::vector<const Raw*> raws;
    std::set<std::uint32_t> pids{r.rec.hdr.pid};
    for (const Call& c : calls_) {
        if (c.call.ts >= r.rec.wakeup_ts && c.call.ts <= r.rec.hdr.ts) {
            r.calls.push_back(c.call);
            raws.push_back(&c.raw);
            pids.insert(c.call.pid);
        }
    }
    if (file_) {
        for (const std::uint32_t pid : pids) {
            if (const auto it = comms_.find(pid); it != comms_.end()) {
                file_->add(reinterpret_cast<const fhook_rec*>(it->second.data()));
            }
        }
        for (const Raw* raw : raws) {
            if (!raw->empty()) {
                file_->add(reinterpret_cast<const fhook_rec*>(raw->data()));
            }
        }
        if (rec_) {
            file_->add(rec_);
        }
    }
    std::erase_if(calls_, [&](const Call& c) { return c.call.ts <= r.rec.hdr.ts; });
    on_report_(r);
    reports_++;
}

void WakeupSink::finish(const Stats& session, const std::vector<ProbeSummary>& probes) {
    if (!file_) {
        return;
    }
    std::vector<RecordedProbe> recorded;
    for (const auto& p : probes) {
        recorded.push_back(RecordedProbe{p.id, p.description, p.stats});
    }
    static const Ksyms kNone;
    file_->finish(ksyms_ ? *ksyms_ : kNone, session, recorded);
}

} // namespace fhook
