#include "serve/log.h"

#include <fmt/core.h>

#include <algorithm>

namespace rdmacheck::serve {
namespace {

// The length of the UTF-8 sequence at S[I] and its code point, or 0 when
// the bytes there are not one (a stray continuation byte, an overlong or
// cut-off sequence, a surrogate, beyond U+10FFFF).
size_t utf8_at(const std::string& s, size_t i, char32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  const char32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// C1 controls and the characters that reorder what a terminal shows.
bool hidden(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string escape_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        out += fmt::format("\\x{:02x}", c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    char32_t cp = 0;
    const size_t n = utf8_at(s, i, cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (hidden(cp)) {
      out += fmt::format("\\u{{{:04X}}}", static_cast<uint32_t>(cp));
      i += n;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

void Log::line_at(const std::string& s, Clock::time_point now, bool security) {
  const std::string out = escape_line(s);
  std::lock_guard<std::mutex> lock(mu_);
  Bucket& b = security ? security_ : general_;
  if (b.last != Clock::time_point{}) {
    const double secs = std::chrono::duration<double>(now - b.last).count();
    b.tokens = std::min(b.rate.burst, b.tokens + std::max(0.0, secs) * b.rate.per_second);
  }
  b.last = now;
  if (b.tokens < 1) {
    ++b.dropped;
    return;
  }
  b.tokens -= 1;
  if (b.dropped > 0) {
    std::fprintf(f_, "rdmacheck serve: %llu %slog lines left out (more than %.0f a second)\n",
                 static_cast<unsigned long long>(b.dropped), security ? "security " : "",
                 b.rate.per_second);
    b.dropped = 0;
  }
  std::fprintf(f_, "%s\n", out.c_str());
  std::fflush(f_);
}

}  // namespace rdmacheck::serve
