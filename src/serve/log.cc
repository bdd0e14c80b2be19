#include "serve/log.h"

#include <fmt/core.h>

#include <algorithm>

namespace rdmacheck::serve {

std::string escape_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void Log::line_at(const std::string& s, Clock::time_point now) {
  const std::string out = escape_line(s);
  std::lock_guard<std::mutex> lock(mu_);
  if (last_ != Clock::time_point{}) {
    const double secs = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(rate_.burst, tokens_ + std::max(0.0, secs) * rate_.per_second);
  }
  last_ = now;
  if (tokens_ < 1) {
    ++dropped_;
    return;
  }
  tokens_ -= 1;
  if (dropped_ > 0) {
    std::fprintf(f_, "rdmacheck serve: %llu log lines left out (more than %.0f a second)\n",
                 static_cast<unsigned long long>(dropped_), rate_.per_second);
    dropped_ = 0;
  }
  std::fprintf(f_, "%s\n", out.c_str());
  std::fflush(f_);
}

}  // namespace rdmacheck::serve
