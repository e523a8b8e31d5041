#include <capstone/capstone.h>

#include <cstdlib>
#include <memory>

#include <fhook/core/error.hpp>
#include <fhook/sys/disasm.hpp>

namespace fhook {

namespace {

// One capstone handle (RAII).
class Capstone {
public:
    Capstone() {
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

} // namespace

std::vector<Insn> disassemble(const std::vector<std::uint8_t>& code, std::uint64_t addr,
                              std::size_t max_insns) {
    Capstone cs;
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
        const bool branch = insn.mnemonic.rfind("call", 0) == 0 || insn.mnemonic.front() == 'j';
        if (branch && insn.operands.rfind("0x", 0) == 0) {
            insn.target = std::strtoull(insn.operands.c_str(), nullptr, 16);
        }
        out.push_back(std::move(insn));
    }
    return out;
}

SiteState site_state(const Insn& insn) {
    if (insn.mnemonic.rfind("nop", 0) == 0) {
        return SiteState::Nop;
    }
    if (insn.mnemonic.rfind("call", 0) == 0) {
        return SiteState::Call;
    }
    if (insn.mnemonic == "int3") {
        return SiteState::Int3;
    }
    if (insn.mnemonic.front() == 'j') {
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

std::optional<std::size_t> fentry_index(const std::vector<Insn>& insns) {
    if (insns.empty()) {
        return std::nullopt;
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
