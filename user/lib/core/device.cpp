#include <fcntl.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <fhook/core/arch.hpp>
#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>

namespace fhook {

namespace {

constexpr const char* kLoadHint = "the fhook module is not loaded (load it with: modprobe fhook, "
                                  "or insmod fhook.ko from a build)";
constexpr const char* kRootHint = "run as root (needs CAP_SYS_ADMIN or CAP_PERFMON)";

[[noreturn]] void throw_open_error(const std::string& path, int err) {
    if (err == ENOENT) {
        throw_runtime(path + " not found: " + kLoadHint, err);
    }
    if (Device::is_not_loaded_errno(err)) {
        throw_runtime(path + " has no driver behind it: " + kLoadHint, err);
    }
    if (err == EACCES || err == EPERM) {
        throw_runtime("permission denied opening " + path + ": " + kRootHint, err);
    }
    if (err == EUSERS) {
        throw_runtime(
            "this user already holds as many fhook sessions as the module allows " +
                std::string("(/sys/module/fhook/parameters/max_user_sessions): end one ") +
                "of them, or have root raise the limit",
            err);
    }
    throw_runtime("cannot open " + path + ": " + errno_text(err) +
                      ": check that the fhook module is loaded (fhook status)",
                  err);
}

} // namespace

std::string feature_names(std::uint64_t features) {
    static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
        {FHOOK_FEAT_FUNC, "func"},
        {FHOOK_FEAT_FUNC_IPS, "func-ips"},
        {FHOOK_FEAT_PID_FILTER, "pid-filter"},
        {FHOOK_FEAT_CPU_FILTER, "cpu-filter"},
        {FHOOK_FEAT_RING_MMAP, "ring-mmap"},
        {FHOOK_FEAT_IGNORE_SELF, "ignore-self"},
        {FHOOK_FEAT_SEQ, "seq"},
        {FHOOK_FEAT_OVERWRITE, "overwrite"},
        {FHOOK_FEAT_SNAPSHOT, "snapshot"},
        {FHOOK_FEAT_STATS_MMAP, "stats-mmap"},
        {FHOOK_FEAT_FLUSH, "flush"},
        {FHOOK_FEAT_BENCH, "bench"},
        {FHOOK_FEAT_KPROBE, "kprobe"},
        {FHOOK_FEAT_FETCH, "fetch"},
        {FHOOK_FEAT_PRED, "filter"},
        {FHOOK_FEAT_UPROBE, "uprobe"},
        {FHOOK_FEAT_STACK, "stack"},
        {FHOOK_FEAT_TRIGGER, "trigger"},
        {FHOOK_FEAT_TRACEPOINT, "tracepoint"},
        {FHOOK_FEAT_DIRECT, "direct"},
        {FHOOK_FEAT_HOOK, "hook"},
        {FHOOK_FEAT_COUNT, "count"},
        {FHOOK_FEAT_READ_TEXT, "read-text"},
        {FHOOK_FEAT_LAB, "lab"},
        {FHOOK_FEAT_LATENCY, "latency"},
        {FHOOK_FEAT_COUNT_IPS, "count-ips"},
        {FHOOK_FEAT_KHOOK, "khook"},
        {FHOOK_FEAT_GRAPH, "graph"},
        {FHOOK_FEAT_HIST, "hist"},
        {FHOOK_FEAT_HIST_STACK, "hist-stack"},
        {FHOOK_FEAT_HIST_USTACK, "hist-ustack"},
        {FHOOK_FEAT_GRAPH_ALL, "graph-all"},
        {FHOOK_FEAT_REASONS, "reasons"},
        {FHOOK_FEAT_WAKEUP, "wakeup"},
        {FHOOK_FEAT_TIMERLAT, "timerlat"},
        {FHOOK_FEAT_HWLAT, "hwlat"},
        {FHOOK_FEAT_OSNOISE, "osnoise"},
        {FHOOK_FEAT_IRQSOFF, "irqsoff"},
        {FHOOK_FEAT_PREEMPTOFF, "preemptoff"},
        {FHOOK_FEAT_WAKEUP_HIST, "wakeup-hist"},
        {FHOOK_FEAT_WAKEUP_FUNCTION, "wakeup-function"},
        {FHOOK_FEAT_ERRORS, "errors"},
        {FHOOK_FEAT_ERRORS_TYPES, "errors-types"},
        {FHOOK_FEAT_ERRORS_FRAMES, "errors-frames"},
        {FHOOK_FEAT_SYMBOLS, "symbols"},
    };
    // every bit fhook_abi.h defines has a name
    static_assert(sizeof(kNames) / sizeof(kNames[0]) == 45);
    std::string out;
    std::uint64_t known = 0;
    for (const auto& [bit, name] : kNames) {
        known |= bit;
        if (features & bit) {
            out += out.empty() ? "" : " ";
            out += name;
        }
    }
    for (int bit = 0; bit < 64; bit++) {
        std::uint64_t mask = std::uint64_t{1} << bit;
        if ((features & mask) && !(known & mask)) {
            out += out.empty() ? "" : " ";
            out += "bit" + std::to_string(bit);
        }
    }
    return out;
}

