// Hist triggers over recorded events (fhook report --hist): the probe the
// trigger names fields of, its events through the filters, into a table.
#include <string_view>

#include <fhook/core/error.hpp>
#include <fhook/probe/hist.hpp>
#include <fhook/probe/probe.hpp>

namespace fhook {

HistTable hist_of_records(
    HistSpec spec, const ProbeTable& probes, const std::vector<std::uint32_t>& probe_ids,
    const EventFilterSpec& filter,
    const std::function<void(const std::function<void(const fhook_rec*)>&)>& for_each_record,
    std::uint32_t* chosen) {
    std::vector<std::uint32_t> fits;
    std::string first_error;
    bool first_missing = false;
    HistSpec resolved;
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
        resolved = std::move(s);
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
    const std::uint32_t id = fits.front();
    const KprobeDef* def = probes.find(id);
    if (chosen) {
        *chosen = id;
    }
    EventFilterSpec f = filter;
    if (!resolved.filter.empty()) {
        f.expr = f.expr.empty() ? resolved.filter : "(" + f.expr + ") && (" + resolved.filter + ")";
    }
    const EventFilter pass(f, probes, {id});
    HistTable table(std::move(resolved));
    Decoder decoder;
    Event scratch;
    for_each_record([&](const fhook_rec* rec) {
        decoder.decode_each(rec, scratch, [&](const Event& ev) {
            // a function probe's own events (not a call graph's)
            if (ev.probe_id == id && (def || ev.type == EventType::Function) && pass.passes(ev) &&
                ev.type != EventType::Lost) {
                table.add(ev, def);
            }
        });
    });
    return table;
}

} // namespace fhook
