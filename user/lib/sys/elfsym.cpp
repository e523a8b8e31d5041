#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/sys/elfsym.hpp>
#include <fhook/sys/usersyms.hpp>

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

// The defined C++ symbols of `scn` whose demangled name is `name`, or is
// `name` followed by a parameter list ("ns::f" matches "ns::f(int)").
void find_demangled(Elf* elf, Elf_Scn* scn, std::string_view name,
                    std::vector<std::pair<std::string, GElf_Sym>>& out) {
    GElf_Shdr shdr;
    Elf_Data* data =
        gelf_getshdr(scn, &shdr) && shdr.sh_entsize ? elf_getdata(scn, nullptr) : nullptr;
    if (!data) {
        return;
    }
    for (std::size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) {
            continue;
        }
        const char* s = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (!s || s[0] != '_' || s[1] != 'Z') {
            continue;
        }
        const std::string d = demangle(s);
        // "ns::f(int, long)" may be given without its spaces (one argument)
        auto bare = [](std::string_view t) {
            std::string out;
            for (char c : t) {
                if (c != ' ') {
                    out += c;
                }
            }
            return out;
        };
        if (d == name || bare(d) == bare(name) ||
            (d.starts_with(name) && d.size() > name.size() && d[name.size()] == '(')) {
            out.emplace_back(d, sym);
        }
    }
}

struct OpenElf {
    UniqueFd fd;
    std::unique_ptr<Elf, ElfCloser> elf;
};

OpenElf open_elf(const std::string& path) {
    OpenElf e;
    e.fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!e.fd) {
        const int err = errno;
        throw_runtime("cannot open '" + path + "': " + errno_text(err) +
                          ": give the path of the binary to probe",
                      err);
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        throw_runtime(std::string("libelf: ") + elf_errmsg(-1));
    }
    e.elf.reset(elf_begin(e.fd.get(), ELF_C_READ, nullptr));
    if (!e.elf || elf_kind(e.elf.get()) != ELF_K_ELF) {
        throw_runtime("'" + path + "' is not an ELF file: a uprobe needs a binary or library");
    }
    return e;
}

} // namespace

std::optional<std::uint64_t> elf_offset_vaddr(const std::string& path, std::uint64_t offset) {
    try {
        const OpenElf e = open_elf(path);
        std::size_t nph = 0;
        if (elf_getphdrnum(e.elf.get(), &nph) != 0) {
            return std::nullopt;
        }
        for (std::size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e.elf.get(), static_cast<int>(i), &ph) && ph.p_type == PT_LOAD &&
                offset >= ph.p_offset && offset < ph.p_offset + ph.p_filesz) {
                return offset - ph.p_offset + ph.p_vaddr;
            }
        }
    } catch (const Error&) {
        // the binary is gone or not ELF: no name for its addresses
    }
    return std::nullopt;
}

std::uint64_t elf_symbol_offset(const std::string& path, std::string_view symbol) {
    const OpenElf e = open_elf(path);
    Elf* const elf_handle = e.elf.get();
    std::optional<Found> found;
    bool has_symtab = false;
    for (auto type : {SHT_SYMTAB, SHT_DYNSYM}) {
        for (Elf_Scn* scn = elf_nextscn(elf_handle, nullptr); scn;
             scn = elf_nextscn(elf_handle, scn)) {
            GElf_Shdr shdr;
            if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != static_cast<GElf_Word>(type)) {
                continue;
            }
            has_symtab = has_symtab || type == SHT_SYMTAB;
            auto f = find_in(elf_handle, scn, symbol);
            if (f && (!found || (!found->defined && f->defined))) {
                found = f;
            }
        }
        if (found && found->defined) {
            break;
        }
    }
    if (!found) {
        // a C++ name as people write it: demangled, parameters optional
        std::vector<std::pair<std::string, GElf_Sym>> matches;
        for (Elf_Scn* scn = elf_nextscn(elf_handle, nullptr); scn;
             scn = elf_nextscn(elf_handle, scn)) {
            GElf_Shdr shdr;
            if (gelf_getshdr(scn, &shdr) &&
                (shdr.sh_type == SHT_SYMTAB || (!has_symtab && shdr.sh_type == SHT_DYNSYM))) {
                find_demangled(elf_handle, scn, symbol, matches);
            }
        }
        std::set<std::string> names;
        for (const auto& m : matches) {
            names.insert(m.first);
        }
        if (names.size() > 1) {
            std::string list;
            for (const auto& n : names) {
                list += (list.empty() ? "" : "; ") + n;
            }
            throw_invalid("'" + std::string(symbol) + "' names " + std::to_string(names.size()) +
                          " functions of '" + path + "': " + list + ": give the whole signature");
        }
        if (!matches.empty()) {
            found = Found{matches.front().second, true};
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
    if (elf_getphdrnum(elf_handle, &nph) != 0) {
        throw_runtime("'" + path + "' has no program headers: not a loadable binary");
    }
    for (std::size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf_handle, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) {
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
