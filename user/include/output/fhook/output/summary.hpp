// The stderr summary of `fhook trace`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fhook/core/session.hpp>
#include <fhook/ring/event.hpp>

namespace fhook {

struct ProbeSummary {
    std::uint32_t id = 0;
    Stats stats;
    std::string description; // the PROBE specs, space separated
};

// Lines (without '\n') in the format of docs/cli.md:
//   fhook: events N lost N
//   fhook: cpu C events N lost N             (one per CPU)
//   fhook: probe ID hits N events N lost N missed N: SPECS
std::vector<std::string> summary_lines(const Stats& session,
                                       const std::vector<ProbeSummary>& probes);

// The same lines, each ended by a newline.
std::string summary_text(const Stats& session, const std::vector<ProbeSummary>& probes);
// The same as one JSON object (docs/cli.md "Summary"), with a newline:
// {"events":N,"lost":N,"cpus":[{"cpu":C,"events":N,"lost":N}...],
//  "probes":[{"id":I,"hits":N,"events":N,"lost":N,"missed":N,"probe":"SPECS"}...]}
std::string summary_json(const Stats& session, const std::vector<ProbeSummary>& probes);

// A row of `fhook stat`.
struct StatRow {
    std::uint32_t id = 0;
    Stats stats;
    std::uint64_t filtered = 0;
    std::string description;
};

// The table of `fhook stat` (docs/cli.md), with a header line:
//   probe        hits    filtered  missed      events        lost  definition
std::string stat_table(const std::vector<StatRow>& rows);

// A row of `fhook count`: one function's hits (or a probe's total, named
// by its argument).
struct CountRow {
    std::uint32_t probe = 0;
    std::string function;
    std::string module; // "" for vmlinux (and a probe's total)
    std::uint64_t hits = 0;
    bool total = false; // the probe's total (shown even without hits)
};

// What `rows` counted since `before` (an earlier count_rows() of the same
// run); functions without hits since then are left out, totals kept.
std::vector<CountRow> count_since(const std::vector<CountRow>& rows,
                                  const std::vector<CountRow>& before);
// Most hits first (then by name); the first `top` (0: all).
std::vector<CountRow> count_sorted(std::vector<CountRow> rows, std::size_t top);

// The table of `fhook count` (docs/cli.md), with a header line:
//           hits  function
//          20000  vfs_read
//             12  ext4_file_read_iter [ext4]
// and "     (no calls)" under the header when no function was called.
std::string count_table(const std::vector<CountRow>& rows);
// The same as one JSON object with a newline: {"functions":[{"function":
// NAME,"module":M,"probe":ID,"hits":N}...]} and, when `elapsed` is given,
// "elapsed": seconds since the probes were armed (first).
std::string count_json(const std::vector<CountRow>& rows, std::optional<double> elapsed);

// Per probe, on stderr after a count (docs/cli.md):
//   fhook: probe 1 hits N filtered F missed M via ops: tcp_*
std::string count_summary(const std::vector<StatRow>& rows, const std::string& via);
// `fhook stat --format json`: {"probes":[{"id","probe","hits","filtered",
// "missed","events","lost"}...]} with a newline.
std::string stat_json(const std::vector<StatRow>& rows);

// `fhook report --stat`: the events per probe, per CPU and per task, and
// the records lost, of the events added.
class EventCounts {
public:
    void add(const Event& event);
    // Three tables (most events first for tasks) and the lost line;
    // `describe` names a probe id.
    std::string text(const std::function<std::string(std::uint32_t)>& describe) const;

private:
    std::map<std::uint32_t, std::uint64_t> probes_;
    std::map<std::uint16_t, std::uint64_t> cpus_;
    std::map<std::pair<std::string, std::uint32_t>, std::uint64_t> tasks_; // comm, pid
    std::uint64_t lost_ = 0;
};

} // namespace fhook
