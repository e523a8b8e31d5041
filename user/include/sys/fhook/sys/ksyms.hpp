// Kernel text symbols from /proc/kallsyms.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace fhook {

struct SymbolRef {
    std::string_view name;
    std::uint64_t offset = 0;
    std::string_view module; // empty for vmlinux
};

class Ksyms {
public:
    // Offsets beyond this are not attributed to the preceding symbol.
    static constexpr std::uint64_t kMaxOffset = 1 << 20;

    Ksyms() = default;
    // Throws a Runtime Error when the file cannot be read.
    static Ksyms load(const std::string& path = "/proc/kallsyms");
    // The error load() would throw for a file it cannot open, at once.
    static void check_readable(const std::string& path);
    // Parses "addr type name [module]" lines; keeps text symbols (t T w W).
    static Ksyms parse(std::istream& in);
    static Ksyms parse(std::string_view text);

    // The symbol of one address as the kernel names it (%pS): size 0 when
    // no symbol contains it.
    struct Resolved {
        std::uint64_t offset = 0;
        std::uint64_t size = 0;
        std::string name;
        std::string module; // empty for vmlinux
    };
    // Names the addresses it is given, in order (the module's
    // FHOOK_IOC_SYMBOLS); throws an Error when it cannot.
    using Resolver = std::function<std::vector<Resolved>(std::span<const std::uint64_t>)>;
    // A table without /proc/kallsyms: lookup(), size_of() and what is built
    // on them (append_offset(), name_of(), append_name()) ask `resolve` for
    // an address no symbol asked before contains, and remember each
    // symbol's range; the name-to-address queries see an empty table.
    static Ksyms on_demand(Resolver resolve);

    // The symbol containing `addr` (greatest start <= addr; among aliases the
    // first one listed), or nullopt.
    std::optional<SymbolRef> lookup(std::uint64_t addr) const;
    // Size of the symbol containing `addr` the way kallsyms computes it:
    // distance to the next symbol at a higher address (0 if none).
    std::uint64_t size_of(std::uint64_t addr) const;
    // "name+0xoff/0xsize [module]" like the kernel's %pS, else "0x%lx".
    void append_offset(std::uint64_t addr, std::string& out) const;
    // Bare name of the containing symbol like ftrace's %ps, else "0x%08lx".
    std::string name_of(std::uint64_t addr) const;
    // Appends name_of(addr) to `out` without a temporary.
    void append_name(std::uint64_t addr, std::string& out) const;

    // Address of the first symbol of any type (text, data...) called `name`
    // ("module:name" for a module's) in the kallsyms file `path`, nullopt
    // if none or addresses are hidden.  Reads the file; for rare lookups.
    static std::optional<std::uint64_t> find_any(const std::string& path, std::string_view name);

    // Addresses of the text symbols `name` in `module` ("" = vmlinux).
    std::vector<std::uint64_t> addresses_of(std::string_view name, std::string_view module) const;
    // Is `addr` in vmlinux's __init text (_sinittext.._einittext), which the
    // kernel frees once it has booted?  False when addresses are hidden.
    bool in_init_text(std::uint64_t addr) const;
    // Every text symbol called `name`, vmlinux's and modules': SymbolRef
    // with offset = the symbol's address.
    std::vector<SymbolRef> find_text(std::string_view name) const;
    // Every text symbol (name, address) of `module`, in address order.
    std::vector<std::pair<std::string_view, std::uint64_t>>
    symbols_in(std::string_view module) const;

    // Every text symbol, in address order.
    std::vector<SymbolRef> text_symbols() const;

    std::size_t size() const noexcept { return syms_.size(); }
    bool empty() const noexcept { return syms_.empty(); }
    // True when the file listed symbols but every address was 0
    // (kptr_restrict, not root).
    bool addresses_hidden() const noexcept { return hidden_; }

private:
    // Names point into text_ (offset, length): no allocation per symbol.
    struct Sym {
        std::uint64_t addr;
        std::uint32_t name_off;
        std::uint16_t name_len;
        std::uint16_t module; // index into modules_, 0 = vmlinux ("")
    };
    std::string_view name(const Sym& s) const noexcept {
        return std::string_view(text_).substr(s.name_off, s.name_len);
    }
    // on_demand(): the symbols met so far, by start.  A node never changes
    // once added (SymbolRef points into it); hist's HTTP thread and the
    // main thread may format at once, hence the lock.
    struct Demand {
        struct Range {
            std::uint64_t start, size;
            std::string name, module;
        };
        Resolver resolve;
        std::mutex lock;
        std::map<std::uint64_t, Range> ranges;
        // answers whose start another range holds (a BPF program's slot
        // reused with another size), by the address asked
        std::map<std::uint64_t, Range> exact;
        std::unordered_set<std::uint64_t> none; // addresses of no symbol
        bool failed = false;                    // the resolver threw: addresses print as numbers
        // the range containing `addr`, asking the resolver once
        const Range* find(std::uint64_t addr);
    };
    std::unique_ptr<Demand> demand_;
    std::string text_;      // the kallsyms text the names live in
    std::vector<Sym> syms_; // sorted by addr, stable
    std::vector<std::string> modules_{std::string()};
    bool hidden_ = false;
};

// Does `path` (/proc/kallsyms) show this process zeros instead of
// addresses?  Read up to its first function, not whole: as
// Ksyms::addresses_hidden() says of the table loaded from it.
bool kallsyms_addresses_hidden(const std::string& path);

// Why /proc/kallsyms shows this process zeros instead of addresses, from
// the kernel's policy (kallsyms_show_value()): the sysctls read from
// `sysctl_dir` and what would let the addresses through, as one sentence.
std::string kallsyms_hidden_reason(const std::string& sysctl_dir = "/proc/sys/kernel");

} // namespace fhook
