// kprobe / kretprobe / uprobe / tracepoint definitions in the tracefs
// syntax, their fetch arguments compiled to fhook fetch programs (struct
// fhook_insn), filters and triggers (docs/probes.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/arch.hpp>
#include <fhook/core/probe_def.hpp>
#include <fhook/ring/event.hpp>
#include <fhook/sys/btf.hpp>

namespace fhook {

class KernelBtf;

// Address of a kernel symbol of any type (for @SYM), nullopt if unknown.
using SymbolResolver = std::function<std::optional<std::uint64_t>(std::string_view)>;
// The kernel's BTF, loaded on first use; nullptr when there is none.
using BtfProvider = std::function<const KernelBtf*()>;

// True when `arg` is a probe definition ("p:...", "r ...", "r10:...") rather
// than a function glob.
bool is_probe_definition(std::string_view arg);

// Parses and compiles a definition:
//   p[:[GRP/][EVENT]] SYM[+OFFS]|ADDR [NAME=]FETCHARG[:TYPE] ... [if FILTER]
//   r[MAXACTIVE][:[GRP/][EVENT]] SYM[+0] [NAME=]FETCHARG[:TYPE] ... [if FILTER]
//   p|r[:[GRP/][EVENT]] /PATH:SYMBOL[+OFFS]|/PATH:0xOFFSET ...   (uprobes; the
//   symbol is resolved to a file offset with libelf)
// A Invalid Error names the bad token and why.  `resolve` is asked for @SYM.
// Names of kernel types ($arg1->f_path.dentry, file->f_pos, $args) are
// resolved through `btf`.
KprobeDef parse_kprobe(std::string_view text, const SymbolResolver& resolve,
                       const BtfProvider& btf = {});

// Compiles a filter expression (docs/probes.md "Filters"):
//   EXPR := EXPR || EXPR | EXPR && EXPR | !EXPR | (EXPR) | NAME OP VALUE
// NAME is a field of `def` or common_pid/pid, tgid, comm, cpu; OP is
// == != < <= > >= & for numbers, == != ~ (glob) for strings, whose VALUE is
// "quoted" ("==" with * ? [ is a glob too, as in tracefs).  With def ==
// nullptr only the task names exist (function probes).  Invalid Error naming
// the bad token.
std::vector<fhook_insn> compile_filter(std::string_view expr, const KprobeDef* def);
// Runs a compiled filter on a recorded event the way the module runs it on
// a hit (kmod/filter.c): fields from event.data, the task from the event.
bool run_filter(const std::vector<fhook_insn>& pred, const Event& event);

// A trigger: "EVENT=ACTION[:N] [if FILTER]" with ACTION one of traceoff,
// traceon, stacktrace, snapshot, enable:EVENT2, disable:EVENT2 (tracefs'
// events/.../trigger commands).  EVENT is a definition's event name or
// "func" for the function probe.  Invalid Error naming the bad part.
struct TriggerSpec {
    std::string event;
    std::uint32_t action = 0; // enum fhook_trigger_action
    std::string target;       // enable/disable: the event switched
    std::uint64_t count = 0;  // 0: every time
    std::string filter;
    std::string text;
};
TriggerSpec parse_trigger(std::string_view text);

// True for "t:SUBSYS:EVENT [if FILTER]".
bool is_tracepoint_definition(std::string_view arg);
// A trace event's id and format file, as TRACEFS/events/SUBSYS/EVENT/{id,
// format} hold them (or a record file kept them); nullopt: no such event.
struct TraceEventFiles {
    std::uint64_t id = 0;
    std::string format;
};
using TraceEventSource = std::function<std::optional<TraceEventFiles>(const std::string& subsys,
                                                                      const std::string& event)>;
// A tracepoint definition, its id and fields from `files`.  Runtime Error
// when the event does not exist; Invalid Error for a malformed definition.
KprobeDef parse_tracepoint(std::string_view text, const TraceEventSource& files);
// The same, the event read from TRACEFS/events/SUBSYS/EVENT/{id,format}.
KprobeDef parse_tracepoint(std::string_view text, const std::string& tracefs);
// A trace event, "SUBSYS:EVENT".
struct TraceEventName {
    std::string subsys;
    std::string event;
    std::string text() const { return subsys + ":" + event; }
};
// TRACEFS/available_events, in its order.  Runtime Error when unreadable.
std::vector<TraceEventName> list_trace_events(const std::string& tracefs);
// The events `pattern` selects, as trace-cmd's and perf's -e do:
// "SUBSYS:EVENT" (tracefs globs in either part), "SUBSYS" (its events),
// or else "EVENT" in any subsystem.  Invalid Error for a malformed pattern.
std::vector<TraceEventName> select_trace_events(const std::vector<TraceEventName>& events,
                                                std::string_view pattern);

// The fields of a trace event's format file (common_* left out).
std::vector<ProbeField> parse_event_format(std::string_view format, std::uint32_t& fixed_size);

// The register name ("di") of FHOOK_REG_*; nullopt for an unknown name.
std::optional<std::uint32_t> register_index(std::string_view name);
// Does `arch` have the register FHOOK_REG_* `r`?
bool register_of(std::uint32_t r, Arch arch);

// The probes of a session by id, for the formatters.
class ProbeTable {
public:
    void add(std::uint32_t id, KprobeDef def);
    const KprobeDef* find(std::uint32_t id) const noexcept;

private:
    std::vector<std::pair<std::uint32_t, KprobeDef>> probes_;
};

// Which recorded events `fhook report` prints (trace-cmd report's --cpu,
// -P, -F): every condition given must hold; LOST records always pass.
struct EventFilterSpec {
    std::optional<std::set<int>> cpus;
    std::optional<std::set<std::uint32_t>> probes;
    std::uint64_t since_ns = 0;
    std::uint64_t until_ns = ~std::uint64_t{0};
    std::set<std::uint32_t> pids; // tid or tgid; empty: any
    std::set<std::string> comms;  // task names, globs allowed; empty: any
    std::string expr;             // a filter expression (compile_filter)
};
class EventFilter {
public:
    // `expr` is compiled for each probe of `table` (its definition's fields;
    // a function probe's task fields): an Invalid Error when it compiles
    // for none of `probe_ids`, and the events of probes it does not
    // compile for never pass.
    EventFilter(EventFilterSpec spec, const ProbeTable& table,
                const std::vector<std::uint32_t>& probe_ids);
    bool passes(const Event& event) const;

private:
    EventFilterSpec spec_;
    std::map<std::uint32_t, std::vector<fhook_insn>> preds_; // by probe id
};

} // namespace fhook
