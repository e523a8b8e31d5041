// What a session reads of the kernel itself rather than of its probes:
// the symbols of addresses (FHOOK_IOC_SYMBOLS) and kernel text
// (FHOOK_IOC_READ_TEXT, for fhook explain).
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <string>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>

#include "ioctl_args.hpp"

namespace fhook {

using ioctl_args::user_ptr;
using ioctl_args::zero_init;

std::vector<fhook_symbol> Session::symbols(std::span<const std::uint64_t> addrs) const {
    device_.require(FHOOK_FEAT_SYMBOLS, "naming kernel addresses");
    std::vector<fhook_symbol> out(addrs.size()); // zeroed
    for (std::size_t i = 0; i < addrs.size(); i++) {
        out[i].addr = addrs[i];
    }
    for (std::size_t i = 0; i < addrs.size(); i += FHOOK_SYMBOLS_MAX) {
        const std::size_t n = std::min<std::size_t>(FHOOK_SYMBOLS_MAX, addrs.size() - i);
        fhook_symbols arg;
        zero_init(arg);
        arg.entry_size = sizeof(fhook_symbol);
        arg.nr = static_cast<std::uint32_t>(n);
        arg.entries = user_ptr(&out[i]);
        if (device_.ioctl(FHOOK_IOC_SYMBOLS, &arg) < 0) {
            const int err = errno;
            throw_ioctl_error("naming kernel addresses", err, device_.refusal(err));
        }
    }
    return out;
}

std::vector<std::uint8_t> Session::read_text(std::uint64_t addr, std::size_t len) const {
    device_.require(FHOOK_FEAT_READ_TEXT, "reading kernel text");
    if (len == 0 || len > FHOOK_MAX_READ_TEXT) {
        throw_invalid("kernel text is read " + std::to_string(FHOOK_MAX_READ_TEXT) +
                      " bytes at a time at most");
    }
    std::vector<std::uint8_t> buf(len);
    fhook_read_text arg;
    zero_init(arg);
    arg.addr = addr;
    arg.len = static_cast<std::uint32_t>(len);
    arg.buf = user_ptr(buf.data());
    if (device_.ioctl(FHOOK_IOC_READ_TEXT, &arg) < 0) {
        const int err = errno;
        char where[32];
        std::snprintf(where, sizeof(where), "0x%" PRIx64, addr);
        if (err == EPERM) {
            throw_runtime(std::string("reading kernel text needs CAP_SYS_RAWIO (as /proc/kcore) "
                                      "and no kernel lockdown"),
                          err);
        }
        if (err == EFAULT) {
            throw_runtime(std::string("cannot read ") + std::to_string(len) + " bytes at " + where +
                              ": not inside one kernel symbol, or not mapped",
                          err);
        }
        throw_ioctl_error(std::string("reading kernel text at ") + where, err,
                          device_.refusal(err));
    }
    return buf;
}

} // namespace fhook
