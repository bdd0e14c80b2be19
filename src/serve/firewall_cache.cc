#include "serve/firewall_cache.h"

#include "host/firewall.h"

namespace rdmacheck::serve {
namespace {

std::vector<std::string> read_rules(std::chrono::milliseconds within) {
  return read_firewall(within).rules;
}

}  // namespace

FirewallCache::FirewallCache(Reader reader) : reader_(reader != nullptr ? reader : read_rules) {}

std::vector<std::string> FirewallCache::rules(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reads_ == 0 || now - read_at_ >= kFresh) {
    // Within the 5 s a client waits for its bye at most (ping's report reserve).
    rules_ = reader_(std::chrono::seconds(4));
    read_at_ = now;
    ++reads_;
  }
  return rules_;
}

std::string FirewallCache::text(Clock::time_point now) {
  std::string out;
  for (const auto& r : rules(now)) out += (out.empty() ? "" : "; ") + r;
  return out;
}

}  // namespace rdmacheck::serve
