// The fetch-argument language shared by the parsers of probe definitions
// (kprobe.cpp), filters (filter.cpp) and BTF names (btf_fetch.cpp): the
// kernel's trace_probe.c.  Internal to libfhook.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fhook_abi.h>

#include <fhook/probe/probe.hpp>
#include <fhook/sys/btf.hpp>

namespace fhook::probe_detail {

constexpr std::size_t kMaxEventName = 64;                     // MAX_EVENT_NAME_LEN
constexpr std::uint32_t kDefaultStringMax = FHOOK_MAX_STRING; // tracefs: MAX_STRING_SIZE

// An Invalid Error: "bad probe token 'TOKEN': WHY".
[[noreturn]] void bad(std::string_view token, const std::string& why);
// A valid event or group name.
bool good_name(std::string_view s);
// Integers in C notation (decimal, 0x hex), the whole of `s`.
std::optional<std::uint64_t> parse_uint(std::string_view s);
std::optional<std::int64_t> parse_int(std::string_view s);
// The register names of FHOOK_REG_*.
extern const char* const kRegNames[FHOOK_REG_MAX];
// A TYPE of a fetch argument (`token` for errors).
FetchType parse_type(std::string_view t, std::string_view token);

// A parsed FETCHARG: one load and the dereferences applied to it, innermost
// first.
struct Chain {
    fhook_insn load{};
    bool comm = false;
    bool from_at = false; // @ADDR / @SYM: load.imm plus derefs[0]
    bool uses_arg = false;
    bool uses_retval = false;
    struct Deref {
        bool user;
        std::int64_t offset;
    };
    std::vector<Deref> derefs;
};

void parse_fetcharg(std::string_view a, std::string_view token, const SymbolResolver& resolve,
                    Chain& c);
fhook_insn make(std::uint8_t op, std::uint8_t size = 0, std::uint16_t dst = 0,
                std::uint32_t arg = 0, std::int64_t imm = 0);
// Instructions of one field: load, derefs, store.
std::vector<fhook_insn> compile_field(const Chain& c, const FetchType& t, std::uint16_t dst,
                                      std::string_view token, bool user_memory);
std::vector<std::string_view> split_ws(std::string_view s);
std::string sanitize(std::string s);
// The tracefs spelling of a parsed fetch argument, without BTF names.
std::string raw_fetcharg(const Chain& c);

// A fetch argument that names kernel types: "$arg1->f_path.dentry",
// "file->f_pos", "$retval->x" (letters first, or $argN/$retval with -> or .).
bool is_btf_expr(std::string_view a);
// The fetch type BTF suggests for a value of type `id` (read at an address
// when `in_memory`), or "" when it is not a scalar.
std::string btf_default_type(const KernelBtf& btf, std::uint32_t id, bool in_memory);
// Parses a typed fetch argument into `c`; returns the BTF type of its value
// and sets `in_memory` when the value is a member read from memory (the
// last dereference of `c` is then its address).
std::uint32_t parse_btf(std::string_view a, std::string_view token, const KernelBtf& btf,
                        const KernelBtf::Function& fn, bool is_return, Chain& c, bool& in_memory);

} // namespace fhook::probe_detail
