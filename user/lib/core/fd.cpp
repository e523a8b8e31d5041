#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>

namespace fhook {

void UniqueFd::reset(int fd) noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
    }
    fd_ = fd;
}

Mapping Mapping::map_shared(int fd, std::size_t length, int prot, off_t offset, const char* what) {
    void* addr = ::mmap(nullptr, length, prot, MAP_SHARED, fd, offset);
    if (addr == MAP_FAILED) {
        int err = errno;
        throw_runtime(std::string("cannot map ") + what + ": " + errno_text(err) +
                          ": check that fhook and fhook.ko come from the same build",
                      err);
    }
    return Mapping(addr, length);
}

void Mapping::reset() noexcept {
    if (addr_ != nullptr) {
        ::munmap(addr_, length_);
    }
    addr_ = nullptr;
    length_ = 0;
}

} // namespace fhook
