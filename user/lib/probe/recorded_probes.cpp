#include <fhook/core/error.hpp>
#include <fhook/probe/recorded_probes.hpp>

namespace fhook {

ProbeTable recorded_probe_table(const RecordFile& file, const std::string& tracefs,
                                std::vector<std::string>& local_formats) {
    ProbeTable table;
    const TraceEventSource recorded =
        [&file](const std::string& subsys,
                const std::string& event) -> std::optional<TraceEventFiles> {
        if (const RecordedEvent* e = file.event(subsys + ":" + event)) {
            return TraceEventFiles{e->id, e->format};
        }
        return std::nullopt;
    };
    for (const auto& p : file.probes()) {
        if (is_tracepoint_definition(p.description)) {
            try {
                table.add(p.id, parse_tracepoint(p.description, recorded));
            } catch (const Error&) {
                try {
                    table.add(p.id, parse_tracepoint(p.description, tracefs));
                    local_formats.push_back(p.description);
                } catch (const Error&) {
                    // printed without fields
                }
            }
        } else if (is_probe_definition(p.description)) {
            // their layout does not depend on @SYM addresses
            table.add(p.id, parse_kprobe(p.description, [](std::string_view) {
                          return std::optional<std::uint64_t>(0);
                      }));
        }
    }
    return table;
}

} // namespace fhook
