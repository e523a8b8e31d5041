#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>

#include "fake_kernel.hpp"

namespace fhook {
namespace {

TEST(Device, MissingNodeMeansNotLoaded) {
    try {
        Device dev("/nonexistent/fhook");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Runtime);
        EXPECT_EQ(e.sys_errno(), ENOENT);
        EXPECT_STREQ(e.what(), "/nonexistent/fhook not found: the fhook module is not loaded "
                               "(load it with: modprobe fhook, or insmod fhook.ko from a build)");
        EXPECT_TRUE(Device::is_not_loaded_errno(e.sys_errno()));
    }
}

TEST(Device, WrongDeviceFailsTheHandshake) {
    // /dev/null accepts open(O_RDWR) but no ioctl: ENOTTY.
    try {
        Session session("/dev/null");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Runtime);
        EXPECT_EQ(e.sys_errno(), ENOTTY);
        EXPECT_NE(std::string(e.what()).find("not an fhook device"), std::string::npos) << e.what();
    }
}

TEST(Device, IoctlErrorsCarryCauseAndFix) {
    try {
        throw_ioctl_error("adding the function probe", EPERM);
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "adding the function probe: permission denied: run as root "
                               "(needs CAP_SYS_ADMIN or CAP_PERFMON)");
    }
    try {
        throw_ioctl_error("arming the probes", EIO);
    } catch (const Error& e) {
        EXPECT_EQ(e.sys_errno(), EIO);
        EXPECT_NE(std::string(e.what()).find("dmesg"), std::string::npos);
    }
}

// The module's reason (FHOOK_IOC_LAST_ERROR) replaces the guess from the
// errno; every reason of fhook_reasons.h has a text.
TEST(Device, TheModulesReasonIsNamed) {
    try {
        throw_ioctl_error("setting up the ring buffer", EINVAL, reason_text(FHOOK_R_RING_SIZE));
    } catch (const Error& e) {
        EXPECT_EQ(e.sys_errno(), EINVAL);
        EXPECT_STREQ(e.what(), "setting up the ring buffer: refused by fhook.ko: the ring size is "
                               "not a power of two from a page to FHOOK_RING_MAX_SIZE");
    }
    for (std::uint32_t r = 0; r < FHOOK_R_MAX; r++) {
        EXPECT_GT(std::string(reason_text(r)).size(), 8u) << r;
    }
    EXPECT_STREQ(reason_text(FHOOK_R_MAX), "a reason this fhook does not know");
}

TEST(Device, ModuleHooksReadTheWholeLedger) {
    auto kernel = std::make_shared<test::FakeKernel>();
    // more than the first read's room: the library reads again
    for (int i = 0; i < 20; i++) {
        fhook_khook_info e;
        std::memset(&e, 0, sizeof(e));
        e.addr = 0xffffffff81000000ULL + i;
        e.hits = 100 + i;
        e.inside = i % 2;
        e.kind = i == 0 ? FHOOK_KHOOK_KIND_REPLACE : FHOOK_KHOOK_KIND_ENTRY | FHOOK_KHOOK_KIND_EXIT;
        std::snprintf(e.func, sizeof(e.func), "func%d%s", i, i == 3 ? " [loop]" : "");
        std::snprintf(e.owner, sizeof(e.owner), "mod%d", i);
        kernel->khooks.push_back(e);
    }
    const Device device = test::FakeKernel::open(kernel);
    const std::vector<ModuleHook> hooks = device.module_hooks();
    ASSERT_EQ(hooks.size(), 20U);
    EXPECT_EQ(hooks[0].function, "func0");
    EXPECT_EQ(hooks[3].function, "func3 [loop]");
    EXPECT_EQ(hooks[19].owner, "mod19");
    EXPECT_EQ(hooks[19].hits, 119U);
    EXPECT_EQ(hooks[1].inside, 1U);
    EXPECT_EQ(module_hook_kind(hooks[0].kind), "replace");
    EXPECT_EQ(module_hook_kind(hooks[1].kind), "entry+exit");
    EXPECT_EQ(module_hook_kind(0), "none");
}

TEST(Device, ModuleHooksOfAnOlderModule) {
    auto kernel = std::make_shared<test::FakeKernel>();
    kernel->features &= ~FHOOK_FEAT_KHOOK;
    kernel->khooks.resize(1);
    EXPECT_TRUE(test::FakeKernel::open(kernel).module_hooks().empty());
}

TEST(Device, ModuleStatusFromSysfs) {
    char tmpl[] = "/tmp/fhook-sysfs-XXXXXX";
    const std::string sysfs = ::mkdtemp(tmpl);
    EXPECT_FALSE(module_status(sysfs).loaded);
    std::filesystem::create_directories(sysfs + "/module/fhook/parameters");
    // a module from before the ABI was in sysfs: loaded, nothing more known
    EXPECT_TRUE(module_status(sysfs).loaded);
    EXPECT_EQ(module_status(sysfs).abi_version, 0u);
    std::ofstream(sysfs + "/module/fhook/version") << "0.1.0\n";
    std::ofstream(sysfs + "/module/fhook/parameters/abi_version") << "3\n";
    const ModuleStatus st = module_status(sysfs);
    EXPECT_TRUE(st.loaded);
    EXPECT_EQ(st.version, "0.1.0");
    EXPECT_EQ(st.abi_version, 3u);
    std::filesystem::remove_all(sysfs);
}

TEST(Device, FeatureNames) {
    EXPECT_EQ(feature_names(FHOOK_FEAT_FUNC | FHOOK_FEAT_FUNC_IPS | FHOOK_FEAT_PID_FILTER |
                            FHOOK_FEAT_CPU_FILTER | FHOOK_FEAT_RING_MMAP),
              "func func-ips pid-filter cpu-filter ring-mmap");
    // every bit the ABI defines has a name (status printed bit6 ... bit24)
    const std::string all = feature_names((FHOOK_FEAT_SYMBOLS << 1) - 1);
    EXPECT_EQ(all.find("bit"), std::string::npos) << all;
    EXPECT_NE(all.find("tracepoint"), std::string::npos) << all;
    EXPECT_NE(all.find("count-ips"), std::string::npos) << all;
    EXPECT_EQ(feature_names(0), "");
    EXPECT_NE(all.find("wakeup-function"), std::string::npos) << all;
    EXPECT_NE(all.find("errors-types"), std::string::npos) << all;
    EXPECT_NE(all.find("errors-frames"), std::string::npos) << all;
    EXPECT_NE(all.find("symbols"), std::string::npos) << all;
    EXPECT_EQ(feature_names(FHOOK_FEAT_FUNC | (1ULL << 45)), "func bit45");
}

TEST(Error, SettingsAreNamedByWhoShowsThem) {
    const Error plain(ErrorKind::Runtime, "no {} here", 5);
    EXPECT_STREQ(plain.what(), "no {} here");
    EXPECT_EQ(plain.text("--x"), "no {} here");
    EXPECT_EQ(plain.sys_errno(), 5);
    const Error ring(ErrorKind::Invalid, "raise the {}", 0, Setting::RingSize);
    EXPECT_STREQ(ring.what(), "raise the ring size");
    EXPECT_EQ(ring.text("--buffer-size"), "raise the --buffer-size");
    EXPECT_EQ(ring.setting(), Setting::RingSize);
    try {
        ring_bytes_from_kib(0);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Invalid);
        EXPECT_EQ(e.text("--buffer-size"),
                  "--buffer-size 0 is too small: give at least 4 (KiB per CPU)");
    }
}

} // namespace
} // namespace fhook
