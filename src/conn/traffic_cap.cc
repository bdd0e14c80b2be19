#include "conn/traffic_cap.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace rdmacheck::conn {
namespace {

std::optional<uint64_t> scaled(const std::string& num, char unit, const std::string& units,
                               const uint64_t* factors) {
  if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit) || num.size() > 12) {
    return std::nullopt;
  }
  uint64_t v = std::stoull(num);
  if (unit != 0) {
    const auto at = units.find(unit);
    if (at == std::string::npos) return std::nullopt;
    v *= factors[at];
  }
  return v;
}

std::pair<std::string, char> split_unit(const std::string& s) {
  if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back())) != 0) {
    return {s.substr(0, s.size() - 1), s.back()};
  }
  return {s, 0};
}

}  // namespace

Result<TrafficCap> parse_traffic_cap(const std::string& text) {
  const auto bad = [&] {
    return plain_error("--max-rate",
                       fmt::format("'{}' is not BYTES/SECONDS (e.g. 16G/60s, 500M/10s)", text));
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) return bad();
  static const uint64_t kBytes[] = {1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40};
  static const uint64_t kSecs[] = {1, 60, 3600};
  const auto [bn, bu] = split_unit(text.substr(0, slash));
  const auto [sn, su] = split_unit(text.substr(slash + 1));
  const auto bytes = scaled(bn, bu, "kMGT", kBytes);
  const auto secs = scaled(sn, su, "smh", kSecs);
  if (!bytes || !secs || *bytes == 0 || *secs == 0 || *secs > 86400) return bad();
  return TrafficCap{*bytes, std::chrono::seconds(*secs)};
}

std::string traffic_cap_text(const TrafficCap& c) {
  return fmt::format("{} MiB per {} s", c.bytes >> 20, c.seconds.count());
}

bool TrafficPool::take(uint64_t bytes, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_ != Clock::time_point{}) {
    const double secs = std::max(0.0, std::chrono::duration<double>(now - last_).count());
    const double per_s =
        static_cast<double>(cap_.bytes) / static_cast<double>(cap_.seconds.count());
    tokens_ = std::min(static_cast<double>(cap_.bytes), tokens_ + secs * per_s);
  }
  last_ = now;
  if (tokens_ <= 0) return false;
  tokens_ -= static_cast<double>(bytes);
  return true;
}

std::optional<std::string> SessionTraffic::may_send(uint64_t bytes) {
  const TrafficCap& cap = pool_.cap();
  if (!first_) first_ = Clock::now();
  if (Clock::now() >= *first_ + cap.seconds) {
    return fmt::format("this server sends for at most {} s per session (--max-rate)",
                       cap.seconds.count());
  }
  if (sent_ + bytes > cap.bytes) {
    return fmt::format("this server sends at most {} MiB per session (--max-rate)",
                       cap.bytes >> 20);
  }
  if (!pool_.take(0)) {
    return fmt::format("this server's traffic for all sessions ({}) is spent for now (--max-rate)",
                       traffic_cap_text(cap));
  }
  return std::nullopt;
}

void SessionTraffic::account(uint64_t bytes) {
  sent_ += bytes;
  (void)pool_.take(bytes);
}

std::optional<std::string> SessionTraffic::charge(uint64_t bytes) {
  if (auto why = may_send(bytes)) return why;
  account(bytes);
  return std::nullopt;
}

Deadline SessionTraffic::send_until() {
  if (!first_) first_ = Clock::now();
  return *first_ + pool_.cap().seconds;
}

}  // namespace rdmacheck::conn