ModuleStatus module_status(const std::string& sysfs) {
    const std::string dir = sysfs + "/module/fhook";
    ModuleStatus st;
    std::error_code ec;
    st.loaded = std::filesystem::is_directory(dir, ec);
    std::ifstream version(dir + "/version");
    std::getline(version, st.version);
    std::ifstream abi(dir + "/parameters/abi_version");
    if (!(abi >> st.abi_version)) {
        st.abi_version = 0;
    }
    return st;
}

std::string kernel_lockdown(const std::string& sysfs) {
    // "none integrity [confidentiality]": the mode in brackets
    std::ifstream in(sysfs + "/kernel/security/lockdown");
    std::string line;
    std::getline(in, line);
    const auto open = line.find('[');
    const auto close = line.find(']', open);
    if (open == std::string::npos || close == std::string::npos) {
        return {};
    }
    std::string mode = line.substr(open + 1, close - open - 1);
    return mode == "none" ? std::string{} : mode;
}

int xioctl(int fd, unsigned long request, void* arg) noexcept {
    int ret;
    do {
        ret = ::ioctl(fd, request, arg);
    } while (ret < 0 && errno == EINTR);
    return ret;
}

const char* reason_text(std::uint32_t reason) noexcept {
#define FHOOK_REASON(name, text) text,
    static const char* const texts[] = {
#include <fhook_reasons.h>
    };
#undef FHOOK_REASON
    static_assert(std::size(texts) == FHOOK_R_MAX);
    return reason < FHOOK_R_MAX ? texts[reason] : "a reason this fhook does not know";
}

std::string Device::refusal(int err) const {
    const int saved = errno;
    fhook_last_error le{};
    le.size = sizeof(le);
    std::string why;
    if (has(FHOOK_FEAT_REASONS) && ioctl(FHOOK_IOC_LAST_ERROR, &le) == 0 &&
        le.reason != FHOOK_R_NONE && le.err == -err) {
        why = reason_text(le.reason);
        if (le.index >= 0) {
            why += " (index " + std::to_string(le.index) + ")";
        }
    }
    errno = saved;
    return why;
}

void throw_ioctl_error(std::string_view what, int err, std::string_view why) {
    std::string cause(what);
    if (!why.empty()) {
        // the module said why: that, not a guess from the errno
        throw_runtime(cause + ": refused by fhook.ko: " + std::string(why), err);
    }
    switch (err) {
    case EPERM:
    case EACCES:
        if (const std::string mode = kernel_lockdown(); !mode.empty()) {
            throw_runtime(
                cause + ": refused by kernel lockdown (" + mode + "): see kernel_lockdown(7)", err);
        }
        throw_runtime(cause + ": permission denied: " + kRootHint, err);
    case ENOTTY:
        throw_runtime(cause + ": not supported by the loaded fhook.ko: load the fhook.ko built " +
                          "together with this fhook",
                      err);
    case EINVAL:
        throw_runtime(cause + ": rejected by fhook.ko (invalid argument): check that fhook and " +
                          "fhook.ko come from the same build (fhook status)",
                      err);
    case ENOMEM:
        throw_runtime(cause + ": out of kernel memory: use a smaller {} or fewer functions", err,
                      Setting::RingSize);
    case EBUSY:
        throw_runtime(cause + ": device or resource busy: the session is already running, or " +
                          "another ftrace user holds the functions; retry later",
                      err);
    case ENOSPC:
        throw_runtime(cause + ": limit reached: use fewer probes, patterns or pids", err);
    case E2BIG:
        throw_runtime(cause + ": argument too large: use fewer patterns, functions or pids", err);
    case EMSGSIZE:
        throw_runtime(cause + ": a probe's records can be larger than a ring: use larger rings, " +
                          "or shorter strings and no stacks",
                      err);
    case EAGAIN:
        throw_runtime(cause +
                          ": a kernel module was unloaded while it was being set up, or is being " +
                          "unloaded: try again",
                      err);
    case EIDRM:
        throw_runtime(cause + ": a module that a hook or direct probe was on has been unloaded: " +
                          "that probe is gone (see dmesg); add it again",
                      err);
    case ENODEV:
        throw_runtime(cause + ": the fhook module is going away: load it again (insmod fhook.ko)",
                      err);
    case EDQUOT:
        throw_runtime(cause + ": this user's sessions hold as much of fhook's memory as the " +
                          "module allows a user without CAP_SYS_ADMIN " +
                          "(/sys/module/fhook/parameters/max_user_mem_pct): use a smaller {}, " +
                          "fewer functions, or end another session",
                      err, Setting::RingSize);
    default:
        throw_runtime(
            cause + ": " + errno_text(err) + ": see the kernel log (dmesg) for the reason", err);
    }
}

bool Device::is_not_loaded_errno(int err) noexcept {
    return err == ENOENT || err == ENODEV || err == ENXIO;
}

