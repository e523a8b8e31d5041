#include <cstring>

#include <fhook/core/error.hpp>

namespace fhook {

namespace {

std::string fill(const std::string& message, std::string_view name) {
    std::string out = message;
    const auto at = out.find("{}");
    if (at != std::string::npos) {
        out.replace(at, 2, name);
    }
    return out;
}

} // namespace

Error::Error(ErrorKind kind, const std::string& message, int sys_errno, Setting setting)
    : std::runtime_error(setting == Setting::None ? message : fill(message, setting_name(setting))),
      kind_(kind), errno_(sys_errno), setting_(setting), template_(message) {}

std::string Error::text(std::string_view name) const {
    return setting_ == Setting::None ? template_ : fill(template_, name);
}

std::string_view setting_name(Setting setting) noexcept {
    switch (setting) {
    case Setting::RingSize:
        return "ring size";
    case Setting::Pids:
        return "pid";
    case Setting::Cpus:
        return "cpu";
    case Setting::PrototypeCheck:
        return "force";
    case Setting::None:
        break;
    }
    return "";
}

void throw_invalid(const std::string& message, Setting setting) {
    throw Error(ErrorKind::Invalid, message, 0, setting);
}

void throw_runtime(const std::string& message, int sys_errno, Setting setting) {
    throw Error(ErrorKind::Runtime, message, sys_errno, setting);
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
