#include <time.h>

#include <nlohmann/json.hpp>

#include <fhook/core/error.hpp>
#include <fhook/output/format.hpp>

namespace fhook {

namespace {

using Json = nlohmann::json;

// An NDJSON field's value as an OTLP AnyValue.
Json any_value(const Json& v) {
    if (v.is_string()) {
        return {{"stringValue", v}};
    }
    if (v.is_boolean()) {
        return {{"boolValue", v}};
    }
    if (v.is_number_integer() || v.is_number_unsigned()) {
        return {{"intValue", v.dump()}}; // (64-bit: a string in the JSON mapping)
    }
    if (v.is_number()) {
        return {{"doubleValue", v}};
    }
    if (v.is_array()) {
        Json values = Json::array();
        for (const Json& e : v) {
            values.push_back(any_value(e));
        }
        return {{"arrayValue", {{"values", std::move(values)}}}};
    }
    Json kv = Json::array();
    for (const auto& [k, e] : v.items()) {
        kv.push_back({{"key", k}, {"value", any_value(e)}});
    }
    return {{"kvlistValue", {{"values", std::move(kv)}}}};
}

} // namespace

std::int64_t realtime_offset_now() {
    timespec real{}, mono{};
    ::clock_gettime(CLOCK_REALTIME, &real);
    ::clock_gettime(CLOCK_MONOTONIC, &mono);
    return (std::int64_t{real.tv_sec} - mono.tv_sec) * 1'000'000'000 +
           (std::int64_t{real.tv_nsec} - mono.tv_nsec);
}

OtlpFormatter::OtlpFormatter(const Ksyms& ksyms, std::int64_t real_minus_mono)
    : text_(ksyms), json_(ksyms), offset_(real_minus_mono) {}

OtlpFormatter::~OtlpFormatter() = default;

void OtlpFormatter::format(const Event& event, std::string& out) {
    line_.clear();
    text_.format(event, line_);
    while (!line_.empty() && line_.back() == '\n') {
        line_.pop_back();
    }
    fields_.clear();
    json_.format(event, fields_);
    Json attributes = Json::array();
    const Json fields = Json::parse(fields_);
    for (const auto& [k, v] : fields.items()) {
        attributes.push_back({{"key", "fhook." + k}, {"value", any_value(v)}});
    }
    const std::string when = std::to_string(static_cast<std::int64_t>(event.ts) + offset_);
    const bool lost = event.type == EventType::Lost;
    const Json record = {{"timeUnixNano", when},
                         {"observedTimeUnixNano", when},
                         {"severityNumber", lost ? 13 : 9}, // WARN, INFO
                         {"severityText", lost ? "WARN" : "INFO"},
                         {"body", {{"stringValue", line_}}},
                         {"attributes", std::move(attributes)}};
    records_ += (batched_ ? "," : "") + record.dump();
    if (++batched_ == kBatch) {
        flush(out);
    }
}

void OtlpFormatter::end(std::string& out) {
    flush(out);
}

void OtlpFormatter::flush(std::string& out) {
    if (!batched_) {
        return;
    }
    out +=
        R"({"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"fhook"}}]},"scopeLogs":[{"scope":{"name":"fhook","version":")";
    out += version();
    out += R"("},"logRecords":[)";
    out += records_;
    out += "]}]}]}\n";
    records_.clear();
    batched_ = 0;
}

} // namespace fhook
