// Symbols of ELF files (libelf), for uprobes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fhook {

// The file offset of `symbol` (a function or object of .symtab, else
// .dynsym) in the ELF file `path`: st_value translated through the PT_LOAD
// segment that contains it, as uprobe_register() wants.  Runtime Error
// naming the file and the reason: missing or unreadable, not ELF, no such
// symbol (saying when the binary is stripped), symbol in no loadable
// segment or undefined (imported from a library).
// A C++ function may be named as people write it ("ns::Class::method" or
// with its parameters, "ns::Class::method(int)"), matched against the
// demangled names when no symbol has that exact name; an Invalid Error
// lists the overloads a name without parameters leaves open.
std::uint64_t elf_symbol_offset(const std::string& path, std::string_view symbol);

// The virtual address the file offset `offset` of the ELF file `path` is
// loaded at (before any load bias), nullopt if no PT_LOAD holds it or the
// file cannot be read.
std::optional<std::uint64_t> elf_offset_vaddr(const std::string& path, std::uint64_t offset);

} // namespace fhook
