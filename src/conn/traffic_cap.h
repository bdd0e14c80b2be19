// What a server sends on its own behalf (ping and lat echoes, bw -b's
// direction towards the client) is capped, per session and in total, so
// that no client can make a fleet of servers into a traffic generator:
// per session at most `bytes`, for at most `seconds` from its first send;
// all sessions together at most `bytes` per `seconds` (a bucket refilled at
// that rate). serve --max-rate BYTES/SECONDS.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "base/deadline.h"
#include "base/result.h"

namespace rdmacheck::conn {

struct TrafficCap {
  uint64_t bytes = 64ull << 30;  // 64 GiB
  std::chrono::seconds seconds{120};
};

// "16G/60s", "500M/10s", "1T/1h": bytes (k, M, G, T: powers of 1024) per
// seconds (s, m, h).
Result<TrafficCap> parse_traffic_cap(const std::string& text);
std::string traffic_cap_text(const TrafficCap& c);

// All sessions' share, shared between their threads.
class TrafficPool {
 public:
  explicit TrafficPool(TrafficCap cap) : cap_(cap), tokens_(static_cast<double>(cap.bytes)) {}
  // Takes BYTES (the pool may go below zero once); false when it was spent.
  bool take(uint64_t bytes, Clock::time_point now = Clock::now());
  [[nodiscard]] const TrafficCap& cap() const { return cap_; }

 private:
  TrafficCap cap_;
  std::mutex mu_;
  double tokens_;
  Clock::time_point last_{};
};

// One session's account against its own cap and the pool.
class SessionTraffic {
 public:
  explicit SessionTraffic(TrafficPool& pool) : pool_(pool) {}
  // Why the server may not send BYTES more now, or nullopt.
  std::optional<std::string> may_send(uint64_t bytes);
  // Counts BYTES sent.
  void account(uint64_t bytes);
  // may_send, then account: the reason it may not, or nullopt when charged.
  std::optional<std::string> charge(uint64_t bytes);
  // When this session's sending time ends (its first send starts the clock).
  Deadline send_until();
  [[nodiscard]] uint64_t sent() const { return sent_; }

 private:
  TrafficPool& pool_;
  uint64_t sent_ = 0;
  std::optional<Clock::time_point> first_;
};

}  // namespace rdmacheck::conn
