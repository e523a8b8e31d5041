// Return values as fhook errors and graph --retval judge them: kinds from
// a BTF built here with libbpf's writer (int, long, ssize_t, pointer,
// bool, unsigned, enum, void), failures by the kernel's conventions
// (include/linux/err.h: IS_ERR_VALUE, MAX_ERRNO 4095) and their names.
#include <bpf/btf.h>
#include <linux/btf.h>
#include <unistd.h>

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include <fhook/probe/retval.hpp>

#include "btf_file.hpp"

namespace fhook {
namespace {

using Kind = ReturnType::Kind;

class RetvalFixture : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        struct btf* b = btf__new_empty();
        const int s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
        const int u32 = btf__add_int(b, "unsigned int", 4, 0);
        const int s64 = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
        const int b8 = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
        const int bool_ = btf__add_typedef(b, "bool", b8);
        const int ssize = btf__add_typedef(b, "ssize_t", s64);
        const int file = btf__add_struct(b, "file", 8);
        btf__add_field(b, "f_mode", u32, 0, 0);
        const int pfile = btf__add_ptr(b, file);
        const int e = btf__add_enum(b, "fhook_state", 4);
        btf__add_enum_value(b, "FHOOK_A", 0);
        const std::pair<const char*, int> funcs[] = {
            {"do_sys_openat2", s64}, {"vfs_open", s32},    {"vfs_read", ssize},
            {"filp_open", pfile},    {"is_subdir", bool_}, {"full_name_hash", u32},
            {"get_state", e},        {"fput", 0},
        };
        for (const auto& [name, ret] : funcs) {
            const int proto = btf__add_func_proto(b, ret);
            btf__add_func(b, name, BTF_FUNC_GLOBAL, proto);
        }
        path_ = test::write_btf_file(b);
        btf_.emplace(KernelBtf::load(path_));
    }
    static void TearDownTestSuite() {
        unlink(path_.c_str());
        btf_.reset();
    }
    static ReturnType of(const char* name) {
        const auto f = btf_->function(name);
        EXPECT_TRUE(f) << name;
        return f ? return_type(*btf_, *f) : ReturnType{};
    }

    static inline std::string path_;
    static inline std::optional<KernelBtf> btf_;
};

TEST_F(RetvalFixture, KindsFromTheReturnType) {
    EXPECT_EQ(of("do_sys_openat2").kind, Kind::Errno);
    EXPECT_EQ(of("do_sys_openat2").size, 8u);
    EXPECT_EQ(of("vfs_open").kind, Kind::Errno);
    EXPECT_EQ(of("vfs_open").size, 4u);
    EXPECT_EQ(of("vfs_read").kind, Kind::Errno); // through the typedef
    EXPECT_EQ(of("filp_open").kind, Kind::Pointer);
    EXPECT_EQ(of("is_subdir").kind, Kind::Bool);
    EXPECT_EQ(of("full_name_hash").kind, Kind::None); // unsigned: a value
    EXPECT_EQ(of("get_state").kind, Kind::None);
    EXPECT_EQ(of("fput").kind, Kind::None);
}

TEST(Retval, IntFailuresFromTheLowHalfOnly) {
    const ReturnType i32{Kind::Errno, 4};
    // an int's -ENOENT with garbage above it in %rax
    EXPECT_TRUE(is_failure(i32, 0xdeadbeeffffffffeULL));
    EXPECT_EQ(failure_errno(i32, 0x00000000fffffffeULL), 2);
    EXPECT_EQ(describe_return(i32, 0x00000000fffffffeULL), "-ENOENT");
    EXPECT_FALSE(is_failure(i32, 0));
    EXPECT_FALSE(is_failure(i32, 5));
    // below -MAX_ERRNO: a negative value, not an errno
    EXPECT_FALSE(is_failure(i32, static_cast<std::uint32_t>(-4096)));
    EXPECT_EQ(describe_return(i32, static_cast<std::uint32_t>(-4096)), "-4096");
    EXPECT_EQ(describe_return(i32, 7), "7");
}

TEST(Retval, LongAndPointerFailures) {
    const ReturnType i64{Kind::Errno, 8};
    EXPECT_EQ(describe_return(i64, static_cast<std::uint64_t>(-22)), "-EINVAL");
    // a long's low half alone is not -EINVAL
    EXPECT_FALSE(is_failure(i64, 0x00000000ffffffeaULL));
    const ReturnType ptr{Kind::Pointer, 8};
    EXPECT_TRUE(is_failure(ptr, 0));
    EXPECT_EQ(describe_return(ptr, 0), "NULL");
    EXPECT_EQ(failure_errno(ptr, 0), 0);
    EXPECT_TRUE(is_failure(ptr, static_cast<std::uint64_t>(-12)));
    EXPECT_EQ(describe_return(ptr, static_cast<std::uint64_t>(-12)), "ERR_PTR(-ENOMEM)");
    EXPECT_FALSE(is_failure(ptr, 0xffff888003a1c000ULL));
    EXPECT_EQ(describe_return(ptr, 0xffff888003a1c000ULL), "0xffff888003a1c000");
}

TEST(Retval, BoolOnlyWhenAsked) {
    const ReturnType b{Kind::Bool, 1};
    EXPECT_FALSE(is_failure(b, 0));
    EXPECT_TRUE(is_failure(b, 0, true));
    EXPECT_FALSE(is_failure(b, 0x100, false)); // only the low byte is the bool
    EXPECT_TRUE(is_failure(b, 0x100, true));
    EXPECT_EQ(describe_return(b, 1), "true");
    EXPECT_EQ(describe_return(b, 0x100), "false");
    const ReturnType none;
    EXPECT_FALSE(is_failure(none, static_cast<std::uint64_t>(-1), true));
    EXPECT_EQ(describe_return(none, 255), "0xff");
}

TEST(Retval, ErrnoNames) {
    EXPECT_EQ(errno_name(1), "EPERM");
    EXPECT_EQ(errno_name(13), "EACCES");
    EXPECT_EQ(errno_name(95), "EOPNOTSUPP");
    // the kernel's own, which user space never sees
    EXPECT_EQ(errno_name(512), "ERESTARTSYS");
    EXPECT_EQ(errno_name(517), "EPROBE_DEFER");
    EXPECT_EQ(errno_name(524), "ENOTSUPP");
    EXPECT_EQ(errno_name(600), "E600");
}

} // namespace
} // namespace fhook
