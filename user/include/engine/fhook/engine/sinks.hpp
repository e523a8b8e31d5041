// Where the records of a Tracer (live) or a Replay (a record file) go:
// printed as text, NDJSON, Chrome JSON or call trees, written to a record
// file or a trace.dat, aggregated into histograms or counts, or discarded
// (the module counted them).  Every sink but FileSink takes decoded
// events (EventSink), so it works on both by construction.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <fhook/core/output.hpp>
#include <fhook/engine/tracer.hpp>
#include <fhook/output/format.hpp>
#include <fhook/output/summary.hpp>
#include <fhook/output/tracedat.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>

namespace fhook {

// Each event formatted (text: the kernel's trace format; NDJSON, Chrome) to fd.
class PrintSink final : public EventSink {
public:
    PrintSink(int fd, const Ksyms& ksyms, OutputFormat format, const ProbeTable& probes);
    // ... with a formatter of the caller's (a call graph's tree)
    PrintSink(int fd, std::unique_ptr<Formatter> formatter, const ProbeTable& probes);
    // (function entries of FN records straight to the formatter, when it
    // takes them: Formatter::formats_fn())
    void on_record(const fhook_rec* rec) override;
    void on_records(std::span<const fhook_rec* const> recs) override {
        for (const fhook_rec* rec : recs) {
            PrintSink::on_record(rec);
        }
    }
    void on_event(const Event& ev) override;
    void flush() override;
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override;

private:
    OutputWriter writer_;
    std::unique_ptr<Formatter> formatter_;
    bool formats_fn_ = false;
    FnEvent fn_;
};

// Each event to a function of the caller's (a tracer's printer).
class CallbackSink final : public EventSink {
public:
    explicit CallbackSink(std::function<void(const Event&)> on_event)
        : on_event_(std::move(on_event)) {}
    void on_event(const Event& ev) override { on_event_(ev); }

private:
    std::function<void(const Event&)> on_event_;
};

// Every record to `sink`, and to `file` as well when there is one (a
// tracer's --record: what it printed, kept).
class TeeSink final : public Sink {
public:
    TeeSink(Sink& sink, Sink* file) : sink_(sink), file_(file) {}
    void on_record(const fhook_rec* rec) override {
        sink_.on_record(rec);
        if (file_) {
            file_->on_record(rec);
        }
    }
    void flush() override {
        sink_.flush();
        if (file_) {
            file_->flush();
        }
    }
    bool done() const override { return sink_.done(); }
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override {
        sink_.finish(session, probes);
        if (file_) {
            file_->finish(session, probes);
        }
    }

private:
    Sink& sink_;
    Sink* file_;
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
class HistSink final : public EventSink {
public:
    // `def`: the probe's definition (nullptr: a function probe); each
    // spec resolved against it.
    HistSink(std::vector<HistSpec> specs, std::uint32_t probe_id, const KprobeDef* def);
    void on_record(const fhook_rec* rec) override; // the probe's records only
    void on_event(const Event& ev) override;
    const std::vector<HistTable>& tables() const noexcept { return tables_; }
    // Starts every table over (--interval with --clear).
    void clear();

private:
    std::vector<HistTable> tables_;
    std::vector<std::vector<fhook_insn>> preds_; // each spec's "if", compiled
    std::uint32_t probe_id_;
    const KprobeDef* def_;
};

// How many events each probe, CPU and task has (report --stat).
class StatSink final : public EventSink {
public:
    void on_event(const Event& ev) override { counts_.add(ev); }
    const EventCounts& counts() const noexcept { return counts_; }

private:
    EventCounts counts_;
};

// The events as a trace-cmd trace.dat, written to fd at finish().
class TraceDatSink final : public EventSink {
public:
    // `kallsyms`: /proc/kallsyms text, what names the addresses
    TraceDatSink(int fd, std::string kallsyms, std::vector<TraceDatWriter::Probe> probes);
    void on_event(const Event& ev) override;
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override;
    std::uint64_t events() const noexcept { return events_; }
    std::uint64_t too_large() const noexcept { return writer_.too_large(); }

private:
    int fd_;
    TraceDatWriter writer_;
    std::uint64_t events_ = 0;
};

class DiscardSink final : public Sink {
public:
    void on_record(const fhook_rec*) override {}
};

} // namespace fhook
