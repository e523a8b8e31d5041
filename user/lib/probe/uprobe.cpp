// uprobe and uretprobe definitions (the kernel's trace_uprobe.c): the
// probed place in a binary and the default event name; their fetch
// arguments are every probe's (probe_args.cpp).
#include <cinttypes>
#include <cstdio>

#include <fhook/sys/elfsym.hpp>

#include "probe_args.hpp"

namespace fhook::probe_detail {

void parse_uprobe_place(KprobeDef& def, std::string_view place) {
    def.is_uprobe = true;
    def.group = "uprobes";
    // the path ends at the first ':' after its last '/' (C++ names have "::")
    const auto colon = place.find(':', place.rfind('/'));
    if (place[0] != '/' || colon == std::string_view::npos || colon + 1 == place.size()) {
        bad(place, "a uprobe is /PATH:SYMBOL[+OFFS] or /PATH:0xOFFSET (absolute path)");
    }
    def.path = std::string(place.substr(0, colon));
    if (def.path.size() > FHOOK_MAX_SYMBOL_LEN) {
        bad(place, "path longer than " + std::to_string(FHOOK_MAX_SYMBOL_LEN));
    }
    std::string_view where = place.substr(colon + 1);
    if (auto v = parse_uint(where)) {
        def.offset = *v;
        return;
    }
    auto plus = where.find('+');
    std::string_view sym = where.substr(0, plus);
    std::uint64_t extra = 0;
    if (plus != std::string_view::npos) {
        auto o = parse_uint(where.substr(plus + 1));
        if (!o) {
            bad(place, "bad offset after the symbol");
        }
        extra = *o;
    }
    def.symbol = std::string(sym);
    def.offset = elf_symbol_offset(def.path, sym) + extra;
    if (def.is_return && plus != std::string_view::npos) {
        bad(place, "a return probe goes on a function entry: no offset");
    }
}

// "p_" + the binary's basename up to the first of ".-_" + "_0x" + offset
std::string uprobe_event_name(const KprobeDef& def) {
    char buf[32];
    std::string tail = def.path.substr(def.path.rfind('/') + 1);
    tail = tail.substr(0, tail.find_first_of(".-_"));
    std::snprintf(buf, sizeof(buf), "_0x%" PRIx64, def.offset);
    return sanitize("p_" + tail + buf);
}

} // namespace fhook::probe_detail
