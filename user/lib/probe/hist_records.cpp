// Hist triggers over recorded events (fhook report --hist): the probe the
// trigger names fields of (its events go to a HistSink, engine/sinks.hpp).
#include <string_view>

#include <fhook/core/error.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/probe/probe.hpp>

namespace fhook {

std::uint32_t hist_probe_of(const HistSpec& spec, const ProbeTable& probes,
                            const std::vector<std::uint32_t>& probe_ids) {
    std::vector<std::uint32_t> fits;
    std::string first_error;
    bool first_missing = false;
    for (std::uint32_t id : probe_ids) {
        HistSpec s = spec;
        try {
            const KprobeDef* def = probes.find(id);
            resolve_hist_fields(s, def);
            if (hist_has_stack_key(s, true) && !(def && def->is_uprobe)) {
                throw_invalid("ustacktrace: probe " + std::to_string(id) +
                              " is not a uprobe (a recording has the user stacks of uprobes "
                              "recorded with their stacks)");
            }
        } catch (const Error& e) {
            // a probe that has the fields but not the rest says more
            const bool missing =
                std::string_view(e.what()).find("Couldn't find field") != std::string_view::npos;
            if (first_error.empty() || (!missing && first_missing)) {
                first_error = e.what();
                first_missing = missing;
            }
            continue;
        }
        fits.push_back(id);
    }
    if (fits.empty()) {
        throw_invalid(first_error.empty() ? "hist: no probe to aggregate" : first_error);
    }
    if (fits.size() > 1) {
        std::string list;
        for (std::uint32_t id : fits) {
            list += (list.empty() ? "" : ", ") + std::to_string(id);
        }
        throw_invalid("hist: probes " + list + " all have the trigger's fields: choose one probe");
    }
    return fits.front();
}

} // namespace fhook
