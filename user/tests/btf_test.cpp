// Typed fetch arguments: a BTF built here with libbpf's writer API stands
// for the kernel's (struct file, path, dentry, qstr and vfs_read with the
// layout given below), so the offsets are known independently.
#include <bpf/btf.h>
#include <linux/btf.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/sys/btf.hpp>

#include "btf_file.hpp"

namespace fhook {
namespace {

class BtfFixture : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        struct btf* b = btf__new_empty();
        const int s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
        const int u32 = btf__add_int(b, "unsigned int", 4, 0);
        const int u64 = btf__add_int(b, "long unsigned int", 8, 0);
        const int s64 = btf__add_int(b, "long long int", 8, BTF_INT_SIGNED);
        const int uchar = btf__add_int(b, "unsigned char", 1, 0);
        const int chr = btf__add_int(b, "char", 1, BTF_INT_CHAR);
        const int size_t_ = btf__add_typedef(b, "size_t", u64);
        const int loff_t_ = btf__add_typedef(b, "loff_t", s64);
        const int ssize_t_ = btf__add_typedef(b, "ssize_t", s64);
        const int cuchar = btf__add_const(b, uchar);
        const int pcuchar = btf__add_ptr(b, cuchar);
        const int qstr = btf__add_struct(b, "qstr", 16);
        btf__add_field(b, "hash_len", u64, 0, 0);
        btf__add_field(b, "name", pcuchar, 64, 0);
        (void)cuchar;
        const int iname = btf__add_array(b, s32, chr, 16);
        const int dentry = btf__add_struct(b, "dentry", 64);
        btf__add_field(b, "d_flags", u32, 0, 0);
        btf__add_field(b, "d_name", qstr, 32 * 8, 0);
        btf__add_field(b, "d_iname", iname, 48 * 8, 0);
        const int pvoid = btf__add_ptr(b, 0);
        const int pdentry = btf__add_ptr(b, dentry);
        const int path = btf__add_struct(b, "path", 16);
        btf__add_field(b, "mnt", pvoid, 0, 0);
        btf__add_field(b, "dentry", pdentry, 64, 0);
        const int file = btf__add_struct(b, "file", 96);
        btf__add_field(b, "f_mode", u32, 0, 0);
        btf__add_field(b, "f_path", path, 16 * 8, 0);
        btf__add_field(b, "f_pos", loff_t_, 64 * 8, 0);
        btf__add_field(b, "f_flags", u32, 72 * 8, 0);
        btf__add_field(b, "f_bits", u32, 76 * 8, 3); // a bit field
        // parameters attach to the type added last: the pointers first
        const int pfile = btf__add_ptr(b, file);
        const int pchar = btf__add_ptr(b, chr);
        const int ploff = btf__add_ptr(b, loff_t_);
        const int proto = btf__add_func_proto(b, ssize_t_);
        btf__add_func_param(b, "file", pfile);
        btf__add_func_param(b, "buf", pchar);
        btf__add_func_param(b, "count", size_t_);
        btf__add_func_param(b, "pos", ploff);
        btf__add_func(b, "vfs_read", BTF_FUNC_GLOBAL, proto);
        // register_a/_c(int (*cb)(struct file *)), register_b(int (*cb)(char *)):
        // only the callback's parameter differs
        const int cb_file = btf__add_func_proto(b, s32);
        btf__add_func_param(b, "", pfile);
        const int cb_char = btf__add_func_proto(b, s32);
        btf__add_func_param(b, "", pchar);
        const int pcb_file = btf__add_ptr(b, cb_file);
        const int pcb_char = btf__add_ptr(b, cb_char);
        for (const char* name : {"register_a", "register_c"}) {
            const int reg = btf__add_func_proto(b, s32);
            btf__add_func_param(b, "cb", pcb_file);
            btf__add_func(b, name, BTF_FUNC_GLOBAL, reg);
        }
        const int reg_b = btf__add_func_proto(b, s32);
        btf__add_func_param(b, "cb", pcb_char);
        btf__add_func(b, "register_b", BTF_FUNC_GLOBAL, reg_b);
        // and one taking a size_t where vfs_read takes a char *
        const int other = btf__add_func_proto(b, ssize_t_);
        btf__add_func_param(b, "file", pfile);
        btf__add_func_param(b, "buf", size_t_);
        btf__add_func_param(b, "count", size_t_);
        btf__add_func_param(b, "pos", ploff);
        btf__add_func(b, "vfs_other", BTF_FUNC_GLOBAL, other);
        path_ = test::write_btf_file(b);
        btf_.emplace(KernelBtf::load(path_));
    }
    static void TearDownTestSuite() {
        unlink(path_.c_str());
        btf_.reset();
    }

