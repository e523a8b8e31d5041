#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

namespace {

std::string_view next_token(std::string_view& line) {
    std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) {
        line = {};
        return {};
    }
    std::size_t end = line.find_first_of(" \t", start);
    std::string_view token =
        line.substr(start, end == std::string_view::npos ? line.npos : end - start);
    line.remove_prefix(end == std::string_view::npos ? line.size() : end);
    return token;
}

bool parse_hex(std::string_view text, std::uint64_t& out) {
    if (text.empty() || text.size() > 16) {
        return false;
    }
    std::uint64_t value = 0;
    for (char c : text) {
        int digit;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        } else {
            return false;
        }
        value = value << 4 | static_cast<std::uint64_t>(digit);
    }
    out = value;
    return true;
}

bool is_text_type(std::string_view type) {
    return type.size() == 1 &&
           (type[0] == 't' || type[0] == 'T' || type[0] == 'w' || type[0] == 'W');
}

} // namespace

namespace {

UniqueFd open_kallsyms(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        int err = errno;
        throw_runtime("cannot read kernel symbols from " + path + ": " + errno_text(err) +
                          ": mount /proc and run as root",
                      err);
    }
    return fd;
}

} // namespace

void Ksyms::check_readable(const std::string& path) {
    open_kallsyms(path);
}

Ksyms Ksyms::load(const std::string& path) {
    UniqueFd fd = open_kallsyms(path);
    std::string text;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            int err = errno;
            throw_runtime("cannot read kernel symbols from " + path + ": " + errno_text(err) +
                              ": run as root",
                          err);
        }
        if (n == 0) {
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    return parse(text);
}

Ksyms Ksyms::parse(std::istream& in) {
    std::string text(std::istreambuf_iterator<char>(in), {});
    return parse(std::string_view(text));
}

Ksyms Ksyms::parse(std::string_view input) {
    Ksyms ks;
    ks.text_.assign(input);
    std::string_view text = ks.text_;
    const char* const base = ks.text_.data();
    std::map<std::string, std::uint32_t, std::less<>> module_index;
    std::size_t listed = 0;
    while (!text.empty()) {
        std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);

        std::string_view addr_text = next_token(line);
        std::string_view type = next_token(line);
        std::string_view name = next_token(line);
        std::string_view module = next_token(line);
        std::uint64_t addr;
        if (name.empty() || !parse_hex(addr_text, addr)) {
            continue;
        }
        listed++;
        // (arm64 modules list their mapping symbols, $x and $d, which name
        // no function: the kernel's own lookups skip them too)
        if (!is_text_type(type) || addr == 0 || name.front() == '$') {
            continue;
        }
        std::uint32_t mod = 0;
        if (module.size() > 2 && module.front() == '[' && module.back() == ']') {
            module = module.substr(1, module.size() - 2);
            auto it = module_index.find(module);
            if (it == module_index.end()) {
                ks.modules_.emplace_back(module);
                it = module_index.emplace(std::string(module), ks.modules_.size() - 1).first;
            }
            mod = it->second;
        }
        if (name.size() > UINT16_MAX || mod > UINT16_MAX) {
            continue;
        }
        ks.syms_.push_back(Sym{addr, static_cast<std::uint32_t>(name.data() - base),
                               static_cast<std::uint16_t>(name.size()),
                               static_cast<std::uint16_t>(mod)});
    }
    ks.hidden_ = listed != 0 && ks.syms_.empty();
    auto by_addr = [](const Sym& a, const Sym& b) { return a.addr < b.addr; };
    // vmlinux is listed in address order already; modules follow it
    if (!std::is_sorted(ks.syms_.begin(), ks.syms_.end(), by_addr)) {
        std::stable_sort(ks.syms_.begin(), ks.syms_.end(), by_addr);
    }
    return ks;
}

Ksyms Ksyms::on_demand(Resolver resolve) {
    Ksyms ks;
    ks.demand_ = std::make_unique<Demand>();
    ks.demand_->resolve = std::move(resolve);
    return ks;
}

