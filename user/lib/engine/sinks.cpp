#include <fhook/sinks.hpp>

namespace fhook {

PrintSink::PrintSink(int fd, const Ksyms& ksyms, OutputFormat format, const ProbeTable& probes)
    : PrintSink(fd, make_formatter(format, ksyms), probes) {}

PrintSink::PrintSink(int fd, std::unique_ptr<Formatter> formatter, const ProbeTable& probes)
    : writer_(fd), formatter_(std::move(formatter)) {
    formatter_->set_probes(&probes);
    formatter_->begin(writer_.buffer());
    writer_.commit();
}

void PrintSink::on_record(const fhook_rec* rec) {
    decoder_.decode_each(rec, event_, [this](const Event& ev) {
        formatter_->format(ev, writer_.buffer());
        writer_.commit();
    });
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

} // namespace fhook
