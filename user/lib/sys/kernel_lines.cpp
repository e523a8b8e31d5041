#include <elfutils/libdwfl.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <unordered_map>

#include <fhook/sys/kernel_lines.hpp>

#include "dwfl.hpp"

namespace fhook {

namespace {

namespace fs = std::filesystem;

// "ext4" for ext4.ko, ext4.ko.xz; "nf_nat" for nf-nat.ko (as the kernel
// names modules); "" for other files
std::string module_of(const fs::path& file) {
    std::string name = file.filename().string();
    for (const char* ext : {".ko", ".ko.xz", ".ko.zst", ".ko.gz"}) {
        if (name.ends_with(ext)) {
            name.resize(name.size() - std::char_traits<char>::length(ext));
            std::replace(name.begin(), name.end(), '-', '_');
            return name;
        }
    }
    return "";
}

// The GNU build id in ELF notes as the kernel shows them (a raw note
// section: namesz, descsz, type, name, desc, each padded to 4 bytes)
std::string build_id_in_notes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string notes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto pad = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
    for (std::size_t at = 0; at + 12 <= notes.size();) {
        std::uint32_t h[3];
        notes.copy(reinterpret_cast<char*>(h), sizeof(h), at);
        const std::size_t name = at + 12, desc = name + pad(h[0]);
        if (desc + h[1] > notes.size()) {
            break;
        }
        if (h[2] == 3 && h[0] == 4 && notes.compare(name, 4, std::string("GNU\0", 4)) == 0) {
            return notes.substr(desc, h[1]); // NT_GNU_BUILD_ID
        }
        at = desc + pad(h[1]);
    }
    return "";
}

} // namespace

struct KernelLines::Impl {
    std::vector<std::string> paths; // the user's, then the defaults
    std::string release;
    std::string sys;
    // module ("" vmlinux) -> its candidate files, in the paths' order
    std::map<std::string, std::vector<std::string>> found;
    bool scanned = false;
    dwfl_detail::DwflPtr dwfl{dwfl_begin(&dwfl_detail::kFileCallbacks)};
    // module -> its Dwfl_Module (null: none usable) and function addresses
    // (0: a name several functions have, which names no one line)
    struct Loaded {
        Dwfl_Module* mod = nullptr;
        std::unordered_map<std::string, Dwarf_Addr> functions;
    };
    std::map<std::string, Loaded> loaded;
    std::vector<std::string> mismatched;

    // a kernel image: vmlinux or vmlinux-R (not vmlinux.o, vmlinux-gdb.py)
    bool is_vmlinux(const std::string& name) const {
        return name == "vmlinux" || name == "vmlinux-" + release;
    }

    // every vmlinux and .ko under the paths (a directory's vmlinux at its
    // top only: a build tree has others)
    void scan() {
        scanned = true;
        auto note = [this](const fs::path& file, bool top) {
            const std::string name = file.filename().string();
            const bool vmlinux = top && is_vmlinux(name);
            const std::string module = vmlinux ? "" : module_of(file);
            if (vmlinux || !module.empty()) {
                found[module].push_back(file.string());
            }
        };
        for (const std::string& p : paths) {
            std::error_code ec;
            if (fs::is_regular_file(p, ec)) {
                note(p, true);
                continue;
            }
            if (!fs::is_directory(p, ec)) {
                continue;
            }
            for (fs::recursive_directory_iterator
                     it(p, fs::directory_options::skip_permission_denied, ec),
                 end;
                 !ec && it != end; it.increment(ec)) {
                std::error_code ignored; // (a broken link: passed over)
                if (it->is_regular_file(ignored)) {
                    note(it->path(), it.depth() == 0);
                }
            }
        }
    }

    // the running code's build id: vmlinux's, or the loaded module's ("":
    // not to be read)
    std::string running_build_id(const std::string& module) const {
        return build_id_in_notes(module.empty()
                                     ? sys + "/kernel/notes"
                                     : sys + "/module/" + module + "/notes/.note.gnu.build-id");
    }

