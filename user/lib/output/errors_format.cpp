#include <algorithm>
#include <nlohmann/json.hpp>

#include <fhook/core/error.hpp>
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

// {"name": value}: integers as numbers, the rest as "0x..." (a JSON
// number cannot hold a kernel pointer for every reader)
nlohmann::ordered_json args_json(const CallArgs& args) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const CallArg& a : args.args) {
        switch (a.show) {
        case CallArg::Show::Signed:
            j[a.name] = static_cast<std::int64_t>(a.value);
            break;
        case CallArg::Show::Unsigned:
            j[a.name] = a.value;
            break;
        case CallArg::Show::Hex:
            j[a.name] = text::printf_string("0x%llx", static_cast<unsigned long long>(a.value));
            break;
        }
    }
    return j;
}

} // namespace

// A frame's value without what its type leaves undefined in the register
std::uint64_t value_of(const ErrorFrame& f) {
    if (f.type.kind == ReturnType::Kind::Bool) {
        return f.retval & 0xff;
    }
    return f.type.kind == ReturnType::Kind::Errno && f.type.size == 4 ? f.retval & 0xffffffff
                                                                      : f.retval;
}

std::size_t first_failure(const std::vector<ErrorFrame>& frames) {
    std::size_t first = 0;
    if (frames.empty()) {
        return first;
    }
    // the entry's errno, else its very value (NULL, false, a filter's),
    // passed up from call to call: a frame of another value produced the
    // failure of the one above it (a NULL turned into -ENOMEM)
    const int err = failure_errno(frames.front().type, frames.front().retval);
    for (std::size_t i = 1; i < frames.size(); i++) {
        const int e = failure_errno(frames[i].type, frames[i].retval);
        if (err ? e != err : e != 0 || value_of(frames[i]) != value_of(frames.front())) {
            break;
        }
        first = i;
    }
    return first;
}

std::string error_chain_key(const ErrorChain& chain) {
    std::string key;
    for (const ErrorFrame& f : chain.frames) {
        key += std::to_string(f.func) + ":" + std::to_string(f.retval) + f.at + ",";
    }
    return key + (chain.truncated ? "+" : "") + (chain.incomplete ? "?" : "");
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
        if (i + 1 == chain.frames.size() && chain.incomplete) {
            out += "  <- (calls may be missing: the task's log was full)";
        } else if (i == chain.first && !chain.incomplete) {
            out += chain.first_sure()
                       ? "  <- first"
                       : "  <- (the first failure may be deeper: not watched or not kept)";
        }
        out += "\n";
        if (!f.at.empty()) {
            out += std::string(2 * (i + 2), ' ') + "at " +
                   (f.source.empty() ? f.at : f.source + " (" + f.at + ")") + "\n";
        }
        if (f.args) {
            out += std::string(2 * (i + 2), ' ') + "(";
            append_call_args(*f.args, out);
            out += ")\n";
        }
    }
    if (!chain.ustack.empty()) {
        out += "  user stack:\n";
        for (const std::string& frame : chain.ustack) {
            out += "    " + frame + "\n";
        }
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
        if (chain.first_sure()) {
            j["first"] = ksyms.name_of(chain.frames[chain.first].func);
        } else {
            j["first"] = nullptr;
        }
    }
    j["truncated"] = chain.truncated;
    j["incomplete"] = chain.incomplete;
    j["repeats"] = repeats;
    j["frames"] = nlohmann::ordered_json::array();
    for (const ErrorFrame& f : chain.frames) {
        nlohmann::ordered_json frame = {{"function", ksyms.name_of(f.func)},
                                        {"result", result_of(f)},
                                        {"duration_ns", f.duration},
                                        {"calltime_ns", f.calltime}};
        if (!f.at.empty()) {
            frame["at"] = f.at;
            frame["source"] = f.source.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(f.source);
        }
        if (f.args) {
            frame["args"] = args_json(*f.args);
        }
        j["frames"].push_back(std::move(frame));
    }
    if (!chain.ustack.empty()) {
        j["ustack"] = chain.ustack;
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// splitmix64: ids spread from a chain's stamp and the run's salt
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::string hex16(std::uint64_t v) {
    return text::printf_string("%016llx", static_cast<unsigned long long>(v));
}

nlohmann::ordered_json attribute(const char* key, nlohmann::ordered_json value) {
    return {{"key", key}, {"value", std::move(value)}};
}

nlohmann::ordered_json string_value(std::string s) {
    return {{"stringValue", std::move(s)}};
}

nlohmann::ordered_json int_value(std::uint64_t v) {
    return {{"intValue", std::to_string(v)}}; // (64-bit: a string in the JSON mapping)
}

} // namespace

