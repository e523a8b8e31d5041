// The metrics options of the tracing commands (--listen, --push, --otlp,
// --series-limit: docs/fleet.md) and what they start; the event
// commands' --otlp (their events to an OpenTelemetry collector).
#include <fhook/core/error.hpp>

#include "trace_options.hpp"

namespace fhook::cli {

void add_metrics_options(po::options_description& options) {
    options.add_options()("listen", po::value<std::string>()->value_name("ADDR:PORT"),
                          "serve the tables as Prometheus metrics on http://ADDR:PORT/metrics "
                          "while running (':PORT': 127.0.0.1; docs/fleet.md)")(
        "push", po::value<std::string>()->value_name("URL"),
        "at the end, PUT the metrics to the Prometheus Pushgateway at URL "
        "(http://HOST:9091: job fhook; or its /metrics/job/NAME/... push URL)")(
        "otlp", po::value<std::string>()->value_name("URL"),
        "at the end, POST the metrics as OTLP/HTTP JSON to an OpenTelemetry collector at URL "
        "(http://HOST:4318: its /v1/metrics)")(
        "series-limit", po::value<std::string>()->value_name("N"),
        "with --listen, --push or --otlp: at most N series per metric, new label sets past it "
        "folded into one 'other' series (default 10000)");
}

namespace {

// --NAME URL, an http:// one (what takes it named in the error)
std::string http_url_option(const po::variables_map& vm, const char* name, const char* takes) {
    std::string url = vm[name].as<std::string>();
    if (url.rfind("http://", 0) != 0) {
        throw_invalid(std::string("--") + name + " takes " + takes + " http:// URL, not '" + url +
                      "'");
    }
    return url;
}

} // namespace

void parse_metrics_options(const po::variables_map& vm, TraceOptions& opt) {
    if (vm.count("listen")) {
        opt.listen = vm["listen"].as<std::string>();
        if (opt.listen.empty()) {
            throw_invalid("empty --listen address: give ADDR:PORT or :PORT");
        }
    }
    if (vm.count("push")) {
        opt.push = http_url_option(vm, "push", "a Pushgateway's");
    }
    if (vm.count("otlp")) {
        opt.otlp = http_url_option(vm, "otlp", "an OTLP/HTTP endpoint's");
    }
    if (vm.count("series-limit")) {
        opt.series_limit = parse_u64("--series-limit", vm["series-limit"].as<std::string>());
        if (opt.series_limit < 2) {
            throw_invalid("--series-limit must be at least 2 (a series and 'other')");
        }
        if (opt.listen.empty() && opt.push.empty() && opt.otlp.empty()) {
            throw_invalid("--series-limit needs --listen, --push or --otlp");
        }
    }
}

void add_otlp_stream_option(po::options_description& options, const std::string& command) {
    options.add_options()(
        "otlp", po::value<std::string>()->value_name("URL"),
        command == "errors"
            ? "send each chain as an OTLP trace (a span per call) to an OpenTelemetry collector "
              "at URL instead of printing it (http://HOST:4318: its /v1/traces)"
            : "send the events as OTLP logs to an OpenTelemetry collector at URL instead of "
              "printing them, in batches of up to 256 (http://HOST:4318: its /v1/logs)");
}

void parse_otlp_stream_option(const po::variables_map& vm, TraceOptions& opt,
                              const std::string& command) {
    if (!vm.count("otlp")) {
        return;
    }
    opt.otlp = http_url_option(vm, "otlp", "an OTLP/HTTP endpoint's");
    if (vm.count("format") || vm.count("output")) {
        throw_invalid("--otlp sends OTLP JSON to the endpoint: it takes neither --format nor -o");
    }
    if (opt.spec.ring.overwrite) {
        throw_invalid("--otlp streams the events: it cannot be combined with --overwrite");
    }
    opt.format = OutputFormat::Otlp;
    opt.otlp_path = command == "errors" ? "/v1/traces" : "/v1/logs";
}

MetricsOutput::MetricsOutput(const Tracer& tracer, const TraceOptions& opt)
    : push_(opt.push), otlp_(opt.otlp), quiet_(opt.quiet) {
    if (opt.listen.empty() && opt.push.empty() && opt.otlp.empty()) {
        return;
    }
    const std::uint32_t w = opt.spec.wakeup.wclass;
    collector_.emplace(tracer, opt.spec.collect,
                       MetricsOptions{opt.series_limit, opt.pid_labels, wakeup_tracer_name(w)});
    // the latency tracers' measures, summed from their records
    const Collect c = opt.spec.collect;
    if (c == Collect::Timerlat || c == Collect::Osnoise || c == Collect::Hwlat ||
        c == Collect::Irqsoff) {
        measures_ = std::make_unique<TracerMetricsSink>(opt.spec.irqsoff.tracer);
        collector_->set_families([m = measures_.get()] { return m->families(); });
    }
    if (!opt.listen.empty()) {
        server_ = std::make_unique<MetricsServer>(*collector_, opt.listen);
    }
}

void MetricsOutput::set_hist(HistTablesRead read) {
    if (collector_) {
        collector_->set_hist(std::move(read));
    }
}

void MetricsOutput::started() {
    if (collector_) {
        collector_->ready();
    }
    if (server_ && !quiet_) {
        print_stderr("fhook: metrics on " + server_->url() + "\n");
    }
}

void MetricsOutput::finish() {
    if (!push_.empty()) {
        push_metrics(*collector_, push_);
    }
    if (!otlp_.empty()) {
        otlp_push_metrics(*collector_, otlp_);
    }
}

} // namespace fhook::cli
