// fhook::doctor(): will fhook work on this machine, and if not, why.
// Plain facts from /proc, /sys, /boot and /lib/modules; each check says
// what it found and, when it is not fine, what to do.
#pragma once

#include <string>
#include <vector>

namespace fhook {

enum class CheckStatus {
    Ok,
    Warn, // a feature missing, or a check that could not be made (the reason says why)
    Fail, // fhook will not work until this is fixed
};

struct Check {
    std::string name; // "tracefs", "module", "CONFIG_UPROBES" ...
    CheckStatus status = CheckStatus::Ok;
    std::string detail; // what was found
    std::string fix;    // what to do; "" when Ok
};

// Where the doctor looks; tests point these at directories of their own.
struct DoctorPaths {
    std::string proc = "/proc";
    std::string sys = "/sys";
    std::string boot = "/boot";
    std::string lib_modules = "/lib/modules";
    std::string dev = "/dev";
    std::string release; // "" = uname -r
    // what `fhook vm` last saw of KVM ("works DATE" / "fails DATE WHY");
    // "" = ${XDG_CACHE_HOME:-~/.cache}/fhook/kvm-status
    std::string kvm_status;
};

struct DoctorReport {
    std::string release;       // the kernel's
    std::string config_source; // "/boot/config-...", "/proc/config.gz" or "" (inferred)
    std::vector<Check> checks;

    // Fail anywhere: fhook will not work here.
    bool ok() const noexcept;
    std::size_t count(CheckStatus status) const noexcept;
};

DoctorReport doctor(const DoctorPaths& paths = {});

// KVM for `fhook vm` (one of doctor's checks): what /dev/kvm answers, then
// what QEMU did with it the last time fhook vm tried.
Check kvm_check(const DoctorPaths& paths);

const char* check_status_name(CheckStatus status) noexcept; // "ok", "warn", "FAIL"

} // namespace fhook
