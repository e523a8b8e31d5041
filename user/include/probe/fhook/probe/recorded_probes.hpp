// The probes a record file names, parsed again for formatting its events.
#pragma once

#include <string>
#include <vector>

#include <fhook/probe/probe.hpp>
#include <fhook/ring/recfile.hpp>

namespace fhook {

// kprobe and uprobe definitions as recorded (canonical: they parse without
// the recording machine's BTF, binaries or kallsyms), tracepoints with the
// format files the file kept.  A file from before formats were kept has
// its tracepoints decoded with `tracefs`'s formats: their descriptions go
// to `local_formats`.  A definition that does not parse prints without
// fields.
ProbeTable recorded_probe_table(const RecordFile& file, const std::string& tracefs,
                                std::vector<std::string>& local_formats);

} // namespace fhook
