#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <fhook/core/fd.hpp>
#include <fhook/sys/doctor.hpp>

namespace fhook {

namespace {

std::string default_kvm_status() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const std::string base = xdg && *xdg ? xdg : std::string(home ? home : "/tmp") + "/.cache";
    return base + "/fhook/kvm-status";
}

} // namespace

// KVM for `fhook vm`: what the device itself answers (a VM and a vCPU
// created), then what QEMU did with it the last time fhook vm tried (a
// nested KVM can create both and still fail QEMU: a MSR it cannot set, an
// instruction it cannot emulate, a guest that never runs)
Check kvm_check(const DoctorPaths& paths) {
    Check c{"KVM (fhook vm)", CheckStatus::Ok, "", ""};
    const std::string dev = paths.dev + "/kvm";
    const std::string tcg = "fhook vm boots its guests under TCG (a few times slower)";
    if (::access(dev.c_str(), F_OK) != 0) {
        c.detail = "no " + dev + ": " + tcg;
        return c;
    }
    c.status = CheckStatus::Warn;
    const UniqueFd kvm(::open(dev.c_str(), O_RDWR | O_CLOEXEC));
    if (!kvm) {
        c.detail = dev + ": " + std::strerror(errno) + ": " + tcg;
        c.fix = "join group kvm (or run as root)";
        return c;
    }
    const int api = ::ioctl(kvm.get(), KVM_GET_API_VERSION, 0);
    const UniqueFd vm(api == KVM_API_VERSION ? ::ioctl(kvm.get(), KVM_CREATE_VM, 0) : -1);
    const UniqueFd vcpu(vm ? ::ioctl(vm.get(), KVM_CREATE_VCPU, 0) : -1);
    if (!vcpu) {
        c.detail = dev + " opens, but " +
                   (api != KVM_API_VERSION ? std::string("KVM_GET_API_VERSION")
                    : !vm                  ? std::string("KVM_CREATE_VM")
                                           : std::string("KVM_CREATE_VCPU")) +
                   " failed (" + std::strerror(errno) + "): " + tcg;
        c.fix = "check virtualisation in the firmware, or nested virtualisation of this VM";
        return c;
    }
    const std::string status_path =
        paths.kvm_status.empty() ? default_kvm_status() : paths.kvm_status;
    std::string verdict, when, why;
    {
        std::ifstream in(status_path);
        in >> verdict >> when;
        std::getline(in >> std::ws, why);
    }
    if (verdict == "fails") {
        c.detail = "creates VMs, but QEMU could not boot a guest under it (" + when + "): " + why +
                   "; " + tcg;
        c.fix = "a nested or cloud KVM: guests boot under TCG instead (asking for TCG skips the "
                "attempt)";
    } else if (verdict == "works") {
        c.status = CheckStatus::Ok;
        c.detail = "a fhook vm guest booted under KVM (" + when + ")";
    } else {
        c.status = CheckStatus::Ok;
        c.detail = "creates a VM and a vCPU; no fhook vm guest has booted under it yet "
                   "(fhook vm falls back to TCG if it fails)";
    }
    return c;
}

} // namespace fhook
