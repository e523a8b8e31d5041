// x86-64 disassembly of kernel text with capstone (AT&T syntax, as objdump
// prints kernel code): what `fhook explain` shows of a patch site.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fhook {

struct Insn {
    std::uint64_t addr = 0;
    std::vector<std::uint8_t> bytes;
    std::string mnemonic; // "call", "nopl", "endbr64"
    std::string operands; // "0xffffffff81e01e40", "0x0(%rax,%rax,1)"
    // call/jmp with an immediate target: where it goes
    std::optional<std::uint64_t> target;
};

// Up to `max_insns` instructions of `code`, loaded at `addr`; stops at the
// first byte sequence that is not an instruction.  Runtime Error when
// capstone cannot be opened.
std::vector<Insn> disassemble(const std::vector<std::uint8_t>& code, std::uint64_t addr,
                              std::size_t max_insns);

// What sits at a function's ftrace site: the 5-byte NOP ftrace leaves
// when idle, a call (ftrace_caller, a trampoline, a direct trampoline) when
// armed, or an int3 (a kprobe not on ftrace).
enum class SiteState { Nop, Call, Int3, Jump, Other };
SiteState site_state(const Insn& insn);
const char* site_state_name(SiteState state);

// The ftrace call site of a function starting with `insns`: the first
// instruction, or the second one after an endbr64 or a sealed one (IBT
// kernels: 6.12 writes nopw (%rax) over the endbr64 of a function nothing
// calls indirectly).  nullopt
// when there are no instructions.
std::optional<std::size_t> fentry_index(const std::vector<Insn>& insns);

} // namespace fhook
