// fhook bench: the processes it starts (consumers, peers' tools) and
// the CPU time they use.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fhook/core/fd.hpp>

namespace fhook::bench {

// Pins `pid` (0: the caller) to `cpu`.
void pin(pid_t pid, int cpu);
// Is `exe` a path to an executable, or an executable in $PATH?
bool in_path(const std::string& exe);
// The highest-numbered CPU the caller may run on.
int last_cpu();
// CPU time of a process's threads so far, ns (sum_exec_runtime: under
// -icount, guest instructions), from /proc/PID/task/*/schedstat ...
std::uint64_t cpu_ns(pid_t pid);
// ... and of its descendants (trace-cmd forks a recorder per CPU).
std::uint64_t tree_cpu_ns(pid_t pid, int depth = 0);

// A consumer or tool process, pinned to a CPU, stdout to /dev/null and
// stderr kept (a memfd) for the skip reason.  Stopped with SIGINT (the
// tools then print their summary, to /dev/null), SIGKILL after 20 s.
class Child {
public:
    Child() = default;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    Child(Child&& o) noexcept : pid_(std::exchange(o.pid_, -1)), err_(std::move(o.err_)) {}
    ~Child() { stop(); }

    // exec argv; or, when argv is empty, copy `drain` to /dev/null
    static Child start(const std::vector<std::string>& argv, const std::string& drain, int cpu);
    bool running();
    void stop() noexcept;
    pid_t pid() const noexcept { return pid_; }
    // what the process wrote on stderr (its first 64 KiB)
    std::string error_text() const;
    // the first line of what the process wrote on stderr
    std::string first_error() const;

private:
    pid_t pid_ = -1;
    UniqueFd err_;
};

} // namespace fhook::bench
