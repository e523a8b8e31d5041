#include <sys/utsname.h>

#include <fstream>
#include <string>

#include <fhook/sys/preempt.hpp>

namespace fhook {

std::string preempt_model(const std::string& debugfs) {
    utsname u{};
    const std::string version = uname(&u) == 0 ? u.version : "";
    if (version.find("PREEMPT_RT") != std::string::npos) {
        return "preempt_rt";
    }
    // "none voluntary (full)": the one in parentheses
    std::ifstream in(debugfs + "/sched/preempt");
    std::string line;
    if (in && std::getline(in, line)) {
        const auto open = line.find('('), close = line.find(')');
        if (open != std::string::npos && close != std::string::npos && close > open) {
            const std::string mode = line.substr(open + 1, close - open - 1);
            if (mode == "none") {
                return "server";
            }
            if (mode == "voluntary") {
                return "desktop";
            }
            if (mode == "full") {
                return "preempt";
            }
        }
    }
    if (version.find("PREEMPT_DYNAMIC") == std::string::npos &&
        version.find("PREEMPT ") != std::string::npos) {
        return "preempt";
    }
    return "unknown";
}

std::string kernel_release() {
    utsname u{};
    return uname(&u) == 0 ? u.release : "unknown";
}

} // namespace fhook
