#include <gtest/gtest.h>

#include <fhook/error.hpp>
#include <fhook/session.hpp>
#include <fhook/summary.hpp>

namespace fhook {
namespace {

TEST(Summary, LinesMatchDocs) {
    Stats session;
    session.total = {2000, 2000, 0, 0};
    session.per_cpu = {{1200, 1200, 0, 0}, {800, 800, 0, 0}};
    ProbeSummary probe{1, session, "vfs_read vfs_write"};
    auto lines = summary_lines(session, {probe});
    EXPECT_EQ(lines, (std::vector<std::string>{
                         "fhook: events 2000 lost 0",
                         "fhook: cpu 0 events 1200 lost 0",
                         "fhook: cpu 1 events 800 lost 0",
                         "fhook: probe 1 hits 2000 events 2000 lost 0 missed 0: vfs_read vfs_write",
                     }));
}

TEST(Summary, LostAndMissed) {
    Stats session;
    session.total = {150, 100, 50, 3};
    session.per_cpu = {{150, 100, 50, 3}};
    auto lines = summary_lines(session, {{7, session, "!*rcu* :mod:loop"}});
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "fhook: events 100 lost 50");
    EXPECT_EQ(lines[1], "fhook: cpu 0 events 100 lost 50");
    EXPECT_EQ(lines[2], "fhook: probe 7 hits 150 events 100 lost 50 missed 3: !*rcu* :mod:loop");
}

TEST(RingBytes, FromKib) {
    EXPECT_EQ(ring_bytes_from_kib(1), 4096u);
    EXPECT_EQ(ring_bytes_from_kib(4), 4096u);
    EXPECT_EQ(ring_bytes_from_kib(5), 8192u);
    EXPECT_EQ(ring_bytes_from_kib(1024), 1u << 20);
    EXPECT_EQ(ring_bytes_from_kib(1000), 1u << 20);
    EXPECT_EQ(ring_bytes_from_kib(FHOOK_RING_MAX_SIZE / 1024), FHOOK_RING_MAX_SIZE);
    EXPECT_THROW(ring_bytes_from_kib(0), Error);
    EXPECT_THROW(ring_bytes_from_kib(FHOOK_RING_MAX_SIZE / 1024 + 1), Error);
}

} // namespace
} // namespace fhook

namespace fhook {
namespace {

TEST(Summary, JsonHasTheNumbersOfTheLines) {
    Stats session;
    session.per_cpu = {CpuStats{10, 8, 2, 0}, CpuStats{5, 5, 0, 1}};
    session.total = CpuStats{15, 13, 2, 1};
    ProbeSummary probe{3, session, "vfs_read if comm == \"cat\""};
    EXPECT_EQ(summary_json(session, {probe}),
              "{\"events\":13,\"lost\":2,\"cpus\":[{\"cpu\":0,\"events\":8,\"lost\":2},"
              "{\"cpu\":1,\"events\":5,\"lost\":0}],\"probes\":[{\"id\":3,\"hits\":15,"
              "\"events\":13,\"lost\":2,\"missed\":1,\"probe\":\"vfs_read if comm == "
              "\\\"cat\\\"\"}]}\n");
}

} // namespace
} // namespace fhook
