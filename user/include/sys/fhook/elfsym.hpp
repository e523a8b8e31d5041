// Symbols of ELF files (libelf), for uprobes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fhook {

// The file offset of `symbol` (a function or object of .symtab, else
// .dynsym) in the ELF file `path`: st_value translated through the PT_LOAD
// segment that contains it, as uprobe_register() wants.  Runtime Error
// naming the file and the reason: missing or unreadable, not ELF, no such
// symbol (saying when the binary is stripped), symbol in no loadable
// segment or undefined (imported from a library).
std::uint64_t elf_symbol_offset(const std::string& path, std::string_view symbol);

} // namespace fhook
