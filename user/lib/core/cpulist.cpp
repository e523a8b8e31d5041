#include <charconv>
#include <string>

#include <fhook/core/cpulist.hpp>
#include <fhook/core/error.hpp>

namespace fhook {

namespace {

[[noreturn]] void bad_list(std::string_view text, const std::string& why) {
    throw_invalid("invalid CPU list '" + std::string(text) + "': " + why +
                  ": write CPUs and ranges, e.g. 0,2-3");
}

int parse_cpu(std::string_view whole, std::string_view item, int limit) {
    if (item.empty()) {
        bad_list(whole, "empty CPU number");
    }
    int value = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc() || end != item.data() + item.size() || item.front() == '+' ||
        item.front() == '-') {
        bad_list(whole, "'" + std::string(item) + "' is not a CPU number");
    }
    if (value >= limit) {
        bad_list(whole, "CPU " + std::string(item) + " is beyond the limit of " +
                            std::to_string(limit) + " CPUs");
    }
    return value;
}

} // namespace

std::set<int> parse_cpu_list(std::string_view text, int limit) {
    if (text.empty()) {
        bad_list(text, "the list is empty");
    }
    std::set<int> cpus;
    std::string_view rest = text;
    for (;;) {
        std::size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            cpus.insert(parse_cpu(text, item, limit));
        } else {
            int first = parse_cpu(text, item.substr(0, dash), limit);
            int last = parse_cpu(text, item.substr(dash + 1), limit);
            if (last < first) {
                bad_list(text, "range '" + std::string(item) + "' is reversed");
            }
            for (int cpu = first; cpu <= last; cpu++) {
                cpus.insert(cpu);
            }
        }
        if (comma == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(comma + 1);
    }
    return cpus;
}

} // namespace fhook
