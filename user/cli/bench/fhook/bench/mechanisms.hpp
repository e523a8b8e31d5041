// fhook bench: the mechanisms it measures, each attached to the
// function by fhook's CLI, tracefs writes or a peer's tool, and what each
// leaves attached until the row is measured.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fhook/bench/bench.hpp>
#include <fhook/bench/process.hpp>
#include <fhook/bench/scraper.hpp>
#include <fhook/core/error.hpp>

namespace fhook::bench {

void write_file(const std::string& path, const std::string& text, bool append = false);
std::string read_text_file(const std::string& path);

// What a mechanism leaves attached: processes first (trace_pipe readers
// must close before the tracer changes), then the tracefs writes undone
// in reverse.
struct Attachment {
    std::unique_ptr<Scraper> scraper; // stopped before the children
    std::vector<Child> children;
    std::vector<std::pair<std::string, std::string>> undo; // (file, text), appended
    std::vector<std::pair<std::string, std::string>> undo_trunc;
    std::vector<std::string> remove; // files a tool wrote
    std::string summary;             // fhook's --summary-json file
    ~Attachment() {
        scraper.reset();
        for (auto it = children.rbegin(); it != children.rend(); ++it) {
            it->stop();
        }
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
            try {
                write_file(it->first, it->second, true);
            } catch (const Error&) {
            }
        }
        for (auto it = undo_trunc.rbegin(); it != undo_trunc.rend(); ++it) {
            try {
                write_file(it->first, it->second, false);
            } catch (const Error&) {
            }
        }
        for (const auto& path : remove) {
            unlink(path.c_str());
        }
    }
};

struct Context {
    const RunOptions& opt;
    std::string function;
    std::string module; // "" for vmlinux
    std::uint64_t addr = 0;
    std::uint64_t size = 0;
    int consumer_cpu = 0;
    std::uint64_t calls = 0;                  // per repeat
    std::optional<std::uint64_t> int3_offset; // first instruction after the fentry site
    std::string int3_why;
};

// Is anything attached to the function (ftrace ops of any kind, or a
// kprobe on it)?  Used to wait for tools that attach asynchronously.
bool attached(const Context& c);

struct Mechanism {
    const char* name;
    const char* tool;
    const char* description;
    std::string (*attach)(Context&, Attachment&); // "" or why skipped
    // a kernel latency tracer whose events nothing reads (wakeup_rt keeps
    // its worst case, timerlat's samples wait for rtla): what its buffer
    // overwrites is no loss
    bool unread = false;
};

// Starts a tool pinned to the consumer CPU and waits until `ready()`
// (at most 600 s); "" or why it could not (not found, exited, too slow).
std::string start_tool(Context& c, Attachment& a, const std::vector<std::string>& argv,
                       const std::string& name, const std::function<bool()>& ready);

// The mechanisms of a workload, in the order of the table: the hooks of
// one function (kloop, read), the scheduler's latency tracers (switch) or
// the timer latency tracers (timer: mechanisms_sched.cpp).
std::span<const Mechanism> mechanism_table(std::string_view workload);
std::span<const Mechanism> sched_mechanism_table();
std::span<const Mechanism> timer_mechanism_table();

} // namespace fhook::bench
