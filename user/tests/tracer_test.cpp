// The trace engine (fhook::Tracer) on a fake kernel: what it asks the
// module for, and what trace, count and latency print from its answers.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include <fhook/core/error.hpp>
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/tracer.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/output/summary.hpp>

#include "fake_kernel.hpp"
#include "fake_system.hpp"
#include "records.hpp"

namespace fhook {
namespace {

using test::FakeKernel;

using test::Capture;
using test::spec_of;
using test::System;

TEST(Tracer, TracePrintsTheRingsInTimeOrderWithTheSummary) {
    System sys;
    sys.kernel->queue(1, test::comm_rec(94, "cat", 1));
    sys.kernel->queue(1, test::func_rec(2000, 1, 0xffffffff812a0000, 0xffffffff812a0433, 94));
    sys.kernel->queue(0, test::comm_rec(95, "sh", 0));
    sys.kernel->queue(0, test::func_rec(1000, 0, 0xffffffff812b0000, 0xffffffff812b0821, 95));
    sys.kernel->queue(0, test::lost_rec(3000, 0, 7));
    sys.kernel->stats[1] = {{5, 1, 7, 0}, {1, 1, 0, 0}};
    TraceSpec spec = spec_of(Collect::Events, {"vfs_*", "!vfs_write"});
    spec.filter = "comm == \"cat\"";
    Tracer tracer(spec, sys.paths());
    tracer.setup();
    Capture out;
    PrintSink sink(out.fd(), tracer.ksyms(), OutputFormat::Text, tracer.probe_table());
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);

    // what the module was asked: one function probe with its filter and
    // predicate, every process but fhook's own
    ASSERT_EQ(sys.kernel->probes.size(), 1u);
    const auto& probe = sys.kernel->probes[0];
    EXPECT_EQ(probe.arg.type, FHOOK_PROBE_FUNC);
    EXPECT_EQ(probe.filter, "vfs_*");
    EXPECT_EQ(probe.exclude, "vfs_write");
    EXPECT_FALSE(probe.pred.empty());
    EXPECT_TRUE(sys.kernel->pids.empty());
    EXPECT_TRUE(sys.kernel->pid_flags & FHOOK_PIDF_IGNORE_SELF);
    EXPECT_TRUE(sys.kernel->started && sys.kernel->stopped);

