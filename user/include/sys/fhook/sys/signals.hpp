// fhook::SignalWatch: the signals that stop or snapshot a run, read from a
// signalfd in the run's event loop.
#pragma once

#include <signal.h>

#include <fhook/core/fd.hpp>

namespace fhook {

// Blocks SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGUSR2 (and SIGUSR1 when
// `print` is watched) in the calling thread and reads them from a
// signalfd.  Watches nest (fhook export's jobs live at once and end in any
// order): the last one to end restores the mask the first one found.
class SignalWatch {
public:
    explicit SignalWatch(bool print = false);
    SignalWatch(const SignalWatch&) = delete;
    SignalWatch& operator=(const SignalWatch&) = delete;
    ~SignalWatch();

    int fd() const noexcept { return fd_.get(); }
    // The mask in effect before the first watch, for a command the run starts.
    const sigset_t& original_mask() const noexcept { return old_; }

    struct Pending {
        bool stop = false;     // SIGINT, SIGTERM, SIGHUP
        bool snapshot = false; // SIGUSR2
        bool print = false;    // SIGUSR1 (watched on request)
    };
    // Consumes pending signals (SIGCHLD only wakes the loop).
    Pending consume();

private:
    sigset_t set_;
    sigset_t old_;
    UniqueFd fd_;
};

} // namespace fhook
