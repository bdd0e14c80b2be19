// The server's log: one line per event, to the operator's terminal or the
// journal. Lines carry text a client chose (its hostname, its error
// messages): anything not printable is escaped, so a client can neither
// forge a line nor send escape sequences to a terminal. A flood of events
// (refused connections, failed handshakes) is rate-limited, and the lines
// left out are counted in the next one that is written.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "base/deadline.h"

namespace rdmacheck::serve {

// S with every control character written as \xNN.
std::string escape_line(const std::string& s);

struct LogRate {
  double per_second = 20;  // lines a second, sustained
  double burst = 200;      // lines at once
};

class Log {
 public:
  using Rate = LogRate;
  explicit Log(std::FILE* f, Rate r = {}) : f_(f), rate_(r), tokens_(r.burst) {}
  void line(const std::string& s) { line_at(s, Clock::now()); }
  // As line(), at NOW (tests give the time instead of waiting for it).
  void line_at(const std::string& s, Clock::time_point now);

 private:
  std::FILE* f_;
  Rate rate_;
  std::mutex mu_;
  double tokens_;
  Clock::time_point last_{};
  uint64_t dropped_ = 0;
};

}  // namespace rdmacheck::serve