std::string format_error_chain_otlp(const ErrorChain& chain, const Ksyms& ksyms,
                                    const OtlpSpanIds& ids) {
    const std::uint64_t hi = mix(ids.salt ^ chain.ts);
    const std::uint64_t lo = mix(hi ^ (std::uint64_t{chain.pid} << 16 | chain.cpu));
    const std::string trace_id = hex16(hi) + hex16(lo);
    const auto when = [&](std::uint64_t mono) {
        return std::to_string(static_cast<std::int64_t>(mono) + ids.real_minus_mono);
    };
    nlohmann::ordered_json spans = nlohmann::ordered_json::array();
    std::string parent;
    for (std::size_t i = 0; i < chain.frames.size(); i++) {
        const ErrorFrame& f = chain.frames[i];
        const std::string id = hex16(mix(lo + i + 1) | 1); // (never all zero)
        const std::string result = result_of(f);
        auto attributes = nlohmann::ordered_json::array();
        attributes.push_back(attribute("fhook.result", string_value(result)));
        if (i == 0) {
            attributes.push_back(attribute("thread.id", int_value(chain.pid)));
            attributes.push_back(attribute("process.pid", int_value(chain.tgid)));
            attributes.push_back(attribute("thread.name", string_value(chain.comm)));
            attributes.push_back(attribute("fhook.cpu", int_value(chain.cpu)));
            attributes.push_back(attribute("fhook.truncated", {{"boolValue", chain.truncated}}));
            attributes.push_back(attribute("fhook.incomplete", {{"boolValue", chain.incomplete}}));
        }
        if (i == chain.first && chain.first_sure()) {
            attributes.push_back(attribute("fhook.first", {{"boolValue", true}}));
        }
        if (!f.at.empty()) {
            attributes.push_back(attribute("fhook.at", string_value(f.at)));
        }
        if (!f.source.empty()) {
            attributes.push_back(attribute("fhook.source", string_value(f.source)));
        }
        if (f.args) {
            const nlohmann::ordered_json args = args_json(*f.args);
            for (const auto& [name, v] : args.items()) {
                // (an int64 in OTLP: a larger unsigned value as hex)
                nlohmann::ordered_json value;
                if (v.is_string()) {
                    value = string_value(v.get<std::string>());
                } else if (v.is_number_unsigned() &&
                           v.get<std::uint64_t>() > std::uint64_t{INT64_MAX}) {
                    value = string_value(text::printf_string(
                        "0x%llx", static_cast<unsigned long long>(v.get<std::uint64_t>())));
                } else {
                    value = {{"intValue", v.dump()}};
                }
                attributes.push_back(attribute(("fhook.arg." + name).c_str(), std::move(value)));
            }
        }
        nlohmann::ordered_json span = {{"traceId", trace_id}, {"spanId", id}};
        if (!parent.empty()) {
            span["parentSpanId"] = parent;
        }
        span["name"] = ksyms.name_of(f.func);
        span["kind"] = 1; // SPAN_KIND_INTERNAL
        span["startTimeUnixNano"] = when(f.calltime);
        span["endTimeUnixNano"] = when(f.calltime + f.duration);
        span["attributes"] = std::move(attributes);
        span["status"] = {{"code", 2}, {"message", result}}; // STATUS_CODE_ERROR
        spans.push_back(std::move(span));
        parent = id;
    }
    nlohmann::ordered_json resource = {
        {"attributes",
         nlohmann::ordered_json::array({attribute("service.name", string_value("fhook"))})}};
    nlohmann::ordered_json scope = {{"name", "fhook"}, {"version", std::string(version())}};
    nlohmann::ordered_json request = {
        {"resourceSpans",
         nlohmann::ordered_json::array(
             {{{"resource", std::move(resource)},
               {"scopeSpans", nlohmann::ordered_json::array({{{"scope", std::move(scope)},
                                                              {"spans", std::move(spans)}}})}}})}};
    return request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void ErrorStats::add(const ErrorChain& chain) {
    if (chain.frames.empty()) {
        return;
    }
    const ErrorFrame& entry = chain.frames.front();
    // (an incomplete chain's last frame need not be where it started)
    counts_[{entry.func, chain.incomplete ? 0 : chain.frames[chain.first].func, result_of(entry),
             !chain.incomplete && !chain.first_sure()}]++;
    total_++;
}

std::vector<ErrorStats::Row> ErrorStats::rows() const {
    std::vector<Row> rows;
    for (const auto& [key, n] : counts_) {
        const auto& [entry, first, result, deeper] = key;
        rows.push_back({n, entry, first, result, deeper});
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.count > b.count; });
    return rows;
}

