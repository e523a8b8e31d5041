// A kernel function's arguments by its BTF prototype, from the argument
// registers at its call (graph --args, errors --args): integers and enums
// as their type holds them, anything else (pointers, structs) as the raw
// register.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fhook/sys/btf.hpp>

namespace fhook {

struct CallArg {
    std::string name; // the parameter's, "?" when BTF has none
    std::uint64_t value = 0;
    enum class Show { Signed, Unsigned, Hex } show = Show::Hex;
};

struct CallArgs {
    std::vector<CallArg> args;
    bool more = false; // parameters past the registers given
};

CallArgs call_args(const KernelBtf& btf, const KernelBtf::Function& f,
                   std::span<const std::uint64_t> regs);

// "file=0xffff8881..., count=4096" (", ..." when more)
void append_call_args(const CallArgs& args, std::string& out);

} // namespace fhook
