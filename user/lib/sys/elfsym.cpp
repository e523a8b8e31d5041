#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>

#include <fhook/elfsym.hpp>
#include <fhook/error.hpp>
#include <fhook/fd.hpp>

namespace fhook {

namespace {

struct ElfCloser {
    void operator()(Elf* e) const noexcept { elf_end(e); }
};

struct Found {
    GElf_Sym sym;
    bool defined;
};

// The symbol called `name` in the symbol table `scn`, if any.
std::optional<Found> find_in(Elf* elf, Elf_Scn* scn, std::string_view name) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_entsize == 0) {
        return std::nullopt;
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) {
        return std::nullopt;
    }
    const std::size_t n = shdr.sh_size / shdr.sh_entsize;
    std::optional<Found> undefined;
    for (std::size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym)) {
            continue;
        }
        const char* s = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (!s || name != s) {
            continue;
        }
        if (sym.st_shndx == SHN_UNDEF) {
            undefined = Found{sym, false};
            continue;
        }
        return Found{sym, true};
    }
    return undefined;
}

} // namespace

std::uint64_t elf_symbol_offset(const std::string& path, std::string_view symbol) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        const int err = errno;
        throw_runtime("cannot open '" + path + "': " + errno_text(err) +
                          ": give the path of the binary to probe",
                      err);
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        throw_runtime(std::string("libelf: ") + elf_errmsg(-1));
    }
    std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd.get(), ELF_C_READ, nullptr));
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
        throw_runtime("'" + path + "' is not an ELF file: a uprobe needs a binary or library");
    }
    std::optional<Found> found;
    bool has_symtab = false;
    for (auto type : {SHT_SYMTAB, SHT_DYNSYM}) {
        for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn;
             scn = elf_nextscn(elf.get(), scn)) {
            GElf_Shdr shdr;
            if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != static_cast<GElf_Word>(type)) {
                continue;
            }
            has_symtab = has_symtab || type == SHT_SYMTAB;
            auto f = find_in(elf.get(), scn, symbol);
            if (f && (!found || (!found->defined && f->defined))) {
                found = f;
            }
        }
        if (found && found->defined) {
            break;
        }
    }
    if (!found) {
        throw_runtime("'" + path + "' has no symbol '" + std::string(symbol) + "'" +
                      (has_symtab ? ""
                                  : " (the binary is stripped: only .dynsym was searched; "
                                    "give a file offset, PATH:0xOFFSET, or an unstripped build)"));
    }
    if (!found->defined) {
        throw_runtime("'" + std::string(symbol) + "' is not defined in '" + path +
                      "' (it is imported from a library): probe the library that defines it");
    }
    // st_value -> file offset through the PT_LOAD that holds it
    std::size_t nph = 0;
    if (elf_getphdrnum(elf.get(), &nph) != 0) {
        throw_runtime("'" + path + "' has no program headers: not a loadable binary");
    }
    for (std::size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf.get(), static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) {
            continue;
        }
        const std::uint64_t v = found->sym.st_value;
        if (v >= ph.p_vaddr && v < ph.p_vaddr + ph.p_filesz) {
            return v - ph.p_vaddr + ph.p_offset;
        }
    }
    throw_runtime("symbol '" + std::string(symbol) + "' of '" + path +
                  "' is in no loadable segment of the file");
}

} // namespace fhook