    EXPECT_EQ(out.text(),
              "              sh-95      [000] .....     0.000001: vfs_write <-ksys_write\n"
              "             cat-94      [001] .....     0.000002: vfs_read <-ksys_read\n"
              "CPU:0 [LOST 7 EVENTS]\n");
    const std::vector<std::string> summary = summary_lines(tracer.stats(), tracer.probes());
    ASSERT_EQ(summary.size(), 4u);
    EXPECT_EQ(summary[0], "fhook: events 2 lost 7");
    EXPECT_EQ(
        summary[3],
        "fhook: probe 1 hits 6 events 2 lost 7 missed 0: vfs_* !vfs_write if comm == \"cat\"");
}

// kernel.ftrace_enabled = 0: ftrace would take the ops and patch nothing
TEST(Tracer, RefusesFunctionProbesWhileFtraceIsSwitchedOff) {
    System sys;
    sys.write("ftrace_enabled", "0\n");
    try {
        Tracer(spec_of(Collect::Events, {"vfs_read"}), sys.paths());
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("function tracing is off"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(Tracer(spec_of(Collect::Counts, {"vfs_read"}), sys.paths()), Error);
    EXPECT_TRUE(sys.kernel->probes.empty());
    // trace events do not go through ftrace's call sites
    TraceSpec events = spec_of(Collect::Events, {});
    events.events = {"sched:sched_switch"};
    EXPECT_NO_THROW(Tracer(events, sys.paths()));
}

TEST(Tracer, CountAddsOneCountingProbePerFunctionAndTablesTheirHits) {
    System sys;
    sys.kernel->stats[1] = {{3, 0, 0, 0}, {4, 0, 0, 1}};
    sys.kernel->stats[2] = {{10, 0, 0, 0}, {0, 0, 0, 0}};
    Tracer tracer(spec_of(Collect::Counts, {"vfs_read", "vfs_write"}), sys.paths());
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);

    ASSERT_EQ(sys.kernel->probes.size(), 2u);
    for (const auto& p : sys.kernel->probes) {
        EXPECT_EQ(p.arg.type, FHOOK_PROBE_FUNC);
        EXPECT_EQ(p.arg.flags, FHOOK_PROBE_F_COUNT);
    }
    EXPECT_EQ(sys.kernel->probes[1].filter, "vfs_write");
    // counting counts every caller, fhook's own calls too
    EXPECT_FALSE(sys.kernel->pid_flags & FHOOK_PIDF_IGNORE_SELF);
    EXPECT_EQ(count_summary(tracer.stat_rows(), attach_name(Attach::Ops)),
              "fhook: probe 1 hits 7 filtered 0 missed 1 via ops: vfs_read\n"
              "fhook: probe 2 hits 10 filtered 0 missed 0 via ops: vfs_write\n");
    EXPECT_EQ(count_table(count_sorted(tracer.count_rows(), 0)), "          hits  function\n"
                                                                 "            10  vfs_write\n"
                                                                 "             7  vfs_read\n");
}

// A glob is counted function by function: one probe on the addresses of
// the functions it selects (available_filter_functions, less the negated
// arguments; kallsyms), and a row per function called.
TEST(Tracer, CountsAGlobFunctionByFunction) {
    System sys;
    Tracer tracer(spec_of(Collect::Counts, {"*_read", "!ksys_read", "vfs_write"}), sys.paths());
    tracer.setup();
    ASSERT_EQ(sys.kernel->probes.size(), 2u);
    const auto& glob = sys.kernel->probes[0];
    EXPECT_EQ(glob.arg.flags, FHOOK_PROBE_F_COUNT | FHOOK_PROBE_F_COUNT_IPS);
    EXPECT_EQ(glob.filter, "");
    EXPECT_EQ(glob.ips, std::vector<std::uint64_t>{0xffffffff812a0000}); // vfs_read
    // a name is one counter, as before, with the negated arguments
    EXPECT_EQ(sys.kernel->probes[1].arg.flags, FHOOK_PROBE_F_COUNT);
    EXPECT_EQ(sys.kernel->probes[1].filter, "vfs_write");
    EXPECT_EQ(sys.kernel->probes[1].exclude, "ksys_read");
    sys.kernel->function_hits[1][0xffffffff812a0000] = 9;
    sys.kernel->stats[2] = {{4, 0, 0, 0}, {0, 0, 0, 0}};
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);
    EXPECT_EQ(count_table(count_sorted(tracer.count_rows(), 0)), "          hits  function\n"
                                                                 "             9  vfs_read\n"
                                                                 "             4  vfs_write\n");
}

// More functions than FHOOK_ARM_SLICE go by address (the module arms them
// a slice at a time): the call sites of available_filter_functions_addrs,
// else kallsyms; a name among the globs keeps them patterns.
TEST(Tracer, AGlobOfThousandsOfFunctionsGoesByAddress) {
    constexpr std::size_t kN = FHOOK_ARM_SLICE + 10;
    for (const bool addrs : {false, true}) {
        System sys;
        sys.big(kN, addrs);
        Tracer tracer(spec_of(Collect::Events, {"*", "!f1"}), sys.paths());
        tracer.setup();
        ASSERT_EQ(sys.kernel->probes.size(), 1u);
        const auto& p = sys.kernel->probes[0];
        EXPECT_EQ(p.filter, "");
        EXPECT_EQ(p.exclude, "");
        ASSERT_EQ(p.ips.size(), kN - 1) << addrs;
        EXPECT_EQ(p.ips[0], 0xffffffff81000000ULL + (addrs ? 4 : 0));
        EXPECT_EQ(p.ips[1], 0xffffffff81000200ULL + (addrs ? 4 : 0)); // f1 left out
    }
    System sys;
    sys.big(kN, false);
    Tracer few(spec_of(Collect::Events, {"f1*"}), sys.paths()); // 1,111 functions
    few.setup();
    EXPECT_EQ(sys.kernel->probes.back().filter, "f1*");
    EXPECT_TRUE(sys.kernel->probes.back().ips.empty());
    Tracer named(spec_of(Collect::Events, {"*", "f2"}), sys.paths());
    named.setup();
    EXPECT_TRUE(sys.kernel->probes.back().ips.empty());
}

// A call graph deeper than one level traces every other function below
// its own: by address when they are thousands, for the module to arm a
// slice at a time, without the graph's functions, its notrace ones and
// fhook's own; at depth 1 nothing below, and a module without
// FHOOK_FEAT_GRAPH_ALL is left to take every function itself.
TEST(Tracer, ACallGraphsCalleesGoByAddress) {
    constexpr std::size_t kN = FHOOK_ARM_SLICE + 100;
    auto graph = [](System& sys, std::uint32_t depth) {
        TraceSpec spec = spec_of(Collect::Events, {"f1"});
        spec.graph = GraphSpec{};
        spec.graph->depth = depth;
        spec.graph->notrace = {"f3?"};
        Tracer tracer(spec, sys.paths());
        tracer.setup();
        EXPECT_EQ(sys.kernel->probes.back().filter, "f1");
        return sys.kernel->probes.back();
    };
    for (const bool addrs : {false, true}) {
        System sys;
        sys.big(kN, addrs);
        // fhook's own functions, with and without the prefix
        sys.append("kallsyms", "ffffffffc0001000 t fhook_ring_commit\t[fhook]\n"
                               "ffffffffc0002000 t to_graph\t[fhook]\n");
        sys.append("available_filter_functions", "fhook_ring_commit [fhook]\nto_graph [fhook]\n");
        if (addrs) {
            sys.append("available_filter_functions_addrs",
                       "ffffffffc0001004 fhook_ring_commit [fhook]\n"
                       "ffffffffc0002004 to_graph [fhook]\n");
        }
        sys.kernel->features |= FHOOK_FEAT_GRAPH | FHOOK_FEAT_GRAPH_ALL;
        const auto p = graph(sys, 3);
        EXPECT_EQ(p.all_filter, "");
        // f1 and f30..f39 left out, and fhook's two
        ASSERT_EQ(p.all_ips.size(), kN - 1 - 10) << addrs;
        EXPECT_EQ(p.all_ips[0], 0xffffffff81000000ULL + (addrs ? 4 : 0));
        EXPECT_EQ(p.all_ips[1], 0xffffffff81000200ULL + (addrs ? 4 : 0));  // f2
        EXPECT_EQ(p.all_ips[29], 0xffffffff81002800ULL + (addrs ? 4 : 0)); // f40
        EXPECT_TRUE(graph(sys, 1).all_ips.empty());
        sys.kernel->features &= ~FHOOK_FEAT_GRAPH_ALL;
        EXPECT_TRUE(graph(sys, 3).all_ips.empty());
    }
}

// -e takes trace events as trace-cmd and perf do: SUBSYS:EVENT globs,
// SUBSYS, or EVENT in any subsystem; each a tracepoint probe on its id.
TEST(Tracer, EventPatternsSelectTraceEvents) {
    auto ids_of = [](std::vector<std::string> events) {
        System sys;
        sys.kernel->features |= FHOOK_FEAT_TRACEPOINT;
        TraceSpec spec = spec_of(Collect::Events, {});
        spec.events = std::move(events);
        Tracer tracer(spec, sys.paths());
        tracer.setup();
        std::vector<std::uint64_t> ids;
        for (const auto& p : sys.kernel->probes) {
            EXPECT_EQ(p.arg.type, FHOOK_PROBE_TRACEPOINT);
            ids.push_back(p.arg.addr);
        }
        return ids;
    };
    EXPECT_EQ(ids_of({"sched:*"}), (std::vector<std::uint64_t>{300, 301}));
    EXPECT_EQ(ids_of({"sched:*_wakeup", "irq"}), (std::vector<std::uint64_t>{301, 302}));
    EXPECT_EQ(ids_of({"sched_switch"}), (std::vector<std::uint64_t>{300}));
    System sys;
    TraceSpec spec = spec_of(Collect::Events, {});
    spec.events = {"sched:nothing*"};
    try {
        Tracer tracer(spec, sys.paths());
        ADD_FAILURE() << "no error for a pattern matching nothing";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no trace event matches 'sched:nothing*'"),
                  std::string::npos)
            << e.what();
    }
    spec.events = {"sched:sw itch"};
    EXPECT_THROW(Tracer(spec, sys.paths()), Error);
}

