// Trace events (tracepoints) printed the way the kernel's trace file
// prints them: the event's own TP_printk, run by libtraceevent (what
// trace-cmd and perf use) from the event's tracefs format file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <fhook/core/probe_def.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/sys/ksyms.hpp>

struct tep_handle;

namespace fhook {

class TraceEventPrinter {
public:
    // Function addresses in events (%pS, %ps) are named from `ksyms`.
    explicit TraceEventPrinter(const Ksyms& ksyms);
    ~TraceEventPrinter();
    TraceEventPrinter(const TraceEventPrinter&) = delete;
    TraceEventPrinter& operator=(const TraceEventPrinter&) = delete;

    // Appends what the trace file prints after the line head for `event`,
    // a record of the tracepoint `def` (its raw entry in event.data):
    // "sched_switch: prev_comm=sh prev_pid=1 ..." by the event's
    // TP_printk, or for syscalls the kernel's own "sys_openat(dfd: ffffff9c,
    // ...)" and "sys_openat -> 0x3".  False, with nothing appended, when
    // libtraceevent cannot parse the event's format or the entry is not of
    // that event.
    bool append_event(const KprobeDef& def, const Event& event, std::string& out);

private:
    // print_syscall_enter() / print_syscall_exit() of kernel/trace/trace_syscalls.c
    static bool append_syscall(const KprobeDef& def, const Event& event, std::string& out);

    static char* resolve(void* self, unsigned long long* addr, char** module);

    const Ksyms& ksyms_;
    std::unique_ptr<tep_handle, void (*)(tep_handle*)> tep_;
    std::set<std::uint64_t> parsed_; // event ids libtraceevent knows
    std::set<std::uint64_t> failed_; // event ids it could not parse
    // names handed to libtraceevent, which keeps the pointers
    std::map<std::uint64_t, std::pair<std::string, std::string>> names_;
};

} // namespace fhook
