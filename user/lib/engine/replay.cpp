#include <fhook/engine/replay.hpp>
#include <fhook/probe/recorded_probes.hpp>

namespace fhook {

Replay::Replay(const std::string& path, const std::string& tracefs)
    : file_(RecordFile::open(path)), ksyms_(Ksyms::parse(file_.ksyms_text())),
      probes_(recorded_probe_table(file_, tracefs, local_formats_)) {}

std::vector<std::uint32_t> Replay::probe_ids() const {
    std::vector<std::uint32_t> ids;
    for (const auto& p : file_.probes()) {
        ids.push_back(p.id);
    }
    return ids;
}

std::vector<ProbeSummary> Replay::summaries() const {
    std::vector<ProbeSummary> probes;
    for (const auto& p : file_.probes()) {
        probes.push_back(ProbeSummary{p.id, p.stats, p.description});
    }
    return probes;
}

void Replay::run(EventSink& sink, const EventFilterSpec& filter) const {
    const EventFilter pass(filter, probes_, probe_ids());
    Decoder decoder;
    Event scratch;
    file_.for_each_record([&](const fhook_rec* rec) {
        decoder.decode_each(rec, scratch, [&](const Event& ev) {
            if (pass.passes(ev)) {
                sink.on_event(ev);
            }
        });
    });
    sink.finish(file_.session_stats(), summaries());
}

} // namespace fhook
