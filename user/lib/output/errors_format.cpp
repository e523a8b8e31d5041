#include <algorithm>
#include <nlohmann/json.hpp>

#include <fhook/output/errors_format.hpp>

#include "text.hpp"

namespace fhook {

namespace {

std::string us(std::uint64_t ns) {
    return text::printf_string("%llu.%03llu us", static_cast<unsigned long long>(ns / 1000),
                               static_cast<unsigned long long>(ns % 1000));
}

std::string result_of(const ErrorFrame& f) {
    return describe_return(f.type, f.retval);
}

} // namespace

std::string error_chain_key(const ErrorChain& chain) {
    std::string key;
    for (const ErrorFrame& f : chain.frames) {
        key += std::to_string(f.func) + ":" + std::to_string(f.retval) + ",";
    }
    return key + (chain.truncated ? "+" : "");
}

std::string format_error_chain(const ErrorChain& chain, const Ksyms& ksyms, unsigned repeats) {
    if (chain.frames.empty()) {
        return "";
    }
    const ErrorFrame& entry = chain.frames.front();
    std::string out = text::printf_string(
        "%s-%u [%03u] %llu.%06llu: %s returned %s after %s", chain.comm.c_str(), chain.pid,
        chain.cpu, static_cast<unsigned long long>(chain.ts / 1000000000),
        static_cast<unsigned long long>(chain.ts % 1000000000 / 1000),
        ksyms.name_of(entry.func).c_str(), result_of(entry).c_str(), us(entry.duration).c_str());
    if (repeats > 1) {
        out += " (" + std::to_string(repeats) + " times)";
    }
    out += "\n";
    for (std::size_t i = 0; i < chain.frames.size(); i++) {
        const ErrorFrame& f = chain.frames[i];
        std::string name = std::string(2 * (i + 1), ' ') + ksyms.name_of(f.func);
        out += text::printf_string("%-48s %-20s %12s", name.c_str(), result_of(f).c_str(),
                                   us(f.duration).c_str());
        if (i + 1 == chain.frames.size()) {
            out += chain.truncated ? "  <- deeper calls not watched" : "  <- first";
        }
        out += "\n";
    }
    return out;
}

std::string format_error_chain_json(const ErrorChain& chain, const Ksyms& ksyms, unsigned repeats) {
    nlohmann::ordered_json j;
    j["ts_ns"] = chain.ts;
    j["cpu"] = chain.cpu;
    j["pid"] = chain.pid;
    j["tgid"] = chain.tgid;
    j["comm"] = chain.comm;
    if (!chain.frames.empty()) {
        const ErrorFrame& entry = chain.frames.front();
        j["entry"] = ksyms.name_of(entry.func);
        j["result"] = result_of(entry);
        j["errno"] = failure_errno(entry.type, entry.retval);
        j["first"] = ksyms.name_of(chain.frames.back().func);
    }
    j["truncated"] = chain.truncated;
    j["repeats"] = repeats;
    j["frames"] = nlohmann::ordered_json::array();
    for (const ErrorFrame& f : chain.frames) {
        j["frames"].push_back({{"function", ksyms.name_of(f.func)},
                               {"result", result_of(f)},
                               {"duration_ns", f.duration},
                               {"calltime_ns", f.calltime}});
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void ErrorStats::add(const ErrorChain& chain) {
    if (chain.frames.empty()) {
        return;
    }
    const ErrorFrame& entry = chain.frames.front();
    counts_[{entry.func, chain.frames.back().func, result_of(entry)}]++;
    total_++;
}

std::string ErrorStats::text(const Ksyms& ksyms) const {
    if (counts_.empty()) {
        return "(no failures)\n";
    }
    std::vector<std::pair<std::uint64_t, const decltype(counts_)::key_type*>> rows;
    for (const auto& [key, n] : counts_) {
        rows.emplace_back(n, &key);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out =
        text::printf_string("%10s  %-20s %-32s %s\n", "COUNT", "RESULT", "ENTRY", "FIRST FAILING");
    for (const auto& [n, key] : rows) {
        const auto& [entry, first, result] = *key;
        out += text::printf_string("%10llu  %-20s %-32s %s\n", static_cast<unsigned long long>(n),
                                   result.c_str(), ksyms.name_of(entry).c_str(),
                                   ksyms.name_of(first).c_str());
    }
    return out;
}

} // namespace fhook
