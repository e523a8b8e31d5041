#include <capstone/capstone.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include <fhook/core/error.hpp>
#include <fhook/sys/disasm.hpp>

namespace fhook {

namespace {

// One capstone handle (RAII).
class Capstone {
public:
    explicit Capstone(Arch arch) {
        if (arch == Arch::Arm64) {
            if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &handle_) != CS_ERR_OK) {
                throw_runtime("capstone cannot disassemble arm64 (libcapstone without it?)", 0);
            }
            return;
        }
        if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) != CS_ERR_OK) {
            throw_runtime("capstone cannot disassemble x86-64 (libcapstone without x86?)", 0);
        }
        cs_option(handle_, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
    }
    Capstone(const Capstone&) = delete;
    Capstone& operator=(const Capstone&) = delete;
    ~Capstone() { cs_close(&handle_); }
    csh get() const { return handle_; }

private:
    csh handle_ = 0;
};

struct InsnFree {
    std::size_t count;
    void operator()(cs_insn* insn) const { cs_free(insn, count); }
};

// A call with a return address: x86 call, arm64 bl/blr
bool is_call(const std::string& m) {
    return m.rfind("call", 0) == 0 || m == "bl" || m == "blr";
}

// A jump: x86 jmp/jcc, arm64 b, b.cond, cbz, tbz...
bool is_jump(const std::string& m) {
    return m.front() == 'j' || m == "b" || m.rfind("b.", 0) == 0 || m.rfind("cb", 0) == 0 ||
           m.rfind("tb", 0) == 0;
}

// arm64 HINT instructions capstone 4 prints as "hint #N": their names
// (BTI landing pads before a patch site, pointer authentication after it)
void name_arm64_hint(Insn& insn) {
    static const std::pair<const char*, std::pair<const char*, const char*>> kHints[] = {
        {"#0x19", {"paciasp", ""}}, {"#0x1d", {"autiasp", ""}}, {"#0x20", {"bti", ""}},
        {"#0x22", {"bti", "c"}},    {"#0x24", {"bti", "j"}},    {"#0x26", {"bti", "jc"}}};
    if (insn.mnemonic != "hint") {
        return;
    }
    for (const auto& [imm, name] : kHints) {
        if (insn.operands == imm) {
            insn.mnemonic = name.first;
            insn.operands = name.second;
            return;
        }
    }
}

} // namespace

std::vector<Insn> disassemble(const std::vector<std::uint8_t>& code, std::uint64_t addr,
                              std::size_t max_insns, Arch arch) {
    Capstone cs(arch);
    cs_insn* raw = nullptr;
    const std::size_t n = cs_disasm(cs.get(), code.data(), code.size(), addr, max_insns, &raw);
    std::unique_ptr<cs_insn, InsnFree> insns(raw, InsnFree{n});
    std::vector<Insn> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; i++) {
        const cs_insn& c = raw[i];
        Insn insn;
        insn.addr = c.address;
        insn.bytes.assign(c.bytes, c.bytes + c.size);
        insn.mnemonic = c.mnemonic;
        insn.operands = c.op_str;
        if (arch == Arch::Arm64) {
            name_arm64_hint(insn);
        }
        // (arm64 writes an immediate as #0x...)
        const std::string imm = insn.operands.substr(insn.operands.rfind('#', 0) == 0 ? 1 : 0);
        if ((is_call(insn.mnemonic) || is_jump(insn.mnemonic)) && imm.rfind("0x", 0) == 0) {
            insn.target = std::strtoull(imm.c_str(), nullptr, 16);
        }
        out.push_back(std::move(insn));
    }
    return out;
}

SiteState site_state(const Insn& insn) {
    if (insn.mnemonic.rfind("nop", 0) == 0) {
        return SiteState::Nop;
    }
    if (is_call(insn.mnemonic)) {
        return SiteState::Call;
    }
    if (insn.mnemonic == "int3" || insn.mnemonic == "brk") {
        return SiteState::Int3;
    }
    if (is_jump(insn.mnemonic)) {
        return SiteState::Jump;
    }
    return SiteState::Other;
}

const char* site_state_name(SiteState state) {
    switch (state) {
    case SiteState::Nop:
        return "nop";
    case SiteState::Call:
        return "call";
    case SiteState::Int3:
        return "int3";
    case SiteState::Jump:
        return "jmp";
    default:
        return "other";
    }
}

std::optional<std::size_t> fentry_index(const std::vector<Insn>& insns, Arch arch) {
    if (insns.empty()) {
        return std::nullopt;
    }
    if (arch == Arch::Arm64) {
        const std::size_t first = insns[0].mnemonic == "bti" ? 1 : 0;
        if (first + 1 >= insns.size()) {
            return std::nullopt;
        }
        return first + 1;
    }
    // the endbr64 of an IBT kernel, or the 4-byte NOP the kernel seals it
    // with (nopw (%rax)) where nothing calls the function indirectly
    static const std::vector<std::uint8_t> sealed_endbr = {0x66, 0x0f, 0x1f, 0x00};
    if ((insns[0].mnemonic == "endbr64" || insns[0].bytes == sealed_endbr) && insns.size() > 1) {
        return 1;
    }
    return 0;
}

} // namespace fhook
