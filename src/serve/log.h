// The server's log: one line per event, to the operator's terminal or the
// journal. Lines carry text a client chose (its hostname, its error
// messages): anything not printable is escaped, so a client can neither
// forge a line nor send escape sequences to a terminal. A flood of events
// (refused connections, failed handshakes) is rate-limited, and the lines
// left out are counted in the next one that is written. Security events
// (a failed key or identity, a record changed on the path, a key ring
// re-read) draw on a budget of their own: no flood of other lines starves
// them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "base/deadline.h"

namespace rdmacheck::serve {

// S with every control character (C0, DEL, C1) and every bidirectional
// formatting character (U+061C, U+200E/F, U+202A..E, U+2066..9) written as
// \xNN or \u{XXXX}, and every byte that is not UTF-8 as \xNN: a line reads
// as what it holds, in the order it holds it.
std::string escape_line(const std::string& s);

struct LogRate {
  double per_second = 20;  // lines a second, sustained
  double burst = 200;      // lines at once
};

class Log {
 public:
  using Rate = LogRate;
  explicit Log(std::FILE* f, Rate r = {}) : f_(f), general_(r), security_(r) {}
  void line(const std::string& s) { line_at(s, Clock::now()); }
  // A security event, from its own budget.
  void security(const std::string& s) { line_at(s, Clock::now(), true); }
  // As line() (or security()), at NOW (tests give the time instead of waiting for it).
  void line_at(const std::string& s, Clock::time_point now, bool security = false);

 private:
  struct Bucket {
    explicit Bucket(Rate r) : rate(r), tokens(r.burst) {}
    Rate rate;
    double tokens;
    Clock::time_point last{};
    uint64_t dropped = 0;
  };
  std::FILE* f_;
  std::mutex mu_;
  Bucket general_;
  Bucket security_;
};

}  // namespace rdmacheck::serve
