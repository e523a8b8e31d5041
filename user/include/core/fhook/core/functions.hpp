// fhook::FunctionSet: the functions a function probe hooks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fhook {

// Tracefs globs, exclusions and addresses (build_probe_request() makes one
// from PROBE specs; Session::add_function_probe() hooks it).
struct FunctionSet {
    std::vector<std::string> filters;  // tracefs globs
    std::vector<std::string> excludes; // tracefs globs, without the leading '!'
    std::vector<std::uint64_t> ips;    // function addresses
};

} // namespace fhook
