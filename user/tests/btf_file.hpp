// A BTF built in a test with libbpf's writer API, written to a temporary
// file that KernelBtf::load() reads as it reads /sys/kernel/btf/vmlinux.
#pragma once

#include <bpf/btf.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include <fhook/core/error.hpp>

namespace fhook::test {

// Writes `b`'s raw BTF to a new temporary file and frees `b`; returns the
// file's path (the caller unlinks it).
inline std::string write_btf_file(struct btf* b) {
    __u32 size = 0;
    const void* raw = btf__raw_data(b, &size);
    char tmpl[] = "/tmp/fhook-btf-XXXXXX";
    const int fd = mkstemp(tmpl);
    const bool ok = fd >= 0 && write(fd, raw, size) == static_cast<ssize_t>(size);
    if (fd >= 0) {
        close(fd);
    }
    btf__free(b);
    if (!ok) {
        throw_runtime(std::string("cannot write a BTF file in /tmp: ") + tmpl);
    }
    return tmpl;
}

} // namespace fhook::test
