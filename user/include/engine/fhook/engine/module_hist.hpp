// Hist tables the module keeps (FHOOK_IOC_HIST_SET): `fhook hist`'s, and
// fhook export's [[hist]] jobs'.
#pragma once

#include <cstdint>
#include <vector>

#include <fhook/engine/tracer.hpp>
#include <fhook/probe/hist.hpp>

namespace fhook {

// One table of a probe kept in the module: read, and after clear() what
// came since.
class ModuleHist {
public:
    ModuleHist(HistSpec spec, std::uint32_t probe_id, std::uint32_t table, const Tracer& tracer)
        : spec_(std::move(spec)), id_(probe_id), table_(table), tracer_(tracer) {}
    // since the last clear()
    HistTable now() const;
    // everything since the start, clear() aside (the metrics' counters;
    // thread-safe)
    HistTable total() const;
    void clear();

private:
    HistSpec spec_;
    std::uint32_t id_;
    std::uint32_t table_;
    const Tracer& tracer_;
    std::vector<HistEntry> before_;
    std::uint64_t hits_ = 0, drops_ = 0;
};

// The tables of `specs` (the triggers as given) kept in the module for the
// first probe of `tracer` (set up, not started): all of them or none (an
// empty result), where `eligible` (the triggers share their 'if', which is
// the probe's filter) and the module can (FHOOK_FEAT_HIST; several tables
// and stack keys FHOOK_FEAT_HIST_STACK).
std::vector<ModuleHist> keep_hists_in_module(Tracer& tracer, const std::vector<HistSpec>& specs,
                                             bool eligible);

} // namespace fhook
