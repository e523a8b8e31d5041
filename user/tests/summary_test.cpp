#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>
#include <fhook/output/summary.hpp>

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

// funccount's table: most calls first, a module's function tagged, a
// probe's total kept without hits, --top cutting the rest.
TEST(CountTable, FunctionsByHitsThenName) {
    const std::vector<CountRow> rows = {{1, "vfs_read", "", 0, true},
                                        {2, "tcp_sendmsg", "", 40, false},
                                        {2, "ext4_file_read_iter", "ext4", 7, false},
                                        {2, "tcp_recvmsg", "", 40, false}};
    EXPECT_EQ(count_table(count_sorted(rows, 0)), "          hits  function\n"
                                                  "            40  tcp_recvmsg\n"
                                                  "            40  tcp_sendmsg\n"
                                                  "             7  ext4_file_read_iter [ext4]\n"
                                                  "             0  vfs_read\n");
    EXPECT_EQ(count_table(count_sorted(rows, 1)), "          hits  function\n"
                                                  "            40  tcp_recvmsg\n");
    // a glob whose functions were not called: said, as latency says it
    EXPECT_EQ(count_table({}), "          hits  function\n"
                               "     (no calls)\n");
    EXPECT_EQ(count_json({}, std::nullopt), "{\"functions\":[]}\n");
    EXPECT_EQ(count_json(count_sorted(rows, 1), 2.0),
              "{\"elapsed\":2.0,\"functions\":[{\"function\":\"tcp_recvmsg\",\"module\":\"\","
              "\"probe\":2,\"hits\":40}]}\n");
    EXPECT_EQ(count_json({}, std::nullopt), "{\"functions\":[]}\n");
}

// -i: each print shows what the interval counted; a function quiet since
// the last print leaves the table, a probe's total stays.
TEST(CountTable, IntervalsShowDeltas) {
    const std::vector<CountRow> first = {{1, "vfs_read", "", 5, true},
                                         {2, "tcp_sendmsg", "", 3, false}};
    const std::vector<CountRow> second = {{1, "vfs_read", "", 5, true},
                                          {2, "tcp_sendmsg", "", 3, false},
                                          {2, "tcp_recvmsg", "", 2, false}};
    const std::vector<CountRow> delta = count_since(second, first);
    ASSERT_EQ(delta.size(), 2u);
    EXPECT_EQ(delta[0].function, "vfs_read");
    EXPECT_EQ(delta[0].hits, 0u);
    EXPECT_EQ(delta[1].function, "tcp_recvmsg");
    EXPECT_EQ(delta[1].hits, 2u);
    EXPECT_EQ(count_since(first, {}).size(), 2u);
}

TEST(CountTable, SummaryAndStatJson) {
    StatRow row;
    row.id = 1;
    row.stats.total.hits = 20000;
    row.stats.total.missed = 2;
    row.filtered = 3;
    row.description = "tcp_*";
    EXPECT_EQ(count_summary({row}, "ops"),
              "fhook: probe 1 hits 20000 filtered 3 missed 2 via ops: tcp_*\n");
    EXPECT_EQ(stat_json({row}), "{\"probes\":[{\"id\":1,\"probe\":\"tcp_*\",\"hits\":20000,"
                                "\"filtered\":3,\"missed\":2,\"events\":0,\"lost\":0}]}\n");
}

} // namespace
} // namespace fhook
