// fhook::Error, the single exception type of libfhook.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fhook {

// What kind of failure an Error is; the CLI maps it to an exit code in one
// place (main): Usage -> 2, Runtime -> 1, OutputClosed -> quiet exit 0.
enum class ErrorKind {
    Usage,        // bad option, malformed probe spec, out-of-range value
    Runtime,      // no module, permission, probe rejected, I/O
    OutputClosed, // the reader of our output went away (EPIPE)
};

// One-line message of the form "<cause>: <fix>", without the "fhook: error: "
// prefix (the CLI adds it).  `sys_errno()` is the errno that caused it, or 0.
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message, int sys_errno = 0);

    ErrorKind kind() const noexcept { return kind_; }
    int sys_errno() const noexcept { return errno_; }
    int exit_code() const noexcept;

private:
    ErrorKind kind_;
    int errno_;
};

[[noreturn]] void throw_usage(const std::string& message);
[[noreturn]] void throw_runtime(const std::string& message, int sys_errno = 0);

// strerror(err) without the thread-safety trap.
std::string errno_text(int err);

// The libfhook / CLI version ("0.1.0").
std::string_view version();

} // namespace fhook
