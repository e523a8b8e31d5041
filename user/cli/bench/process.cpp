// fhook bench: processes and their CPU time (process.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fhook/bench/process.hpp>
#include <fhook/core/error.hpp>

namespace fhook::bench {

void pin(pid_t pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(pid, sizeof(set), &set) != 0) {
        throw_runtime("cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno),
                      errno);
    }
}

bool in_path(const std::string& exe) {
    if (exe.find('/') != std::string::npos) {
        return access(exe.c_str(), X_OK) == 0;
    }
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (!dir.empty() && access((dir + "/" + exe).c_str(), X_OK) == 0) {
            return true;
        }
    }
    return false;
}

int last_cpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 0;
    }
    int last = 0;
    for (int i = 0; i < CPU_SETSIZE; i++) {
        if (CPU_ISSET(i, &set)) {
            last = i;
        }
    }
    return last;
}

// CPU time of a process's threads so far, ns (sum_exec_runtime: under
// -icount, guest instructions), from /proc/PID/task/*/schedstat
std::uint64_t cpu_ns(pid_t pid) {
    std::uint64_t sum = 0;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d) {
        return 0;
    }
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        std::ifstream in(dir + "/" + e->d_name + "/schedstat");
        std::uint64_t ns = 0;
        if (in >> ns) {
            sum += ns;
        }
    }
    closedir(d);
    return sum;
}

// ... and of its descendants (trace-cmd forks a recorder per CPU)
std::uint64_t tree_cpu_ns(pid_t pid, int depth) {
    std::uint64_t sum = cpu_ns(pid);
    if (depth > 4) {
        return sum;
    }
    std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                           "/children");
    pid_t child = 0;
    while (children >> child) {
        sum += tree_cpu_ns(child, depth + 1);
    }
    return sum;
}

Child Child::start(const std::vector<std::string>& argv, const std::string& drain, int cpu) {
    Child c;
    c.err_ = UniqueFd(memfd_create("fhook-bench-stderr", MFD_CLOEXEC));
    if (!c.err_) {
        throw_runtime(std::string("memfd_create: ") + std::strerror(errno), errno);
    }
    const pid_t pid = fork();
    if (pid < 0) {
        throw_runtime(std::string("fork: ") + std::strerror(errno), errno);
    }
    if (pid == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof(set), &set);
        const int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(c.err_.get(), 2);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (argv.empty()) {
            const int fd = open(drain.c_str(), O_RDONLY);
            if (fd < 0) {
                dprintf(2, "cannot open %s: %s\n", drain.c_str(), std::strerror(errno));
                _exit(1);
            }
            static char buf[1 << 16];
            for (;;) {
                const ssize_t n = read(fd, buf, sizeof(buf));
                if (n == 0 || (n < 0 && errno != EINTR)) {
                    _exit(0);
                }
            }
        }
        std::vector<char*> args;
        for (const auto& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        execvp(args[0], args.data());
        dprintf(2, "cannot execute %s: %s\n", args[0], std::strerror(errno));
        _exit(127);
    }
    c.pid_ = pid;
    return c;
}

bool Child::running() {
    if (pid_ < 0) {
        return false;
    }
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
    }
    return true;
}

void Child::stop() noexcept {
    if (pid_ < 0) {
        return;
    }
    kill(pid_, SIGINT);
    for (int i = 0; i < 200; i++) {
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return;
        }
        usleep(100000);
    }
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
}

std::string Child::error_text() const {
    std::string text(65536, '\0');
    const ssize_t n = pread(err_.get(), text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return text;
}

std::string Child::first_error() const {
    const std::string text = error_text();
    // bpftrace starts with "Attaching N probes..."
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("Attaching", 0) == 0 || line.empty()) {
            continue;
        }
        return line;
    }
    return "exited without a message";
}

} // namespace fhook::bench
