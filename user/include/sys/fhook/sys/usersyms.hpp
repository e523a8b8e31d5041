// User-space addresses to names, for uprobes' user stacks: libdw's dwfl
// over the process's mappings while it lives (/proc/PID/maps), else over
// the binary a uprobe hit told us it had mapped; C++ names demangled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

struct Dwfl;

namespace fhook {

// `name` demangled when it is a mangled C++ name ("_ZN2ns1fEv" ->
// "ns::f()"), else as given.
std::string demangle(std::string_view name);

class UserSymbolizer {
public:
    UserSymbolizer();
    ~UserSymbolizer();
    UserSymbolizer(const UserSymbolizer&) = delete;
    UserSymbolizer& operator=(const UserSymbolizer&) = delete;

    // Process `tgid` has the ELF file `path` loaded at `bias` (address =
    // bias + the file's virtual address): used when the process is gone.
    void note_mapping(std::uint32_t tgid, const std::string& path, std::uint64_t bias);
    // Reads the mappings of process `tgid` now (once), for when it is gone.
    void remember(std::uint32_t tgid) { process(tgid); }
    // Appends "function+0xoff (binary)" for `addr` in process `tgid`, or
    // "0x..." when no symbol is known.
    void append(std::uint32_t tgid, std::uint64_t addr, std::string& out);

private:
    struct Process;
    Process& process(std::uint32_t tgid);
    std::map<std::uint32_t, std::unique_ptr<Process>> processes_;
};

} // namespace fhook