std::string ErrorStats::text(const Ksyms& ksyms) const {
    if (counts_.empty()) {
        return "(no failures)\n";
    }
    std::string out =
        text::printf_string("%10s  %-20s %-32s %s\n", "COUNT", "RESULT", "ENTRY", "FIRST FAILING");
    for (const Row& row : rows()) {
        out += text::printf_string(
            "%10llu  %-20s %-32s %s\n", static_cast<unsigned long long>(row.count),
            row.result.c_str(), ksyms.name_of(row.entry).c_str(),
            row.first ? (ksyms.name_of(row.first) + (row.deeper ? " (or deeper)" : "")).c_str()
                      : "?");
    }
    return out;
}

ErrorsFormatter::ErrorsFormatter(const Ksyms& ksyms, OutputFormat format,
                                 ErrorsFormatOptions options)
    : ksyms_(ksyms), format_(format), options_(options) {}

const ErrorsFormatter::Typed& ErrorsFormatter::typed(std::uint64_t func) {
    auto [it, added] = types_.try_emplace(func);
    if (added && options_.btf) {
        const std::optional<SymbolRef> sym = ksyms_.lookup(func);
        const KernelBtf* btf = !sym                  ? nullptr
                               : sym->module.empty() ? options_.btf
                               : options_.module_btf ? options_.module_btf(std::string(sym->module))
                                                     : nullptr;
        if (auto f = btf ? btf->function(sym->name) : std::nullopt) {
            it->second = {return_type(*btf, *f), std::move(f), btf};
        }
    }
    return it->second;
}

ErrorChain ErrorsFormatter::chain_of(const Event& event) {
    const ErrorsRecord rec = errors_of(event);
    ErrorChain chain;
    chain.ts = event.ts;
    chain.pid = event.pid;
    chain.tgid = event.tgid;
    chain.cpu = event.cpu;
    chain.comm = event.comm;
    chain.truncated = rec.flags & FHOOK_ERRORS_DEEPER;
    chain.incomplete = rec.flags & FHOOK_ERRORS_INCOMPLETE;
    for (std::size_t i = 0; i < rec.frames.size(); i++) {
        const fhook_err_frame& f = rec.frames[i];
        const Typed& t = typed(f.ip);
        const ReturnType type = t.type ? *t.type : untyped_return(f.retval);
        // (a function without BTF is judged by its value in the module)
        const bool entry = chain.frames.empty();
        if (!(entry && options_.entry_filtered) &&
            !is_failure(type, f.retval, options_.false_fails)) {
            // (what failed below it cannot be told)
            chain.truncated = true;
            break;
        }
        chain.frames.push_back({f.ip, f.calltime, f.duration, f.retval, type});
        if (i < rec.args.size()) {
            chain.frames.back().args = args_of(t, rec.args[i]);
        }
    }
    chain.first = first_failure(chain.frames);
    if (!rec.callsites.empty()) {
        for (std::size_t i = 0; i < chain.frames.size(); i++) {
            const bool next = i + 1 < chain.frames.size();
            place(chain.frames[i], next ? rec.callsites[i + 1] : chain.frames[i].func, next);
        }
    }
    for (const std::uint64_t addr : event.stack) {
        chain.ustack.emplace_back();
        usyms_.append(event.tgid, addr, chain.ustack.back());
    }
    return chain;
}

// by the prototype; without one, the registers as arg1..arg6
CallArgs ErrorsFormatter::args_of(const Typed& t, std::span<const std::uint64_t> regs) {
    if (t.proto) {
        return call_args(*t.btf, *t.proto, regs);
    }
    CallArgs raw;
    for (std::size_t i = 0; i < regs.size(); i++) {
        raw.args.push_back({"arg" + std::to_string(i + 1), regs[i], CallArg::Show::Hex});
    }
    return raw;
}

