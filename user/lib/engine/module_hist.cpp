#include <fhook/engine/module_hist.hpp>

namespace fhook {

HistTable ModuleHist::now() const {
    const Session::HistRead r = tracer_.hist(id_, table_);
    std::vector<HistEntry> entries =
        module_hist_entries(spec_, r.entries.data(), r.nr, r.key_size, r.elt_size);
    HistTable t(spec_);
    t.set(hist_since(entries, before_), r.hits - hits_, r.drops - drops_);
    return t;
}

HistTable ModuleHist::total() const {
    const Session::HistRead r = tracer_.hist(id_, table_);
    HistTable t(spec_);
    t.set(module_hist_entries(spec_, r.entries.data(), r.nr, r.key_size, r.elt_size), r.hits,
          r.drops);
    return t;
}

void ModuleHist::clear() {
    const Session::HistRead r = tracer_.hist(id_, table_);
    before_ = module_hist_entries(spec_, r.entries.data(), r.nr, r.key_size, r.elt_size);
    hits_ = r.hits;
    drops_ = r.drops;
}

std::vector<ModuleHist> keep_hists_in_module(Tracer& tracer, const std::vector<HistSpec>& specs,
                                             bool eligible) {
    std::vector<ModuleHist> module;
    const std::uint32_t id = tracer.probes().front().id;
    const KprobeDef* def = tracer.probe_table().find(id);
    std::uint64_t features = 0;
    for (const std::uint64_t f : {FHOOK_FEAT_HIST_STACK, FHOOK_FEAT_HIST_USTACK}) {
        features |= tracer.has_feature(f) ? f : 0;
    }
    // (several tables, and stacks, need FHOOK_FEAT_HIST_STACK)
    const bool more = (features & FHOOK_FEAT_HIST_STACK) != 0;
    if (!eligible || !tracer.has_feature(FHOOK_FEAT_HIST) ||
        (specs.size() > 1 && (!more || specs.size() > FHOOK_HIST_MAX_TABLES))) {
        return module;
    }
    std::vector<HistSpec> resolved = specs;
    std::vector<fhook_hist_set> sets;
    for (HistSpec& spec : resolved) {
        resolve_hist_fields(spec, def);
        const auto table = static_cast<std::uint32_t>(sets.size());
        if (const auto set = module_hist(spec, def, id, table, features)) {
            sets.push_back(*set);
        }
    }
    for (std::size_t i = 0; sets.size() == resolved.size() && i < sets.size(); i++) {
        tracer.set_hist(sets[i]);
        module.emplace_back(std::move(resolved[i]), id, sets[i].table, tracer);
    }
    return module;
}

} // namespace fhook
