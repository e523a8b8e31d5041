// fhook::Device: an open /dev/fhook file after a successful handshake.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fhook_abi.h>

#include <fhook/core/fd.hpp>

namespace fhook {

struct DeviceInfo {
    std::uint32_t abi_version = 0;
    std::uint64_t features = 0; // FHOOK_FEAT_*
    std::uint32_t nr_cpus = 0;
    std::uint32_t nr_sessions = 0; // open sessions, this one included
    std::uint32_t page_size = 0;
    std::uint32_t max_probes = 0;
    std::uint32_t nr_slots = 0;          // trampoline slots of each kind; 0 = not reported
    std::uint32_t khook_slots = 0;       // around slots kept for modules' hooks; 0 = not reported
    std::uint32_t around_used = 0;       // around slots taken at the handshake
    std::uint32_t direct_used = 0;       // direct slots taken at the handshake
    std::uint32_t max_user_sessions = 0; // per user without CAP_SYS_ADMIN; 0 = no limit
    std::uint32_t max_user_slots = 0;    // of each slot kind, per such user; 0 = no limit
    std::uint32_t max_user_mem_pct = 0;  // of fhook's memory budget, per such user; 0 = no limit
    std::string version;                 // module version string
};

// A hook another kernel module installed with fhook's hook API
// (include/fhook/khook.h), from fhook's ledger.
struct ModuleHook {
    std::uint64_t addr = 0;   // the hooked function's fentry site
    std::string function;     // "name" or "name [module]"
    std::string owner;        // the module that installed it
    std::uint32_t kind = 0;   // FHOOK_KHOOK_KIND_*
    std::uint64_t hits = 0;   // calls that reached it
    std::uint64_t inside = 0; // tasks inside it now
    std::uint64_t missed = 0; // handlers not run (recursion)
};

// "replace", "entry+exit", "replace+entry" ...
std::string module_hook_kind(std::uint32_t kind);

// "func func-ips pid-filter cpu-filter ring-mmap" (unknown bits: "bitN").
std::string feature_names(std::uint64_t features);

// What a Device's ioctls go to: /dev/fhook itself, or a fake kernel that
// the tests give a Device (a memfd then stands for the device's mappings).
class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    // 0, or -1 with errno set, as ioctl(2) on the device would.
    virtual int ioctl(unsigned long request, void* arg) noexcept = 0;
};

// Owns the fd of one open /dev/fhook.  Every open file is a kernel session;
// see fhook::Session for the operations on it.
class Device {
public:
    // Opens `path` (O_RDWR | O_CLOEXEC) and performs FHOOK_IOC_HANDSHAKE.
    // Throws fhook::Error: "not loaded" for ENOENT/ENODEV/ENXIO, "permission
    // denied" for EACCES/EPERM, ABI mismatch, not-an-fhook-device (ENOTTY).
    explicit Device(std::string path = FHOOK_DEVICE_PATH);
    // A device whose ioctls go to `backend` and whose mmap()s go to `fd`,
    // named `path` in messages; the handshake is the same.
    Device(std::string path, UniqueFd fd, std::shared_ptr<DeviceBackend> backend);

    const DeviceInfo& info() const noexcept { return info_; }
    const std::string& path() const noexcept { return path_; }
    int fd() const noexcept { return fd_.get(); }
    // ioctl(2) on the device (retried on EINTR): 0, or -1 with errno set.
    int ioctl(unsigned long request, void* arg) const noexcept;
    bool has(std::uint64_t feature) const noexcept { return (info_.features & feature) != 0; }
    // Throws a Runtime Error naming `what` unless `feature` is supported.
    void require(std::uint64_t feature, std::string_view what) const;

    // Every hook other modules hold with fhook's hook API; empty when the
    // module predates the API.
    std::vector<ModuleHook> module_hooks() const;
    // Why the module refused the session's last ioctl, which failed with
    // `err` (FHOOK_IOC_LAST_ERROR: its reason's text, and the field,
    // pattern or instruction it concerns); "" when the module does not
    // say.  errno is left as it was.
    std::string refusal(int err) const;

    // True when `err` (from opening the device) means "module not loaded".
    static bool is_not_loaded_errno(int err) noexcept;

private:
    void handshake();

    std::string path_;
    UniqueFd fd_;
    std::shared_ptr<DeviceBackend> backend_; // null: the fd's own ioctls
    DeviceInfo info_;
};

// The fhook module as sysfs shows it, without opening /dev/fhook.
struct ModuleStatus {
    bool loaded = false;
    std::string version;           // MODULE_VERSION, "" when not loaded
    std::uint32_t abi_version = 0; // 0: the module does not say (before 0.1.0)
};

// /sys/module/fhook under `sysfs` (tests pass a directory of their own).
ModuleStatus module_status(const std::string& sysfs = "/sys");

// The kernel's lockdown mode ("integrity", "confidentiality"), or "" when
// there is none or it cannot be read (/sys/kernel/security/lockdown).
std::string kernel_lockdown(const std::string& sysfs = "/sys");

// ioctl() retried on EINTR; returns 0 or -1 with errno set.
int xioctl(int fd, unsigned long request, void* arg) noexcept;

// The Error for a failed ioctl `what` (e.g. "adding the function probe")
// with errno `err`, carrying a cause and a fix.
// ... `why`: the module's reason (Device::refusal()), named instead of a guess.
[[noreturn]] void throw_ioctl_error(std::string_view what, int err, std::string_view why = {});

// The text of a reason of the module's (enum fhook_reason, fhook_reasons.h).
const char* reason_text(std::uint32_t reason) noexcept;

} // namespace fhook