// `f`'s "at": `addr`, a return address when `callsite` (named as in the
// function of the call, a byte before: a call may end a function)
void ErrorsFormatter::place(ErrorFrame& f, std::uint64_t addr, bool callsite) {
    // (a tail call's is 0; a return slot another tracer had taken first
    // holds its trampoline: not known either)
    static constexpr std::string_view kTrampolines[] = {
        "return_to_handler", "__kretprobe_trampoline", "kretprobe_trampoline",
        "arch_rethook_trampoline", "fhook_graph_return"};
    const std::uint64_t pc = callsite ? addr - 1 : addr;
    const std::optional<SymbolRef> sym = addr ? ksyms_.lookup(pc) : std::nullopt;
    if (!sym || std::find(std::begin(kTrampolines), std::end(kTrampolines), sym->name) !=
                    std::end(kTrampolines)) {
        return;
    }
    f.at = text::printf_string("%.*s+0x%llx/0x%llx", static_cast<int>(sym->name.size()),
                               sym->name.data(),
                               static_cast<unsigned long long>(sym->offset + (addr - pc)),
                               static_cast<unsigned long long>(ksyms_.size_of(pc)));
    if (!sym->module.empty()) {
        f.at += " [" + std::string(sym->module) + "]";
    }
    f.pc = pc;
}

// the frames' source lines: only for chains printed (a vmlinux's debug
// info takes a while to load)
void ErrorsFormatter::add_sources(ErrorChain& chain) {
    for (ErrorFrame& f : chain.frames) {
        const std::optional<SymbolRef> sym = f.pc ? ksyms_.lookup(f.pc) : std::nullopt;
        if (sym) {
            f.source = options_.lines->line(sym->module, sym->name, sym->offset).value_or("");
        }
    }
}

void ErrorsFormatter::format(const Event& event, std::string& out) {
    if (event.type == EventType::Lost) {
        lost_ += event.lost;
        if (!options_.stat && format_ == OutputFormat::Text) {
            out += text::printf_string("CPU:%u [LOST %llu EVENTS]\n", event.cpu,
                                       static_cast<unsigned long long>(event.lost));
        }
        return;
    }
    if (event.type != EventType::Errors) {
        return;
    }
    ErrorChain chain = chain_of(event);
    if (chain.frames.empty()) {
        return;
    }
    stats_.add(chain);
    const std::uint64_t times = ++seen_[error_chain_key(chain)];
    if (options_.stat || (times > 1 && !options_.all)) {
        return;
    }
    if (options_.lines) {
        add_sources(chain);
    }
    if (format_ == OutputFormat::Json) {
        out += format_error_chain_json(chain, ksyms_) + "\n";
    } else if (format_ == OutputFormat::Otlp) {
        out += format_error_chain_otlp(chain, ksyms_, options_.otlp) + "\n";
    } else {
        out += format_error_chain(chain, ksyms_) + "\n";
    }
}

void ErrorsFormatter::end(std::string& out) {
    if (format_ == OutputFormat::Otlp) {
        return; // (spans only)
    }
    if (format_ == OutputFormat::Json) {
        nlohmann::ordered_json j;
        j["failures"] = stats_.total();
        j["distinct"] = seen_.size();
        j["lost"] = lost_;
        j["stat"] = nlohmann::ordered_json::array();
        for (const ErrorStats::Row& row : stats_.rows()) {
            j["stat"].push_back(
                {{"count", row.count},
                 {"result", row.result},
                 {"entry", ksyms_.name_of(row.entry)},
                 {"first", row.first ? nlohmann::ordered_json(ksyms_.name_of(row.first))
                                     : nlohmann::ordered_json(nullptr)},
                 {"deeper", row.deeper}});
        }
        if (options_.lines && !options_.lines->mismatched().empty()) {
            j["debuginfo_mismatched"] = options_.lines->mismatched();
        }
        out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        return;
    }
    if (options_.lines) {
        for (const std::string& file : options_.lines->mismatched()) {
            out += "# source lines: " + file + " is not of the running code's build: not used\n";
        }
    }
    if (options_.stat) {
        out += stats_.text(ksyms_);
    }
    out += text::printf_string("# %llu failing call%s, %zu distinct chain%s",
                               static_cast<unsigned long long>(stats_.total()),
                               stats_.total() == 1 ? "" : "s", seen_.size(),
                               seen_.size() == 1 ? "" : "s");
    if (!options_.all && !options_.stat && stats_.total() > seen_.size()) {
        out += " (identical ones printed once)";
    }
    if (lost_) {
        out += text::printf_string("; %llu records lost: chains may be missing",
                                   static_cast<unsigned long long>(lost_));
    }
    out += "\n";
}

} // namespace fhook
