#include <fhook/engine/otlp_sink.hpp>
#include <fhook/sys/http.hpp>

namespace fhook {

OtlpSink::OtlpSink(const std::string& url, const char* path, std::unique_ptr<Formatter> formatter,
                   const ProbeTable& probes, std::chrono::milliseconds linger)
    : url_(url_with_path(url, path)), formatter_(std::move(formatter)), linger_(linger),
      last_(std::chrono::steady_clock::now()) {
    formatter_->set_probes(&probes);
}

void OtlpSink::send_lines() {
    std::size_t from = 0;
    for (std::size_t nl; (nl = buf_.find('\n', from)) != std::string::npos; from = nl + 1) {
        http_send("POST", url_, "application/json", std::string_view(buf_).substr(from, nl - from),
                  "the OTLP endpoint");
        requests_++;
        last_ = std::chrono::steady_clock::now();
    }
    buf_.erase(0, from);
}

void OtlpSink::on_event(const Event& ev) {
    formatter_->format(ev, buf_);
    if (buf_.find('\n') != std::string::npos) {
        send_lines();
    }
}

void OtlpSink::flush() {
    // (a batch still filling goes once it has waited `linger`)
    if (std::chrono::steady_clock::now() - last_ >= linger_) {
        formatter_->end(buf_);
        last_ = std::chrono::steady_clock::now();
        send_lines();
    }
}

void OtlpSink::finish(const Stats&, const std::vector<ProbeSummary>&) {
    formatter_->end(buf_);
    send_lines();
}

} // namespace fhook
