#include <unistd.h>

#include <cerrno>

#include <fhook/core/error.hpp>
#include <fhook/core/output.hpp>

namespace fhook {

OutputWriter::OutputWriter(int fd, std::size_t capacity) : fd_(fd), capacity_(capacity) {
    buf_.reserve(capacity + 4096);
}

OutputWriter::~OutputWriter() {
    try {
        flush();
    } catch (...) {
        // Errors are reported by an explicit flush(); here we only try.
    }
}

void OutputWriter::flush() {
    std::size_t done = 0;
    while (done < buf_.size()) {
        ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            int err = errno;
            buf_.clear();
            if (err == EPIPE) {
                throw Error(ErrorKind::OutputClosed, "output closed", err);
            }
            throw_runtime("cannot write the output: " + errno_text(err) +
                              ": check the disk space and the output file",
                          err);
        }
        done += static_cast<std::size_t>(n);
    }
    buf_.clear();
}

} // namespace fhook
