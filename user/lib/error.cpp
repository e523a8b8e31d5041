#include <cstring>

#include <fhook/error.hpp>

namespace fhook {

Error::Error(ErrorKind kind, const std::string& message, int sys_errno)
    : std::runtime_error(message), kind_(kind), errno_(sys_errno) {}

int Error::exit_code() const noexcept {
    switch (kind_) {
    case ErrorKind::Usage:
        return 2;
    case ErrorKind::OutputClosed:
        return 0;
    case ErrorKind::Runtime:
        break;
    }
    return 1;
}

void throw_usage(const std::string& message) {
    throw Error(ErrorKind::Usage, message);
}

void throw_runtime(const std::string& message, int sys_errno) {
    throw Error(ErrorKind::Runtime, message, sys_errno);
}

std::string errno_text(int err) {
    char buf[128];
    // GNU strerror_r returns a pointer that may or may not be `buf`.
    return strerror_r(err, buf, sizeof(buf));
}

std::string_view version() {
    return FHOOK_VERSION;
}

} // namespace fhook
