// Tracepoint definitions and trace event format files.
#include <event-parse.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <fhook/core/error.hpp>
#include <fhook/probe/spec.hpp>

#include "fetch.hpp"

namespace fhook {

using namespace probe_detail;

std::vector<ProbeField> parse_event_format(std::string_view format, std::uint32_t& fixed_size) {
    // libtraceevent parses the format file, as for trace-cmd and perf
    tep_set_loglevel(TEP_LOG_NONE); // its errors become ours
    const std::unique_ptr<tep_handle, void (*)(tep_handle*)> tep(tep_alloc(), tep_free);
    if (!tep) {
        throw_runtime("libtraceevent: out of memory", ENOMEM);
    }
    tep_event* event = nullptr;
    const std::string text(format);
    if (tep_parse_format(tep.get(), &event, text.data(), text.size(), "fhook") != 0 || !event) {
        throw_invalid("a trace event format libtraceevent cannot parse: " +
                      text.substr(0, text.find('\n')));
    }
    std::vector<ProbeField> out;
    fixed_size = 0;
    for (const tep_format_field* f = event->format.common_fields; f; f = f->next) {
        fixed_size = std::max<std::uint32_t>(fixed_size, f->offset + f->size);
    }
    for (const tep_format_field* f = event->format.fields; f; f = f->next) {
        if (f->offset < 0 || f->size <= 0 || f->offset + f->size > 0xffff) {
            continue;
        }
        const auto size = static_cast<unsigned>(f->size);
        fixed_size = std::max<std::uint32_t>(fixed_size, f->offset + size);
        const std::string type = f->type ? f->type : "";
        ProbeField field;
        field.name = f->name;
        // the declaration as the format file has it: "char prev_comm[16]",
        // "__data_loc char[] filename"
        const std::size_t bracket = type.find('[');
        std::string base = type.substr(0, bracket);
        while (!base.empty() && base.back() == ' ') {
            base.pop_back();
        }
        field.text = bracket == std::string::npos || (f->flags & TEP_FIELD_IS_DYNAMIC)
                         ? type + " " + field.name
                         : base + " " + field.name + type.substr(bracket);
        field.offset = static_cast<std::uint16_t>(f->offset);
        field.store = 64; // no fault bits: the kernel filled the entry
        FetchType& t = field.type;
        const bool is_char = type.find("char") != std::string::npos;
        if (f->flags & TEP_FIELD_IS_DYNAMIC) {
            if (!is_char || (f->flags & TEP_FIELD_IS_RELATIVE)) {
                continue; // a dynamic array of numbers: libtraceevent prints it
            }
            t.kind = FetchType::Kind::String; // __data_loc char[]
            t.size = 4;
            t.name = "string";
        } else if ((f->flags & TEP_FIELD_IS_ARRAY) && is_char) {
            t.kind = FetchType::Kind::FixedString;
            t.size = size;
            t.name = "char[]";
        } else if (f->flags & TEP_FIELD_IS_ARRAY) {
            const unsigned elem = f->arraylen ? size / f->arraylen : 0;
            if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
                continue;
            }
            t.kind = FetchType::Kind::Hex;
            t.size = elem;
            t.count = f->arraylen;
            t.name = "array";
        } else if (size == 1 || size == 2 || size == 4 || size == 8) {
            t.size = size;
            t.kind = (f->flags & TEP_FIELD_IS_POINTER)  ? FetchType::Kind::Hex
                     : (f->flags & TEP_FIELD_IS_SIGNED) ? FetchType::Kind::Signed
                                                        : FetchType::Kind::Unsigned;
            t.name = (t.kind == FetchType::Kind::Hex      ? "x"
                      : t.kind == FetchType::Kind::Signed ? "s"
                                                          : "u") +
                     std::to_string(size * 8);
        } else {
            continue; // a field fhook cannot render (struct by value...)
        }
        out.push_back(std::move(field));
    }
    return out;
}

std::vector<TraceEventName> list_trace_events(const std::string& tracefs) {
    const std::string path = tracefs + "/available_events";
    std::ifstream in(path);
    if (!in) {
        const int err = errno;
        throw_runtime("cannot read " + path + ": " + errno_text(err) +
                          ": is tracefs mounted, and are you root?",
                      err);
    }
    std::vector<TraceEventName> out;
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t colon = line.find(':');
        if (colon != std::string::npos) {
            out.push_back({line.substr(0, colon), line.substr(colon + 1)});
        }
    }
    return out;
}

std::vector<TraceEventName> select_trace_events(const std::vector<TraceEventName>& events,
                                                std::string_view pattern) {
    auto good = [](std::string_view part) {
        return !part.empty() &&
               part.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_-.*?[]!") == std::string_view::npos;
    };
    const std::size_t colon = pattern.find(':');
    const std::string_view subsys = pattern.substr(0, colon);
    const std::string_view event =
        colon == std::string_view::npos ? std::string_view() : pattern.substr(colon + 1);
    if (!good(subsys) || (colon != std::string_view::npos && !good(event))) {
        throw_invalid("bad trace event '" + std::string(pattern) +
                      "': give SUBSYS:EVENT, SUBSYS or EVENT, globs allowed (sched:*, "
                      "syscalls:sys_enter_open*)");
    }
    std::vector<TraceEventName> out;
    auto pick = [&](auto&& match) {
        for (const auto& e : events) {
            if (match(e)) {
                out.push_back(e);
            }
        }
    };
    if (colon != std::string_view::npos) {
        pick([&](const TraceEventName& e) {
            return glob_match(subsys, e.subsys) && glob_match(event, e.event);
        });
    } else {
        pick([&](const TraceEventName& e) { return glob_match(subsys, e.subsys); });
        if (out.empty()) {
            pick([&](const TraceEventName& e) { return glob_match(subsys, e.event); });
        }
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
