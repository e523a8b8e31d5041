// RAII owners for file descriptors and memory mappings.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <utility>

namespace fhook {

// Move-only owner of one file descriptor; closes it in the destructor.
class UniqueFd {
public:
    UniqueFd() noexcept = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) {
            reset(other.release());
        }
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

// Move-only owner of one mmap()ed region; munmap()s it in the destructor.
class Mapping {
public:
    Mapping() noexcept = default;
    Mapping(void* addr, std::size_t length) noexcept : addr_(addr), length_(length) {}
    Mapping(Mapping&& other) noexcept
        : addr_(std::exchange(other.addr_, nullptr)), length_(std::exchange(other.length_, 0)) {}
    Mapping& operator=(Mapping&& other) noexcept {
        if (this != &other) {
            reset();
            addr_ = std::exchange(other.addr_, nullptr);
            length_ = std::exchange(other.length_, 0);
        }
        return *this;
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() { reset(); }

    // mmap(MAP_SHARED); throws fhook::Error (Runtime, sys_errno() set) on
    // failure.  `what` names the mapping in the message.
    static Mapping map_shared(int fd, std::size_t length, int prot, off_t offset, const char* what);

    void* data() const noexcept { return addr_; }
    std::size_t size() const noexcept { return length_; }
    explicit operator bool() const noexcept { return addr_ != nullptr; }
    void reset() noexcept;

private:
    void* addr_ = nullptr;
    std::size_t length_ = 0;
};

} // namespace fhook