// count --via kprobe: one counting kprobe per name, its row named by it.
// Two globs selecting the same function count it once, under the first.
TEST(Tracer, OverlappingGlobsCountAFunctionOnce) {
    System sys;
    Tracer tracer(spec_of(Collect::Counts, {"vfs_*", "*_read", "ksys_*"}), sys.paths());
    tracer.setup();
    ASSERT_EQ(sys.kernel->probes.size(), 3u);
    EXPECT_EQ(sys.kernel->probes[0].ips,
              (std::vector<std::uint64_t>{0xffffffff812a0000, 0xffffffff812b0000}));
    EXPECT_EQ(sys.kernel->probes[1].ips, std::vector<std::uint64_t>{0xffffffff812a0400});
    EXPECT_EQ(sys.kernel->probes[2].ips, std::vector<std::uint64_t>{0xffffffff812b0800});
    // a glob with nothing left of its own has no probe
    System again;
    Tracer both(spec_of(Collect::Counts, {"*_read", "vfs_read*"}), again.paths());
    both.setup();
    EXPECT_EQ(again.kernel->probes.size(), 1u);
}

TEST(Tracer, CountsThroughKprobes) {
    System sys;
    TraceSpec spec = spec_of(Collect::Counts, {"vfs_read"});
    spec.attach = Attach::Kprobe;
    Tracer tracer(spec, sys.paths());
    tracer.setup();
    ASSERT_EQ(sys.kernel->probes.size(), 1u);
    EXPECT_EQ(sys.kernel->probes[0].arg.type, FHOOK_PROBE_KPROBE);
    EXPECT_EQ(sys.kernel->probes[0].arg.flags, FHOOK_PROBE_F_COUNT);
    sys.kernel->stats[1] = {{5, 0, 0, 0}, {0, 0, 0, 0}};
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);
    EXPECT_EQ(count_table(tracer.count_rows()), "          hits  function\n"
                                                "             5  vfs_read\n");
}

