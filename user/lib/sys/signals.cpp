#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include <fhook/core/error.hpp>
#include <fhook/sys/signals.hpp>

namespace fhook {

namespace {

// The watches alive (several at once: fhook export's jobs, each a Tracer),
// and the mask before the first: blocking nests, the last one restores it
// (each restoring the mask it found would leave signals blocked when they
// end in another order than they began)
std::mutex watches_mutex;
unsigned watches = 0;
sigset_t before_first;

} // namespace

SignalWatch::SignalWatch(bool print) {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR2}) {
        sigaddset(&set_, sig);
    }
    if (print) {
        sigaddset(&set_, SIGUSR1);
    }
    const std::lock_guard lock(watches_mutex);
    if (::sigprocmask(SIG_BLOCK, &set_, watches ? nullptr : &before_first) < 0) {
        int err = errno;
        throw_runtime("sigprocmask failed: " + errno_text(err), err);
    }
    old_ = before_first;
    fd_.reset(::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!fd_) {
        int err = errno;
        if (!watches) {
            ::sigprocmask(SIG_SETMASK, &before_first, nullptr);
        }
        throw_runtime("signalfd failed: " + errno_text(err), err);
    }
    watches++;
}

SignalWatch::~SignalWatch() {
    fd_.reset();
    const std::lock_guard lock(watches_mutex);
    if (--watches == 0) {
        ::sigprocmask(SIG_SETMASK, &before_first, nullptr);
    }
}

SignalWatch::Pending SignalWatch::consume() {
    Pending p;
    signalfd_siginfo info;
    while (::read(fd_.get(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        if (info.ssi_signo == SIGUSR2) {
            p.snapshot = true;
        } else if (info.ssi_signo == SIGUSR1) {
            p.print = true;
        } else if (info.ssi_signo != SIGCHLD) {
            p.stop = true;
        }
    }
    return p;
}

} // namespace fhook
