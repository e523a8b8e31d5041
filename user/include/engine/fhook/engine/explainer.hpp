// fhook::explain_function(): how ftrace hooks one kernel function, read
// from the live kernel (its text through the device, kallsyms, BTF,
// tracefs), optionally while fhook is attached to it.
#pragma once

#include <cstddef>
#include <string>

#include <fhook/engine/tracer.hpp>
#include <fhook/output/explain.hpp>

namespace fhook {

// `bytes` of the function are read (at most its size).  Runtime Error
// (ENOENT) with the reason for a function kallsyms does not have (clones,
// inlined, not loaded); Invalid Error for a name of several functions.
Explanation explain_function(const std::string& name, ExplainArm arm, std::size_t bytes,
                             const SystemPaths& paths);

} // namespace fhook
