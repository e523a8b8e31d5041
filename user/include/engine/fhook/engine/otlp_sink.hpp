// Events sent to an OpenTelemetry collector while they stream (`--otlp URL`
// on trace, graph, hook and errors; docs/fleet.md): a formatter writing
// one OTLP/HTTP JSON request per line (OtlpFormatter: logs; the errors
// formatter in OutputFormat::Otlp: traces), each line POSTed.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <fhook/engine/tracer.hpp>
#include <fhook/output/format.hpp>

namespace fhook {

class OtlpSink final : public EventSink {
public:
    // To `url` ("http://HOST:4318": `path` appended, /v1/logs or
    // /v1/traces; or the full URL).  What `formatter` holds back (a batch
    // not yet full) is sent at the first flush() `linger` after the last request, and
    // at the end.  A Runtime Error ends the run when the endpoint cannot
    // be reached or refuses a request.
    OtlpSink(const std::string& url, const char* path, std::unique_ptr<Formatter> formatter,
             const ProbeTable& probes,
             std::chrono::milliseconds linger = std::chrono::milliseconds(1000));
    void on_event(const Event& ev) override;
    void flush() override;
    void finish(const Stats& session, const std::vector<ProbeSummary>& probes) override;
    // requests sent so far
    std::uint64_t requests() const noexcept { return requests_; }

private:
    void send_lines();

    std::string url_;
    std::unique_ptr<Formatter> formatter_;
    std::chrono::milliseconds linger_;
    std::chrono::steady_clock::time_point last_;
    std::string buf_;
    std::uint64_t requests_ = 0;
};

} // namespace fhook
