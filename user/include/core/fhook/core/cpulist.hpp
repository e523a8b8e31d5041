// CPU list parsing ("0", "0,2-3").
#pragma once

#include <set>
#include <string_view>

#include <fhook_abi.h>

namespace fhook {

// Parses a comma-separated list of CPUs and inclusive ranges.  Throws a
// Invalid Error for empty items, non-digits, reversed ranges or CPUs >=
// `limit`.
std::set<int> parse_cpu_list(std::string_view text, int limit = FHOOK_MAX_CPUMASK * 8);

} // namespace fhook
