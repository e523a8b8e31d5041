#include <fhook/output/hwlat_format.hpp>
#include <fhook/output/irqsoff_format.hpp>
#include <fhook/output/osnoise_format.hpp>
#include <fhook/output/timerlat_format.hpp>
#include <fhook/output/tracer_format.hpp>

namespace fhook {

TracerPrinter::TracerPrinter(const Ksyms& ksyms, LatencyTraceHost host, bool json)
    : ksyms_(ksyms), host_(std::move(host)), json_(json) {}

std::string TracerPrinter::format(const Event& ev) {
    std::string line;
    std::string (*header)() = nullptr;
    switch (ev.type) {
    case EventType::Timerlat:
        line = json_ ? format_timerlat_json(timerlat_of(ev), ev.comm)
                     : format_timerlat_line(timerlat_of(ev), ev.comm);
        header = format_timerlat_header;
        break;
    case EventType::Hwlat:
        line = json_ ? format_hwlat_json(hwlat_of(ev)) : format_hwlat_line(hwlat_of(ev), ev.comm);
        header = format_hwlat_header;
        break;
    case EventType::Osnoise:
        line = json_ ? format_osnoise_json(osnoise_of(ev), ev.comm)
                     : format_osnoise_line(osnoise_of(ev), ev.comm);
        header = format_osnoise_header;
        break;
    case EventType::OsnoiseNoise:
        line = json_ ? format_osnoise_noise_json(osnoise_noise_of(ev), ev.comm)
                     : format_osnoise_noise_line(osnoise_noise_of(ev), ev.comm);
        header = format_osnoise_header;
        break;
    case EventType::Irqsoff:
        if (json_) {
            return format_irqsoff_json(irqsoff_of(ev), ev.comm, ev.stack, ksyms_, host_.tracer) +
                   "\n";
        }
        return (traces_++ ? "\n" : "") +
               format_irqsoff_trace(irqsoff_of(ev), ev.comm, ev.stack, ksyms_, host_);
    default:
        return "";
    }
    if (json_) {
        return line + "\n";
    }
    // (osnoise's periods and gaps share one header)
    const int kind = ev.type == EventType::OsnoiseNoise ? static_cast<int>(EventType::Osnoise)
                                                        : static_cast<int>(ev.type);
    return headed_.insert(kind).second ? header() + line : line;
}

bool is_line_tracer(const std::string& description) {
    return description == "timerlat" || description == "hwlat" || description == "osnoise" ||
           description == "irqsoff" || description == "preemptoff" ||
           description == "preemptirqsoff";
}

} // namespace fhook
