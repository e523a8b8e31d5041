// fhook export's file and its reloads, on the fake kernel.
#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/engine/export.hpp>

#include "fake_system.hpp"

namespace fhook {
namespace {

using test::System;

std::string refusal(const std::string& toml) {
    try {
        parse_export_config(toml, "export.toml");
    } catch (const Error& e) {
        return e.what();
    }
    return "accepted";
}

TEST(Export, TheFileNamesItsJobs) {
    const ExportConfig c = parse_export_config(R"(
listen = "0.0.0.0:9200"
series_limit = 500
pid_labels = true

[[count]]
name = "vfs"
functions = ["vfs_read", "vfs_write"]
filter = "comm == \"cat\""

[[latency]]
name = "read"
functions = ["vfs_read"]

[[wakeup]]
name = "rt"
class = "rt"

[[hist]]
name = "readers"
probe = "vfs_read"
triggers = ["keys=common_pid.execname if common_pid > 1", "keys=cpu if common_pid > 1"]
)",
                                               "export.toml");
    EXPECT_EQ(c.listen, "0.0.0.0:9200");
    EXPECT_EQ(c.metrics.series_limit, 500u);
    EXPECT_TRUE(c.metrics.pid_labels);
    ASSERT_EQ(c.jobs.size(), 4u);
    EXPECT_EQ(c.jobs[0].name, "vfs");
    EXPECT_EQ(c.jobs[0].spec.collect, Collect::Counts);
    EXPECT_EQ(c.jobs[0].spec.probes, (std::vector<std::string>{"vfs_read", "vfs_write"}));
    EXPECT_EQ(c.jobs[0].spec.filter, "comm == \"cat\"");
    EXPECT_EQ(c.jobs[1].spec.collect, Collect::Latency);
    EXPECT_EQ(c.jobs[2].spec.collect, Collect::Wakeup);
    EXPECT_EQ(c.jobs[2].spec.wakeup.wclass, std::uint32_t{FHOOK_WAKEUP_RT});
    EXPECT_FALSE(c.jobs[2].spec.wakeup.reports);
    // a hist job: the triggers' shared 'if' is the probe's filter
    EXPECT_EQ(c.jobs[3].spec.collect, Collect::Events);
    EXPECT_EQ(c.jobs[3].spec.probes, std::vector<std::string>{"vfs_read"});
    ASSERT_EQ(c.jobs[3].hist.size(), 2u);
    EXPECT_EQ(c.jobs[3].spec.filter, "common_pid > 1");
    // the same table is the same job; another is not
    EXPECT_EQ(
        parse_export_config("[[count]]\nname = \"a\"\nfunctions = [\"f\"]\n", "x").jobs[0].key,
        parse_export_config("[[count]]\nfunctions = [\"f\"]\nname = \"a\"\n", "y").jobs[0].key);
    EXPECT_NE(
        parse_export_config("[[count]]\nname = \"a\"\nfunctions = [\"f\"]\n", "x").jobs[0].key,
        parse_export_config("[[latency]]\nname = \"a\"\nfunctions = [\"f\"]\n", "x").jobs[0].key);
}

TEST(Export, MistakesAreNamedWithTheirPlace) {
    EXPECT_EQ(refusal(""), "export.toml: no job: give at least one [[count]], [[latency]], "
                           "[[wakeup]] or [[hist]] table");
    EXPECT_EQ(refusal("[[count]\n"),
              "export.toml:1:9: Error while parsing table header: expected ']', saw '\\n'");
    EXPECT_EQ(refusal("listen = 9110\n[[count]]\nname=\"a\"\nfunctions=[\"f\"]\n"),
              "export.toml: listen must be a string, e.g. listen = \"127.0.0.1:9110\"");
    EXPECT_EQ(refusal("[[count]]\nname = \"a\"\n"),
              "export.toml: [[count]] #1: 'functions' must be a list of strings, e.g. functions = "
              "[\"vfs_read\"]");
    EXPECT_EQ(
        refusal("[[count]]\nfunctions = [\"f\"]\n"),
        "export.toml: [[count]] #1: every job needs a name = \"...\" (the metrics' job label)");
    EXPECT_EQ(
        refusal("[[count]]\nname=\"a\"\nfunctions=[\"f\"]\n[[latency]]\nname=\"a\"\nfunctions="
                "[\"f\"]\n"),
        "export.toml: [[latency]] #1: a second job named 'a'");
    EXPECT_EQ(
        refusal("[[wakeup]]\nname=\"w\"\nclass=\"fifo\"\n"),
        "export.toml: [[wakeup]] #1: class must be \"normal\", \"rt\" or \"dl\", not \"fifo\"");
    EXPECT_EQ(refusal("[[count]]\nname=\"a\"\nfunctions=[\"f\"]\nvia=\"direct\"\n"),
              "export.toml: [[count]] #1: unknown key 'via'");
    EXPECT_EQ(refusal("series_limit = 1\n[[count]]\nname=\"a\"\nfunctions=[\"f\"]\n"),
              "export.toml: series_limit must be a number of at least 2");
    EXPECT_EQ(refusal("[[gauge]]\nname=\"a\"\n"), "export.toml: unknown key 'gauge'");
    EXPECT_EQ(
        refusal("[[hist]]\nname=\"h\"\nprobe=\"f\"\ntriggers=[\"keys=cpu if common_pid > 1\", "
                "\"keys=cpu\"]\n"),
        "export.toml: [[hist]] #1: the triggers of a hist job must share their 'if' (the "
        "module keeps their tables)");
    EXPECT_EQ(refusal("[[hist]]\nname=\"h\"\ntriggers=[\"keys=cpu\"]\n"),
              "export.toml: [[hist]] #1: a hist job needs probe = \"...\" (a function or a probe "
              "definition)");
}

// A reload keeps an unchanged job armed, counts and all; arms the new
// one, drops the one gone; a job that cannot arm leaves the jobs as
// they were.
TEST(Export, AReloadKeepsWhatDidNotChange) {
    System sys;
    Exporter exporter(sys.paths());
    const auto config = [](const std::string& toml) { return parse_export_config(toml, "e"); };
    const std::string reads = "[[count]]\nname = \"reads\"\nfunctions = [\"vfs_read\"]\n";
    const std::string writes = "[[count]]\nname = \"writes\"\nfunctions = [\"vfs_write\"]\n";
    Exporter::Change c = exporter.apply(config(reads));
    EXPECT_EQ(c.armed, std::vector<std::string>{"reads"});
    sys.kernel->stats[1] = {{5, 0, 0, 0}, {0, 0, 0, 0}};
    const std::string five =
        "fhook_calls_total{fhook_job=\"reads\",function=\"vfs_read\",module=\"\"} 5\n";
    EXPECT_NE(exporter.prometheus_text().find(five), std::string::npos)
        << exporter.prometheus_text();
    c = exporter.apply(config(reads + writes));
    EXPECT_EQ(c.kept, std::vector<std::string>{"reads"});
    EXPECT_EQ(c.armed, std::vector<std::string>{"writes"});
    EXPECT_TRUE(c.dropped.empty());
    std::string text = exporter.prometheus_text();
    EXPECT_NE(text.find(five), std::string::npos) << text;
    EXPECT_NE(text.find("fhook_calls_total{fhook_job=\"writes\",function=\"vfs_write\""),
              std::string::npos)
        << text;
    // one HELP per family, both jobs' series under it
    EXPECT_EQ(text.find("# TYPE fhook_calls_total"), text.rfind("# TYPE fhook_calls_total"));
    // (the module refuses the new job's probe)
    sys.kernel->probe_add_errno = ENOENT;
    EXPECT_THROW(exporter.apply(config(reads + writes +
                                       "[[count]]\nname = \"bad\"\nfunctions = [\"vfs_read\"]\n")),
                 Error);
    sys.kernel->probe_add_errno = 0;
    text = exporter.prometheus_text();
    EXPECT_NE(text.find(five), std::string::npos) << text;
    EXPECT_NE(text.find("fhook_job=\"writes\""), std::string::npos) << text;
    c = exporter.apply(config(writes));
    EXPECT_EQ(c.kept, std::vector<std::string>{"writes"});
    EXPECT_EQ(c.dropped, std::vector<std::string>{"reads"});
    EXPECT_EQ(exporter.prometheus_text().find("fhook_job=\"reads\""), std::string::npos);
}

} // namespace
} // namespace fhook