    // `file` as `module`'s debug info, if it is the running code's build
    Dwfl_Module* report(const std::string& module, const std::string& file) {
        dwfl_report_begin_add(dwfl.get());
        Dwfl_Module* mod = dwfl_report_offline(
            dwfl.get(), (module.empty() ? "vmlinux" : module).c_str(), file.c_str(), -1);
        dwfl_report_end(dwfl.get(), nullptr, nullptr);
        if (!mod) {
            return nullptr; // (no ELF file)
        }
        const unsigned char* bits = nullptr;
        GElf_Addr vaddr = 0;
        const int n = dwfl_module_build_id(mod, &bits, &vaddr);
        const std::string running = running_build_id(module);
        if (!running.empty() &&
            (n <= 0 || running != std::string(reinterpret_cast<const char*>(bits), n))) {
            mismatched.push_back(file);
            return nullptr;
        }
        return mod;
    }

    Loaded& load(const std::string& module) {
        auto [it, added] = loaded.try_emplace(module);
        if (!added || !dwfl) {
            return it->second;
        }
        if (!scanned) {
            scan();
        }
        for (const std::string& file : found[module]) {
            it->second.mod = report(module, file);
            if (it->second.mod) {
                break;
            }
        }
        Dwfl_Module* mod = it->second.mod;
        const int nsyms = mod ? dwfl_module_getsymtab(mod) : 0;
        for (int i = 1; i < nsyms; i++) {
            GElf_Sym sym;
            GElf_Addr addr = 0;
            const char* name =
                dwfl_module_getsym_info(mod, i, &sym, &addr, nullptr, nullptr, nullptr);
            if (name && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
                auto [f, first] = it->second.functions.try_emplace(name, addr);
                if (!first && f->second != addr) {
                    f->second = 0;
                }
            }
        }
        return it->second;
    }
};

KernelLines::KernelLines(std::vector<std::string> paths, std::string release, std::string sys)
    : impl_(std::make_unique<Impl>()) {
    impl_->paths = std::move(paths);
    impl_->release = release;
    for (const std::string& p :
         {"/usr/lib/debug/boot/vmlinux-" + release, "/boot/vmlinux-" + release,
          "/lib/modules/" + release + "/build/vmlinux", "/usr/lib/debug/lib/modules/" + release,
          "/lib/modules/" + release}) {
        impl_->paths.push_back(p);
    }
    impl_->sys = std::move(sys);
}

KernelLines::KernelLines(KernelLines&&) noexcept = default;
KernelLines& KernelLines::operator=(KernelLines&&) noexcept = default;
KernelLines::~KernelLines() = default;

std::optional<std::string> KernelLines::line(std::string_view module, std::string_view symbol,
                                             std::uint64_t offset) {
    Impl::Loaded& l = impl_->load(std::string(module));
    auto f = l.functions.find(std::string(symbol));
    if (!l.mod || f == l.functions.end() || !f->second) {
        return std::nullopt;
    }
    // A function's first instructions may have no row of their own: arm64's
    // patch site (-fpatchable-function-entry) takes the previous row, the
    // function before's last line.  Its own first row is a few bytes on.
    const GElf_Addr start = f->second;
    for (GElf_Addr at = start + offset; at <= start + offset + 16; at += 4) {
        Dwfl_Line* line = dwfl_module_getsrc(l.mod, at);
        Dwarf_Addr row = 0;
        int lineno = 0;
        const char* file =
            line ? dwfl_lineinfo(line, &row, &lineno, nullptr, nullptr, nullptr) : nullptr;
        if (!file || lineno <= 0) {
            return std::nullopt;
        }
        if (row >= start) {
            return std::string(file) + ":" + std::to_string(lineno);
        }
    }
    return std::nullopt;
}

const std::vector<std::string>& KernelLines::mismatched() const {
    return impl_->mismatched;
}

} // namespace fhook
