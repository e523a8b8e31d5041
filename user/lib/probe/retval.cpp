#include <cstdio>
#include <cstring>

#include <fhook/probe/retval.hpp>

namespace fhook {

namespace {

constexpr int kMaxErrno = 4095; // include/linux/err.h

// include/linux/errno.h: the codes kernel code returns that user space
// never sees (and glibc does not name)
struct KernelErrno {
    int err;
    const char* name;
};
constexpr KernelErrno kKernelErrnos[] = {
    {512, "ERESTARTSYS"},
    {513, "ERESTARTNOINTR"},
    {514, "ERESTARTNOHAND"},
    {515, "ENOIOCTLCMD"},
    {516, "ERESTART_RESTARTBLOCK"},
    {517, "EPROBE_DEFER"},
    {518, "EOPENSTALE"},
    {519, "ENOPARAM"},
    {521, "EBADHANDLE"},
    {522, "ENOTSYNC"},
    {523, "EBADCOOKIE"},
    {524, "ENOTSUPP"},
    {525, "ETOOSMALL"},
    {526, "ESERVERFAULT"},
    {527, "EBADTYPE"},
    {528, "EJUKEBOX"},
    {529, "EIOCBQUEUED"},
    {530, "ERECALLCONFLICT"},
    {531, "ENOGRACE"},
};

// `raw` as the signed integer of `size` bytes
std::int64_t as_signed(std::uint64_t raw, unsigned size) {
    return size == 4 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(raw))
                     : static_cast<std::int64_t>(raw);
}

bool is_errno(std::int64_t v) {
    return v < 0 && v >= -kMaxErrno;
}

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

ReturnType untyped_return(std::uint64_t raw) {
    return ReturnType{ReturnType::Kind::Errno, is_errno(static_cast<std::int64_t>(raw)) ? 8U : 4U};
}

ReturnType return_type(const KernelBtf& btf, const KernelBtf::Function& f) {
    ReturnType t;
    if (f.ret == 0) {
        return t;
    }
    switch (btf.kind(f.ret)) {
    case KernelBtf::Kind::Ptr:
        t.kind = ReturnType::Kind::Pointer;
        break;
    case KernelBtf::Kind::Int: {
        const std::uint32_t size = btf.size(f.ret);
        if (size == 1 && btf.type_name(btf.resolve(f.ret)) == "_Bool") {
            t.kind = ReturnType::Kind::Bool;
        } else if ((size == 4 || size == 8) && btf.is_signed(f.ret)) {
            t.kind = ReturnType::Kind::Errno;
            t.size = size;
        }
        break;
    }
    default:
        break;
    }
    return t;
}

int failure_errno(ReturnType t, std::uint64_t raw) {
    switch (t.kind) {
    case ReturnType::Kind::Errno: {
        const std::int64_t v = as_signed(raw, t.size);
        return is_errno(v) ? static_cast<int>(-v) : 0;
    }
    case ReturnType::Kind::Pointer: {
        const auto v = static_cast<std::int64_t>(raw);
        return is_errno(v) ? static_cast<int>(-v) : 0;
    }
    default:
        return 0;
    }
}

bool is_failure(ReturnType t, std::uint64_t raw, bool bool_fails) {
    switch (t.kind) {
    case ReturnType::Kind::Errno:
        return failure_errno(t, raw) != 0;
    case ReturnType::Kind::Pointer:
        return raw == 0 || failure_errno(t, raw) != 0;
    case ReturnType::Kind::Bool:
        return bool_fails && (raw & 0xff) == 0;
    default:
        return false;
    }
}

std::string describe_return(ReturnType t, std::uint64_t raw) {
    const int err = failure_errno(t, raw);
    switch (t.kind) {
    case ReturnType::Kind::Errno:
        return err ? "-" + errno_name(err) : std::to_string(as_signed(raw, t.size));
    case ReturnType::Kind::Pointer:
        if (raw == 0) {
            return "NULL";
        }
        return err ? "ERR_PTR(-" + errno_name(err) + ")" : hex(raw);
    case ReturnType::Kind::Bool:
        return (raw & 0xff) ? "true" : "false";
    default:
        return hex(raw);
    }
}

std::string errno_name(int err) {
    if (const char* name = err > 0 ? strerrorname_np(err) : nullptr) {
        return name;
    }
    for (const KernelErrno& k : kKernelErrnos) {
        if (k.err == err) {
            return k.name;
        }
    }
    return "E" + std::to_string(err);
}

} // namespace fhook
