// fhook errors' output (issue 44): a failing call chain, outermost first,
// each frame's return value as kernel code names it, the frame that first
// produced the failure marked; identical chains counted; the --stat table
// per (entry, first failing function, errno).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fhook/output/format.hpp>
#include <fhook/probe/call_args.hpp>
#include <fhook/probe/retval.hpp>
#include <fhook/sys/kernel_lines.hpp>
#include <fhook/sys/ksyms.hpp>
#include <fhook/sys/usersyms.hpp>

namespace fhook {

// One call of a chain: what it returned and how long it took.
struct ErrorFrame {
    std::uint64_t func = 0;
    std::uint64_t calltime = 0; // CLOCK_MONOTONIC ns
    std::uint64_t duration = 0;
    std::uint64_t retval = 0; // %rax as it returned
    ReturnType type;
    std::optional<CallArgs> args = std::nullopt; // by its BTF prototype, when recorded
    // With call sites recorded: where in it the chain goes on (the call
    // of the next frame; the last frame's start), "path_openat+0x8c", and
    // its source line where debug info has it, "fs/namei.c:3815"
    std::string at = {};
    std::string source = {};
    std::uint64_t pc = 0; // the address `at` names (a call's last byte), 0: none
};

// The calls from an entry function that failed, each the latest failing
// call of the one before it (an errno preferred to a NULL or false),
// outermost (the entry) first.  `first`: the deepest frame down to which
// each returned the entry's failure (the same errno, or a NULL or false
// for one): where it was first produced, unless `truncated` says the chain was cut below
// that frame (the depth limit, a chain the module could not keep, a frame
// whose value is no failure by its type) or `incomplete` that a call may
// be missing (the module's log of the task's calls was full).
struct ErrorChain {
    std::uint64_t ts = 0; // when the entry returned
    std::uint32_t pid = 0;
    std::uint32_t tgid = 0;
    std::uint16_t cpu = 0;
    std::string comm;
    std::vector<ErrorFrame> frames;
    std::vector<std::string> ustack; // the task's user stack, named, innermost first
    std::size_t first = 0;
    bool truncated = false;
    bool incomplete = false;

    // `first` is surely where the failure started
    bool first_sure() const { return !incomplete && !(truncated && first + 1 == frames.size()); }
};

// ErrorChain::first of `frames` (the entry's own index, 0, at least).
std::size_t first_failure(const std::vector<ErrorFrame>& frames);

// The frames' functions and return values, the key of identical chains.
std::string error_chain_key(const ErrorChain& chain);

// The chain as text: a title line (task, CPU, time, the entry's result and
// duration; "(N times)" when `repeats` > 1), then a line per frame indented
// by depth, "<- first" on ErrorChain::first (or why not on the last:
// truncated, incomplete), each followed by where in it the chain goes on
// ("at") and its arguments' line when it has them.
std::string format_error_chain(const ErrorChain& chain, const Ksyms& ksyms, unsigned repeats = 1);
// One JSON object (no newline): ts_ns, cpu, pid, tgid, comm, entry, result,
// errno, first (ErrorChain::first's function; null unless first_sure()), truncated, incomplete,
// repeats, frames
// [{function, result, duration_ns, calltime_ns[, at, source][, args {name: value}]}].
std::string format_error_chain_json(const ErrorChain& chain, const Ksyms& ksyms,
                                    unsigned repeats = 1);

// How a chain's spans are named and stamped: ids spread from the chain's
// stamp, task and CPU with `salt` (a run's own: one machine's chains and
// another's do not collide), times CLOCK_MONOTONIC + `real_minus_mono`.
struct OtlpSpanIds {
    std::uint64_t salt = 0;
    std::int64_t real_minus_mono = 0;
};

// The chain as one OTLP/HTTP JSON ExportTraceServiceRequest (no newline):
// a trace whose spans are its frames, each the child of the one before
// (the entry the root), named after its function, from its call to its
// return, status ERROR with the frame's result as message; attributes
// fhook.result, on the root thread.id, process.pid, thread.name, fhook.cpu,
// fhook.truncated and fhook.incomplete, fhook.first on ErrorChain::first
// when sure, fhook.at and fhook.source with call sites, fhook.arg.NAME
// with arguments.  Resource service.name "fhook", scope "fhook".
std::string format_error_chain_otlp(const ErrorChain& chain, const Ksyms& ksyms,
                                    const OtlpSpanIds& ids);

// --stat: failures counted per (entry, first failing function, errno).
class ErrorStats {
public:
    void add(const ErrorChain& chain);
    // "COUNT  ERRNO  ENTRY  FIRST", most frequent first; "(no failures)"
    // when nothing was added.
    std::string text(const Ksyms& ksyms) const;
    std::uint64_t total() const noexcept { return total_; }
    struct Row {
        std::uint64_t count = 0;
        std::uint64_t entry = 0;
        std::uint64_t first = 0; // 0: not known (incomplete)
        std::string result;
        bool deeper = false; // the first failure may lie below `first`
    };
    // most frequent first
    std::vector<Row> rows() const;

private:
    // (entry, first, its result as text, deeper) -> count
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::string, bool>, std::uint64_t> counts_;
    std::uint64_t total_ = 0;
};

// fhook errors' output of Errors events (text, JSON or OTLP traces: a line
// per chain, format_error_chain_otlp()): each failing chain,
// identical ones once unless `all` (counted in the end), or with `stat`
// only the table at the end.  Return values are judged by their
// functions' BTF types (`btf` and `module_btf`; without: errno-style,
// long or int as the value says); a frame the kernel kept whose value is no failure by
// its type ends the chain above it, and an entry whose value is none is
// no failure at all.
struct ErrorsFormatOptions {
    bool all = false;
    bool stat = false;
    bool false_fails = false;    // a bool function's false is a failure
    bool entry_filtered = false; // an entry's value is a failure whatever its type
    const KernelBtf* btf = nullptr;
    // a module's BTF (split on `btf`), may be empty or give null
    std::function<const KernelBtf*(const std::string& module)> module_btf;
    // where frames' source lines come from (call sites recorded)
    std::shared_ptr<KernelLines> lines;
    OtlpSpanIds otlp; // OutputFormat::Otlp
};

class ErrorsFormatter final : public Formatter {
public:
    ErrorsFormatter(const Ksyms& ksyms, OutputFormat format, ErrorsFormatOptions options);
    void format(const Event& event, std::string& out) override;
    // text: "# N failing calls, M distinct chains" (and the table with
    // stat); JSON: one {"failures","distinct","lost","stat":[...]} object
    void end(std::string& out) override;

    // The chain of an Errors event, typed and cut as above (no source
    // lines: format() adds them to the chains it prints); no frames when
    // its entry did not fail by its type.
    ErrorChain chain_of(const Event& event);

private:
    // what BTF says of `func`: its return type and prototype
    struct Typed {
        std::optional<ReturnType> type;
        std::optional<KernelBtf::Function> proto;
        const KernelBtf* btf = nullptr;
    };
    const Typed& typed(std::uint64_t func);
    static CallArgs args_of(const Typed& t, std::span<const std::uint64_t> regs);
    void place(ErrorFrame& f, std::uint64_t addr, bool callsite);
    void add_sources(ErrorChain& chain);

    const Ksyms& ksyms_;
    UserSymbolizer usyms_;
    OutputFormat format_;
    ErrorsFormatOptions options_;
    std::unordered_map<std::uint64_t, Typed> types_;      // by function
    std::unordered_map<std::string, std::uint64_t> seen_; // error_chain_key -> times
    ErrorStats stats_;
    std::uint64_t lost_ = 0;
};

} // namespace fhook
