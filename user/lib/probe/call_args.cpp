#include <cinttypes>
#include <cstdio>

#include <fhook/probe/call_args.hpp>

namespace fhook {

CallArgs call_args(const KernelBtf& btf, const KernelBtf::Function& f,
                   std::span<const std::uint64_t> regs) {
    CallArgs out;
    std::size_t reg = 0;
    for (const KernelBtf::Param& p : f.params) {
        const std::uint32_t size = btf.size(p.type);
        // (a struct of 9 to 16 bytes takes two registers)
        const std::size_t need = size > 8 ? (size + 7) / 8 : 1;
        if (reg + need > regs.size()) {
            out.more = true;
            break;
        }
        CallArg arg{p.name.empty() ? "?" : p.name, regs[reg], CallArg::Show::Hex};
        reg += need;
        const KernelBtf::Kind kind = btf.kind(p.type);
        if ((kind == KernelBtf::Kind::Int || kind == KernelBtf::Kind::Enum) && size <= 8) {
            const unsigned bits = 8 * (size ? size : 8);
            if (bits < 64) {
                arg.value &= (std::uint64_t{1} << bits) - 1;
            }
            if (btf.is_signed(p.type)) {
                if (bits < 64 && (arg.value >> (bits - 1)) & 1) {
                    arg.value |= ~std::uint64_t{0} << bits; // sign-extend
                }
                arg.show = CallArg::Show::Signed;
            } else {
                arg.show = CallArg::Show::Unsigned;
            }
        }
        out.args.push_back(std::move(arg));
    }
    return out;
}

void append_call_args(const CallArgs& args, std::string& out) {
    const char* sep = "";
    char buf[32];
    for (const CallArg& a : args.args) {
        switch (a.show) {
        case CallArg::Show::Signed:
            std::snprintf(buf, sizeof(buf), "%" PRId64, static_cast<std::int64_t>(a.value));
            break;
        case CallArg::Show::Unsigned:
            std::snprintf(buf, sizeof(buf), "%" PRIu64, a.value);
            break;
        case CallArg::Show::Hex:
            std::snprintf(buf, sizeof(buf), "0x%" PRIx64, a.value);
            break;
        }
        out.append(sep).append(a.name).append("=").append(buf);
        sep = ", ";
    }
    if (args.more) {
        out.append(sep).append("...");
    }
}

} // namespace fhook
