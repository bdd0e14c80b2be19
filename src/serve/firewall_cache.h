// The server's view of its firewall for failed tests' byes, read at most
// once every few seconds: a stream of failing tests (a fleet probing a host
// whose firewall drops RoCE) runs the firewall tools as root once per
// interval, not once per test. Sessions that ask while a read runs wait for
// it (bounded by the read's own deadline) and share its result.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "base/deadline.h"

namespace rdmacheck::serve {

class FirewallCache {
 public:
  using Reader = std::vector<std::string> (*)(std::chrono::milliseconds within);
  static constexpr std::chrono::seconds kFresh{5};

  // Reads with host::read_firewall (not explicit: a member of an aggregate).
  FirewallCache() : FirewallCache(nullptr) {}
  // READER: its own reader (tests); nullptr: host::read_firewall.
  explicit FirewallCache(Reader reader);
  // The rules that drop UDP 4791 here, at most kFresh old.
  std::vector<std::string> rules(Clock::time_point now = Clock::now());
  // The same, "; "-separated ("" = none), as a bye carries them.
  std::string text(Clock::time_point now = Clock::now());
  [[nodiscard]] int reads() const { return reads_; }

 private:
  Reader reader_;
  std::mutex mu_;
  Clock::time_point read_at_{};
  std::vector<std::string> rules_;
  int reads_ = 0;
};

}  // namespace rdmacheck::serve
