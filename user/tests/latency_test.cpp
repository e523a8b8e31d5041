// Host tests of the latency histograms: bucket ranges, intervals, the
// funclatency-style text and the JSON, and which functions a latency
// probe can time (stack words from BTF, variadic and no-return ones).
#include <bpf/btf.h>
#include <linux/btf.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include <gtest/gtest.h>

#include <fhook/core/latency.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/probe/latency_plan.hpp>

namespace fhook {
namespace {

// `b`'s raw BTF loaded back through a temporary file, as the kernel's
// /sys/kernel/btf files are read (split on `base` when given).
KernelBtf reload(const struct btf* b, const KernelBtf* base = nullptr) {
    __u32 size = 0;
    const void* raw = btf__raw_data(b, &size);
    char path[] = "/tmp/fhook-latbtf-XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, raw, size), static_cast<ssize_t>(size));
    close(fd);
    KernelBtf out = base ? KernelBtf::load_split(path, *base) : KernelBtf::load(path);
    unlink(path);
    return out;
}

TEST(Latency, BucketRanges) {
    using Range = std::pair<std::uint64_t, std::uint64_t>;
    EXPECT_EQ(latency_bucket_range(0), Range(0, 0));
    EXPECT_EQ(latency_bucket_range(1), Range(1, 1));
    EXPECT_EQ(latency_bucket_range(2), Range(2, 3));
    EXPECT_EQ(latency_bucket_range(11), Range(1024, 2047));
    EXPECT_EQ(latency_bucket_range(FHOOK_LAT_BUCKETS - 1).second, ~std::uint64_t{0});
    // every duration lands in the bucket the module computes: fls64(d)
    for (std::uint64_t d : {0ULL, 1ULL, 2ULL, 3ULL, 4ULL, 1000ULL, 4096ULL, 50000000ULL}) {
        const std::size_t b = d ? 64 - static_cast<std::size_t>(__builtin_clzll(d)) : 0;
        const auto [lo, hi] = latency_bucket_range(b);
        EXPECT_LE(lo, d);
        EXPECT_GE(hi, d);
    }
}

TEST(Latency, SinceSubtracts) {
    LatencyHist a, b;
    a.count = 3;
    a.sum_ns = 300;
    a.buckets[7] = 3;
    b = a;
    b.count = 5;
    b.sum_ns = 1300;
    b.buckets[7] = 4;
    b.buckets[10] = 1;
    b.inflight = 2;
    const LatencyHist d = b.since(a);
    EXPECT_EQ(d.count, 2u);
    EXPECT_EQ(d.sum_ns, 1000u);
    EXPECT_EQ(d.buckets[7], 1u);
    EXPECT_EQ(d.buckets[10], 1u);
    EXPECT_EQ(d.inflight, 2u);
}

TEST(Latency, TextLikeFunclatency) {
    LatencyHist h;
    h.buckets[12] = 10; // 2048..4095
    h.buckets[14] = 5;  // 8192..16383
    h.count = 15;
    h.sum_ns = 15 * 5000;
    const std::string text = format_latency_text(h, "vfs_read");
    EXPECT_EQ(text.rfind("vfs_read\n", 0), 0u) << text;
    EXPECT_NE(text.find("nsecs"), std::string::npos);
    EXPECT_NE(text.find("2048 -> 4095"), std::string::npos) << text;
    EXPECT_NE(text.find("4096 -> 8191"), std::string::npos) << text; // empty, between
    EXPECT_NE(text.find("8192 -> 16383"), std::string::npos);
    EXPECT_EQ(text.find("1024 -> 2047"), std::string::npos); // before the first
    EXPECT_NE(text.find("|****************************************|"), std::string::npos);
    EXPECT_NE(text.find("avg = 5000 nsecs, total: 75000 nsecs, count: 15"), std::string::npos);
    EXPECT_NE(format_latency_text(LatencyHist{}, "x").find("(no calls)"), std::string::npos);
}

// -u and -m (funclatency's): the same buckets, their exact bounds in the unit.
TEST(Latency, TextInMicrosecondsAndMilliseconds) {
    LatencyHist h;
    h.buckets[12] = 10; // 2048..4095 ns
    h.buckets[21] = 1;  // 1048576..2097151 ns
    h.count = 11;
    h.sum_ns = 2600000;
    const std::string us = format_latency_text(h, "", LatencyUnit::Usecs);
    EXPECT_NE(us.find("usecs"), std::string::npos) << us;
    EXPECT_NE(us.find("2.048 -> 4.095"), std::string::npos) << us;
    EXPECT_NE(us.find("1048.576 -> 2097.151"), std::string::npos) << us;
    EXPECT_NE(us.find("avg = 236 usecs, total: 2600 usecs, count: 11"), std::string::npos) << us;
    const std::string ms = format_latency_text(h, "", LatencyUnit::Msecs);
    EXPECT_NE(ms.find("msecs"), std::string::npos) << ms;
    EXPECT_NE(ms.find("0.002 -> 0.004"), std::string::npos) << ms;
    EXPECT_NE(ms.find("1.048 -> 2.097"), std::string::npos) << ms;
    EXPECT_NE(ms.find("avg = 0 msecs, total: 2 msecs"), std::string::npos) << ms;
}

TEST(Latency, Json) {
    LatencyHist h;
    h.buckets[0] = 1;
    h.buckets[3] = 2;
    h.count = 3;
    h.sum_ns = 9;
    h.max_ns = 7;
    EXPECT_EQ(format_latency_json(h, "a\"b"),
              "{\"name\":\"a\\\"b\",\"count\":3,\"sum_ns\":9,\"avg_ns\":3,\"inflight\":0,"
              "\"min_ns\":0,\"max_ns\":7,\"buckets\":[{\"lo\":0,\"hi\":0,\"count\":1},{\"lo\":4,"
              "\"hi\":7,\"count\":2}]}");
}

TEST(Latency, StackPlanWithoutBtf) {
    std::istringstream in("vfs_read\nvfs_write\ndo_exit\nfoo [mod]\n");
    const FunctionList functions = FunctionList::parse(in);
    LatencyStackPlan p = plan_latency_stack(parse_probe_spec("vfs_*"), functions, nullptr);
    EXPECT_EQ(p.selected, 2u);
    EXPECT_EQ(p.stack_args, static_cast<std::uint32_t>(FHOOK_HOOK_MAX_STACK_ARGS));
    EXPECT_TRUE(p.skipped.empty());
    p = plan_latency_stack(parse_probe_spec("do_exit"), functions, nullptr);
    EXPECT_EQ(p.selected, 1u);
    ASSERT_EQ(p.skipped.size(), 1u);
    EXPECT_EQ(p.why.front(), "a call of it may never return (its task exits inside)");
    p = plan_latency_stack(parse_probe_spec("nothing*"), functions, nullptr);
    EXPECT_EQ(p.selected, 0u);
}

// BTF with f8 (8 longs: 2 on the stack), f16 (16 longs: 10), fv (variadic)
// and big (a 24-byte struct by value: 3 stack words).
TEST(Latency, StackPlanFromBtf) {
    struct btf* b = btf__new_empty();
    const int lng = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
    const int s24 = btf__add_struct(b, "s24", 24);
    btf__add_field(b, "a", lng, 0, 0);
    btf__add_field(b, "b", lng, 64, 0);
    btf__add_field(b, "c", lng, 128, 0);
    auto add = [&](const char* name, int n, bool variadic, int type) {
        const int proto = btf__add_func_proto(b, lng);
        for (int i = 0; i < n; i++) {
            btf__add_func_param(b, ("a" + std::to_string(i)).c_str(), type);
        }
        if (variadic) {
            btf__add_func_param(b, nullptr, 0);
        }
        btf__add_func(b, name, BTF_FUNC_GLOBAL, proto);
    };
    add("f8", 8, false, lng);
    add("f16", 16, false, lng);
    add("fv", 1, true, lng);
    add("big", 1, false, s24);
    const KernelBtf btf = reload(b);
    btf__free(b);

    std::istringstream in("f8\nf16\nfv\nbig\nnobtf\n");
    const FunctionList functions = FunctionList::parse(in);
    LatencyStackPlan p = plan_latency_stack(parse_probe_spec("f8"), functions, &btf);
    EXPECT_EQ(p.stack_args, 2u);
    EXPECT_TRUE(p.skipped.empty());
    p = plan_latency_stack(parse_probe_spec("big"), functions, &btf);
    EXPECT_EQ(p.stack_args, 3u);
    p = plan_latency_stack(parse_probe_spec("f*"), functions, &btf);
    EXPECT_EQ(p.selected, 3u);
    EXPECT_EQ(p.stack_args, 2u); // f16 and fv skipped
    ASSERT_EQ(p.skipped.size(), 2u);
    EXPECT_EQ(p.skipped[0], "f16");
    EXPECT_NE(p.why[0].find("10 stack words"), std::string::npos) << p.why[0];
    EXPECT_EQ(p.skipped[1], "fv");
    p = plan_latency_stack(parse_probe_spec("nobtf"), functions, &btf);
    EXPECT_EQ(p.stack_args, static_cast<std::uint32_t>(FHOOK_HOOK_MAX_STACK_ARGS));
}

// A module's function: its BTF is split on vmlinux's (7 longs: 1 stack word).
TEST(Latency, StackPlanModuleBtf) {
    // the base of the split BTF must be the same types: rebuild vmlinux's
    struct btf* base = btf__new_empty();
    const int l = btf__add_int(base, "long int", 8, BTF_INT_SIGNED);
    struct btf* split = btf__new_empty_split(base);
    const int proto = btf__add_func_proto(split, l);
    for (int i = 0; i < 7; i++) {
        btf__add_func_param(split, ("a" + std::to_string(i)).c_str(), l);
    }
    btf__add_func(split, "modfn", BTF_FUNC_GLOBAL, proto);
    const KernelBtf vmlinux = reload(base);
    const KernelBtf mod = reload(split, &vmlinux);
    btf__free(split);
    btf__free(base);
    std::istringstream min("modfn [testmod]\nother [nobtfmod]\n");
    const FunctionList mfuncs = FunctionList::parse(min);
    const ModuleBtfProvider provider = [&](const std::string& name) -> const KernelBtf* {
        return name == "testmod" ? &mod : nullptr;
    };
    LatencyStackPlan mp = plan_latency_stack(parse_probe_spec("modfn"), mfuncs, &vmlinux, provider);
    EXPECT_EQ(mp.stack_args, 1u);
    mp = plan_latency_stack(parse_probe_spec("other"), mfuncs, &vmlinux, provider);
    EXPECT_EQ(mp.stack_args, static_cast<std::uint32_t>(FHOOK_HOOK_MAX_STACK_ARGS));
}

} // namespace
} // namespace fhook
