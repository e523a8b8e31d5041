// The argument structs of fhook's ioctls, as the Session fills them.
// Internal to user/lib/core.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include <fhook_abi.h>

#include <fhook/core/device.hpp>

namespace fhook::ioctl_args {

// Zeroed, its leading `size` set (every extensible argument starts so).
template <typename T>
void zero_init(T& arg) {
    std::memset(&arg, 0, sizeof(arg));
    arg.size = sizeof(arg);
}

// A user pointer as the ABI's __u64.
inline std::uint64_t user_ptr(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p);
}

// FHOOK_IOC_PROBE_ADD, again while a module unload during it, or one not
// finished yet, made the module refuse it (EAGAIN: the addresses it looked
// up may be stale), backing off 10, 20, 40 and 80 ms.
inline int probe_add(const Device& device, fhook_probe_add& arg) {
    int ret = -1;
    for (int tries = 0; tries < 5; tries++) {
        if (tries > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10 << (tries - 1)));
        }
        ret = device.ioctl(FHOOK_IOC_PROBE_ADD, &arg);
        if (ret == 0 || errno != EAGAIN) {
            break;
        }
    }
    return ret;
}

// A FHOOK_IOC_PROBE_ADD argument of `type`, with no failing index yet.
inline fhook_probe_add probe_arg(std::uint32_t type) {
    fhook_probe_add arg;
    zero_init(arg);
    arg.type = type;
    arg.err_index = -1;
    return arg;
}

} // namespace fhook::ioctl_args