    static KprobeDef parse(std::string_view text) {
        return parse_kprobe(
            text, [](std::string_view) { return std::optional<std::uint64_t>(); },
            [] { return static_cast<const KernelBtf*>(&*btf_); });
    }
    static std::string error_of(std::string_view text) {
        try {
            parse(text);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }
    static bool same_insns(const KprobeDef& a, const KprobeDef& b) {
        if (a.insns.size() != b.insns.size()) {
            return false;
        }
        for (std::size_t i = 0; i < a.insns.size(); i++) {
            const auto &x = a.insns[i], &y = b.insns[i];
            if (x.op != y.op || x.size != y.size || x.dst != y.dst || x.arg != y.arg ||
                x.imm != y.imm) {
                return false;
            }
        }
        return true;
    }

    static inline std::string path_;
    static inline std::optional<KernelBtf> btf_;
};

TEST_F(BtfFixture, Prototype) {
    auto fn = btf_->function("vfs_read");
    ASSERT_TRUE(fn);
    EXPECT_EQ(btf_->prototype(*fn),
              "ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)");
    EXPECT_FALSE(btf_->function("no_such_function"));
}

// --redirect's check: two callback types are different types, though both
// are function pointers returning int.
TEST_F(BtfFixture, PrototypesCompareCallbacksStructurally) {
    const auto a = btf_->function("register_a");
    const auto b = btf_->function("register_b");
    const auto c = btf_->function("register_c");
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(btf_->prototype(*a), "int register_a(int (*cb)(struct file *))");
    EXPECT_EQ(btf_->prototype(*b), "int register_b(int (*cb)(char *))");
    EXPECT_TRUE(btf_->same_prototype(*a, *c));
    EXPECT_FALSE(btf_->same_prototype(*a, *b));
    EXPECT_EQ(btf_->type_name(b->params[0].type), "int (*)(char *)");
    const auto read = btf_->function("vfs_read");
    const auto other = btf_->function("vfs_other");
    EXPECT_TRUE(btf_->same_prototype(*read, *read));
    EXPECT_FALSE(btf_->same_prototype(*read, *other));
    EXPECT_FALSE(btf_->same_prototype(*read, *a));
}

TEST_F(BtfFixture, NamesCompileToTheHandWrittenOffsets) {
    auto named = parse("p:a vfs_read n=$arg1->f_path.dentry->d_name.name:string "
                       "p=file->f_pos fl=file->f_flags:x32 c=count i=file->f_path.dentry->d_iname");
    auto hand = parse("p:b vfs_read n=+0(+40(+24($arg1))):string p=+64($arg1):s64 "
                      "fl=+72($arg1):x32 c=$arg3:u64 i=+48(+24($arg1)):string");
    EXPECT_TRUE(same_insns(named, hand));
    EXPECT_EQ(named.fields[1].type.name, "s64");    // loff_t: long long
    EXPECT_EQ(named.fields[3].type.name, "u64");    // size_t
    EXPECT_EQ(named.fields[4].type.name, "string"); // a char array
    EXPECT_EQ(named.data_size, hand.data_size);
    // the record file's form needs no BTF and compiles the same
    auto again = parse_kprobe(named.canonical,
                              [](std::string_view) { return std::optional<std::uint64_t>(); });
    EXPECT_TRUE(same_insns(named, again)) << named.canonical;
    EXPECT_EQ(again.canonical, named.canonical);
}

TEST_F(BtfFixture, ArgsExpandsEveryArgument) {
    auto d = parse("p:a vfs_read $args");
    ASSERT_EQ(d.fields.size(), 4U);
    EXPECT_EQ(d.fields[0].name, "file");
    EXPECT_EQ(d.fields[0].type.name, "x64");
    EXPECT_EQ(d.fields[2].name, "count");
    EXPECT_EQ(d.fields[2].type.name, "u64");
    // in a return probe they are fetched at entry
    auto r = parse("r:b vfs_read $args ret=$retval");
    EXPECT_TRUE(r.fields[0].at_entry);
    EXPECT_FALSE(r.fields[4].at_entry);
    EXPECT_EQ(r.fields[4].type.name, "x64");
}

// An unnamed field written as a BTF name is named after it, as the kernel's
// kprobe_events does (generate_probe_arg_name()); anything else is argN.
TEST_F(BtfFixture, UnnamedFieldsTakeTheirBtfName) {
    auto d = parse("p:a vfs_read count:u32 file->f_flags:x32 %si buf");
    ASSERT_EQ(d.fields.size(), 4U);
    EXPECT_EQ(d.fields[0].name, "count");
    EXPECT_EQ(d.fields[1].name, "arg2");
    EXPECT_EQ(d.fields[2].name, "arg3");
    EXPECT_EQ(d.fields[3].name, "buf");
    EXPECT_EQ(parse("r:b vfs_read count@entry").fields[0].name, "arg1");
    // the kernel refuses a name given twice, implicitly too
    EXPECT_NE(error_of("p:a vfs_read count count:u32").find("'count' used twice"),
              std::string::npos);
}

TEST_F(BtfFixture, ErrorsNameTheMember) {
    EXPECT_NE(error_of("p:a vfs_read x=file->f_nope").find("struct file has no member 'f_nope'"),
              std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=file->f_nope").find("f_path"), std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=nope").find("has no argument 'nope'"), std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=count->x").find("not a pointer"), std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=file->f_path").find("name one of its members"),
              std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=file->f_bits").find("bit field"), std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read+4 x=file->f_pos").find("function entry"), std::string::npos);
    EXPECT_NE(error_of("p:a other_fn x=file->f_pos").find("BTF has no function 'other_fn'"),
              std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=$arg5->y").find("has 4 arguments"), std::string::npos);
    EXPECT_NE(error_of("p:a vfs_read x=file.f_pos").find("reached through ->"), std::string::npos);
    // no BTF at all
    try {
        parse_kprobe("p:a vfs_read x=file->f_pos", {}, [] { return nullptr; });
        FAIL() << "no error without BTF";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("BTF"), std::string::npos);
    }
}

} // namespace
} // namespace fhook