Device::Device(std::string path) : path_(std::move(path)) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        throw_open_error(path_, errno);
    }
    fd_.reset(fd);
    handshake();
}

Device::Device(std::string path, UniqueFd fd, std::shared_ptr<DeviceBackend> backend)
    : path_(std::move(path)), fd_(std::move(fd)), backend_(std::move(backend)) {
    handshake();
}

int Device::ioctl(unsigned long request, void* arg) const noexcept {
    return backend_ ? backend_->ioctl(request, arg) : xioctl(fd_.get(), request, arg);
}

void Device::handshake() {
    fhook_handshake hs;
    std::memset(&hs, 0, sizeof(hs));
    hs.size = sizeof(hs);
    hs.abi_version = FHOOK_ABI_VERSION;
    if (ioctl(FHOOK_IOC_HANDSHAKE, &hs) < 0) {
        int err = errno;
        if (err == ENOTTY) {
            throw_runtime(path_ + " is not an fhook device (handshake refused): check the " +
                              "device path, the fhook module provides " + FHOOK_DEVICE_PATH,
                          err);
        }
        if (err == EPROTO || err == EPROTONOSUPPORT) {
            throw_runtime("ABI mismatch: fhook.ko refused ABI " +
                              std::to_string(FHOOK_ABI_VERSION) +
                              ": use the fhook binary built together with the loaded fhook.ko",
                          err);
        }
        throw_ioctl_error("handshake with " + path_, err);
    }
    if (hs.abi_version != FHOOK_ABI_VERSION) {
        throw_runtime("ABI mismatch: fhook.ko speaks ABI " + std::to_string(hs.abi_version) +
                          ", this fhook speaks ABI " + std::to_string(FHOOK_ABI_VERSION) +
                          ": use the fhook binary built together with the loaded fhook.ko",
                      EPROTO);
    }
    info_.abi_version = hs.abi_version;
    info_.features = hs.features;
    info_.nr_cpus = hs.nr_cpus;
    info_.nr_sessions = hs.nr_sessions;
    info_.page_size = hs.page_size;
    info_.max_probes = hs.max_probes;
    info_.nr_slots = hs.nr_slots;
    info_.khook_slots = hs.khook_slots;
    info_.around_used = hs.around_used;
    info_.direct_used = hs.direct_used;
    info_.max_user_sessions = hs.max_user_sessions;
    info_.max_user_slots = hs.max_user_slots;
    info_.max_user_mem_pct = hs.max_user_mem_pct;
    info_.version.assign(hs.version, ::strnlen(hs.version, sizeof(hs.version)));
}

void Device::require(std::uint64_t feature, std::string_view what) const {
    if (!has(feature) && (feature & arch_missing_features(host_arch(), FtraceHas{})) != 0) {
        throw_runtime(std::string(what) + " are not available on this " + arch_name(host_arch()) +
                          " kernel: " + arch_missing_why(feature),
                      EOPNOTSUPP);
    }
    if (!has(feature)) {
        throw_runtime(std::string(what) + " is not supported by the loaded fhook.ko (features: " +
                          feature_names(info_.features) +
                          "): load the fhook.ko built together with this fhook",
                      EOPNOTSUPP);
    }
}

std::string module_hook_kind(std::uint32_t kind) {
    std::string out;
    for (const auto& [bit, name] :
         {std::pair{FHOOK_KHOOK_KIND_REPLACE, "replace"},
          std::pair{FHOOK_KHOOK_KIND_ENTRY, "entry"}, std::pair{FHOOK_KHOOK_KIND_EXIT, "exit"}}) {
        if ((kind & bit) != 0) {
            out += (out.empty() ? "" : "+") + std::string(name);
        }
    }
    return out.empty() ? "none" : out;
}

std::vector<ModuleHook> Device::module_hooks() const {
    if (!has(FHOOK_FEAT_KHOOK)) {
        return {};
    }
    std::vector<fhook_khook_info> entries(16);
    for (;;) {
        fhook_khooks arg;
        std::memset(&arg, 0, sizeof(arg));
        arg.size = sizeof(arg);
        arg.entry_size = sizeof(fhook_khook_info);
        arg.nr = static_cast<std::uint32_t>(entries.size());
        arg.entries = reinterpret_cast<std::uintptr_t>(entries.data());
        if (ioctl(FHOOK_IOC_KHOOKS, &arg) != 0) {
            throw_ioctl_error("reading the ledger of module hooks", errno);
        }
        if (arg.nr > entries.size()) {
            entries.resize(arg.nr); // installed meanwhile: read again
            continue;
        }
        std::vector<ModuleHook> out;
        for (std::uint32_t i = 0; i < arg.nr; i++) {
            const fhook_khook_info& e = entries[i];
            out.push_back({e.addr, std::string(e.func, strnlen(e.func, sizeof(e.func))),
                           std::string(e.owner, strnlen(e.owner, sizeof(e.owner))), e.kind, e.hits,
                           e.inside, e.missed});
        }
        return out;
    }
}

} // namespace fhook
