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

    // An event; a latency tracer's as the kernel's tracer writes it:
    // ftrace's timerlat, hwlat and osnoise events (the osnoise tracer's
    // osnoise:sample_threshold for a noise), an irqsoff report as function
    // events at its start and end and the kernel_stack there.
    void add(const Event& event);
    // A wakeup tracer's report as the kernel's wakeup tracers write it:
    // ftrace's wakeup event on the waker's CPU and the waker's stack, the
    // function calls, then its context_switch event and the stack there.
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
    // ftrace's kernel_stack event of `ips` on CPU `on` (none when empty)
    void add_stack(const std::vector<std::uint64_t>& ips, std::uint16_t on, std::uint64_t ts,
                   std::uint32_t pid, std::uint8_t flags, std::uint8_t preempt);
    void add_section(const Event& irqsoff);
    void add_function(const WakeupCall& call);
    std::uint16_t type_of(const Event& event) const;
    const KprobeDef* find(std::uint32_t id) const;

    std::string kallsyms_;
    std::vector<Probe> probes_;
    std::vector<std::unique_ptr<Cpu>> cpus_;
    std::map<std::uint32_t, std::string> comms_; // pid -> task name
    std::set<std::uint32_t> hooks_;              // probe ids of hook events
    bool noise_ = false;                         // an osnoise:sample_threshold event
    std::vector<std::uint8_t> scratch_;
    std::uint64_t too_large_ = 0;
};

} // namespace fhook