const Ksyms::Demand::Range* Ksyms::Demand::find(std::uint64_t addr) {
    const std::lock_guard<std::mutex> hold(lock);
    if (auto it = ranges.upper_bound(addr);
        it != ranges.begin() && addr - std::prev(it)->first < std::prev(it)->second.size) {
        return &std::prev(it)->second;
    }
    if (auto it = exact.find(addr); it != exact.end()) {
        return &it->second;
    }
    if (failed || none.contains(addr)) {
        return nullptr;
    }
    std::vector<Resolved> got;
    try {
        got = resolve(std::span<const std::uint64_t>(&addr, 1));
    } catch (const Error&) {
        failed = true; // (output goes on, with numbers)
        return nullptr;
    }
    // (a range that would wrap: no symbol)
    if (got.size() != 1 || got[0].size == 0 || got[0].offset >= got[0].size ||
        got[0].offset > addr || got[0].size - 1 > UINT64_MAX - (addr - got[0].offset)) {
        none.insert(addr);
        return nullptr;
    }
    Resolved& r = got[0];
    const std::uint64_t start = addr - r.offset;
    Range range{start, r.size, std::move(r.name), std::move(r.module)};
    if (auto [it, added] = ranges.try_emplace(start, std::move(range)); added) {
        return &it->second;
    }
    return &exact.try_emplace(addr, std::move(range)).first->second;
}

std::optional<SymbolRef> Ksyms::lookup(std::uint64_t addr) const {
    if (demand_) {
        const Demand::Range* range = demand_->find(addr);
        if (!range) {
            return std::nullopt;
        }
        return SymbolRef{range->name, addr - range->start, range->module};
    }
    auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                               [](std::uint64_t a, const Sym& s) { return a < s.addr; });
    if (it == syms_.begin()) {
        return std::nullopt;
    }
    const std::uint64_t start = std::prev(it)->addr;
    // The first alias listed at that address, as the kernel's kallsyms does.
    it = std::lower_bound(syms_.begin(), it, start,
                          [](const Sym& s, std::uint64_t a) { return s.addr < a; });
    if (addr - start > kMaxOffset) {
        return std::nullopt;
    }
    return SymbolRef{name(*it), addr - start, modules_[it->module]};
}

void Ksyms::append_name(std::uint64_t addr, std::string& out) const {
    if (auto sym = lookup(addr)) {
        out.append(sym->name);
        return;
    }
    char buf[32];
    int n = std::snprintf(buf, sizeof(buf), "0x%08" PRIx64, addr);
    out.append(buf, static_cast<std::size_t>(n));
}

std::optional<std::uint64_t> Ksyms::find_any(const std::string& path, std::string_view name) {
    std::string_view module, sym = name;
    if (auto colon = name.find(':'); colon != std::string_view::npos) {
        module = name.substr(0, colon);
        sym = name.substr(colon + 1);
    }
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        // "ffffffff81000000 T _stext" or "... t name\t[module]"
        auto a = line.find(' ');
        if (a == std::string::npos || a + 3 > line.size()) {
            continue;
        }
        std::string_view rest = std::string_view(line).substr(a + 3);
        auto tab = rest.find('\t');
        std::string_view n = rest.substr(0, tab);
        std::string_view m;
        if (tab != std::string_view::npos) {
            m = rest.substr(tab + 1);
            if (m.size() >= 2 && m.front() == '[' && m.back() == ']') {
                m = m.substr(1, m.size() - 2);
            }
        }
        if (n != sym || m != module) {
            continue;
        }
        std::uint64_t addr = 0;
        auto r = std::from_chars(line.data(), line.data() + a, addr, 16);
        if (r.ec != std::errc() || addr == 0) {
            return std::nullopt;
        }
        return addr;
    }
    return std::nullopt;
}

std::uint64_t Ksyms::size_of(std::uint64_t addr) const {
    if (demand_) {
        const Demand::Range* range = demand_->find(addr);
        return range ? range->size : 0;
    }
    auto it = std::upper_bound(syms_.begin(), syms_.end(), addr,
                               [](std::uint64_t a, const Sym& s) { return a < s.addr; });
    if (it == syms_.begin() || it == syms_.end()) {
        return 0;
    }
    return it->addr - std::prev(it)->addr;
}

