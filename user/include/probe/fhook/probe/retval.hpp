// What a kernel function's return value means (fhook errors, graph
// --retval): its kind from the function's BTF return type, whether a value
// is a failure, and the value as the kernel's code would name it.
#pragma once

#include <cstdint>
#include <string>

#include <fhook/sys/btf.hpp>

namespace fhook {

// A return type as the kernel's conventions read it: an errno-style
// integer (negative: -Exxx), a pointer (NULL, or ERR_PTR(-Exxx) as
// IS_ERR_OR_NULL() tells), a bool, or nothing to judge (void, unsigned
// and other integers, enums, structs).
struct ReturnType {
    enum class Kind { None, Errno, Pointer, Bool };
    Kind kind = Kind::None;
    unsigned size = 8; // Errno: 4 (int) or 8 (long): the bytes that hold it
};

// Without a prototype: errno-style, a long when the whole register is in
// the errno range, else an int (whose upper half the register may not
// hold).
ReturnType untyped_return(std::uint64_t raw);

// From the function's BTF prototype: signed 4- and 8-byte integers
// (int, long, ssize_t, loff_t) are errno-style, pointers are pointers,
// _Bool is Bool; everything else None.
ReturnType return_type(const KernelBtf& btf, const KernelBtf::Function& f);

// The register's value `raw` (%rax, whose upper half an int leaves
// undefined) as a failure of `t`: an errno in the kernel's range
// [-MAX_ERRNO, -1] (the low `size` bytes, sign-extended), a NULL or error
// pointer, and false when `bool_fails`.
bool is_failure(ReturnType t, std::uint64_t raw, bool bool_fails = false);

// The errno of a failure of `t` (0: none, or NULL / false).
int failure_errno(ReturnType t, std::uint64_t raw);

// "-ENOENT", "ERR_PTR(-ENOMEM)", "NULL", "false"/"true", "0", "-3" (not an
// errno), or hex for other values and None.
std::string describe_return(ReturnType t, std::uint64_t raw);

// The name of errno `err` (> 0) as the kernel's headers spell it: the
// uapi ones (ENOENT) and the kernel-internal ones that never reach user
// space (ERESTARTSYS, ENOTSUPP, EPROBE_DEFER, ...); "E<n>" for others.
std::string errno_name(int err);

} // namespace fhook
