#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fhook/core/error.hpp>
#include <fhook/sys/command.hpp>

namespace fhook {

namespace {

[[noreturn]] void run_child(pid_t parent, int go_read, int status_write, char** argv,
                            const sigset_t& mask) {
    // Back to the signal state fhook was started with.
    ::signal(SIGPIPE, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    pollfd pfd{go_read, POLLIN, 0};
    while (::poll(&pfd, 1, -1) < 0 && errno == EINTR) {
    }
    if (::getppid() != parent) {
        ::_exit(127); // fhook died before arming: do not run untraced
    }
    ::execvp(argv[0], argv);
    int err = errno;
    char msg[512];
    int len = std::snprintf(msg, sizeof(msg),
                            "fhook: error: cannot execute '%s': %s: check the command name and "
                            "PATH\n",
                            argv[0], std::strerror(err));
    if (len > 0) {
        [[maybe_unused]] ssize_t ignored =
            ::write(STDERR_FILENO, msg, std::min(static_cast<std::size_t>(len), sizeof(msg) - 1));
    }
    [[maybe_unused]] ssize_t ignored = ::write(status_write, &err, sizeof(err));
    ::_exit(127);
}

UniqueFd make_pipe(UniqueFd& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) < 0) {
        int err = errno;
        throw_runtime("pipe failed: " + errno_text(err) + ": raise the fd limits", err);
    }
    write_end.reset(fds[1]);
    return UniqueFd(fds[0]);
}

} // namespace

HeldCommand::HeldCommand(const std::vector<std::string>& argv, const sigset_t& child_mask) {
    if (argv.empty()) {
        throw_invalid("empty COMMAND: give the command to run");
    }
    std::vector<char*> args;
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    UniqueFd go_read = make_pipe(go_);
    UniqueFd status_write;
    exec_status_ = make_pipe(status_write);

    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
        int err = errno;
        throw_runtime("cannot fork the command: " + errno_text(err) + ": check the process limits",
                      err);
    }
    if (pid_ == 0) {
        go_.reset();
        run_child(parent, go_read.get(), status_write.get(), args.data(), child_mask);
    }
}

HeldCommand::~HeldCommand() {
    if (!released_ && !exited_) {
        ::kill(pid_, SIGKILL);
        exited(true);
    }
}

void HeldCommand::release() {
    go_.reset(); // POLLHUP in the child
    released_ = true;
}

bool HeldCommand::exited(bool wait) {
    if (exited_) {
        return true;
    }
    pid_t r;
    do {
        r = ::waitpid(pid_, &status_, wait ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
        exited_ = true;
    }
    return exited_;
}

bool HeldCommand::exec_failed() {
    int err = 0;
    ssize_t n;
    do {
        n = ::read(exec_status_.get(), &err, sizeof(err));
    } while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(sizeof(err));
}

} // namespace fhook