void Ksyms::append_offset(std::uint64_t addr, std::string& out) const {
    char buf[24];
    auto hex = [&](std::uint64_t v) {
        out.append("0x");
        const auto r = std::to_chars(buf, buf + sizeof(buf), v, 16);
        out.append(buf, static_cast<std::size_t>(r.ptr - buf));
    };
    auto sym = lookup(addr);
    if (!sym) {
        hex(addr);
        return;
    }
    out.append(sym->name);
    out.push_back('+');
    hex(sym->offset);
    out.push_back('/');
    hex(size_of(addr));
    if (!sym->module.empty()) {
        out.append(" [");
        out.append(sym->module);
        out.push_back(']');
    }
}

std::string Ksyms::name_of(std::uint64_t addr) const {
    std::string out;
    append_name(addr, out);
    return out;
}

std::vector<std::uint64_t> Ksyms::addresses_of(std::string_view name,
                                               std::string_view module) const {
    std::vector<std::uint64_t> out;
    for (const Sym& s : syms_) {
        if (this->name(s) == name && modules_[s.module] == module) {
            out.push_back(s.addr);
        }
    }
    return out;
}

bool Ksyms::in_init_text(std::uint64_t addr) const {
    const auto begin = addresses_of("_sinittext", ""), end = addresses_of("_einittext", "");
    return begin.size() == 1 && end.size() == 1 && addr >= begin[0] && addr < end[0];
}

std::vector<SymbolRef> Ksyms::find_text(std::string_view name) const {
    std::vector<SymbolRef> out;
    for (const Sym& s : syms_) {
        if (this->name(s) == name) {
            out.push_back(SymbolRef{this->name(s), s.addr, modules_[s.module]});
        }
    }
    return out;
}

std::vector<std::pair<std::string_view, std::uint64_t>>
Ksyms::symbols_in(std::string_view module) const {
    std::vector<std::pair<std::string_view, std::uint64_t>> out;
    for (const Sym& s : syms_) {
        if (modules_[s.module] == module) {
            out.emplace_back(name(s), s.addr);
        }
    }
    return out;
}

std::vector<SymbolRef> Ksyms::text_symbols() const {
    std::vector<SymbolRef> out;
    out.reserve(syms_.size());
    for (const Sym& s : syms_) {
        out.push_back(SymbolRef{name(s), s.addr, modules_[s.module]});
    }
    return out;
}

bool kallsyms_addresses_hidden(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    // (per-CPU symbols come first, at 0 when shown too)
    while (std::getline(in, line)) {
        std::string_view rest = line;
        const std::string_view addr_text = next_token(rest);
        const std::string_view type = next_token(rest);
        std::uint64_t addr;
        if (is_text_type(type) && parse_hex(addr_text, addr)) {
            return addr == 0;
        }
    }
    return false;
}

std::string kallsyms_hidden_reason(const std::string& sysctl_dir) {
    auto read = [&](const char* name) -> std::optional<int> {
        std::ifstream in(sysctl_dir + "/" + name);
        int v = 0;
        if (in >> v) {
            return v;
        }
        return std::nullopt;
    };
    const std::optional<int> restrict = read("kptr_restrict");
    const std::optional<int> paranoid = read("perf_event_paranoid");
    if (!restrict) {
        return "the kernel shows kallsyms addresses only to CAP_SYSLOG";
    }
    const std::string sysctl = "kernel.kptr_restrict is " + std::to_string(*restrict);
    if (*restrict >= 2) {
        return sysctl +
               ": kallsyms addresses are hidden from everyone; with 1, CAP_SYSLOG sees them";
    }
    if (*restrict == 1) {
        return sysctl + ": kallsyms addresses need CAP_SYSLOG";
    }
    return sysctl +
           (paranoid ? " and kernel.perf_event_paranoid " + std::to_string(*paranoid) : "") +
           ": kallsyms addresses need CAP_SYSLOG or perf_event_paranoid <= 1";
}

} // namespace fhook
