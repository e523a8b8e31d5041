// The argument structs of fhook's ioctls, as the Session fills them.
// Internal to user/lib/core.
#pragma once

#include <cstdint>
#include <cstring>

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

} // namespace fhook::ioctl_args
