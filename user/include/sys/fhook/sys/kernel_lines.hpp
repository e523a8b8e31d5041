// Source lines of kernel code (fhook errors --lines) from DWARF: vmlinux
// and modules' .ko files with debug info (Debian's -dbg packages under
// /usr/lib/debug, a kernel build tree, a module built out of tree), each
// used only when its build id is the running kernel's or module's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fhook {

class KernelLines {
public:
    // `paths`: files (a vmlinux, MODULE.ko) or directories holding them,
    // searched before the defaults for `release` (/usr/lib/debug/boot/
    // vmlinux-R, /boot/vmlinux-R, /lib/modules/R/build/vmlinux,
    // /usr/lib/debug/lib/modules/R, /lib/modules/R); `sys`: where the
    // running kernel's build ids are (kernel/notes, module/M/notes).
    KernelLines(std::vector<std::string> paths, std::string release, std::string sys = "/sys");
    KernelLines(KernelLines&&) noexcept;
    KernelLines& operator=(KernelLines&&) noexcept;
    ~KernelLines();

    // "fs/namei.c:3815" for the code `offset` bytes into the function
    // `symbol` of `module` ("" for vmlinux); nullopt without debug info
    // for it (or with a file of another build).
    std::optional<std::string> line(std::string_view module, std::string_view symbol,
                                    std::uint64_t offset);
    // Files passed over: their build id is not the running code's.
    const std::vector<std::string>& mismatched() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fhook
