// A small live system for the engine's tests: kallsyms, the ftrace files
// and trace events in a directory that disappears with the test, and a
// FakeKernel behind its device (fake_kernel.hpp).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fhook/core/fd.hpp>
#include <fhook/engine/tracer.hpp>

#include "fake_kernel.hpp"

namespace fhook::test {

// kallsyms and available_filter_functions of a small kernel, in a
// directory that disappears with the test.
class System {
public:
    System() {
        char tmpl[] = "/tmp/fhook-tracer-XXXXXX";
        dir_ = ::mkdtemp(tmpl);
        write("kallsyms", "ffffffff812a0000 T vfs_read\n"
                          "ffffffff812a0400 t ksys_read\n"
                          "ffffffff812b0000 T vfs_write\n"
                          "ffffffff812b0800 t ksys_write\n"
                          "ffffffff812c0000 T unrelated\n");
        write("available_filter_functions", "vfs_read\nksys_read\nvfs_write\nksys_write\n");
        write("ftrace_enabled", "1\n");
        // two trace events of sched, one of irq
        write("available_events",
              "sched:sched_switch\nsched:sched_wakeup\nirq:irq_handler_entry\n");
        std::uint32_t id = 300;
        for (const char* ev :
             {"sched/sched_switch", "sched/sched_wakeup", "irq/irq_handler_entry"}) {
            const std::string dir = dir_ + "/events/" + ev;
            std::filesystem::create_directories(dir);
            write("events/" + std::string(ev) + "/id", std::to_string(id) + "\n");
            write("events/" + std::string(ev) + "/format",
                  "name: x\nID: " + std::to_string(id++) +
                      "\nformat:\n"
                      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
                      "\tfield:int n;\toffset:8;\tsize:4;\tsigned:1;\n\n"
                      "print fmt: \"n=%d\", REC->n\n");
        }
        kernel = std::make_shared<FakeKernel>();
    }
    ~System() { std::system(("rm -rf " + dir_).c_str()); }

    SystemPaths paths() const {
        SystemPaths p;
        p.kallsyms = dir_ + "/kallsyms";
        p.functions = dir_ + "/available_filter_functions";
        p.tracefs = dir_; // no enabled_functions: nothing attached
        p.ftrace_enabled = dir_ + "/ftrace_enabled";
        p.open_device = [k = kernel] { return FakeKernel::open(k); };
        return p;
    }

    // A kernel of `n` traceable functions f0..: kallsyms, the functions and,
    // with `addrs`, available_filter_functions_addrs (6.5+: call sites at +4).
    void big(std::size_t n, bool addrs) {
        std::string syms, names, sites;
        for (std::size_t i = 0; i < n; i++) {
            char line[96];
            const unsigned long long at = 0xffffffff81000000ULL + 0x100 * i;
            std::snprintf(line, sizeof(line), "%016llx t f%zu\n", at, i);
            syms += line;
            names += "f" + std::to_string(i) + "\n";
            std::snprintf(line, sizeof(line), "%llx f%zu\n", at + 4, i);
            sites += line;
        }
        write("kallsyms", syms);
        write("available_filter_functions", names);
        if (addrs) {
            write("available_filter_functions_addrs", sites);
        }
    }

    std::shared_ptr<FakeKernel> kernel;

    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ + "/" + name) << text;
    }
    void append(const std::string& name, const std::string& text) {
        std::ofstream(dir_ + "/" + name, std::ios::app) << text;
    }

private:
    std::string dir_;
};

// Everything written to an fd, read back.
class Capture {
public:
    Capture() : fd_(::memfd_create("capture", MFD_CLOEXEC)) {}
    int fd() const { return fd_.get(); }
    std::string text() const {
        std::string out(static_cast<std::size_t>(::lseek(fd_.get(), 0, SEEK_END)), '\0');
        EXPECT_EQ(::pread(fd_.get(), out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }

private:
    UniqueFd fd_;
};

inline TraceSpec spec_of(Collect collect, std::vector<std::string> probes) {
    TraceSpec spec;
    spec.collect = collect;
    spec.probes = std::move(probes);
    spec.duration = 0.01; // the loop ends at once: the fake's records are already there
    return spec;
}

} // namespace fhook::test
