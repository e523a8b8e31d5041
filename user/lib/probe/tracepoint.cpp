// Tracepoint definitions and trace event format files.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fhook/error.hpp>

#include "fetch.hpp"

namespace fhook {

using namespace probe_detail;

std::vector<ProbeField> parse_event_format(std::string_view format, std::uint32_t& fixed_size) {
    // "\tfield:unsigned int prev_state;\toffset:24;\tsize:4;\tsigned:0;"
    std::vector<ProbeField> out;
    fixed_size = 0;
    std::size_t pos = 0;
    while (pos < format.size()) {
        std::size_t eol = format.find('\n', pos);
        if (eol == std::string_view::npos) {
            eol = format.size();
        }
        std::string_view line = format.substr(pos, eol - pos);
        pos = eol + 1;
        const auto f = line.find("field:");
        if (f == std::string_view::npos) {
            continue;
        }
        auto part = [&](std::string_view key) -> std::optional<std::uint64_t> {
            auto k = line.find(key);
            if (k == std::string_view::npos) {
                return std::nullopt;
            }
            auto v = line.substr(k + key.size());
            return parse_uint(v.substr(0, v.find(';')));
        };
        const auto semi = line.find(';', f);
        std::string_view decl = line.substr(f + 6, semi - f - 6);
        const auto offset = part("offset:"), size = part("size:"), is_signed = part("signed:");
        if (!offset || !size || *offset + *size > 0xffff) {
            continue;
        }
        fixed_size =
            std::max<std::uint32_t>(fixed_size, static_cast<std::uint32_t>(*offset + *size));
        // the name: the last identifier of the declaration, before any [N]
        std::string_view d = decl;
        std::uint64_t array = 0;
        if (d.ends_with(']')) {
            auto lb = d.rfind('[');
            array = parse_uint(d.substr(lb + 1, d.size() - lb - 2)).value_or(0);
            d = d.substr(0, lb);
        }
        auto sp = d.find_last_of(" *");
        std::string name(d.substr(sp == std::string_view::npos ? 0 : sp + 1));
        std::string_view type = sp == std::string_view::npos ? "" : d.substr(0, sp + 1);
        if (name.substr(0, 7) == "common_" || name.empty()) {
            continue;
        }
        ProbeField field;
        field.name = name;
        field.text = std::string(decl);
        field.offset = static_cast<std::uint16_t>(*offset);
        field.store = 64; // no fault bits: the kernel filled the entry
        FetchType& t = field.type;
        if (type.find("__data_loc") != std::string_view::npos) {
            t.kind = FetchType::Kind::String;
            t.size = 4;
            t.name = "string";
        } else if (array && type.find("char") != std::string_view::npos) {
            t.kind = FetchType::Kind::FixedString;
            t.size = static_cast<unsigned>(*size);
            t.name = "char[]";
        } else if (array && *size % array == 0 &&
                   (*size / array == 1 || *size / array == 2 || *size / array == 4 ||
                    *size / array == 8)) {
            t.kind = FetchType::Kind::Hex;
            t.size = static_cast<unsigned>(*size / array);
            t.count = static_cast<unsigned>(array);
            t.name = "array";
        } else if (*size == 1 || *size == 2 || *size == 4 || *size == 8) {
            t.size = static_cast<unsigned>(*size);
            t.kind = type.find('*') != std::string_view::npos ? FetchType::Kind::Hex
                     : is_signed.value_or(0)                  ? FetchType::Kind::Signed
                                                              : FetchType::Kind::Unsigned;
            t.name = (t.kind == FetchType::Kind::Hex      ? "x"
                      : t.kind == FetchType::Kind::Signed ? "s"
                                                          : "u") +
                     std::to_string(*size * 8);
        } else {
            continue; // a field fhook cannot render (struct by value...)
        }
        out.push_back(std::move(field));
    }
    return out;
}

KprobeDef parse_tracepoint(std::string_view text, const std::string& tracefs) {
    return parse_tracepoint(
        text,
        [&tracefs](const std::string& subsys,
                   const std::string& event) -> std::optional<TraceEventFiles> {
            const std::string dir = tracefs + "/events/" + subsys + "/" + event;
            auto slurp = [](const std::string& path) -> std::optional<std::string> {
                std::ifstream in(path);
                if (!in) {
                    return std::nullopt;
                }
                std::stringstream ss;
                ss << in.rdbuf();
                return ss.str();
            };
            const auto id_text = slurp(dir + "/id");
            const auto format = slurp(dir + "/format");
            if (!id_text || !format) {
                throw_runtime("no trace event " + subsys + ":" + event + " (" + dir +
                                  " cannot be read): list them in " + tracefs + "/available_events",
                              ENOENT);
            }
            auto id = parse_uint(std::string_view(*id_text).substr(0, id_text->find('\n')));
            if (!id || !*id) {
                throw_runtime("bad id in " + dir + "/id");
            }
            return TraceEventFiles{*id, *format};
        });
}

KprobeDef parse_tracepoint(std::string_view text, const TraceEventSource& files) {
    KprobeDef def;
    def.text = std::string(text);
    def.is_tracepoint = true;
    std::string_view rest = text.substr(2);
    std::string_view filter;
    if (auto i = rest.find(" if "); i != std::string_view::npos) {
        filter = rest.substr(i + 4);
        rest = rest.substr(0, i);
    }
    while (!rest.empty() && rest.back() == ' ') {
        rest.remove_suffix(1);
    }
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos || rest.find(' ') != std::string_view::npos) {
        bad(text, "a tracepoint is t:SUBSYS:EVENT [if FILTER], e.g. t:sched:sched_process_exec");
    }
    def.group = std::string(rest.substr(0, colon));
    def.event = std::string(rest.substr(colon + 1));
    if (!good_name(def.group) || !good_name(def.event)) {
        bad(text, "bad subsystem or event name");
    }
    std::optional<TraceEventFiles> ev = files(def.group, def.event);
    if (!ev) {
        throw_runtime("no trace event " + def.group + ":" + def.event, ENOENT);
    }
    def.tp_id = ev->id;
    def.tp_format = std::move(ev->format);
    def.fields = parse_event_format(def.tp_format, def.data_size);
    if (!filter.empty()) {
        def.filter = std::string(filter);
        def.pred = compile_filter(filter, &def);
    }
    def.canonical =
        "t:" + def.group + ":" + def.event + (def.filter.empty() ? "" : " if " + def.filter);
    return def;
}

} // namespace fhook
