// Large buffered writer for the event stream.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fhook {

// Accumulates text and write(2)s it in large chunks.  The caller appends to
// buffer() and calls commit(), which writes once the buffer passes its
// capacity; flush() writes everything.  EPIPE throws an OutputClosed Error,
// other write errors a Runtime Error.  Does not own the fd.
class OutputWriter {
public:
    explicit OutputWriter(int fd, std::size_t capacity = std::size_t{1} << 20);
    OutputWriter(const OutputWriter&) = delete;
    OutputWriter& operator=(const OutputWriter&) = delete;
    // Best effort: flushes, ignoring errors.  Call flush() to see them.
    ~OutputWriter();

    std::string& buffer() noexcept { return buf_; }
    void append(std::string_view text) {
        buf_.append(text);
        commit();
    }
    void commit() {
        if (buf_.size() >= capacity_) {
            flush();
        }
    }
    void flush();

private:
    int fd_;
    std::size_t capacity_;
    std::string buf_;
};

} // namespace fhook
