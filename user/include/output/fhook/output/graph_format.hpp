// The function_graph tracer's text format for call graph records.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fhook/output/format.hpp>
#include <fhook/sys/btf.hpp>

namespace fhook {

class KernelBtf;
class Ksyms;

struct GraphFormatOptions {
    bool proc = false;         // funcgraph-proc: the task column
    bool retval = false;       // funcgraph-retval (6.5+'s format, on every kernel)
    bool abstime = false;      // funcgraph-abstime
    std::uint32_t nr_cpus = 1; // the CPU column is as wide as nr_cpus - 1 printed
    // names the arguments recorded with each call (null: not shown)
    const KernelBtf* btf = nullptr;
};

// kernel/trace/trace_functions_graph.c's output, line for line:
//   " 0)               |  vfs_read() {"
//   " 0)   0.481 us    |    rw_verify_area();"
//   " 0) + 12.905 us   |  }"
// with the context switch blocks ("comm-pid => comm-pid"), "} /* func */"
// where the entry was not the last one printed at that depth on that CPU,
// trace events as "/* name: fields */" comments, "CPU:%d [LOST %lu
// EVENTS]".  A call is a leaf ("func();") when the next record of its CPU
// is its own return, as the kernel decides; entries and returns are paired
// by the task and the entry's timestamp, which the return carries, so a
// lost record never makes a duration up (durations come from the module).
// An entry waits for the next record of its CPU; the lines of other CPUs
// queue behind it (at most kMaxQueue lines).  Calls still open at the end
// are closed with "} /* func unfinished */".
class GraphFormatter final : public Formatter {
public:
    static constexpr std::size_t kMaxQueue = 4096;
    GraphFormatter(const Ksyms& ksyms, GraphFormatOptions options);
    ~GraphFormatter() override;
    void begin(std::string& out) override;
    void end(std::string& out) override;
    void format(const Event& event, std::string& out) override;

private:
    struct Line {
        std::string text;
        std::optional<Event> entry; // an entry waiting for its CPU's next record
    };
    struct Open {
        std::uint64_t func = 0;
        std::uint32_t pid = 0;
        std::uint64_t calltime = 0;
    };
    struct Cpu {
        long pending = -1;      // the waiting entry: its number in the queue
        long last_pid = -1;     // the task of the last line
        long depth = -1;        // cpu_data->depth: of the last call printed
        std::vector<Open> open; // enter_funcs[depth]
    };

    Cpu& cpu(std::uint16_t n);
    Line& line(long number) { return queue_[static_cast<std::size_t>(number - first_)]; }
    void prologue(const Event& ev, std::string& out, bool switches = true);
    void append_proc(std::uint32_t pid, std::string& out);
    void append_duration(std::uint64_t ns, std::string& out);
    void append_call(const Event& entry, std::string& out);
    void append_retval(std::uint64_t retval, std::string& out);
    void resolve(Cpu& c, const Event* ret);
    void push(std::string text);
    void flush(std::string& out);

    NameCache names_;
    GraphFormatOptions options_;
    TextFormatter text_; // other events, for comments
    int cpu_width_ = 1;
    std::vector<Cpu> cpus_;
    std::deque<Line> queue_;
    long first_ = 0; // the number of queue_.front()
    std::unordered_map<std::uint32_t, std::string> comms_;
    std::unordered_map<std::uint64_t, std::optional<KernelBtf::Function>> protos_;
    std::string scratch_;
};

} // namespace fhook
