// libdwfl pieces the sys layer's DWARF readers share (usersyms.cpp,
// kernel_lines.cpp): the session handle, and the callbacks for ELF files
// reported by hand.  Internal to libfhook.
#pragma once

#include <elfutils/libdwfl.h>

#include <memory>

namespace fhook::dwfl_detail {

struct DwflDeleter {
    void operator()(Dwfl* d) const { dwfl_end(d); }
};
using DwflPtr = std::unique_ptr<Dwfl, DwflDeleter>;

// (no separate debuginfo search path: what the files hold)
inline char* no_debuginfo_path = nullptr;

// ELF files reported by hand (dwfl_report_elf, dwfl_report_offline)
inline const Dwfl_Callbacks kFileCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                              dwfl_offline_section_address, &no_debuginfo_path};

} // namespace fhook::dwfl_detail
