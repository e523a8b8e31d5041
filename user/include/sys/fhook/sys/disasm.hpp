// Disassembly of kernel text with capstone, as objdump prints kernel code
// (x86-64 in AT&T syntax, arm64): what `fhook explain` shows of a patch site.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fhook/core/arch.hpp>

namespace fhook {

struct Insn {
    std::uint64_t addr = 0;
    std::vector<std::uint8_t> bytes;
    std::string mnemonic; // "call", "nopl", "endbr64"; arm64: "bl", "nop", "bti"
    std::string operands; // "0xffffffff81e01e40", "0x0(%rax,%rax,1)"; "#0xffff8000..."
    // call/jmp (bl/b) with an immediate target: where it goes
    std::optional<std::uint64_t> target;
};

// Up to `max_insns` instructions of `code` of the CPU `arch`, loaded at
// `addr`; stops at the first byte sequence that is not an instruction.
// Runtime Error when capstone cannot be opened.
std::vector<Insn> disassemble(const std::vector<std::uint8_t>& code, std::uint64_t addr,
                              std::size_t max_insns, Arch arch = host_arch());

// What sits at a function's ftrace site: the NOP ftrace leaves when idle
// (x86: 5 bytes; arm64: the second of its two), a call (ftrace_caller, a
// trampoline, a direct trampoline: x86 call, arm64 bl) when armed, or a
// breakpoint (a kprobe not on ftrace: x86 int3, arm64 brk).
enum class SiteState { Nop, Call, Int3, Jump, Other };
SiteState site_state(const Insn& insn);
const char* site_state_name(SiteState state);

// The ftrace call site of a function starting with `insns`.  x86-64: the
// first instruction, or the second one after an endbr64 or a sealed one
// (IBT kernels: 6.12 writes nopw (%rax) over the endbr64 of a function
// nothing calls indirectly).  arm64: the second of the two instructions
// -fpatchable-function-entry leaves (the first becomes mov x9, x30), after
// a bti c.  nullopt when there are no instructions.
std::optional<std::size_t> fentry_index(const std::vector<Insn>& insns, Arch arch = host_arch());

} // namespace fhook
