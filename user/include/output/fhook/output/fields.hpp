// The fields a probe record carries, as the kernel's trace file prints
// them and as JSON.
#pragma once

#include <string>

#include <fhook/core/probe_def.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {

class NameCache;

// Appends " NAME=VALUE" for every field of `event` (a kprobe record) the
// way the kernel's trace file prints them; symbols through `names`.
void append_probe_fields(const KprobeDef& def, const Event& event, NameCache& names,
                         std::string& out);
// The same as a JSON object body ("\"dfd\":-100,\"filename\":\"/etc\"").
void append_probe_fields_json(const KprobeDef& def, const Event& event, NameCache& names,
                              std::string& out);

} // namespace fhook
