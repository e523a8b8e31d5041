#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include <fhook/core/error.hpp>
#include <fhook/sys/signals.hpp>

namespace fhook {

SignalWatch::SignalWatch(bool print) {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR2}) {
        sigaddset(&set_, sig);
    }
    if (print) {
        sigaddset(&set_, SIGUSR1);
    }
    if (::sigprocmask(SIG_BLOCK, &set_, &old_) < 0) {
        int err = errno;
        throw_runtime("sigprocmask failed: " + errno_text(err), err);
    }
    fd_.reset(::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!fd_) {
        int err = errno;
        ::sigprocmask(SIG_SETMASK, &old_, nullptr);
        throw_runtime("signalfd failed: " + errno_text(err), err);
    }
}

SignalWatch::~SignalWatch() {
    fd_.reset();
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
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
