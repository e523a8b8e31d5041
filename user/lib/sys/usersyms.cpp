#include <cxxabi.h>
#include <elfutils/libdwfl.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include <fhook/sys/usersyms.hpp>

#include "dwfl.hpp"

namespace fhook {

std::string demangle(std::string_view name) {
    if (!name.starts_with("_Z")) {
        return std::string(name);
    }
    const std::string mangled(name);
    int status = 0;
    char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    std::string out = status == 0 && text ? text : mangled;
    std::free(text);
    return out;
}

namespace {

using dwfl_detail::DwflPtr;
using dwfl_detail::kFileCallbacks;

// A live process's mappings (dwfl_linux_proc_report).
const Dwfl_Callbacks kProcCallbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo,
                                       nullptr, &dwfl_detail::no_debuginfo_path};

// `addr` in `dwfl`: "function+0xoff (module)", false if no symbol.
bool name_in(Dwfl* dwfl, std::uint64_t addr, std::string& out) {
    Dwfl_Module* m = dwfl ? dwfl_addrmodule(dwfl, addr) : nullptr;
    if (!m) {
        return false;
    }
    GElf_Off off = 0;
    GElf_Sym sym;
    const char* name = dwfl_module_addrinfo(m, addr, &off, &sym, nullptr, nullptr, nullptr);
    if (!name) {
        return false;
    }
    const char* module =
        dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    char buf[32];
    std::snprintf(buf, sizeof(buf), "+0x%" PRIx64, static_cast<std::uint64_t>(off));
    out += demangle(name);
    out += buf;
    if (module) {
        out += " (";
        out += module;
        out += ')';
    }
    return true;
}

// Did the report find any module?  An exited process its parent has not
// reaped yet reads as an empty address space on 6.1 and 6.12 (empty maps
// and auxv), not as an error: that is no address space to go by.
bool has_modules(Dwfl* dwfl) {
    bool found = false;
    dwfl_getmodules(
        dwfl,
        [](Dwfl_Module*, void**, const char*, Dwarf_Addr, void* arg) -> int {
            *static_cast<bool*>(arg) = true;
            return DWARF_CB_ABORT;
        },
        &found, 0);
    return found;
}

} // namespace

struct UserSymbolizer::Process {
    DwflPtr live; // the mappings, read while the process lived
    bool tried = false;
    DwflPtr files; // note_mapping()'s binaries
};

UserSymbolizer::UserSymbolizer() = default;
UserSymbolizer::~UserSymbolizer() = default;

UserSymbolizer::Process& UserSymbolizer::process(std::uint32_t tgid) {
    // a fork-heavy workload: forget them all now and then rather than
    // keep every process's ELF files open
    constexpr std::size_t kMaxProcesses = 256;
    if (processes_.size() >= kMaxProcesses && !processes_.count(tgid)) {
        processes_.clear();
    }
    auto& p = processes_[tgid];
    if (!p) {
        p = std::make_unique<Process>();
    }
    if (!p->tried) {
        // once: a later exit does not lose the mappings read now
        p->tried = true;
        DwflPtr d(dwfl_begin(&kProcCallbacks));
        if (d && dwfl_linux_proc_report(d.get(), static_cast<pid_t>(tgid)) == 0 &&
            dwfl_report_end(d.get(), nullptr, nullptr) == 0 && has_modules(d.get())) {
            p->live = std::move(d);
        }
    }
    return *p;
}

void UserSymbolizer::note_mapping(std::uint32_t tgid, const std::string& path, std::uint64_t bias) {
    Process& p = process(tgid);
    if (p.live) {
        return; // the whole address space is known
    }
    if (!p.files) {
        p.files.reset(dwfl_begin(&kFileCallbacks));
        if (!p.files) {
            return;
        }
    }
    if (dwfl_addrmodule(p.files.get(), bias) == nullptr) {
        dwfl_report_begin_add(p.files.get());
        dwfl_report_elf(p.files.get(), path.c_str(), path.c_str(), -1, bias, false);
        dwfl_report_end(p.files.get(), nullptr, nullptr);
    }
}

void UserSymbolizer::append(std::uint32_t tgid, std::uint64_t addr, std::string& out) {
    Process& p = process(tgid);
    if (name_in(p.live.get(), addr, out) || name_in(p.files.get(), addr, out)) {
        return;
    }
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
    out += buf;
}

} // namespace fhook
