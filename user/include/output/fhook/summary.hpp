// The stderr summary of `fhook trace`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fhook/session.hpp>

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

// The table of `fhook count` (docs/cli.md):
//   probe        hits    filtered  missed  via     function
std::string count_table(const std::vector<StatRow>& rows, const std::string& via);

} // namespace fhook
