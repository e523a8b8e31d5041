#include <fhook/engine/sinks.hpp>
#include <fhook/probe/probe.hpp>

namespace fhook {

void EventSink::on_record(const fhook_rec* rec) {
    decoder_.decode_each(rec, event_, [this](const Event& ev) { on_event(ev); });
}

PrintSink::PrintSink(int fd, const Ksyms& ksyms, OutputFormat format, const ProbeTable& probes)
    : PrintSink(fd, make_formatter(format, ksyms), probes) {}

PrintSink::PrintSink(int fd, std::unique_ptr<Formatter> formatter, const ProbeTable& probes)
    : writer_(fd), formatter_(std::move(formatter)) {
    formats_fn_ = formatter_->formats_fn();
    formatter_->set_probes(&probes);
    formatter_->begin(writer_.buffer());
    writer_.commit();
}

void PrintSink::on_record(const fhook_rec* rec) {
    // (an FN record has no flags: with any, it takes the general path, as
    // an FN_KPROBE record, a kprobe's event, does)
    if (rec->type == FHOOK_REC_FN && rec->flags == 0 && formats_fn_) {
        decoder().decode_fn(rec, fn_);
        formatter_->format_fn(fn_, writer_.buffer());
        writer_.commit();
        return;
    }
    EventSink::on_record(rec);
}

void PrintSink::on_event(const Event& ev) {
    formatter_->format(ev, writer_.buffer());
    writer_.commit();
}

void PrintSink::flush() {
    writer_.flush();
}

void PrintSink::finish(const Stats&, const std::vector<ProbeSummary>&) {
    formatter_->end(writer_.buffer());
    writer_.commit();
    writer_.flush();
}

FileSink::FileSink(UniqueFd fd, const std::string& path, const RecordWriter::Info& info,
                   const Ksyms& ksyms)
    : writer_(std::move(fd), path, info), ksyms_(ksyms) {}

void FileSink::finish(const Stats& session, const std::vector<ProbeSummary>& probes) {
    std::vector<RecordedProbe> recorded;
    for (const auto& p : probes) {
        recorded.push_back(RecordedProbe{p.id, p.description, p.stats});
    }
    writer_.finish(ksyms_, session, recorded);
}

HistSink::HistSink(std::vector<HistSpec> specs, std::uint32_t probe_id, const KprobeDef* def)
    : probe_id_(probe_id), def_(def) {
    for (HistSpec& spec : specs) {
        resolve_hist_fields(spec, def);
        preds_.push_back(spec.filter.empty() ? std::vector<fhook_insn>()
                                             : compile_filter(spec.filter, def));
        tables_.emplace_back(std::move(spec));
    }
}

void HistSink::on_record(const fhook_rec* rec) {
    // (COMM records name the tasks: every probe's)
    if (rec->type == FHOOK_REC_COMM || record_probe_id(rec) == probe_id_) {
        EventSink::on_record(rec);
    }
}

void HistSink::on_event(const Event& ev) {
    // a function probe's own events (not a call graph's)
    if (ev.probe_id != probe_id_ || ev.type == EventType::Lost ||
        (!def_ && ev.type != EventType::Function)) {
        return;
    }
    for (std::size_t i = 0; i < tables_.size(); i++) {
        if (preds_[i].empty() || run_filter(preds_[i], ev)) {
            tables_[i].add(ev, def_);
        }
    }
}

void HistSink::clear() {
    for (HistTable& t : tables_) {
        t = HistTable(t.spec());
    }
}

TraceDatSink::TraceDatSink(int fd, std::string kallsyms, std::vector<TraceDatWriter::Probe> probes)
    : fd_(fd), writer_(std::move(kallsyms), std::move(probes)) {}

void TraceDatSink::on_event(const Event& ev) {
    writer_.add(ev);
    events_ += ev.type != EventType::Lost;
}

void TraceDatSink::finish(const Stats&, const std::vector<ProbeSummary>&) {
    writer_.finish(fd_);
}

} // namespace fhook
