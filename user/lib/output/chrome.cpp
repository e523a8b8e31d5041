// Chrome trace event JSON (google/perfetto docs, "Trace Event Format"):
// {"traceEvents":[...]} with complete ("X"), instant ("i") and metadata
// ("M") events, timestamps in microseconds.

#include <algorithm>
#include <cstring>

#include <fhook/output/errors_format.hpp>
#include <fhook/output/fields.hpp>
#include <fhook/output/format.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/probe/retval.hpp>
#include <fhook/ring/event.hpp>

#include "numbers.hpp"

namespace fhook {

namespace {

using numbers::put_i64;
using numbers::put_u64;

// Nanoseconds as microseconds with three decimals ("1234.567").
void put_us(std::uint64_t ns, std::string& out) {
    put_u64(ns / 1000, out);
    const auto frac = static_cast<unsigned>(ns % 1000);
    out.push_back('.');
    out.push_back(static_cast<char>('0' + frac / 100));
    out.push_back(static_cast<char>('0' + frac / 10 % 10));
    out.push_back(static_cast<char>('0' + frac % 10));
}

// ,"pid":P,"tid":T: the track of an event.
void put_track(std::uint32_t pid, std::uint32_t tid, std::string& out) {
    out.append(",\"pid\":");
    put_u64(pid, out);
    out.append(",\"tid\":");
    put_u64(tid, out);
}

// A metadata event naming a process or a thread.
void put_meta(const char* what, std::uint32_t pid, std::uint32_t tid, std::string_view name,
              std::string& out) {
    out.append("{\"ph\":\"M\",\"name\":\"");
    out.append(what);
    out.push_back('"');
    put_track(pid, tid, out);
    out.append(",\"args\":{\"name\":");
    append_json_string(name, out);
    out.append("}}");
}

} // namespace

void ChromeFormatter::begin(std::string& out) {
    out.append("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
}

void ChromeFormatter::end(std::string& out) {
    out.append("\n]}\n");
}

void ChromeFormatter::open_event(std::string& out) {
    out.append(first_ ? "\n" : ",\n");
    first_ = false;
}

void ChromeFormatter::name_tasks(const Event& ev, std::string& out) {
    const std::string_view comm = ev.pid == 0 ? std::string_view("<idle>") : ev.comm;
    if (processes_.insert(ev.tgid).second) {
        open_event(out);
        put_meta("process_name", ev.tgid, ev.tgid, comm, out);
    }
    if (threads_.insert(ev.pid).second) {
        open_event(out);
        put_meta("thread_name", ev.tgid, ev.pid, comm, out);
    }
}

// The event's name: the function, or the probe's group/event.
void ChromeFormatter::append_name(const Event& ev, const KprobeDef* def, std::string& out) {
    name_.clear();
    if (def && ev.type != EventType::Hook) {
        name_ = def->group + "/" + def->event;
    } else {
        names_.append(ev.ip, name_);
    }
    append_json_string(name_, out);
}

// A wakeup tracer's report: the wait from the wakeup to the switch, on
// the woken task's track (the calls in between are function events).
void ChromeFormatter::format_wakeup(const Event& ev, std::string& out) {
    const fhook_rec_wakeup w = wakeup_of(ev);
    Event task;
    task.pid = w.pid;
    task.tgid = w.tgid;
    task.comm.assign(w.comm, strnlen(w.comm, sizeof(w.comm)));
    name_tasks(task, out);
    open_event(out);
    out.append("{\"ph\":\"X\",\"name\":\"wakeup latency\",\"cat\":\"wakeup\",\"ts\":");
    put_us(w.wakeup_ts, out);
    out.append(",\"dur\":");
    put_us(w.latency, out);
    put_track(w.tgid, w.pid, out);
    out.append(",\"args\":{\"cpu\":");
    put_u64(w.hdr.cpu, out);
    out.append(",\"prio\":");
    put_i64(w.prio, out);
    out.append(",\"waker\":");
    append_json_string(std::string(w.waker_comm, strnlen(w.waker_comm, sizeof(w.waker_comm))) +
                           "-" + std::to_string(w.waker_pid),
                       out);
    out.append(",\"new_max\":");
    out.append(w.wflags & FHOOK_WAKEUP_NEW_MAX ? "true" : "false");
    out.append("}}");
}

// A failing chain (fhook errors): a complete event per call on its task's
// track, nested as they were called, each with what it returned (typed by
// its value alone: the module keeps a 0 only for a NULL or a false); the
// first failure ("first": true) marked where it is sure.
void ChromeFormatter::format_errors(const Event& ev, std::string& out) {
    const ErrorsRecord rec = errors_of(ev);
    name_tasks(ev, out);
    ErrorChain chain;
    for (const fhook_err_frame& f : rec.frames) {
        const ReturnType type =
            f.retval ? untyped_return(f.retval) : ReturnType{ReturnType::Kind::Pointer};
        chain.frames.push_back({f.ip, f.calltime, f.duration, f.retval, type});
    }
    chain.first = first_failure(chain.frames);
    chain.truncated = rec.flags & FHOOK_ERRORS_DEEPER;
    chain.incomplete = rec.flags & FHOOK_ERRORS_INCOMPLETE;
    for (std::size_t i = 0; i < chain.frames.size(); i++) {
        const ErrorFrame& f = chain.frames[i];
        open_event(out);
        out.append("{\"ph\":\"X\",\"name\":");
        name_.clear();
        names_.append(f.func, name_);
        append_json_string(name_, out);
        out.append(",\"cat\":\"errors\",\"ts\":");
        put_us(f.calltime, out);
        out.append(",\"dur\":");
        put_us(f.duration, out);
        put_track(ev.tgid, ev.pid, out);
        out.append(",\"args\":{\"cpu\":");
        put_u64(ev.cpu, out);
        out.append(",\"result\":");
        append_json_string(f.retval ? describe_return(f.type, f.retval) : "NULL or false", out);
        if (i == chain.first && chain.first_sure()) {
            out.append(",\"first\":true");
        }
        out.append("}}");
    }
}

// A latency tracer's record: a span (an instant for hwlat, whose gap's
// place in the window is not kept) on its CPU's track of the process
// "latency tracers", the record's figures in args.
void ChromeFormatter::format_tracer(const Event& ev, std::string& out) {
    if (tracer_cpus_.empty()) {
        open_event(out);
        put_meta("process_name", kTracerPid, 0, "latency tracers", out);
    }
    // (timerlat's thread measures on a track of their own: they start at
    // the same expiry as the IRQ's, and would not nest)
    const bool thread =
        ev.type == EventType::Timerlat && timerlat_of(ev).context == FHOOK_TIMERLAT_THREAD;
    const std::uint32_t track = ev.cpu + (thread ? kThreadTracks : 0);
    if (tracer_cpus_.insert(track).second) {
        open_event(out);
        put_meta("thread_name", kTracerPid, track,
                 "CPU " + std::to_string(ev.cpu) + (thread ? " timerlat thread" : ""), out);
    }
    std::string name = tracer_.empty() ? "irqsoff" : tracer_;
    std::uint64_t start = ev.ts - std::min(ev.ts, ev.duration);
    std::string args;
    const auto arg = [&](const char* key, std::uint64_t v) {
        args.append(",\"");
        args.append(key);
        args.append("\":");
        put_u64(v, args);
    };
    switch (ev.type) {
    case EventType::Timerlat: {
        const fhook_rec_timerlat t = timerlat_of(ev);
        name = t.context == FHOOK_TIMERLAT_IRQ ? "timerlat irq" : "timerlat thread";
        arg("seqnum", t.seqnum);
        arg("latency_ns", t.latency);
        break;
    }
    case EventType::Hwlat: {
        const fhook_rec_hwlat h = hwlat_of(ev);
        name = "hwlat";
        start = ev.ts;
        arg("inner_ns", h.inner_ns);
        arg("outer_ns", h.outer_ns);
        arg("count", h.count);
        arg("nmi_count", h.nmi_count);
        arg("nmi_total_ns", h.nmi_total_ns);
        arg("seqnum", h.seqnum);
        break;
    }
    case EventType::Osnoise: {
        const fhook_rec_osnoise o = osnoise_of(ev);
        name = "osnoise";
        start = ev.ts - std::min<std::uint64_t>(ev.ts, o.runtime_ns);
        arg("runtime_ns", o.runtime_ns);
        arg("noise_ns", o.noise_ns);
        arg("max_single_ns", o.max_single_ns);
        arg("hw", o.hw_count);
        arg("nmi", o.nmi_count);
        arg("irq", o.irq_count);
        arg("softirq", o.softirq_count);
        arg("thread", o.thread_count);
        break;
    }
    case EventType::OsnoiseNoise: {
        const fhook_rec_osnoise_noise n = osnoise_noise_of(ev);
        name = "noise";
        start = n.start_ns;
        arg("nmi", n.nmi_count);
        arg("irq", n.irq_count);
        arg("softirq", n.softirq_count);
        arg("thread", n.thread_count);
        break;
    }
    default: { // Irqsoff: where it started and ended, as its trace says
        const fhook_rec_irqsoff r = irqsoff_of(ev);
        args.append(",\"start\":");
        name_.clear();
        names_.append(r.start_parent_ip ? r.start_parent_ip : r.start_ip, name_);
        append_json_string(name_, args);
        args.append(",\"end\":");
        name_.clear();
        names_.append(r.end_parent_ip ? r.end_parent_ip : r.end_ip, name_);
        append_json_string(name_, args);
        arg("seqnum", r.seqnum);
        break;
    }
    }
    open_event(out);
    const bool span = ev.type != EventType::Hwlat;
    out.append(span ? "{\"ph\":\"X\",\"name\":" : "{\"ph\":\"i\",\"s\":\"t\",\"name\":");
    append_json_string(name, out);
    out.append(",\"cat\":\"latency\",\"ts\":");
    put_us(start, out);
    if (span) {
        out.append(",\"dur\":");
        put_us(ev.ts - std::min(ev.ts, start), out);
    }
    put_track(kTracerPid, track, out);
    out.append(",\"args\":{\"cpu\":");
    put_u64(ev.cpu, out);
    out.append(args);
    out.append("}}");
}

void ChromeFormatter::format(const Event& ev, std::string& out) {
    if (ev.type == EventType::Lost) {
        if (ev.lost == 0) {
            return;
        }
        if (lost_cpus_.empty()) {
            open_event(out);
            put_meta("process_name", kLostPid, 0, "lost events", out);
        }
        if (lost_cpus_.insert(ev.cpu).second) {
            open_event(out);
            put_meta("thread_name", kLostPid, ev.cpu, "CPU " + std::to_string(ev.cpu), out);
        }
        open_event(out);
        out.append("{\"ph\":\"i\",\"s\":\"t\",\"name\":\"lost ");
        put_u64(ev.lost, out);
        out.append(" events\",\"cat\":\"lost\",\"ts\":");
        put_us(ev.ts, out);
        put_track(kLostPid, ev.cpu, out);
        out.append(",\"args\":{\"cpu\":");
        put_u64(ev.cpu, out);
        out.append(",\"lost\":");
        put_u64(ev.lost, out);
        out.append("}}");
        return;
    }
    if (ev.type == EventType::GraphEntry) {
        return; // its return is the complete event
    }
    if (ev.type == EventType::Wakeup) {
        format_wakeup(ev, out);
        return;
    }
    if (ev.type == EventType::Errors) {
        format_errors(ev, out);
        return;
    }
    if (ev.type == EventType::Timerlat || ev.type == EventType::Hwlat ||
        ev.type == EventType::Osnoise || ev.type == EventType::OsnoiseNoise ||
        ev.type == EventType::Irqsoff) {
        format_tracer(ev, out);
        return;
    }
    name_tasks(ev, out);
    open_event(out);
    const KprobeDef* def =
        probes_ && is_probe_event(ev.type) ? probes_->find(ev.probe_id) : nullptr;
    const bool complete = (ev.type == EventType::Hook && ev.action == FHOOK_HOOK_AROUND) ||
                          ev.type == EventType::GraphReturn;
    out.append(complete ? "{\"ph\":\"X\",\"name\":" : "{\"ph\":\"i\",\"s\":\"t\",\"name\":");
    append_name(ev, def, out);
    out.append(",\"cat\":\"");
    switch (ev.type) {
    case EventType::Function:
        out.append("function");
        break;
    case EventType::Tracepoint:
        out.append("tracepoint");
        break;
    case EventType::Hook:
        out.append("hook");
        break;
    case EventType::GraphReturn:
        out.append("graph");
        break;
    default:
        out.append("probe");
        break;
    }
    out.append("\",\"ts\":");
    // a trace-around or graph return record is written at the return: the
    // call began dur earlier
    put_us(complete ? ev.ts - std::min(ev.ts, ev.duration) : ev.ts, out);
    if (complete) {
        out.append(",\"dur\":");
        put_us(ev.duration, out);
    }
    put_track(ev.tgid, ev.pid, out);
    out.append(",\"args\":{\"cpu\":");
    put_u64(ev.cpu, out);
    if (ev.type == EventType::Function) {
        out.append(",\"parent\":");
        name_.clear();
        names_.append(ev.parent_ip, name_);
        append_json_string(name_, out);
    }
    if (ev.type == EventType::GraphReturn) {
        out.append(",\"depth\":");
        put_u64(ev.depth, out);
        out.append(",\"ret\":");
        put_i64(static_cast<std::int64_t>(ev.retval), out);
    }
    if (ev.type == EventType::Hook) {
        out.append(",\"action\":\"");
        out.append(hook_action_name(ev.action));
        out.append("\",\"ret\":");
        put_i64(static_cast<std::int64_t>(ev.retval), out);
    }
    if (def) {
        const std::size_t before = out.size();
        out.push_back(',');
        append_probe_fields_json(*def, ev, names_, out);
        if (out.size() == before + 1) {
            out.pop_back(); // no field
        }
    }
    out.append("}}");
}

} // namespace fhook
