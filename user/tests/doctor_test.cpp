#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include <fhook_abi.h>

#include <fhook/core/arch.hpp>
#include <fhook/output/doctor_format.hpp>
#include <fhook/sys/doctor.hpp>

namespace fhook {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRelease = "6.12.117+deb12-amd64";

// A machine under a directory: proc, sys, boot, lib/modules, dev.
class FakeMachine {
public:
    FakeMachine() {
        char tmpl[] = "/tmp/fhook-doctor-XXXXXX";
        root_ = ::mkdtemp(tmpl);
        paths_ = {root_ + "/proc", root_ + "/sys", root_ + "/boot",      root_ + "/lib/modules",
                  root_ + "/dev",  kRelease,       root_ + "/kvm-status"};
        for (const auto& d :
             {paths_.proc, paths_.sys, paths_.boot, paths_.lib_modules, paths_.dev}) {
            fs::create_directories(d);
        }
        write("proc/mounts", "tracefs /sys/kernel/tracing tracefs rw 0 0\n");
        write("proc/sys/kernel/kptr_restrict", "0\n");
        write("proc/sys/kernel/perf_event_paranoid", "2\n");
        write("proc/self/status", "Name:\tfhook\nCapEff:\t000001ffffffffff\n");
        write("sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
    }
    ~FakeMachine() { fs::remove_all(root_); }

    void write(const std::string& rel, const std::string& text) {
        const fs::path p = root_ + "/" + rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }
    void config(const std::string& text) { write(std::string("boot/config-") + kRelease, text); }
    void module(const std::string& version, int abi) {
        write("sys/module/fhook/version", version + "\n");
        write("sys/module/fhook/parameters/abi_version", std::to_string(abi) + "\n");
        write("dev/fhook", "");
    }
    const DoctorPaths& paths() const { return paths_; }

private:
    std::string root_;
    DoctorPaths paths_;
};

const Check& find(const DoctorReport& r, const std::string& name) {
    for (const auto& c : r.checks) {
        if (c.name == name) {
            return c;
        }
    }
    static const Check none{"(missing)", CheckStatus::Fail, "", ""};
    ADD_FAILURE() << "no check " << name;
    return none;
}

const char* kFullConfig = "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
                          "CONFIG_DYNAMIC_FTRACE_WITH_REGS=y\nCONFIG_DYNAMIC_FTRACE_WITH_ARGS=y\n"
                          "CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y\nCONFIG_KPROBES=y\n"
                          "CONFIG_KPROBES_ON_FTRACE=y\nCONFIG_UPROBES=y\n"
                          "CONFIG_DEBUG_INFO_BTF=y\nCONFIG_DEBUG_INFO_BTF_MODULES=y\n";

TEST(Doctor, AllGreenOnATarget) {
    FakeMachine m;
    m.config(kFullConfig);
    m.module("0.1.0", FHOOK_ABI_VERSION);
    const DoctorReport r = doctor(m.paths());
    EXPECT_TRUE(r.ok()) << doctor_text(r);
    EXPECT_EQ(r.count(CheckStatus::Warn), 0u) << doctor_text(r);
    EXPECT_EQ(find(r, "tracefs").detail, "mounted at /sys/kernel/tracing");
    EXPECT_NE(find(r, "module").detail.find("ABI " + std::to_string(FHOOK_ABI_VERSION)),
              std::string::npos);
    EXPECT_EQ(r.config_source, m.paths().boot + "/config-" + kRelease);
    // (Debian's kernels lack the irqsoff tracers' tracepoints: said, not warned of)
    const Check& irqs = find(r, "CONFIG_PREEMPTIRQ_TRACEPOINTS");
    EXPECT_EQ(irqs.status, CheckStatus::Ok);
    EXPECT_NE(
        irqs.detail.find("not set: no irq_disable and irq_enable tracepoints (fhook irqsoff): "),
        std::string::npos)
        << irqs.detail;
    EXPECT_NE(find(r, "CONFIG_TRACE_PREEMPT_TOGGLE").detail.find("own preemptoff"),
              std::string::npos);
}

TEST(Doctor, FtraceSwitchedOffWarns) {
    FakeMachine m;
    m.config(kFullConfig);
    m.module("0.1.0", FHOOK_ABI_VERSION);
    m.write("proc/sys/kernel/ftrace_enabled", "0\n");
    const DoctorReport r = doctor(m.paths());
    EXPECT_TRUE(r.ok()) << doctor_text(r); // events and uprobes still work
    EXPECT_EQ(find(r, "ftrace_enabled").status, CheckStatus::Warn);
    EXPECT_EQ(find(r, "ftrace_enabled").fix,
              "echo 1 > " + m.paths().proc + "/sys/kernel/ftrace_enabled");
}

TEST(Doctor, NoTracefsFails) {
    FakeMachine m;
    m.config(kFullConfig);
    m.module("0.1.0", FHOOK_ABI_VERSION);
    m.write("proc/mounts", "proc /proc proc rw 0 0\n");
    const DoctorReport r = doctor(m.paths());
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(find(r, "tracefs").status, CheckStatus::Fail);
    EXPECT_EQ(find(r, "tracefs").fix, "mount -t tracefs nodev /sys/kernel/tracing");
    EXPECT_EQ(r.count(CheckStatus::Fail), 1u) << doctor_text(r);
}

TEST(Doctor, ModuleOfAnotherAbiFails) {
    FakeMachine m;
    m.config(kFullConfig);
    m.module("0.0.9", FHOOK_ABI_VERSION - 1);
    const DoctorReport r = doctor(m.paths());
    EXPECT_EQ(find(r, "module").status, CheckStatus::Fail);
    EXPECT_NE(find(r, "module").detail.find("ABI " + std::to_string(FHOOK_ABI_VERSION - 1)),
              std::string::npos)
        << find(r, "module").detail;
}

TEST(Doctor, MissingModuleSaysHowToLoadIt) {
    FakeMachine m;
    m.config(kFullConfig);
    EXPECT_EQ(find(doctor(m.paths()), "module").status, CheckStatus::Fail);
    EXPECT_NE(find(doctor(m.paths()), "module").fix.find("fhook-dkms"), std::string::npos);
    m.write(std::string("lib/modules/") + kRelease + "/updates/dkms/fhook.ko.xz", "");
    EXPECT_EQ(find(doctor(m.paths()), "module").fix, "modprobe fhook");
    // lockdown lets only signed modules in
    m.write("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
    const DoctorReport r = doctor(m.paths());
    EXPECT_NE(find(r, "module").detail.find("lockdown (integrity)"), std::string::npos);
    EXPECT_EQ(find(r, "lockdown").status, CheckStatus::Warn);
}

TEST(Doctor, ConfigFromProcConfigGz) {
    FakeMachine m;
    m.module("0.1.0", FHOOK_ABI_VERSION);
    const std::string gz = m.paths().proc + "/config.gz";
    gzFile f = gzopen(gz.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string text = std::string(kFullConfig) + "# CONFIG_UPROBES is not set\n";
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    const DoctorReport r = doctor(m.paths());
    EXPECT_EQ(r.config_source, gz);
    EXPECT_EQ(find(r, "CONFIG_UPROBES").status, CheckStatus::Warn);
    EXPECT_EQ(find(r, "CONFIG_KPROBES").status, CheckStatus::Ok);
    EXPECT_TRUE(r.ok());
}

TEST(Doctor, InfersTheConfigWithoutOne) {
    FakeMachine m;
    m.module("0.1.0", FHOOK_ABI_VERSION);
    m.write("proc/kallsyms", "0000000000000000 T ftrace_caller\n"
                             "0000000000000000 T ftrace_update_ftrace_func\n"
                             "0000000000000000 T register_kprobe\n"
                             "0000000000000000 t uprobe_register\n");
    m.write("sys/kernel/btf/vmlinux", "");
    const DoctorReport r = doctor(m.paths());
    EXPECT_EQ(r.config_source, "");
    EXPECT_TRUE(r.ok()) << doctor_text(r);
    EXPECT_EQ(find(r, "CONFIG_FUNCTION_TRACER").status, CheckStatus::Ok);
    EXPECT_NE(find(r, "CONFIG_FUNCTION_TRACER").detail.find("inferred"), std::string::npos);
    EXPECT_EQ(find(r, "CONFIG_DEBUG_INFO_BTF").status, CheckStatus::Ok);
    EXPECT_EQ(find(r, "CONFIG_DYNAMIC_FTRACE_WITH_REGS").status, CheckStatus::Warn);
    // no kallsyms at all: warnings that say why, not failures
    fs::remove(m.paths().proc + "/kallsyms");
    const DoctorReport none = doctor(m.paths());
    EXPECT_EQ(find(none, "CONFIG_KPROBES").status, CheckStatus::Warn);
    EXPECT_NE(find(none, "CONFIG_KPROBES").detail.find("unknown"), std::string::npos);
    EXPECT_TRUE(none.ok());
}

TEST(Doctor, JsonHasEveryCheck) {
    FakeMachine m;
    m.config(kFullConfig);
    const DoctorReport r = doctor(m.paths());
    const std::string j = doctor_json(r);
    EXPECT_EQ(j.rfind("{\"kernel\":\"6.12.117+deb12-amd64\",", 0), 0u) << j;
    EXPECT_NE(j.find("\"ok\":false"), std::string::npos);
    EXPECT_NE(j.find("{\"name\":\"module\",\"status\":\"fail\""), std::string::npos) << j;
}

TEST(Doctor, KvmAbsentMeansTcg) {
    FakeMachine m;
    m.config(kFullConfig);
    const Check& c = find(doctor(m.paths()), "KVM (fhook vm)");
    EXPECT_EQ(c.status, CheckStatus::Ok);
    EXPECT_NE(c.detail.find("TCG"), std::string::npos) << c.detail;
}

TEST(Doctor, KvmThatCannotCreateAVmWarns) {
    FakeMachine m;
    m.config(kFullConfig);
    m.write("dev/kvm", ""); // opens, but answers no KVM ioctl
    const Check& c = find(doctor(m.paths()), "KVM (fhook vm)");
    EXPECT_EQ(c.status, CheckStatus::Warn);
    EXPECT_NE(c.detail.find("KVM_GET_API_VERSION failed"), std::string::npos) << c.detail;
}

TEST(Doctor, KvmThatFailedQemuSaysWhy) {
    if (::access("/dev/kvm", R_OK | W_OK) != 0) {
        GTEST_SKIP() << "no usable /dev/kvm on this host";
    }
    FakeMachine m;
    m.config(kFullConfig);
    fs::create_symlink("/dev/kvm", m.paths().dev + "/kvm");
    m.write("kvm-status", "fails 2026-12-02T06:00:00Z failed to set MSR 0x10a to 0x69\n");
    const Check& c = find(doctor(m.paths()), "KVM (fhook vm)");
    EXPECT_EQ(c.status, CheckStatus::Warn);
    EXPECT_NE(c.detail.find("failed to set MSR 0x10a to 0x69"), std::string::npos) << c.detail;
    m.write("kvm-status", "works 2026-12-02T06:00:00Z\n");
    EXPECT_EQ(find(doctor(m.paths()), "KVM (fhook vm)").status, CheckStatus::Ok);
}

} // namespace
} // namespace fhook

// What fhook's arm64 port lacks follows what each kernel's ftrace gives,
// and the words name only what is missing.
TEST(Doctor, ArchMissingFeaturesPerKernel) {
    using fhook::Arch;
    using fhook::FtraceHas;
    EXPECT_EQ(fhook::arch_missing_features(Arch::X86_64, FtraceHas{}), 0u);
    // Debian's arm64 6.12: ftrace_regs, direct calls
    EXPECT_EQ(fhook::arch_missing_features(Arch::Arm64, FtraceHas{false, true, true}), 0u);
    // Debian's arm64 6.1: full registers, no direct calls
    EXPECT_EQ(fhook::arch_missing_features(Arch::Arm64, FtraceHas{true, false, false}),
              FHOOK_FEAT_DIRECT | FHOOK_FEAT_LATENCY);
    EXPECT_EQ(fhook::arch_missing_features(Arch::Arm64, FtraceHas{}),
              FHOOK_FEAT_DIRECT | FHOOK_FEAT_LATENCY | FHOOK_FEAT_HOOK | FHOOK_FEAT_KHOOK);
    const std::string direct = fhook::arch_missing_why(FHOOK_FEAT_LATENCY);
    EXPECT_NE(direct.find("DYNAMIC_FTRACE_WITH_DIRECT_CALLS"), std::string::npos);
    EXPECT_EQ(direct.find("hook"), std::string::npos);
    const std::string both = fhook::arch_missing_why(FHOOK_FEAT_DIRECT | FHOOK_FEAT_KHOOK);
    EXPECT_NE(both.find("; hooks and the hook API need"), std::string::npos);
}
