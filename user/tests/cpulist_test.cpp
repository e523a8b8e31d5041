#include <gtest/gtest.h>

#include <fhook/core/cpulist.hpp>
#include <fhook/core/error.hpp>

namespace fhook {
namespace {

TEST(CpuList, Valid) {
    EXPECT_EQ(parse_cpu_list("0"), (std::set<int>{0}));
    EXPECT_EQ(parse_cpu_list("0,2-3"), (std::set<int>{0, 2, 3}));
    EXPECT_EQ(parse_cpu_list("3,1,1-2"), (std::set<int>{1, 2, 3}));
    EXPECT_EQ(parse_cpu_list("5-5"), (std::set<int>{5}));
    EXPECT_EQ(parse_cpu_list("0-3", 4), (std::set<int>{0, 1, 2, 3}));
}

TEST(CpuList, MalformedAreUsageErrors) {
    for (const char* bad : {"", ",", "0,", ",0", "1,,2", "a", "1a", "-1", "1-", "-", "3-1", "1-2-3",
                            " 1", "1 ", "+1", "0x1", "99999999999", "4"}) {
        try {
            parse_cpu_list(bad, 4);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Invalid) << bad;
        }
    }
}

} // namespace
} // namespace fhook
