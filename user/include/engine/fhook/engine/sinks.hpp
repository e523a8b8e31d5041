// Where a Tracer's records go: printed as text or NDJSON, written to a
// record file, aggregated into histograms, or discarded (the module
// counted them).
#pragma once

#include <memory>
#include <string>

#include <fhook/core/output.hpp>
#include <fhook/engine/tracer.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>

namespace fhook {

// Each record formatted (text: the kernel's trace format; or NDJSON) to fd.
class PrintSink final : public Sink {
public:
    PrintSink(int fd, const Ksyms& ksyms, OutputFormat format, const ProbeTable& probes);
    // ... with a formatter of the caller's (a call graph's tree)
    PrintSink(int fd, std::unique_ptr<Formatter> formatter, const ProbeTable& probes);
    void on_record(const fhook_rec* rec) override;
    void flush() override;
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override;

private:
    OutputWriter writer_;
    std::unique_ptr<Formatter> formatter_;
    Decoder decoder_;
    Event event_; // reused: its buffers stay allocated
};

// The records written to a record file (docs/file-format.md), with the
// symbols of every address they mention and the statistics at the end.
class FileSink final : public Sink {
public:
    FileSink(UniqueFd fd, const std::string& path, const RecordWriter::Info& info,
             const Ksyms& ksyms);
    // written straight from the rings, a pass at a time
    bool takes_spans() const override { return true; }
    void on_pass(std::span<const RingSpan> spans) override { writer_.add_pass(spans); }
    void on_record(const fhook_rec* rec) override { writer_.add(rec); }
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override;
    std::uint64_t records() const noexcept { return writer_.records(); }
    std::uint64_t bytes_written() const noexcept { return writer_.bytes_written(); }

private:
    RecordWriter writer_;
    const Ksyms& ksyms_;
};

// The records dropped (the module's counters are what is wanted).
// Histograms of one probe's events, a table per trigger (fhook hist): its
// events decoded and added to each table whose "if" they pass.
class HistSink final : public Sink {
public:
    // `def`: the probe's definition (nullptr: a function probe); each
    // spec resolved against it.
    HistSink(std::vector<HistSpec> specs, std::uint32_t probe_id, const KprobeDef* def);
    void on_record(const fhook_rec* rec) override;
    const std::vector<HistTable>& tables() const noexcept { return tables_; }
    // Starts every table over (--interval with --clear).
    void clear();

private:
    std::vector<HistTable> tables_;
    std::vector<std::vector<fhook_insn>> preds_; // each spec's "if", compiled
    std::uint32_t probe_id_;
    const KprobeDef* def_;
    Decoder decoder_;
    Event event_;
};

class DiscardSink final : public Sink {
public:
    void on_record(const fhook_rec*) override {}
};

} // namespace fhook
