#include <unistd.h>

#include <fstream>

#include <fhook/bench/scraper.hpp>
#include <fhook/core/error.hpp>
#include <fhook/sys/http.hpp>

namespace fhook::bench {

Scraper::Scraper(std::string url, std::chrono::milliseconds period)
    : url_(std::move(url)), period_(period), thread_([this] {
          tid_ = static_cast<pid_t>(::gettid());
          // (one connection: the server's thread for it lives as long,
          // its CPU time stays countable)
          HttpClient client(url_);
          while (!stop_) {
              if (scraping_) {
                  try {
                      const HttpReply r = client.request("GET", "/metrics");
                      if (r.status != 200) {
                          throw_runtime(url_ + " answered " + std::to_string(r.status));
                      }
                      scrapes_++;
                  } catch (const Error& e) {
                      const std::lock_guard lock(mutex_);
                      if (error_.empty()) {
                          error_ = e.what();
                      }
                  }
              }
              std::this_thread::sleep_for(period_);
          }
      }) {}

Scraper::~Scraper() {
    stop_ = true;
    thread_.join();
}

std::uint64_t Scraper::cpu_ns() const {
    std::ifstream in("/proc/self/task/" + std::to_string(tid_.load()) + "/schedstat");
    std::uint64_t ns = 0;
    in >> ns;
    return ns;
}

std::string Scraper::error() const {
    const std::lock_guard lock(mutex_);
    return error_;
}

} // namespace fhook::bench
