// trace-cmd's trace.dat (version 6, flyrecord: rostedt/trace-cmd
// Documentation/trace-cmd/trace-cmd.dat.v6.5.txt), written from fhook's
// events so that trace-cmd report and KernelShark open fhook recordings.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fhook/core/probe_def.hpp>
#include <fhook/output/wakeup_format.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {

// Events go into per-CPU ring-buffer pages in temporary files (memory does
// not grow with the trace); finish() writes the file: the header, the event
// formats (ftrace's function event; each tracepoint's recorded format; a
// format of fhook's making for each kprobe, kretprobe, uprobe and uretprobe
// definition, its fields at their record offsets, and fhook/hook_ID for
// hooks: function, caller, return value, duration), kallsyms,
// the task names seen (saved cmdlines), then every CPU's pages.  A lost
// record marks the next page of its CPU with the count of missed events,
// which trace-cmd reports as "[N EVENTS DROPPED]".
class TraceDatWriter {
public:
    struct Probe {
        std::uint32_t id = 0;
        const KprobeDef* def = nullptr; // nullptr: a function probe
    };
    static constexpr std::uint32_t kPageSize = 4096;

    // `kallsyms`: /proc/kallsyms text (what names the addresses).
    TraceDatWriter(std::string kallsyms, std::vector<Probe> probes);
    ~TraceDatWriter();
    TraceDatWriter(const TraceDatWriter&) = delete;
    TraceDatWriter& operator=(const TraceDatWriter&) = delete;

    void add(const Event& event);
    // A wakeup tracer's report as the kernel's wakeup tracers write it:
    // ftrace's wakeup event on the waker's CPU, the function calls, then
    // its context_switch event.
    void add(const WakeupReport& report);
    // Writes the whole file to `fd`.
    void finish(int fd);
    // Events left out: larger than a ring-buffer page can hold.
    std::uint64_t too_large() const noexcept { return too_large_; }

    // The event format text fhook writes for a definition (for tests).
    static std::string probe_format(const KprobeDef& def, std::uint32_t id);

private:
    struct Cpu;
    Cpu& cpu(std::uint16_t n);
    void payload(const Event& event, std::vector<std::uint8_t>& out);
    std::uint16_t type_of(const Event& event) const;
    const KprobeDef* find(std::uint32_t id) const;

    std::string kallsyms_;
    std::vector<Probe> probes_;
    std::vector<std::unique_ptr<Cpu>> cpus_;
    std::map<std::uint32_t, std::string> comms_; // pid -> task name
    std::set<std::uint32_t> hooks_;              // probe ids of hook events
    std::vector<std::uint8_t> scratch_;
    std::uint64_t too_large_ = 0;
};

} // namespace fhook
