// fhook bench: a scraper of a metrics endpoint, for the row of a table
// scraped while it counts (fhook-latency-scraped).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace fhook::bench {

// A thread of the bench fetching a metrics endpoint every `period` while
// on(): far faster than any Prometheus (15 s is usual), for the row of a table
// scraped while it counts.  Its CPU time and the tool's during the loop
// are the scrapes' (the consumer column), not the probe's.
class Scraper {
public:
    Scraper(std::string url, std::chrono::milliseconds period);
    Scraper(const Scraper&) = delete;
    Scraper& operator=(const Scraper&) = delete;
    ~Scraper();
    void on(bool scraping) { scraping_ = scraping; }
    // CPU time of the thread so far, ns
    std::uint64_t cpu_ns() const;
    std::uint64_t scrapes() const { return scrapes_; }
    // the first failure, "" without
    std::string error() const;

private:
    std::string url_;
    std::chrono::milliseconds period_;
    std::atomic<bool> scraping_{false}, stop_{false};
    std::atomic<std::uint64_t> scrapes_{0};
    std::atomic<pid_t> tid_{0};
    mutable std::mutex mutex_;
    std::string error_;
    std::thread thread_;
};

} // namespace fhook::bench
