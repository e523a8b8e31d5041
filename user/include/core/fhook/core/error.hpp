// fhook::Error, the single exception type of libfhook.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fhook {

// What kind of failure an Error is (the CLI maps kinds to exit codes).
enum class ErrorKind {
    Invalid,      // bad input: malformed probe spec, out-of-range value
    Runtime,      // no module, permission, probe rejected, I/O
    OutputClosed, // the reader of our output went away (EPIPE)
};

// The setting of a session an Error is about, when changing it is the fix.
// The library names it in its own words; a front end may name it as its
// users set it (the CLI: the option), see Error::text().
enum class Setting {
    None,
    RingSize,       // bytes of ring per CPU
    Pids,           // the pid filter
    Cpus,           // the CPU filter
    PrototypeCheck, // a redirect's check that both functions have one prototype
};

// One-line message of the form "<cause>: <fix>", without the "fhook: error: "
// prefix (the CLI adds it).  `sys_errno()` is the errno that caused it, or 0.
// A message about a Setting is a template: "{}" stands for its name.
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message, int sys_errno = 0,
          Setting setting = Setting::None);

    ErrorKind kind() const noexcept { return kind_; }
    int sys_errno() const noexcept { return errno_; }
    Setting setting() const noexcept { return setting_; }
    // The message with the setting called `name` (what() uses the
    // library's name for it, setting_name()).
    std::string text(std::string_view name) const;

private:
    ErrorKind kind_;
    int errno_;
    Setting setting_;
    std::string template_;
};

// "ring size", "pid", "cpu", "force".
std::string_view setting_name(Setting setting) noexcept;

[[noreturn]] void throw_invalid(const std::string& message, Setting setting = Setting::None);
[[noreturn]] void throw_runtime(const std::string& message, int sys_errno = 0,
                                Setting setting = Setting::None);

// strerror(err) without the thread-safety trap.
std::string errno_text(int err);

// The libfhook / CLI version ("0.1.0").
std::string_view version();

} // namespace fhook