// Progress for a terminal: what is slow, then "" once done.
TEST(Tracer, ProgressNamesTheFunctionsBeingArmed) {
    System sys;
    std::vector<std::string> heard;
    Tracer tracer(spec_of(Collect::Events, {"vfs_*"}), sys.paths(),
                  [&heard](const std::string& doing) { heard.push_back(doing); });
    tracer.setup();
    heard.clear();
    tracer.start();
    EXPECT_EQ(heard, (std::vector<std::string>{"arming 2 functions", ""}));
}

TEST(Tracer, ACountOfOnlyNegatedArgumentsIsRefused) {
    System sys;
    EXPECT_THROW(Tracer(spec_of(Collect::Counts, {"!vfs_read"}), sys.paths()), Error);
}

TEST(Tracer, LatencyTimesByAddressAndPrintsTheModulesHistogram) {
    System sys;
    LatencyHist h;
    h.count = 3;
    h.sum_ns = 3000;
    h.buckets[10] = 2; // [512, 1023] ns
    h.buckets[11] = 1;
    sys.kernel->latency[1] = h;
    Tracer tracer(spec_of(Collect::Latency, {"vfs_read"}), sys.paths());
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);

    ASSERT_EQ(sys.kernel->probes.size(), 1u);
    const auto& arg = sys.kernel->probes[0].arg;
    EXPECT_EQ(arg.type, FHOOK_PROBE_DIRECT);
    EXPECT_EQ(arg.flags, FHOOK_PROBE_F_LATENCY);
    ASSERT_EQ(arg.nr_ips, 1u); // vfs_read's address from kallsyms
    EXPECT_EQ(
        format_latency_text(tracer.latency(tracer.probes()[0].id), tracer.probes()[0].description),
        "vfs_read\n"
        "     nsecs               : count    distribution\n"
        "                 512 -> 1023            : 2        "
        "|****************************************|\n"
        "                1024 -> 2047            : 1        "
        "|********************                    |\n"
        "\n"
        "avg = 1000 nsecs, total: 3000 nsecs, count: 3\n");
}

TEST(Tracer, RefusalsNameTheProbeAndTheFix) {
    System sys;
    sys.kernel->probe_add_errno = ENOSPC;
    TraceSpec spec = spec_of(Collect::Events, {"vfs_read"});
    spec.attach = Attach::Direct;
    Tracer tracer(spec, sys.paths());
    try {
        tracer.setup();
        FAIL() << "ENOSPC was not reported";
    } catch (const Error& e) {
        EXPECT_EQ(e.sys_errno(), ENOSPC);
        EXPECT_NE(std::string(e.what()).find("direct trampoline slots are in use"),
                  std::string::npos)
            << e.what();
    }
    // a spec the plan refuses never opens the device
    EXPECT_THROW(Tracer(spec_of(Collect::Counts, {"p:x vfs_read"}), sys.paths()), Error);
    EXPECT_THROW(Tracer(spec_of(Collect::Hook, {"vfs_*"}), sys.paths()), Error);
}

// The command's wait status, for `fhook ... -- COMMAND` to exit with it.
std::optional<int> command_status(const std::vector<std::string>& command) {
    System sys;
    TraceSpec spec = spec_of(Collect::Counts, {"vfs_read"});
    spec.duration.reset(); // until the command exits
    spec.command = command;
    Tracer tracer(spec, sys.paths());
    tracer.setup();
    DiscardSink sink;
    tracer.start();
    TraceObserver quiet;
    tracer.run(sink, quiet);
    // the pid filter was the command's
    EXPECT_FALSE(sys.kernel->pids.empty());
    return tracer.command_status();
}

TEST(Tracer, TheCommandsExitStatusIsKept) {
    const std::optional<int> exit3 = command_status({"sh", "-c", "exit 3"});
    ASSERT_TRUE(exit3);
    EXPECT_TRUE(WIFEXITED(*exit3));
    EXPECT_EQ(WEXITSTATUS(*exit3), 3);
    const std::optional<int> killed = command_status({"sh", "-c", "kill -TERM $$"});
    ASSERT_TRUE(killed);
    EXPECT_TRUE(WIFSIGNALED(*killed));
    EXPECT_EQ(WTERMSIG(*killed), SIGTERM);
    const std::optional<int> missing = command_status({"/nonexistent/command"});
    ASSERT_TRUE(missing);
    EXPECT_EQ(WEXITSTATUS(*missing), 127);
}

} // namespace
} // namespace fhook
