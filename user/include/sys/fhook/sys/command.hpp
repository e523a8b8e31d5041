// Running the COMMAND of `fhook trace -- COMMAND`.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include <fhook/core/fd.hpp>

namespace fhook {

// A command forked but held before exec until release(), so that the pid
// filter is in place before its first instruction.  The child waits in
// poll(2) on a pipe, not in read(2): a read would itself be a vfs_read that
// the probes record if they were armed before the child got there.
// release() closes the pipe.  A child whose parent died instead
// (reparented) exits with 127 without running the command; destroying an
// unreleased HeldCommand kills and reaps the child, so a failed setup never
// runs the command untraced.
class HeldCommand {
public:
    // Forks.  The child restores `child_mask` and SIGPIPE's default
    // disposition before waiting.  On exec failure it prints
    // "fhook: error: cannot execute '...': ..." and exits 127.
    HeldCommand(const std::vector<std::string>& argv, const sigset_t& child_mask);
    HeldCommand(const HeldCommand&) = delete;
    HeldCommand& operator=(const HeldCommand&) = delete;
    ~HeldCommand();

    pid_t pid() const noexcept { return pid_; }
    void release();
    // Reaps the child if it has exited (waitpid WNOHANG); `wait` blocks.
    bool exited(bool wait = false);
    // Exit status (waitpid format), valid once exited().
    int status() const noexcept { return status_; }
    // Once exited(): true when execvp failed.
    bool exec_failed();

private:
    pid_t pid_ = -1;
    UniqueFd go_;
    UniqueFd exec_status_;
    bool released_ = false;
    bool exited_ = false;
    int status_ = 0;
};

} // namespace fhook
