// Hist triggers: tracefs' aggregation language (the kernel's
// Documentation/trace/histogram.rst; docs/cli.md "hist") parsed, resolved
// against a probe's fields and run over events: a table of keys, hit
// counts and sums, as a `hist` file holds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fhook/core/probe_def.hpp>
#include <fhook/ring/event.hpp>

struct fhook_rec;

namespace fhook {

// The modifier of a key or value (".hex", ".log2"...).
enum class HistModifier { None, Hex, Sym, SymOffset, Execname, Syscall, Log2, Buckets, Usecs };

// Where a field's value comes from.
enum class HistSource {
    Field,       // a probe field (fetch argument, tracepoint field)
    Pid,         // common_pid
    Cpu,         // common_cpu, cpu
    Comm,        // comm: the task's name
    Ip,          // function events: the function
    ParentIp,    // function events: the call site in the caller
    Stacktrace,  // the event's kernel stack (probes armed with a stack)
    UStacktrace, // the task's user stack (ustacktrace)
    Hitcount,    // (sort=, vals=)
};

struct HistField {
    std::string name; // as the kernel names it ("common_pid", "count")
    HistModifier modifier = HistModifier::None;
    std::uint64_t buckets = 0; // .buckets=N
    // set by resolve_hist_fields():
    HistSource source = HistSource::Field;
    int field = -1;         // Field: index into the probe's fields
    bool is_string = false; // compared and printed as a string
    bool is_signed = false; // compared signed (printed unsigned, as the kernel does)
    unsigned size = 8;      // bytes, for comparisons
};

struct HistSort {
    std::string name;
    bool descending = false;
};

struct HistSpec {
    std::vector<HistField> keys; // 1 to 3
    std::vector<HistField> vals; // besides hitcount: 0 to 2
    std::vector<HistSort> sort;  // 1 or 2; hitcount ascending unless given
    std::uint32_t size = 2048;   // entries at most: a power of two, 128 to 131072
    std::string name;            // name=NAME
    std::string filter;          // the text after "if"
    std::string text;            // as given
};

// True for a hist trigger rather than a probe: "hist:...", "keys=...",
// "key=...".
bool is_hist_trigger(std::string_view text);

// Parses "[hist:]keys=K[,K...][:vals=V[,V...]][:sort=S[,S]][:size=N]
// [:name=NAME] [if FILTER]" (key=/keys=, val=/vals=/values=, as the kernel
// accepts them).  Invalid Error naming the token, in the kernel's words
// where it has some ("Couldn't find field" comes from resolve).
HistSpec parse_hist_trigger(std::string_view text);

// The fields an event of `def` has for hist keys and values (nullptr: a
// function probe's events), with the common ones.
std::vector<std::string> hist_field_names(const KprobeDef* def);

// Names every key and value after `def`'s fields (nullptr: a function
// probe).  Invalid Error for an unknown field (the kernel's "Couldn't find
// field"), a modifier that does not fit it, a sort= that is neither a key
// nor a value.
void resolve_hist_fields(HistSpec& spec, const KprobeDef* def);

// "hist:keys=...:vals=hitcount,...:sort=...:size=N" (+ " if FILTER"), as
// the kernel prints a trigger back (event_hist_trigger_print()).
std::string hist_trigger_info(const HistSpec& spec);

// One part of an entry's key: a number, a string, or a stack: kernel
// frames (stacktrace), or for ustacktrace the task's tgid then its user
// frames, until name_user_stacks() (fhook/hist_format.hpp) makes them
// lines of text.
using HistKeyPart = std::variant<std::uint64_t, std::string, std::vector<std::uint64_t>>;

struct HistEntry {
    std::vector<HistKeyPart> key;
    std::uint64_t hitcount = 0;
    std::vector<std::uint64_t> sums; // one per spec.vals
    std::string comm;                // .execname: the task's name when the entry was made
};

// A histogram filled from events as the module fills its table: at most
// spec.size entries, an event whose key would make one more is dropped.
class HistTable {
public:
    explicit HistTable(HistSpec spec) : spec_(std::move(spec)) {}
    // Adds `ev` (an event of the probe the spec was resolved for).
    void add(const Event& ev, const KprobeDef* def);
    // Entries in the spec's sort order (ties: by key).
    std::vector<HistEntry> sorted() const;
    const HistSpec& spec() const noexcept { return spec_; }
    std::uint64_t hits() const noexcept { return hits_; }
    std::uint64_t dropped() const noexcept { return dropped_; }
    // Takes entries counted elsewhere (the module's table).
    void set(std::vector<HistEntry> entries, std::uint64_t hits, std::uint64_t dropped);

private:
    HistSpec spec_;
    std::map<std::vector<HistKeyPart>, HistEntry> entries_;
    std::uint64_t hits_ = 0;
    std::uint64_t dropped_ = 0;
};

// The probe's filter for triggers that share their 'if' (so that the
// module can keep their tables): `filter` and that 'if' joined with &&;
// nullopt when the triggers' 'if's differ.
std::optional<std::string> hist_probe_filter(const std::vector<HistSpec>& specs,
                                             const std::string& filter);

// The spec as the module can keep it (FHOOK_IOC_HIST_SET for
// `probe_id`, its `table`th), or nullopt when it needs what only fhook's
// own aggregation does: string keys other than comm, arrays and bit
// fields; kernel stacks unless the module has FHOOK_FEAT_HIST_STACK
// (`features`) and the probe is a function or an entry kprobe; user stacks
// unless it has FHOOK_FEAT_HIST_USTACK.
std::optional<fhook_hist_set> module_hist(const HistSpec& spec, const KprobeDef* def,
                                          std::uint32_t probe_id, std::uint32_t table = 0,
                                          std::uint64_t features = 0);
// True when `spec` has a key of kernel stacks (`user` false: stacktrace)
// or user stacks (ustacktrace); names as parse_hist_trigger() gives them.
bool hist_has_stack_key(const HistSpec& spec, bool user);
// Entries as the module gives them (fhook_hist_read's layout: `nr`
// entries of `elt_size` bytes, keys of `key_size`) for a table of `spec`.
std::vector<HistEntry> module_hist_entries(const HistSpec& spec, const std::uint8_t* data,
                                           std::uint32_t nr, std::uint32_t key_size,
                                           std::uint32_t elt_size);
// What `now` counted since `before` (entries of the same spec): hit
// counts and sums less those of the same key, entries that did not
// change left out.
std::vector<HistEntry> hist_since(const std::vector<HistEntry>& now,
                                  const std::vector<HistEntry>& before);

class ProbeTable;
// The one probe of a recording's `probe_ids` whose fields `spec` names
// (function probes: their function events; ustacktrace: uprobes only).
// Invalid Error when none has them (the first probe's reason) or more
// than one has.
std::uint32_t hist_probe_of(const HistSpec& spec, const ProbeTable& probes,
                            const std::vector<std::uint32_t>& probe_ids);

} // namespace fhook
