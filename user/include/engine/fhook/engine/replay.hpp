// A record file played back into the sinks a live Tracer feeds (sinks.hpp):
// each record decoded once, the events that pass the filter given to the
// sink, then its finish() with the file's statistics.  `fhook report` is
// options plus a choice of sink; a sink added later works on recordings
// by construction.
#pragma once

#include <string>
#include <vector>

#include <fhook/engine/tracer.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

class Replay {
public:
    // The file, its symbols and its probes parsed again (as recorded; a
    // file from before formats were kept: this machine's `tracefs`
    // formats, the probes named in local_formats()).
    Replay(const std::string& path, const std::string& tracefs);

    const RecordFile& file() const noexcept { return file_; }
    const Ksyms& ksyms() const noexcept { return ksyms_; }
    const ProbeTable& probes() const noexcept { return probes_; }
    const std::vector<std::string>& local_formats() const noexcept { return local_formats_; }
    std::vector<std::uint32_t> probe_ids() const;
    // The probes with their recorded statistics, for summary_text().
    std::vector<ProbeSummary> summaries() const;

    // Every event that `filter` lets through to `sink` (an Invalid Error
    // when its expression compiles for no probe), then sink.finish().
    void run(EventSink& sink, const EventFilterSpec& filter) const;

private:
    RecordFile file_;
    Ksyms ksyms_;
    std::vector<std::string> local_formats_;
    ProbeTable probes_;
};

} // namespace fhook
